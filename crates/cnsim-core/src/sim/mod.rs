//! The simulation: owns the event queue and the elements, dispatches each event to the element
//! it concerns, and hands frames across links. It knows no protocol.

mod build;
mod prefetch;
mod probe;

use std::time::Instant;

use crate::cc::Scheme;
use crate::engine::{EventKind, EventQueue, NodeIdx, PortIdx};
use crate::error::ConfigError;
use crate::flows::FlowTable;
use crate::net::frame::Frame;
use crate::net::{Ctx, Node};
use crate::report::{Report, WindowCounters};
use crate::scenario::Scenario;
use crate::stats::{Counters, HostCounters, Recorder};
use crate::time::SimTime;
use crate::traffic::{Pattern, Source};
pub use build::RateTarget;

/// Checks what only building the network can: every traffic pair has a route, every source a
/// destination other than itself.
pub fn check_buildable(scenario: &Scenario) -> Result<(), ConfigError> {
    build::build(scenario).map(|_| ())
}

/// The workload's flows and the host names they refer to, without running anything.
pub fn workload_rows(
    scenario: &Scenario,
) -> Result<(Vec<crate::traffic::flows::FlowRow>, Vec<String>), ConfigError> {
    let built = build::build(scenario)?;
    let names = scenario.hosts.iter().map(|h| h.name.clone()).collect();
    Ok((built.flows, names))
}

/// How often (in events) the progress callback is called.
const PROGRESS_EVERY_EVENTS: u64 = 1 << 20;

pub struct Simulation {
    pub scenario: Scenario,
    pub q: EventQueue,
    pub nodes: Vec<Node>,
    pub sources: Vec<Source>,
    pub rate_changes: Vec<(SimTime, RateTarget, f64)>,
    pub scheme: Scheme,
    pub counters: Counters,
    pub flows: FlowTable,
    /// What the flow workload asked for (mean size, load), to report beside what it gave.
    pub workload: build::WorkloadFacts,
    pub recorder: Recorder,
    pub end: SimTime,
    probe_interval: SimTime,
    probe_state: probe::ProbeState,
    window_marks: [Option<Vec<HostCounters>>; 2],
    /// Switch port queue peaks over the report window, taken at its end.
    window_port_peaks: Option<Vec<(String, u64)>>,
    control_bytes: u32,
    /// Prefetch what the next events touch (large networks only; `prefetch.rs`).
    prefetch: bool,
    pub stopped_early: bool,
}

impl Simulation {
    pub fn new(scenario: Scenario) -> Result<Simulation, ConfigError> {
        let built = build::build(&scenario)?;
        let end = SimTime::from_secs_f64(scenario.duration_s);
        let probe_interval = SimTime::from_secs_f64(scenario.report.probe_interval_s);
        let mut sim = Simulation {
            control_bytes: scenario.model.control_frame_bytes,
            prefetch: prefetch::worthwhile(&built.nodes, &built.sources),
            q: EventQueue::new(),
            nodes: built.nodes,
            sources: built.sources,
            rate_changes: built.rate_changes,
            scheme: built.scheme,
            counters: Counters::default(),
            flows: FlowTable::new(built.flows),
            workload: built.workload,
            recorder: Recorder::new(),
            end,
            probe_interval,
            probe_state: probe::ProbeState::default(),
            window_marks: [None, None],
            window_port_peaks: None,
            stopped_early: false,
            scenario,
        };
        sim.schedule_initial_events();
        Ok(sim)
    }

    fn schedule_initial_events(&mut self) {
        for i in 0..self.sources.len() {
            let t = self.sources[i].first_arrival();
            if t < self.sources[i].stop {
                self.q.schedule(t, EventKind::SourceArrival(i as u32));
            }
        }
        if let Some(first) = self.flows.flows.first() {
            self.q.schedule(first.start, EventKind::FlowStart(0));
        }
        for (i, (t, _, _)) in self.rate_changes.iter().enumerate() {
            self.q.schedule(*t, EventKind::RateChange(i as u32));
        }
        if let Some([a, b]) = self.scenario.report.window_s {
            self.q
                .schedule(SimTime::from_secs_f64(a), EventKind::WindowMark(0));
            self.q
                .schedule(SimTime::from_secs_f64(b), EventKind::WindowMark(1));
        }
        self.probe_state = probe::ProbeState::new(&self.nodes, &mut self.recorder);
        self.q.schedule(self.probe_interval, EventKind::Probe);
    }

