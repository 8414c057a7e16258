//! The simulation: a [`Network`] (the elements, the event queue, counters, flows, the scheme)
//! and what a run adds around it: traffic sources, flow starts, scheduled rate changes, periodic
//! probes and the report window. It knows no protocol. A run ends as a [`FinishedRun`], which
//! the report is made from.

pub(crate) mod build;
mod network;
mod prefetch;
mod probe;

use std::time::Instant;

use crate::engine::EventKind;
use crate::error::ConfigError;
use crate::flow_digest::FlowDigest;
use crate::flows::{FlowRecords, FlowTable};
use crate::net::frame::Frame;
use crate::net::Node;
use crate::scenario::Scenario;
use crate::stats::{HostCounters, Recorder, TimeSeries};
use crate::time::SimTime;
use crate::traffic::{Pattern, Source};
pub(crate) use build::{RateTarget, WorkloadFacts};
pub(crate) use network::Network;

/// Checks what only building the network can: every traffic pair has a route, every source a
/// destination other than itself.
pub(crate) fn check_buildable(scenario: &Scenario) -> Result<(), ConfigError> {
    build::build(scenario).map(|_| ())
}

/// The workload's flows and the host names they refer to, without running anything.
pub(crate) fn workload_rows(
    scenario: &Scenario,
) -> Result<(Vec<crate::traffic::flows::FlowRow>, Vec<String>), ConfigError> {
    let built = build::build(scenario)?;
    let names = scenario.hosts.iter().map(|h| h.name.clone()).collect();
    Ok((built.flows, names))
}

/// How often (in events) the progress callback is called.
const PROGRESS_EVERY_EVENTS: u64 = 1 << 20;
/// How often (in events) a streamed run hands its rows over: the bound on what it holds of
/// them (docs/outputs.md, "Streamed files"). A power of two dividing PROGRESS_EVERY_EVENTS.
const DRAIN_EVERY_EVENTS: u64 = 1 << 16;
/// Most flow records in one hand-over: flows held back by an earlier one still running come
/// over in pieces of this many, so a hand-over stays bounded however many there are.
const MAX_FLOWS_PER_DRAIN: usize = 1 << 16;

pub struct Simulation {
    scenario: Scenario,
    net: Network,
    sources: Vec<Source>,
    rate_changes: Vec<(SimTime, RateTarget, f64)>,
    /// What the flow workload asked for (mean size, load), to report beside what it gave.
    workload: WorkloadFacts,
    recorder: Recorder,
    end: SimTime,
    probe_interval: SimTime,
    probe_state: probe::ProbeState,
    window_marks: [Option<Vec<HostCounters>>; 2],
    /// Switch port queue peaks over the report window, taken at its end.
    window_port_peaks: Option<Vec<(String, u64)>>,
    /// Prefetch what the next events touch (large networks only; `prefetch.rs`).
    prefetch: bool,
    /// Where each node's ports are, for the prefetcher (`prefetch::port_addresses`).
    ports_at: Vec<usize>,
    /// `summary.flows` of the flow records handed over so far.
    digest: FlowDigest,
}

/// What a streamed run hands over at each drain (`Simulation::run_streaming`): the batches,
/// in order, are the in-memory run's tables.
pub struct Drained {
    /// Records of the flows that became final since the last drain, in flow id order (a
    /// prefix: flows wait for the earliest still running; `FlowTable::final_end`).
    pub flows: FlowRecords,
    /// The probe rows recorded since the last drain; `entities` holds only the names added
    /// since (their ids follow the earlier ones).
    pub series: TimeSeries,
}

/// Per-host counter differences over the report window.
#[derive(Clone, Debug)]
pub(crate) struct WindowCounters {
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
    pub(crate) per_host: Vec<HostCounters>,
    /// (port name, peak queue within the window) for every switch port.
    pub(crate) port_peak_queue_bytes: Vec<(String, u64)>,
}

