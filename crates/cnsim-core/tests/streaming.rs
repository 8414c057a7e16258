//! A streamed run (`Simulation::run_streaming`) hands over, batch by batch, exactly the tables
//! of the in-memory run (`Simulation::run`), and its summary is the same: flow workloads with
//! and without a transport (losses, retransmissions), and frame-level sources with rate
//! limiters named as the run goes.

use cnsim_core::{Drained, FlowRecords, Report, Simulation, TimeSeries};
use serde_json::Value;

fn leaf_spine(duration_s: f64, traffic_extra: &str, extra: &str) -> String {
    format!(
        r#"
name = "stream"
seed = 3
duration_s = {duration_s:?}
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate_bps = 40e9
host_link_delay_s = 1e-6
fabric_link_delay_s = 1e-6
switch = {{ output_buffer_bytes = 120_000 }}
{extra}
[[traffic]]
kind = "flows"
hosts = "all"
dst = "uniform"
load = 0.7
size = {{ cdf = "websearch" }}
{traffic_extra}
[report]
probe_interval_s = 1e-4
slowdown_size_edges_bytes = [1e4, 1e5, 1e6]
"#
    )
}

fn simulation(text: &str) -> Simulation {
    cnsim_core::prepare_in(text, &[], None, None).expect("the scenario is valid")
}

/// The summary without the wall-clock fields (they differ between any two runs).
fn stable(summary: &Value) -> Value {
    let mut s = summary.clone();
    for k in [
        "wall_time_s",
        "wall_s_per_sim_s",
        "events_per_s",
        "frame_hops_per_s",
    ] {
        s.as_object_mut().expect("an object").remove(k);
    }
    s
}