    /// Runs to the end time and returns the report. `progress` gets the simulated fraction done
    /// now and then; returning `false` stops the run early (the report then covers the time
    /// simulated so far; `summary.completed` says so).
    pub fn run(mut self, progress: &mut dyn FnMut(f64) -> bool) -> Report {
        let wall = Instant::now();
        let end = self.end;
        while let Some(ev) = self.q.pop_until(end) {
            if self.prefetch {
                prefetch::ahead(&self.q, &self.nodes, &self.sources);
            }
            self.dispatch(ev);
            if self.q.processed().is_multiple_of(PROGRESS_EVERY_EVENTS)
                && !progress(self.q.now().as_secs_f64() / end.as_secs_f64())
            {
                self.stopped_early = true;
                break;
            }
        }
        if !self.stopped_early {
            progress(1.0);
        }
        let wall_time_s = wall.elapsed().as_secs_f64();
        let window = self.window_counters();
        Report::new(&self, wall_time_s, window)
    }

    /// The time the run covers: the end time, or where an interrupted run stopped.
    pub fn simulated_until(&self) -> SimTime {
        if self.stopped_early {
            self.q.now()
        } else {
            self.end
        }
    }

    fn ctx(&mut self) -> (&mut Vec<Node>, Ctx<'_>) {
        (
            &mut self.nodes,
            Ctx {
                q: &mut self.q,
                counters: &mut self.counters,
                flows: &mut self.flows,
                scheme: &self.scheme,
                control_bytes: self.control_bytes,
            },
        )
    }

