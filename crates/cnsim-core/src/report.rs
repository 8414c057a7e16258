//! The run's results: the summary (scalars, counters, per-source and per-port facts) as JSON,
//! and the probe time series as flat columns.

use serde_json::{json, Map, Value};

use crate::cc::Scheme;
use crate::flows::{self, FlowRecords};
use crate::net::Node;
use crate::sim::Simulation;
use crate::stats::{jain_fairness, HostCounters, TimeSeries, CONTROL_KINDS, DROP_PLACES};

/// Per-host counter differences over the report window.
#[derive(Clone, Debug)]
pub struct WindowCounters {
    pub start_s: f64,
    pub end_s: f64,
    pub per_host: Vec<HostCounters>,
    /// (port name, peak queue within the window) for every switch port.
    pub port_peak_queue_bytes: Vec<(String, u64)>,
}

pub struct Report {
    pub summary: Value,
    pub timeseries: TimeSeries,
    /// One row per started flow (flow workloads).
    pub flows: FlowRecords,
    pub resolved_toml: String,
    /// generated == delivered + dropped + in flight.
    pub conserved: bool,
}

impl Report {
    pub fn new(sim: &Simulation, wall_time_s: f64, window: Option<WindowCounters>) -> Report {
        let c = &sim.counters;
        let in_flight = sim.data_frames_in_flight();
        let dropped_total = c.dropped_total();
        let conserved = c.generated == c.delivered + dropped_total + in_flight;
        let sim_time_s = sim.simulated_until().as_secs_f64();
        let events = sim.q.processed();
        let flow_records = sim.flows.records(&sim.nodes);
        let host_names: Vec<&str> = sim
            .nodes
            .iter()
            .filter(|n| matches!(n, Node::Host(_)))
            .map(Node::name)
            .collect();
        let mut dropped = Map::new();
        for (place, name) in DROP_PLACES {
            dropped.insert(name.into(), json!(c.dropped[place as usize]));
        }
        dropped.insert("total".into(), json!(dropped_total));
        let mut control = Map::new();
        for (kind, name) in CONTROL_KINDS {
            control.insert(name.into(), json!(c.control_sent[kind as usize]));
        }
        control.insert("bytes".into(), json!(c.control_bytes));
        control.insert(
            "bandwidth_bps".into(),
            json!(c.control_bytes as f64 * 8.0 / sim_time_s),
        );
        let summary = json!({
            "scenario": sim.scenario.name,
            "seed": sim.scenario.seed,
            "cnsim_version": env!("CARGO_PKG_VERSION"),
            "sim_time_s": sim_time_s,
            "completed": !sim.stopped_early,
            "wall_time_s": wall_time_s,
            "wall_s_per_sim_s": wall_time_s / sim_time_s,
            "events": events,
            "events_per_s": events as f64 / wall_time_s.max(1e-9),
            "frame_hops": c.frame_hops,
            "frame_hops_per_s": c.frame_hops as f64 / wall_time_s.max(1e-9),
            "frames": {
                "generated": c.generated,
                "delivered": c.delivered,
                "dropped": dropped,
                "in_flight": in_flight,
                "conserved": conserved,
            },
            "latency_s": {
                "mean": if c.delivered > 0 { c.latency_sum_s / c.delivered as f64 } else { 0.0 },
                "max": c.latency_max_s,
            },
            "control_frames": control,
            "per_source": per_source(&host_names, &sim.host_counters(), sim_time_s),
            "per_port": per_port(sim),
            "window": window.map(|w| window_json(&host_names, &w)),
            "flows": flows::summary_json(&flow_records, &sim.workload, sim_time_s),
            "variant": variant(&sim.scheme),
            "metrics": {},
        });
        Report {
            summary,
            timeseries: sim.recorder.series.clone(),
            flows: flow_records,
            resolved_toml: sim.scenario.to_toml(),
            conserved,
        }
    }
}

fn source_json(c: &HostCounters, span_s: f64) -> Value {
    json!({
        "generated_frames": c.generated_frames,
        "tx_frames": c.tx_frames,
        "tx_bytes": c.tx_bytes,
        "throughput_bps": c.tx_bytes as f64 * 8.0 / span_s,
        "offered_bps": c.generated_bytes as f64 * 8.0 / span_s,
        "dropped_frames": c.dropped_frames,
        "rx_frames": c.rx_frames,
        "rx_bytes": c.rx_bytes,
        "rx_throughput_bps": c.rx_bytes as f64 * 8.0 / span_s,
    })
}

fn per_source(names: &[&str], counters: &[HostCounters], span_s: f64) -> Value {
    let mut m = Map::new();
    for (name, c) in names.iter().zip(counters) {
        m.insert((*name).into(), source_json(c, span_s));
    }
    Value::Object(m)
}

fn window_json(names: &[&str], w: &WindowCounters) -> Value {
    let span = w.end_s - w.start_s;
    let senders: Vec<f64> = w
        .per_host
        .iter()
        .filter(|c| c.generated_frames > 0)
        .map(|c| c.tx_bytes as f64 * 8.0 / span)
        .collect();
    let sum = |f: fn(&HostCounters) -> u64| w.per_host.iter().map(f).sum::<u64>();
    json!({
        "start_s": w.start_s,
        "end_s": w.end_s,
        "per_source": per_source(names, &w.per_host, span),
        "fairness_index": jain_fairness(&senders),
        "frames_generated": sum(|c| c.generated_frames),
        "frames_transmitted": sum(|c| c.tx_frames),
        "frames_received": sum(|c| c.rx_frames),
        "frames_dropped_at_sources": sum(|c| c.dropped_frames),
        "per_port": w
            .port_peak_queue_bytes
            .iter()
            .map(|(name, peak)| (name.clone(), json!({"peak_queue_bytes": peak})))
            .collect::<Map<String, Value>>(),
    })
}

fn per_port(sim: &Simulation) -> Value {
    let now = sim.simulated_until();
    let span_s = now.as_secs_f64();
    let mut m = Map::new();
    for node in &sim.nodes {
        let Node::Switch(sw) = node else { continue };
        for (j, p) in sw.ports.iter().enumerate() {
            m.insert(
                p.name.clone(),
                json!({
                    "peak_queue_bytes": p.stats.peak_queue_bytes,
                    "mean_queue_bytes": p.mean_queue_bytes(now),
                    "tx_frames": p.stats.tx_frames,
                    "throughput_bps": p.stats.data_tx_bytes as f64 * 8.0 / span_s,
                    "utilisation": p.stats.data_tx_bytes as f64 * 8.0 / span_s / p.line_rate_bps,
                    "dropped_frames": p.stats.dropped_frames,
                    "paused_frac": p.paused_time(now).as_secs_f64() / span_s,
                    "congestion_point": sw.cps[j].is_some(),
                    "cp_messages": sw.cps[j].as_ref().map_or(0, |c| c.messages),
                }),
            );
        }
        m.insert(
            sw.name.clone(),
            json!({"peak_memory_bytes": sw.peak_memory_bytes, "dropped_frames": sw.dropped_frames}),
        );
    }
    Value::Object(m)
}

/// Which scheme variant ran, so outputs say it (protocols.md: reconstructions are parameters).
fn variant(scheme: &Scheme) -> Value {
    match scheme {
        Scheme::None => json!({"scheme": "none"}),
        Scheme::Qcn(p) => json!({
            "scheme": "qcn",
            "tr_update": p.tr_update,
            "fast_recovery_cmp": p.fast_recovery_cmp,
        }),
        Scheme::Bcn(p) => json!({"scheme": "bcn", "name": p.variant_name()}),
    }
}
