//! Flow workloads: flow completion times against the idle-network FCT computed here from first
//! principles, slowdown versus load, lost frames, traces that repeat a run exactly.

mod common;

use cnsim_core::FlowRecords;
use common::*;

const DELAY_S: f64 = 1e-6;

/// 16 hosts on one switch, 10 Gb/s links with 1 us delay, infinite buffers, no scheme, Poisson
/// flows of exponential sizes (mean 60 KB) to uniform destinations at `load`.
fn star(load: f64, stop_s: f64, seed: u64) -> String {
    let hosts: Vec<String> = (1..=16).map(|i| format!("h{i}")).collect();
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let mut s = ScenarioToml::new("star", stop_s * 1.25)
        .seed(seed)
        .hosts(&names)
        .switch("sw");
    for h in &names {
        s = s.link(h, "sw", G10, DELAY_S);
    }
    s.traffic(
        "flows",
        &names,
        "uniform",
        &format!(
            "load = {load:?}\nsize = {{ dist = \"exponential\", mean_bytes = 60000 }}\nstop_s = {stop_s:?}"
        ),
    )
    .probe_interval(stop_s / 10.0)
    .build()
}

/// The FCT of a flow alone on the star: the source serialises every byte back to back; the
/// switch (store and forward, same rate) sends each frame one frame time after the source
/// did, and its last frame waits for the one before it, so the flow ends one first-frame time
/// after the source's last bit, plus both links' delays.
fn ideal_star_fct_s(size_bytes: u64) -> f64 {
    let first = size_bytes.min(1500);
    tx_s(size_bytes as f64, G10) + tx_s(first as f64, G10) + 2.0 * DELAY_S
}

fn completed(r: &FlowRecords) -> impl Iterator<Item = usize> + '_ {
    (0..r.flow_id.len()).filter(|&i| r.completed[i])
}

fn mean_slowdown(r: &FlowRecords) -> f64 {
    let v: Vec<f64> = completed(r)
        .map(|i| r.fct_s[i] / ideal_star_fct_s(r.size_bytes[i]))
        .collect();
    mean(&v)
}

#[test]
fn a_lone_flow_takes_exactly_its_ideal_time() {
    let text = ScenarioToml::new("one", 0.01)
        .hosts(&["a", "b"])
        .switch("sw")
        .link("a", "sw", G10, DELAY_S)
        .link("b", "sw", G10, 3e-6)
        .raw(
            "[[traffic]]\nkind = \"flow_trace\"\nflows = [{ start_s = 0.001, src = \"a\", dst = \"b\", size_bytes = 100_001 }]\n",
        )
        .build();
    let r = run(&text);
    let f = &r.flows;
    assert_eq!(f.flow_id, vec![0]);
    assert!(f.completed[0]);
    // 66 frames of 1500 B and one of 1001 B: 80.0008 us at the source. The switch finishes
    // the 66th full frame 1.2 us after the source did, then sends the last one (0.8008 us):
    // 82.2008 us, then the 1 + 3 us of the links.
    let want = 100_001.0 * 8.0 / G10 + 1500.0 * 8.0 / G10 + 4e-6;
    assert!(
        (f.fct_s[0] - want).abs() < 1e-12,
        "{} vs {want}",
        f.fct_s[0]
    );
    assert_eq!(f.fct_s[0], f.ideal_fct_s[0]);
    assert_eq!(u(&r.summary, "flows/completed"), 1);
    assert_conserved(&r);
}

#[test]
fn slowdown_is_near_one_at_low_load_and_rises_with_load() {
    // 1% load: flows rarely meet; the mean slowdown is at most 1.02.
    let low = run(&star(0.01, 0.2, 1));
    assert!(low.flows.flow_id.len() > 300, "{}", low.flows.flow_id.len());
    let s = mean_slowdown(&low.flows);
    assert!((1.0..=1.02).contains(&s), "slowdown at 1% load: {s}");
    let mut previous = s;
    for load in [0.1, 0.3, 0.5, 0.7] {
        let r = run(&star(load, 0.02, 1));
        assert_conserved(&r);
        let s = mean_slowdown(&r.flows);
        assert!(
            s > previous,
            "slowdown {s} at load {load} not above {previous}"
        );
        previous = s;
        // No flow beats the idle network, and the core's ideal agrees with this one.
        for i in completed(&r.flows) {
            let ideal = ideal_star_fct_s(r.flows.size_bytes[i]);
            assert!((r.flows.ideal_fct_s[i] - ideal).abs() < 1e-11);
            assert!(
                r.flows.fct_s[i] >= ideal - 1e-12,
                "flow {i} faster than ideal"
            );
        }
    }
}

