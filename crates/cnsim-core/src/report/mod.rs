//! The run's results: the summary (run facts, counters, metrics, per-source, per-port and
//! per-switch facts) as typed structs, and the probe time series as flat columns.
//!
//! [`Summary`] is the one definition of `summary.json`: its field order is the file's reading
//! order (scenario, seed, run facts, frames, metrics, then details) and [`Summary::json_schema`]
//! is the schema `cnsim schema --summary` prints and docs/outputs.md is checked against.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod pfc;
pub(crate) use pfc::PfcSummary;

use crate::cc::Variant;
use crate::flows::{FlowRecords, FlowSummary};
use crate::net::Node;
use crate::sim::{FinishedRun, WindowCounters};
use crate::stats::{jain_fairness, DropPlace, HostCounters, TimeSeries};
use crate::time::SimTime;

pub struct Report {
    /// The typed [`Summary`] as JSON (key order kept), what `summary.json` holds.
    pub summary: Value,
    pub timeseries: TimeSeries,
    /// One row per started flow (flow workloads); empty after a streamed run.
    pub flows: FlowRecords,
    /// After a streamed run: flows whose `frames_dropped` grew after their row was handed
    /// over, with the final count (`Simulation::run_streaming`); empty otherwise.
    pub late_drops: Vec<(u32, u32)>,
    pub resolved_toml: String,
    /// generated == delivered + dropped + in flight.
    pub conserved: bool,
}

/// `summary.json`: one run's facts and scalar results.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "cnsim summary.json")]
pub struct Summary {
    /// The scenario's `name`.
    pub(crate) scenario: String,
    /// The seed the run used (the scenario's, or the one given on the command line).
    pub(crate) seed: u64,
    pub(crate) cnsim_version: String,
    /// Simulated time covered (the duration, or less when the run was stopped).
    pub(crate) sim_time_s: f64,
    /// False when the run was stopped before `duration_s` (progress callback, Ctrl-C).
    pub(crate) completed: bool,
    pub(crate) wall_time_s: f64,
    pub(crate) wall_s_per_sim_s: f64,
    /// Discrete events processed.
    pub(crate) events: u64,
    pub(crate) events_per_s: f64,
    /// Data frames moved over one link (a frame crossing three links counts three).
    pub(crate) frame_hops: u64,
    pub(crate) frame_hops_per_s: f64,
    pub(crate) frames: FrameCounts,
    /// Scalar results by name (`recovery_time_s`, `fairness_index`, `peak_queue_bytes`...),
    /// filled by the Python analysis from the `[report]` table; null when not computable.
    pub(crate) metrics: BTreeMap<String, Option<MetricValue>>,
    /// One-way latency of delivered data frames, source to sink.
    pub(crate) latency_s: Latency,
    pub(crate) control_frames: ControlFrames,
    /// Which scheme variant ran.
    pub(crate) variant: Variant,
    /// Per host, over the whole run.
    pub(crate) per_source: BTreeMap<String, SourceStats>,
    /// Per switch output port (`switch->peer`), over the whole run.
    pub(crate) per_port: BTreeMap<String, PortStats>,
    /// Per switch, over the whole run.
    pub(crate) per_switch: BTreeMap<String, SwitchStats>,
    /// Exact counters over `[report].window_s`; null without a window.
    pub(crate) window: Option<WindowSummary>,
    /// Flows started and completed, flow completion times, and the workload's realised mean
    /// size and load beside the asked ones; null without a flow workload.
    pub(crate) flows: Option<FlowSummary>,
    /// Per priority class: PFC frames, time paused, headroom, and why PFC did or did not
    /// fire; null without `[pfc]`.
    pub(crate) pfc: Option<PfcSummary>,
    /// Per `load_basis = "busiest_link"` traffic entry: the busiest link and the hosts' load
    /// that puts it at the entry's `load`; absent when no entry asks for it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) load_scaling: Vec<crate::traffic::LoadScaling>,
}