/// A run that has ended, as the report reads it.
pub struct FinishedRun {
    pub(crate) scenario: Scenario,
    pub(crate) net: Network,
    pub(crate) workload: WorkloadFacts,
    pub(crate) series: TimeSeries,
    pub(crate) window: Option<WindowCounters>,
    pub(crate) wall_time_s: f64,
    /// The time the run covers: the end time, or where an interrupted run stopped.
    pub(crate) simulated_until: SimTime,
    /// False when the progress callback stopped the run early.
    pub(crate) completed: bool,
    /// Every flow record (empty after a streamed run: handed over as it went).
    pub(crate) flows: FlowRecords,
    pub(crate) flow_digest: FlowDigest,
    /// Streamed run: flows whose `frames_dropped` grew after their record was handed over,
    /// with the final count (the writer patches them).
    pub(crate) late_drops: Vec<(u32, u32)>,
}

impl Simulation {
    pub fn new(scenario: Scenario) -> Result<Simulation, ConfigError> {
        Self::with_slot_shift_or_chosen(scenario, None)
    }

    /// `new`, with the event queue's slot width given (tests) or chosen for the network.
    fn with_slot_shift_or_chosen(
        scenario: Scenario,
        slot_shift: Option<u32>,
    ) -> Result<Simulation, ConfigError> {
        let built = build::build(&scenario)?;
        let end = SimTime::from_secs_f64(scenario.duration_s);
        let probe_interval = SimTime::from_secs_f64(scenario.report.probe_interval_s);
        let control_bytes = scenario.model.control_frame_bytes;
        let ports_at = prefetch::port_addresses(&built.nodes);
        let mut sim = Simulation {
            prefetch: prefetch::worthwhile(&built.nodes, &built.sources),
            ports_at,
            net: Network::new(
                built.nodes,
                FlowTable::new(built.flows),
                built.scheme,
                control_bytes,
            ),
            sources: built.sources,
            rate_changes: built.rate_changes,
            workload: built.workload,
            recorder: if scenario.probes_tiers() {
                Recorder::summing()
            } else {
                Recorder::new()
            },
            end,
            probe_interval,
            probe_state: probe::ProbeState::default(),
            window_marks: [None, None],
            window_port_peaks: None,
            digest: FlowDigest::new(&scenario.report.slowdown_size_edges_bytes),
            scenario,
        };
        if let Some(shift) = slot_shift {
            sim.net.ctx.q = crate::engine::EventQueue::with_slot_shift(shift);
        }
        sim.net.ctx.messages_ride_data =
            sim.scenario.model.message_queue == crate::scenario::MessageQueue::Data;
        sim.schedule_initial_events();
        Ok(sim)
    }

    /// As [`Simulation::new`], with the event queue's slots 2^`slot_shift` ps wide whatever the
    /// network's rates (`engine::slot_shift_for`), to show a run's outputs do not depend on it.
    #[cfg(test)]
    fn with_event_slot_shift(scenario: Scenario, slot_shift: u32) -> Simulation {
        Self::with_slot_shift_or_chosen(scenario, Some(slot_shift)).expect("valid scenario")
    }

    /// The hosts' names by host id (the codes of the flow records' `src` and `dst`).
    pub fn host_names(&self) -> Vec<String> {
        self.scenario.hosts.iter().map(|h| h.name.clone()).collect()
    }

    fn schedule_initial_events(&mut self) {
        let q = &mut self.net.ctx.q;
        for (i, source) in self.sources.iter_mut().enumerate() {
            let t = source.first_arrival();
            if t < source.stop {
                q.schedule(t, EventKind::SourceArrival(i as u32));
            }
        }
        if let Some(first) = self.net.ctx.flows.flows.first() {
            q.schedule(first.start, EventKind::FlowStart(0));
        }
        for (i, (t, _, _)) in self.rate_changes.iter().enumerate() {
            q.schedule(*t, EventKind::RateChange(i as u32));
        }
        if let Some([a, b]) = self.scenario.report.window_s {
            q.schedule(SimTime::from_secs_f64(a), EventKind::WindowMark(0));
            q.schedule(SimTime::from_secs_f64(b), EventKind::WindowMark(1));
        }
        let tiers = self.scenario.probes_tiers();
        self.probe_state = probe::ProbeState::new(&self.net.nodes, &mut self.recorder, tiers);
        self.net
            .ctx
            .q
            .schedule(self.probe_interval, EventKind::Probe);
    }