#[test]
fn realised_load_and_size_are_reported_beside_the_asked_ones() {
    let r = run(&star(0.3, 0.05, 2));
    let s = &r.summary;
    assert_eq!(f(s, "flows/requested_load"), 0.3);
    assert_eq!(f(s, "flows/requested_size_mean_bytes"), 60_000.0);
    // About 16 x 0.3 x 10e9 x 0.05 / 480e3 = 5,000 flows: the realised mean within 5%.
    assert_close(f(s, "flows/size_mean_bytes"), 60_000.0, 0.05, "mean size");
    assert_close(f(s, "flows/load"), 0.3, 0.07, "load");
    let started = u(s, "flows/started");
    assert_eq!(started as usize, r.flows.flow_id.len());
    assert_eq!(u(s, "flows/completed") + u(s, "flows/incomplete"), started);
}

#[test]
fn a_flow_that_loses_a_frame_never_completes() {
    // Two senders into one receiver through a 20 KB output queue: frames are lost.
    let text = ScenarioToml::new("lossy", 0.01)
        .hosts(&["a", "b", "c"])
        .switch_with("sw", "output_buffer_bytes = 20_000")
        .link("a", "sw", G10, DELAY_S)
        .link("b", "sw", G10, DELAY_S)
        .link("c", "sw", G10, DELAY_S)
        .raw(
            "[[traffic]]\nkind = \"flow_trace\"\nflows = [\n  { start_s = 0.0, src = \"a\", dst = \"c\", size_bytes = 1_000_000 },\n  { start_s = 0.0, src = \"b\", dst = \"c\", size_bytes = 1_000_000 },\n  { start_s = 0.005, src = \"a\", dst = \"c\", size_bytes = 30_000 },\n]\n",
        )
        .build();
    let r = run(&text);
    assert_conserved(&r);
    let f = &r.flows;
    let lost: u32 = f.frames_dropped.iter().sum();
    assert_eq!(lost as u64, u(&r.summary, "frames/dropped/egress"));
    assert!(lost > 0);
    for i in 0..2 {
        assert!(f.frames_dropped[i] > 0 && !f.completed[i] && f.end_s[i].is_nan());
        assert!(f.delivered_bytes[i] < 1_000_000);
    }
    // The late flow meets an empty network and completes.
    assert!(f.completed[2] && f.frames_dropped[2] == 0);
    assert_eq!(u(&r.summary, "flows/with_drops"), 2);
}