/// A metric's value: a number, or a name (`peak_queue_port`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum MetricValue {
    Number(f64),
    Text(String),
}

/// Data frames: generated == delivered + dropped.total + in_flight.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FrameCounts {
    pub(crate) generated: u64,
    pub(crate) delivered: u64,
    pub(crate) dropped: Drops,
    /// Still queued or on a link when the run ended.
    pub(crate) in_flight: u64,
    /// The conservation check held.
    pub(crate) conserved: bool,
}

/// Dropped data frames by place (docs/outputs.md).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Drops {
    /// Source NIC buffer full.
    pub(crate) nic: u64,
    /// Rate-limiter queue full.
    pub(crate) rp: u64,
    /// Switch input partition full.
    pub(crate) ingress: u64,
    /// Switch shared memory full.
    pub(crate) shared: u64,
    /// Switch output queue limit.
    pub(crate) egress: u64,
    /// Receiver buffer full.
    pub(crate) rx: u64,
    /// Lost on a link (`links[*].loss_rate`, the `[transport] drop` list).
    pub(crate) link: u64,
    pub(crate) total: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Latency {
    pub(crate) mean: f64,
    pub(crate) max: f64,
}

mod control_frames;

pub(crate) use control_frames::ControlFrames;

/// One host's counters; rates are over the span counted (the run or the window).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SourceStats {
    pub(crate) generated_frames: u64,
    pub(crate) tx_frames: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) throughput_bps: f64,
    pub(crate) offered_bps: f64,
    /// Dropped at this source (NIC buffer or rate-limiter queue).
    pub(crate) dropped_frames: u64,
    pub(crate) rx_frames: u64,
    pub(crate) rx_bytes: u64,
    pub(crate) rx_throughput_bps: f64,
}

/// One switch output port.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PortStats {
    pub(crate) peak_queue_bytes: u64,
    /// Time-weighted mean of the data queue.
    pub(crate) mean_queue_bytes: f64,
    pub(crate) tx_frames: u64,
    /// Data sent, in bits per second of simulated time.
    pub(crate) throughput_bps: f64,
    /// `throughput_bps` / line rate.
    pub(crate) utilisation: f64,
    pub(crate) dropped_frames: u64,
    /// Fraction of the run the port was held by a PAUSE from its peer.
    pub(crate) paused_frac: f64,
    /// A QCN/BCN congestion point watches this queue.
    pub(crate) congestion_point: bool,
    /// Congestion messages (CNM/BCN) the congestion point sent.
    pub(crate) cp_messages: u64,
    /// Data frames the congestion point marked ECN CE (DCQCN).
    pub(crate) ecn_marked_frames: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SwitchStats {
    /// Largest total of buffered data.
    pub(crate) peak_memory_bytes: u64,
    /// Data frames the switch dropped (ingress, shared and egress places).
    pub(crate) dropped_frames: u64,
}

/// Exact counters over `[report].window_s` (seed 002's table).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WindowSummary {
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
    /// Jain's index over the sending hosts' throughput in the window; null with none.
    pub(crate) fairness_index: Option<f64>,
    pub(crate) frames_generated: u64,
    pub(crate) frames_transmitted: u64,
    pub(crate) frames_received: u64,
    pub(crate) frames_dropped_at_sources: u64,
    pub(crate) per_source: BTreeMap<String, SourceStats>,
    pub(crate) per_port: BTreeMap<String, WindowPortStats>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WindowPortStats {
    pub(crate) peak_queue_bytes: u64,
}

impl Summary {
    /// The JSON Schema of `summary.json` (draft 2020-12).
    pub fn json_schema() -> Value {
        schemars::schema_for!(Summary).to_value()
    }
}