fn append_flows(all: &mut FlowRecords, b: FlowRecords) {
    macro_rules! cat {
        ($($f:ident),*) => { $(all.$f.extend(b.$f);)* };
    }
    cat!(
        flow_id,
        src,
        dst,
        size_bytes,
        priority,
        start_s,
        end_s,
        fct_s,
        ideal_fct_s,
        completed,
        frames_dropped,
        delivered_bytes,
        retransmitted_bytes,
        timeouts,
        goodput_bps,
        sender_end_s
    );
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn assert_same_flows(a: &FlowRecords, b: &FlowRecords) {
    assert_eq!(a.flow_id, b.flow_id);
    assert_eq!(
        (&a.src, &a.dst, &a.size_bytes),
        (&b.src, &b.dst, &b.size_bytes)
    );
    assert_eq!(a.priority, b.priority);
    for (x, y) in [
        (&a.start_s, &b.start_s),
        (&a.end_s, &b.end_s),
        (&a.fct_s, &b.fct_s),
        (&a.ideal_fct_s, &b.ideal_fct_s),
        (&a.goodput_bps, &b.goodput_bps),
        (&a.sender_end_s, &b.sender_end_s),
    ] {
        assert_eq!(bits(x), bits(y));
    }
    assert_eq!(a.completed, b.completed);
    assert_eq!(a.frames_dropped, b.frames_dropped);
    assert_eq!(a.delivered_bytes, b.delivered_bytes);
    assert_eq!(a.retransmitted_bytes, b.retransmitted_bytes);
    assert_eq!(a.timeouts, b.timeouts);
}

/// Runs `text` in memory and streamed; checks the two agree; returns the number of batches
/// that carried flows and the streamed report.
fn compare(text: &str) -> (usize, Report) {
    let memory = Report::new(simulation(text).run(&mut |_| true));
    let mut flows = FlowRecords::default();
    let mut series = TimeSeries::default();
    let mut flow_batches = 0;
    let finished = simulation(text).run_streaming(&mut |_| true, &mut |d: Drained| {
        flow_batches += usize::from(!d.flows.flow_id.is_empty());
        append_flows(&mut flows, d.flows);
        series.time_s.extend(d.series.time_s);
        series.metric.extend(d.series.metric);
        series.entity.extend(d.series.entity);
        series.value.extend(d.series.value);
        series.entities.extend(d.series.entities);
        series.metrics = d.series.metrics;
        true
    });
    let streamed = Report::new(finished);
    for &(id, dropped) in &streamed.late_drops {
        flows.frames_dropped[id as usize] = dropped;
    }
    assert!(streamed.flows.flow_id.is_empty() && streamed.timeseries.time_s.is_empty());
    assert!(memory.late_drops.is_empty());
    assert_same_flows(&memory.flows, &flows);
    let (m, s) = (&memory.timeseries, &series);
    assert_eq!((&m.metric, &m.entity), (&s.metric, &s.entity));
    assert_eq!(
        (bits(&m.time_s), bits(&m.value)),
        (bits(&s.time_s), bits(&s.value))
    );
    assert_eq!((&m.metrics, &m.entities), (&s.metrics, &s.entities));
    assert_eq!(stable(&memory.summary), stable(&streamed.summary));
    (flow_batches, streamed)
}

#[test]
fn streamed_open_loop_flows_are_the_in_memory_ones() {
    let (batches, report) = compare(&leaf_spine(0.03, "", ""));
    // Several batches: the test covers flows handed over while others still run.
    assert!(batches > 2, "{batches} batches");
    let flows = &report.summary["flows"];
    // Flows that lost frames (no transport: they never complete) are handed over once every
    // frame is accounted for, not held back to the end.
    assert!(flows["with_drops"].as_u64().expect("a count") > 0);
    assert!(flows["completed"].as_u64().expect("a count") > 100);
    assert!(flows["slowdown_by_size"]["b1"]["p99"].is_number());
}

#[test]
fn streamed_transported_flows_under_loss_are_the_in_memory_ones() {
    // Go-back-N under loss: retransmissions, timeouts, flows that complete out of order.
    let text = leaf_spine(0.03, "transport = \"roce\"\nstop_s = 0.02", "");
    let text = text.replace(
        "fabric_link_delay_s = 1e-6",
        "fabric_link_delay_s = 1e-6\nlink_loss_rate = 1e-3",
    );
    let (batches, report) = compare(&text);
    assert!(batches > 1, "{batches} batches");
    let flows = &report.summary["flows"];
    assert!(flows["retransmitted_bytes"].as_u64().expect("bytes") > 0);
    assert!(flows["goodput_mean_bps"].is_number());
}

#[test]
fn streamed_frame_level_series_are_the_in_memory_ones() {
    // seed 004's QCN run: rate limiters are named as they are first used.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../python/cnsim/presets/seed004-qcn.toml"
    );
    let text = std::fs::read_to_string(path).expect("the preset exists");
    let text = format!("{text}\n").replace("duration_s = ", "duration_s = 0.05 # was ");
    let (batches, report) = compare(&text);
    assert_eq!(batches, 0);
    assert!(report.summary["flows"].is_null());
}

#[test]
fn flows_held_back_by_a_running_one_come_over_in_bounded_pieces() {
    // Flow 0 (a trace flow at t = 0) never completes; some 80,000 small flows after it
    // complete but wait for it: they come over at the end, at most 65,536 to a hand-over.
    let text = r#"
name = "held-back"
seed = 2
duration_s = 0.002
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate_bps = 40e9
[[traffic]]
kind = "flow_trace"
flows = [{ start_s = 0.0, src = "h0_0", dst = "h1_0", size_bytes = 1e12 }]
[[traffic]]
kind = "flows"
hosts = "all"
dst = "uniform"
load = 0.5
size = { dist = "fixed", bytes = 500 }
[report]
probe_interval_s = 1e-3
"#;
    let mut sizes = Vec::new();
    let finished = simulation(text).run_streaming(&mut |_| true, &mut |d: Drained| {
        sizes.push(d.flows.flow_id.len());
        true
    });
    let report = Report::new(finished);
    let started = report.summary["flows"]["started"]
        .as_u64()
        .expect("a count") as usize;
    assert!(started > 70_000, "{started} flows");
    assert_eq!(sizes.iter().sum::<usize>(), started);
    assert!(sizes.iter().all(|&n| n <= 1 << 16), "{sizes:?}");
    let pieces: Vec<usize> = sizes.iter().copied().filter(|&n| n > 0).collect();
    assert_eq!(pieces, [1 << 16, started - (1 << 16)]);
    compare(text);
}