#[test]
fn a_written_trace_repeats_the_run_exactly() {
    let text = star(0.5, 0.01, 3);
    let scenario = resolve_with(&text, &[]).unwrap();
    let mut csv = Vec::new();
    let n = cnsim_core::write_flow_trace(&scenario, &mut csv).unwrap();
    let dir = std::env::temp_dir().join(format!("cnsim-flows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("trace.csv");
    std::fs::write(&file, &csv).unwrap();
    let generated = run(&text);
    assert_eq!(n, generated.flows.flow_id.len());
    // Same network, the trace instead of the generator.
    let cut = text.find("[[traffic]]").unwrap();
    let end = text[cut..].find("[report]").unwrap() + cut;
    let replay = format!(
        "{}[[traffic]]\nkind = \"flow_trace\"\ntrace = \"{}\"\n\n{}",
        &text[..cut],
        file.display(),
        &text[end..]
    );
    let replayed = run(&replay);
    std::fs::remove_dir_all(&dir).unwrap();
    let (a, b) = (&generated.flows, &replayed.flows);
    assert_eq!(a.start_s, b.start_s);
    assert_eq!(a.size_bytes, b.size_bytes);
    assert_eq!(
        a.fct_s.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        b.fct_s.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
    let strip = |s: &serde_json::Value| {
        let mut d = deterministic_part(s);
        let flows = d["flows"].as_object_mut().unwrap();
        // The trace run was not asked for a load or mean, and drew no flows of its own: only
        // those differ.
        for k in [
            "requested_load",
            "requested_size_mean_bytes",
            "load",
            "generated",
            "generated_size_mean_bytes",
        ] {
            flows.remove(k);
        }
        d
    };
    assert_eq!(strip(&generated.summary), strip(&replayed.summary));
}

#[test]
fn flow_fields_are_checked() {
    let base = ScenarioToml::new("x", 0.01)
        .hosts(&["a", "b"])
        .switch("sw")
        .link("a", "sw", G10, DELAY_S)
        .link("b", "sw", G10, DELAY_S)
        .build();
    let with = |traffic: &str| format!("{base}\n{traffic}");
    let cases = [
        ("kind = \"flows\"\nhosts = [\"a\"]\ndst = \"b\"\nload = 0.5", "traffic[0].size: required"),
        (
            "kind = \"flows\"\nhosts = [\"a\"]\ndst = \"b\"\nload = 0.5\nsize = { dist = \"pareto\", shape = 0.9, mean_bytes = 1000 }",
            "traffic[0].size.mean_bytes: a Pareto mean needs shape > 1",
        ),
        (
            "kind = \"flows\"\nhosts = [\"a\"]\ndst = \"b\"\nload = 0.5\nsize = { dist = \"empirical\", cdf = [[100, 0.5], [50, 1.0]] }",
            "traffic[0].size.cdf[1]: sizes must be",
        ),
        (
            "kind = \"bernoulli\"\nhosts = [\"a\"]\ndst = \"b\"\nload = 0.5\nsize = { dist = \"fixed\", bytes = 10 }",
            "traffic[0].size: does not apply to kind = \"bernoulli\"",
        ),
        (
            "kind = \"flow_trace\"\nflows = [{ start_s = 0.0, src = \"a\", dst = \"a\", size_bytes = 10 }]",
            "traffic[0].flows[0].dst: host 'a' cannot send to itself",
        ),
        (
            "kind = \"flow_trace\"\ntrace = \"/nonexistent/t.csv\"",
            "traffic[0].trace: cannot read '/nonexistent/t.csv'",
        ),
        (
            "kind = \"flows\"\nhosts = [\"a\", \"b\"]\ndst = [\"a\"]\nload = 0.5\nsize = { dist = \"fixed\", bytes = 10 }",
            "traffic[0].dst: host 'a' has no destination other than itself",
        ),
        (
            "kind = \"flows\"\nhosts = [\"a\"]\ndst = \"b\"\nload = 0.5\npriority = 9\nsize = { dist = \"fixed\", bytes = 10 }",
            "traffic[0].priority: must be a class in 0-7",
        ),
    ];
    for (traffic, want) in cases {
        let err = run_error_of(&with(&format!("[[traffic]]\n{traffic}\n")), &[]).to_string();
        assert!(err.starts_with(want), "got: {err}\nwant: {want}");
    }
}

#[test]
fn uniform_flows_on_a_large_tree_build_without_per_pair_state() {
    // 512 hosts: destinations drawn without a per-source list, VOQs only where flows are.
    let n = 512;
    let mut s = ScenarioToml::new("big", 2e-4);
    let names: Vec<String> = (0..n).map(|i| format!("h{i}")).collect();
    for h in &names {
        s = s.host(h);
    }
    for l in 0..n / 32 {
        s = s.switch(&format!("leaf{l}"));
    }
    s = s.switch("spine");
    for (i, h) in names.iter().enumerate() {
        s = s.link(h, &format!("leaf{}", i / 32), G10, DELAY_S);
    }
    for l in 0..n / 32 {
        s = s.link(&format!("leaf{l}"), "spine", G10, DELAY_S);
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let r = run(&s
        .bernoulli(&refs, "uniform", 0.3)
        .probe_interval(1e-4)
        .build());
    assert_conserved(&r);
    assert!(u(&r.summary, "frames/delivered") > 1000);
}

#[test]
fn a_traffic_seed_replays_the_same_flows_whatever_the_run_seed() {
    let with_seed = |run_seed: u64, traffic_seed: Option<u64>| {
        let text = star(0.3, 0.005, run_seed);
        let text = match traffic_seed {
            Some(t) => text.replacen("load = 0.3", &format!("seed = {t}\nload = 0.3"), 1),
            None => text,
        };
        let r = run(&text);
        (r.flows.size_bytes.clone(), r.flows.start_s.clone())
    };
    let a = with_seed(1, Some(7));
    assert!(!a.0.is_empty());
    assert_eq!(a, with_seed(2, Some(7)));
    assert_ne!(with_seed(1, None), with_seed(2, None));
    assert_ne!(a, with_seed(1, Some(8)));
}