    fn dispatch(&mut self, ev: EventKind) {
        match ev {
            EventKind::TxDone { node, port } => self.on_tx_done(node, port),
            EventKind::Arrive { node, port } => self.on_arrive(node, port),
            EventKind::PauseExpire { node, port, lane } => {
                let (nodes, mut ctx) = self.ctx();
                nodes[node as usize].on_pause_expire(node, port, lane, &mut ctx);
            }
            EventKind::PauseRefresh { node, port, lane } => {
                let (nodes, mut ctx) = self.ctx();
                nodes[node as usize].on_pause_refresh(node, port, lane, &mut ctx);
            }
            EventKind::SourceArrival(s) => self.on_source(s as usize),
            EventKind::FlowStart(id) => self.on_flow_start(id),
            EventKind::HostWake { node, generation } => {
                let (nodes, mut ctx) = self.ctx();
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.on_wake(node, generation, &mut ctx);
                }
            }
            EventKind::RxDone(node) => {
                let (nodes, mut ctx) = self.ctx();
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.on_rx_done(node, &mut ctx);
                }
            }
            EventKind::RpTimer { node, dst, ticket } => {
                let (nodes, mut ctx) = self.ctx();
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.on_rp_timer(node, dst, ticket, &mut ctx);
                }
            }
            EventKind::RateChange(i) => self.on_rate_change(i as usize),
            EventKind::Probe => self.on_probe(),
            EventKind::WindowMark(which) => self.on_window_mark(which),
        }
    }

    fn on_tx_done(&mut self, node: NodeIdx, port: PortIdx) {
        let (nodes, mut ctx) = self.ctx();
        let n = &mut nodes[node as usize];
        if let Some(arrival) = n.port_mut(port).end_tx(ctx.q.now()) {
            ctx.q.schedule(arrival, EventKind::Arrive { node, port });
        }
        ctx.counters.frame_hops += 1;
        n.try_transmit(node, port, &mut ctx);
    }

    /// The head of `node`'s pipe on `port` reaches the peer.
    fn on_arrive(&mut self, node: NodeIdx, port: PortIdx) {
        let (nodes, mut ctx) = self.ctx();
        let p = nodes[node as usize].port_mut(port);
        let (frame, next) = p.pop_arrival();
        if let Some(next) = next {
            ctx.q.schedule(next, EventKind::Arrive { node, port });
        }
        let (peer, peer_port) = (p.peer_node, p.peer_port);
        nodes[peer as usize].receive(peer, peer_port, frame, &mut ctx);
    }

    fn on_source(&mut self, s: usize) {
        let now = self.q.now();
        let src = &mut self.sources[s];
        let node = src.node;
        if matches!(src.pattern, Pattern::Saturate) {
            let on = !src.active && now < src.stop;
            src.active = on;
            let dst = src.pick_destination();
            let bytes = on.then_some(src.frame_bytes);
            let priority = src.priority;
            if on && src.stop < SimTime::MAX {
                self.q
                    .schedule(src.stop, EventKind::SourceArrival(s as u32));
            }
            let (nodes, mut ctx) = self.ctx();
            if let Node::Host(h) = &mut nodes[node as usize] {
                h.set_saturating(node, dst, bytes, priority, &mut ctx);
            }
            return;
        }
        let mut frame = Frame::data(src.host, src.pick_destination(), src.frame_bytes, now);
        frame.priority = src.priority;
        let next = src.next_arrival(now);
        if next < src.stop {
            self.q.schedule(next, EventKind::SourceArrival(s as u32));
        }
        let (nodes, mut ctx) = self.ctx();
        if let Node::Host(h) = &mut nodes[node as usize] {
            h.enqueue_generated(node, frame, &mut ctx);
        }
    }

    fn on_flow_start(&mut self, id: u32) {
        self.flows.started = id as usize + 1;
        if let Some(next) = self.flows.flows.get(id as usize + 1) {
            self.q.schedule(next.start, EventKind::FlowStart(id + 1));
        }
        let row = &self.flows.flows[id as usize].row;
        let (src, dst) = (row.src, row.dst);
        let (nodes, mut ctx) = self.ctx();
        if let Node::Host(h) = &mut nodes[src as usize] {
            h.start_flow(src, id, dst, &mut ctx);
        }
    }

    fn on_rate_change(&mut self, i: usize) {
        let (_, target, rate) = self.rate_changes[i];
        let (nodes, mut ctx) = self.ctx();
        match target {
            RateTarget::Port { node, port } => {
                nodes[node as usize].port_mut(port).rate_bps = rate;
                nodes[node as usize].try_transmit(node, port, &mut ctx);
            }
            RateTarget::Receiver { node } => {
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.rx.rate_bps = Some(rate);
                }
            }
        }
    }

    fn on_probe(&mut self) {
        let now = self.q.now();
        probe::sample(
            &mut self.probe_state,
            &mut self.nodes,
            &mut self.recorder,
            now,
            self.probe_interval,
        );
        if now + self.probe_interval <= self.end {
            self.q.schedule(now + self.probe_interval, EventKind::Probe);
        }
    }

    pub fn host_counters(&self) -> Vec<HostCounters> {
        self.nodes
            .iter()
            .filter_map(|n| match n {
                Node::Host(h) => Some(h.counters),
                Node::Switch(_) => None,
            })
            .collect()
    }

    fn on_window_mark(&mut self, which: u8) {
        self.window_marks[which as usize] = Some(self.host_counters());
        if which == 0 {
            for port in self.switch_ports_mut() {
                port.stats.window_peak_queue_bytes = port.data_bytes;
            }
        } else {
            self.window_port_peaks = Some(self.switch_port_peaks());
        }
    }

    fn switch_ports_mut(&mut self) -> impl Iterator<Item = &mut crate::net::port::Port> {
        self.nodes.iter_mut().flat_map(|n| match n {
            Node::Switch(s) => s.ports.iter_mut(),
            Node::Host(_) => [].iter_mut(),
        })
    }

    fn switch_port_peaks(&self) -> Vec<(String, u64)> {
        self.nodes
            .iter()
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
            .unwrap_or_else(|| self.host_counters());
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

    /// Data frames inside the network (queues, transmitters, links, receivers) right now.
    pub fn data_frames_in_flight(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| match n {
                Node::Host(h) => h.data_frames_held(),
                Node::Switch(s) => s.data_frames_held(),
            })
            .sum()
    }
}