impl Report {
    /// The report of a finished run.
    pub fn new(run: FinishedRun) -> Report {
        let mut summary = Summary::new(&run);
        summary.flows = run.flow_digest.summary(&run.workload);
        Report {
            conserved: summary.frames.conserved,
            summary: serde_json::to_value(&summary).expect("a summary serialises"),
            resolved_toml: run.scenario.to_toml(),
            timeseries: run.series,
            flows: run.flows,
            late_drops: run.late_drops,
        }
    }
}

impl Summary {
    fn new(run: &FinishedRun) -> Summary {
        let (net, wall_time_s) = (&run.net, run.wall_time_s);
        let c = &net.ctx.counters;
        let in_flight = net.data_frames_in_flight();
        let dropped_total = c.dropped_total();
        let sim_time_s = run.simulated_until.as_secs_f64();
        let events = net.ctx.q.processed();
        let host_names: Vec<&str> = net
            .nodes
            .iter()
            .filter(|n| matches!(n, Node::Host(_)))
            .map(Node::name)
            .collect();
        let dropped = |place: DropPlace| c.dropped[place as usize];
        let (per_port, per_switch) = per_port_and_switch(&net.nodes, run.simulated_until);
        Summary {
            scenario: run.scenario.name.clone(),
            seed: run.scenario.seed,
            cnsim_version: env!("CARGO_PKG_VERSION").into(),
            sim_time_s,
            completed: run.completed,
            wall_time_s,
            wall_s_per_sim_s: wall_time_s / sim_time_s,
            events,
            events_per_s: events as f64 / wall_time_s.max(1e-9),
            frame_hops: c.frame_hops,
            frame_hops_per_s: c.frame_hops as f64 / wall_time_s.max(1e-9),
            frames: FrameCounts {
                generated: c.generated,
                delivered: c.delivered,
                dropped: Drops {
                    nic: dropped(DropPlace::Nic),
                    rp: dropped(DropPlace::Rp),
                    ingress: dropped(DropPlace::Ingress),
                    shared: dropped(DropPlace::Shared),
                    egress: dropped(DropPlace::Egress),
                    rx: dropped(DropPlace::Rx),
                    link: dropped(DropPlace::Link),
                    total: dropped_total,
                },
                in_flight,
                conserved: c.generated == c.delivered + dropped_total + in_flight,
            },
            metrics: BTreeMap::new(),
            latency_s: Latency {
                mean: if c.delivered > 0 {
                    c.latency_sum_s / c.delivered as f64
                } else {
                    0.0
                },
                max: c.latency_max_s,
            },
            control_frames: ControlFrames::new(c, sim_time_s),
            variant: net.ctx.scheme.variant(),
            per_source: per_source(&host_names, &net.host_counters(), sim_time_s),
            per_port,
            per_switch,
            window: (run.window.as_ref()).map(|w| window_summary(&host_names, w)),
            flows: None,
            pfc: (run.scenario.pfc.as_ref())
                .map(|spec| pfc::summarize(spec, &net.nodes, run.simulated_until)),
            load_scaling: run.workload.load_scaling.clone(),
        }
    }
}

fn source_stats(c: &HostCounters, span_s: f64) -> SourceStats {
    SourceStats {
        generated_frames: c.generated_frames,
        tx_frames: c.tx_frames,
        tx_bytes: c.tx_bytes,
        throughput_bps: c.tx_bytes as f64 * 8.0 / span_s,
        offered_bps: c.generated_bytes as f64 * 8.0 / span_s,
        dropped_frames: c.dropped_frames,
        rx_frames: c.rx_frames,
        rx_bytes: c.rx_bytes,
        rx_throughput_bps: c.rx_bytes as f64 * 8.0 / span_s,
    }
}

fn per_source(
    names: &[&str],
    counters: &[HostCounters],
    span_s: f64,
) -> BTreeMap<String, SourceStats> {
    names
        .iter()
        .zip(counters)
        .map(|(name, c)| ((*name).to_string(), source_stats(c, span_s)))
        .collect()
}