    /// Runs to the end time. `progress` gets the simulated fraction done now and then;
    /// returning `false` stops the run early (the run then covers the time simulated so far,
    /// and `summary.completed` says so).
    pub fn run(self, progress: &mut dyn FnMut(f64) -> bool) -> FinishedRun {
        self.run_inner(progress, None)
    }

    /// As [`Simulation::run`], handing the flow records and probe rows over as it goes: every
    /// 2^16 events, and once at the end, `sink` gets what is final since the last time
    /// ([`Drained`]); the finished run then holds none of them (its summary is the same).
    /// `sink` returning `false` stops the run as `progress` does; the last batch still comes.
    pub fn run_streaming(
        self,
        progress: &mut dyn FnMut(f64) -> bool,
        sink: &mut dyn FnMut(Drained) -> bool,
    ) -> FinishedRun {
        self.run_inner(progress, Some(sink))
    }

    // Never inlined: one call per run, and profiles (callgrind, docs/performance.md) count the
    // event loop as this function (it was `run` before streamed runs).
    #[inline(never)]
    fn run_inner(
        mut self,
        progress: &mut dyn FnMut(f64) -> bool,
        mut sink: Option<&mut dyn FnMut(Drained) -> bool>,
    ) -> FinishedRun {
        let wall = Instant::now();
        let end = self.end;
        let mut completed = true;
        // Every `every` events: the progress call (every PROGRESS_EVERY_EVENTS) and, streamed,
        // a hand-over.
        let every = match sink {
            Some(_) => DRAIN_EVERY_EVENTS,
            None => PROGRESS_EVERY_EVENTS,
        };
        while let Some(ev) = self.net.ctx.q.pop_until(end) {
            if self.prefetch {
                let state = prefetch::State {
                    nodes: &self.net.nodes,
                    sources: &self.sources,
                    flows: &self.net.ctx.flows,
                    frames: &self.net.ctx.frames,
                    ports_at: &self.ports_at,
                };
                prefetch::ahead(&self.net.ctx.q, &state);
            }
            self.dispatch(ev);
            let processed = self.net.ctx.q.processed();
            if processed & (every - 1) == 0 {
                let go = (!processed.is_multiple_of(PROGRESS_EVERY_EVENTS)
                    || progress(self.net.ctx.q.now().as_secs_f64() / end.as_secs_f64()))
                    && sink
                        .as_mut()
                        .is_none_or(|s| s(self.drain(false, MAX_FLOWS_PER_DRAIN)));
                if !go {
                    completed = false;
                    break;
                }
            }
        }
        if completed {
            progress(1.0);
        }
        // The loop's wall time, as before records were drained (an in-memory run's are all
        // made here, after it).
        let wall_time_s = wall.elapsed().as_secs_f64();
        let (flows, series) = match sink {
            Some(s) => {
                // The rest, in bounded pieces (the sink's answer no longer matters).
                loop {
                    let batch = self.drain(true, MAX_FLOWS_PER_DRAIN);
                    let rest = self.net.ctx.flows.drained < self.net.ctx.flows.started;
                    s(batch);
                    if !rest {
                        break;
                    }
                }
                (FlowRecords::default(), TimeSeries::default())
            }
            None => {
                let all = self.drain(true, usize::MAX);
                (all.flows, all.series)
            }
        };
        let late_drops = self.account_late_drops();
        let simulated_until = if completed {
            self.end
        } else {
            self.net.ctx.q.now()
        };
        self.net.settle_ports(simulated_until);
        let window = self.window_counters();
        FinishedRun {
            scenario: self.scenario,
            net: self.net,
            workload: self.workload,
            series,
            window,
            wall_time_s,
            simulated_until,
            completed,
            flows,
            flow_digest: self.digest,
            late_drops,
        }
    }

    /// The flow records final since the last drain (every started one with `all`), at most
    /// `limit` of them, and the probe rows since, taken into the summary's digest.
    fn drain(&mut self, all: bool, limit: usize) -> Drained {
        let flows = &self.net.ctx.flows;
        let end = if all {
            flows.started
        } else {
            flows.final_end()
        };
        let end = end.min(flows.drained.saturating_add(limit));
        let records = self.net.flow_records(flows.drained..end);
        self.net.ctx.flows.drained = end;
        self.digest.add(&records);
        Drained {
            flows: records,
            series: self.recorder.take_new(),
        }
    }