fn window_summary(names: &[&str], w: &WindowCounters) -> WindowSummary {
    let span = w.end_s - w.start_s;
    let senders: Vec<f64> = w
        .per_host
        .iter()
        .filter(|c| c.generated_frames > 0)
        .map(|c| c.tx_bytes as f64 * 8.0 / span)
        .collect();
    let sum = |f: fn(&HostCounters) -> u64| w.per_host.iter().map(f).sum::<u64>();
    WindowSummary {
        start_s: w.start_s,
        end_s: w.end_s,
        fairness_index: jain_fairness(&senders),
        frames_generated: sum(|c| c.generated_frames),
        frames_transmitted: sum(|c| c.tx_frames),
        frames_received: sum(|c| c.rx_frames),
        frames_dropped_at_sources: sum(|c| c.dropped_frames),
        per_source: per_source(names, &w.per_host, span),
        per_port: w
            .port_peak_queue_bytes
            .iter()
            .map(|(name, peak)| {
                let stats = WindowPortStats {
                    peak_queue_bytes: *peak,
                };
                (name.clone(), stats)
            })
            .collect(),
    }
}

type PortsAndSwitches = (BTreeMap<String, PortStats>, BTreeMap<String, SwitchStats>);

fn per_port_and_switch(nodes: &[Node], now: SimTime) -> PortsAndSwitches {
    let span_s = now.as_secs_f64();
    let mut ports = BTreeMap::new();
    let mut switches = BTreeMap::new();
    for node in nodes {
        let Node::Switch(sw) = node else { continue };
        for (j, p) in sw.ports.iter().enumerate() {
            let throughput_bps = p.stats.data_tx_bytes as f64 * 8.0 / span_s;
            let cp = sw.cps.get(j).and_then(Option::as_ref);
            ports.insert(
                p.name.clone(),
                PortStats {
                    peak_queue_bytes: p.stats.peak_queue_bytes,
                    mean_queue_bytes: p.mean_queue_bytes(now),
                    tx_frames: p.stats.tx_frames,
                    throughput_bps,
                    utilisation: throughput_bps / p.line_rate_bps,
                    dropped_frames: p.stats.dropped_frames,
                    paused_frac: p.pause.paused_time(now).as_secs_f64() / span_s,
                    congestion_point: cp.is_some(),
                    cp_messages: cp.map_or(0, |c| c.messages),
                    ecn_marked_frames: cp.and_then(|c| c.ecn_marked()).unwrap_or(0),
                },
            );
        }
        switches.insert(
            sw.name.clone(),
            SwitchStats {
                peak_memory_bytes: sw.peak_memory_bytes,
                dropped_frames: sw.dropped_frames,
            },
        );
    }
    (ports, switches)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{control_kinds, DROP_PLACES};

    fn keys(schema: &Value, def: &str) -> Vec<String> {
        schema["$defs"][def]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{def} has properties"))
            .keys()
            .cloned()
            .collect()
    }

    #[test]
    fn drop_and_control_fields_are_the_stats_names() {
        let schema = Summary::json_schema();
        let mut places: Vec<String> = DROP_PLACES.iter().map(|(_, n)| n.to_string()).collect();
        places.push("total".into());
        assert_eq!(keys(&schema, "Drops"), places);
        let mut kinds: Vec<String> = control_kinds()
            .iter()
            .map(|(_, n)| n.name.to_string())
            .collect();
        kinds.extend(["dropped".into(), "bytes".into(), "bandwidth_bps".into()]);
        assert_eq!(keys(&schema, "ControlFrames"), kinds);
    }

    #[test]
    fn summary_schema_lists_fields_in_reading_order() {
        let schema = Summary::json_schema();
        let top: Vec<&str> = schema["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(&top[..2], ["scenario", "seed"]);
        let at = |k: &str| top.iter().position(|t| *t == k).expect(k);
        assert!(at("frames") < at("metrics") && at("metrics") < at("per_source"));
    }
}