    /// Flows that lost frames after their records were handed over: the digest counts those
    /// that had lost none before among `with_drops`; the list is for the writer to patch.
    fn account_late_drops(&mut self) -> Vec<(u32, u32)> {
        let (counts, newly) = self.net.ctx.flows.late_drop_counts();
        self.digest.add_late_drops(newly);
        counts
    }

    /// The run's own events here; element events go to the network. Always inlined into the
    /// loop (it was before the network was a type of its own; as a call it cost 7% more
    /// instructions on seed004-qcn).
    #[inline(always)]
    fn dispatch(&mut self, ev: EventKind) {
        match ev {
            EventKind::SourceArrival(s) => self.on_source(s as usize),
            EventKind::FlowStart(id) => self.on_flow_start(id),
            EventKind::RateChange(i) => self.on_rate_change(i as usize),
            EventKind::Probe => self.on_probe(),
            EventKind::WindowMark(which) => self.on_window_mark(which),
            element => self.net.dispatch(element),
        }
    }

    fn on_source(&mut self, s: usize) {
        let now = self.net.ctx.q.now();
        let src = &mut self.sources[s];
        let node = src.node;
        if matches!(src.pattern, Pattern::Saturate) {
            let on = !src.active && now < src.stop;
            src.active = on;
            let dst = src.pick_destination();
            let bytes = on.then_some(src.frame_bytes);
            let priority = src.priority;
            if on && src.stop < SimTime::MAX {
                (self.net.ctx.q).schedule(src.stop, EventKind::SourceArrival(s as u32));
            }
            let (nodes, ctx) = self.net.ctx();
            if let Node::Host(h) = &mut nodes[node as usize] {
                h.set_saturating(node, dst, bytes, priority, ctx);
            }
            return;
        }
        let mut frame = Frame::data(src.host, src.pick_destination(), src.frame_bytes, now);
        frame.priority = src.priority;
        let next = src.next_arrival(now);
        if next < src.stop {
            (self.net.ctx.q).schedule(next, EventKind::SourceArrival(s as u32));
        }
        let (nodes, ctx) = self.net.ctx();
        if let Node::Host(h) = &mut nodes[node as usize] {
            h.enqueue_generated(node, frame, ctx);
        }
    }

    fn on_flow_start(&mut self, id: u32) {
        let flows = &mut self.net.ctx.flows;
        flows.started = id as usize + 1;
        if let Some(next) = flows.flows.get(id as usize + 1) {
            (self.net.ctx.q).schedule(next.start, EventKind::FlowStart(id + 1));
        }
        let row = &flows.flows[id as usize].row;
        let (src, dst) = (row.src, row.dst);
        if !row.transport.is_none() {
            // The path's switches, for a sender controller's per-hop scaling (Swift).
            let hops = crate::net::path::switches_on_path(&self.net.nodes, src, dst, id);
            self.net.ctx.flows.flows[id as usize].path_switches = hops;
        }
        let (nodes, ctx) = self.net.ctx();
        if let Node::Host(h) = &mut nodes[src as usize] {
            h.start_flow(src, id, dst, ctx);
        }
    }

    fn on_rate_change(&mut self, i: usize) {
        let (_, target, rate) = self.rate_changes[i];
        let (nodes, ctx) = self.net.ctx();
        match target {
            RateTarget::Port { node, port } => {
                nodes[node as usize].port_mut(port).rate_bps = rate;
                nodes[node as usize].try_transmit(node, port, ctx);
            }
            RateTarget::Receiver { node } => {
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.rx.rate_bps = Some(rate);
                }
            }
        }
    }

    fn on_probe(&mut self) {
        let now = self.net.ctx.q.now();
        // A frame whose last bit leaves at this very time is not yet counted: the probe was
        // scheduled an interval ago, before that frame's transmit-done event would have been.
        self.net.settle_ports(now.saturating_sub(SimTime(1)));
        probe::sample(
            &mut self.probe_state,
            &mut self.net.nodes,
            &self.net.ctx.flows,
            &mut self.recorder,
            now,
            self.probe_interval,
        );
        if now + self.probe_interval <= self.end {
            (self.net.ctx.q).schedule(now + self.probe_interval, EventKind::Probe);
        }
    }

    fn on_window_mark(&mut self, which: u8) {
        self.window_marks[which as usize] = Some(self.net.host_counters());
        if which == 0 {
            for port in self.switch_ports_mut() {
                port.stats.window_peak_queue_bytes = port.data_bytes;
            }
        } else {
            self.window_port_peaks = Some(self.switch_port_peaks());
        }
    }

    fn switch_ports_mut(&mut self) -> impl Iterator<Item = &mut crate::net::port::Port> {
        self.net.nodes.iter_mut().flat_map(|n| match n {
            Node::Switch(s) => s.ports.iter_mut(),
            Node::Host(_) => [].iter_mut(),
        })
    }

    fn switch_port_peaks(&self) -> Vec<(String, u64)> {
        (self.net.nodes.iter())
            .filter(|n| matches!(n, Node::Switch(_)))
            .flat_map(|n| n.ports().iter())
            .map(|p| (p.name.clone(), p.stats.window_peak_queue_bytes))
            .collect()
    }

    fn window_counters(&self) -> Option<WindowCounters> {
        let [a, b] = self.scenario.report.window_s?;
        let start = self.window_marks[0].clone()?;
        let end = self.window_marks[1]
            .clone()
            .unwrap_or_else(|| self.net.host_counters());
        Some(WindowCounters {
            start_s: a,
            end_s: b,
            per_host: end.iter().zip(&start).map(|(e, s)| e.minus(s)).collect(),
            port_peak_queue_bytes: self
                .window_port_peaks
                .clone()
                .unwrap_or_else(|| self.switch_port_peaks()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A k = 4 fat tree at 100 Gb/s, 2 MB flows from every host to a permutation partner
    /// at 90% load over RoCE with PFC: an ACK per frame, so 64-byte frames' transmissions end
    /// within a 65.5 ns slot (about 156,000 events in 300 us: 34 per 65.5 ns slot on
    /// average).
    const ROCE_FAT_TREE_100G: &str = r#"
        name = "roce-fat-tree-100g"
        seed = 3
        duration_s = 0.0003
        [topology]
        kind = "fat_tree"
        k = 4
        host_rate_bps = 100e9
        switch = { output_buffer_bytes = 150000 }
        [[traffic]]
        kind = "flows"
        hosts = "all"
        dst = "permutation"
        load = 0.9
        size = { bytes = 2_000_000 }
        priority = 3
        transport = "roce"
        [pfc]
        lossless_classes = [3]
        xoff_bytes = 22500
        xon_bytes = 18000
        headroom_bytes = "auto"
        [report]
        probe_interval_s = 2e-5
    "#;

    /// The summary without the wall-clock figures.
    fn summary_of(sim: Simulation) -> serde_json::Value {
        let report = crate::Report::new(sim.run(&mut |_| true));
        let mut summary = serde_json::to_value(&report.summary).expect("serialises");
        let fields = summary.as_object_mut().expect("an object");
        for wall in [
            "wall_time_s",
            "wall_s_per_sim_s",
            "events_per_s",
            "frame_hops_per_s",
        ] {
            fields.remove(wall).expect("a wall-clock field");
        }
        summary
    }

    /// The event queue's slot is chosen from the network's fastest port (4.1 ns at 100 Gb/s),
    /// and the run's every output is what 65.5 ns, 16.4 ns or 1 ns slots give: the width
    /// changes the speed only.
    #[test]
    fn a_runs_outputs_are_the_same_at_every_event_slot_width() {
        let scenario = crate::resolve(ROCE_FAT_TREE_100G, &[], None).expect("valid scenario");
        let chosen = Simulation::new(scenario.clone()).expect("valid scenario");
        assert_eq!(chosen.net.event_slot_shift(), 12);
        let want = summary_of(chosen);
        assert!(want["frame_hops"].as_u64().expect("a count") > 100_000);
        for shift in [16, 14, 10] {
            let sim = Simulation::with_event_slot_shift(scenario.clone(), shift);
            assert_eq!(summary_of(sim), want, "slots of 2^{shift} ps");
        }
    }
}
