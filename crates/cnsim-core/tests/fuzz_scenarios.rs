//! Property-based fuzzing of the scenario parser, the validation and the simulator (issue 13).
//!
//! Scenarios are built from a valid template whose numbers are replaced by hostile ones (NaN,
//! infinities, subnormals, values past the clock, huge integers), `--set` overrides with
//! hostile paths and values are applied, and valid text is mutated byte by byte. Every case
//! must end in one of two ways: a one-line error that names a field (or the TOML line), or a
//! run whose summary conserves frames and holds no NaN. A panic, a hang (a run past its wall
//! budget) or a multi-line error fails the test. Runs are capped by `[limits]` so thousands of
//! cases fit in the test suite's time.

mod common;

use std::time::{Duration, Instant};

use cnsim_core::{run_toml, ConfigError};
use common::assert_no_nulls;
use proptest::prelude::*;
use serde_json::Value;

/// Cases per property; `PROPTEST_CASES` overrides it (CI runs the default).
const CASES: u32 = 1000;
/// Wall time any single case may take before it counts as a hang.
const WALL_BUDGET: Duration = Duration::from_secs(20);

/// Numbers at and past every edge the validation guards, and ordinary ones.
fn hostile_number() -> impl Strategy<Value = String> {
    let edges = prop::sample::select(vec![
        "0",
        "-0.0",
        "1",
        "-1",
        "0.5",
        "1e-300",
        "5e-324",
        "1e-17",
        "1e-13",
        "4e-13",
        "1e-12",
        "1e-9",
        "1e-6",
        "1e-3",
        "1e3",
        "1e6",
        "1000001.0",
        "1e7",
        "2e7",
        "1e12",
        "1e15",
        "1e19",
        "1e300",
        "inf",
        "-inf",
        "nan",
        "65535",
        "65536",
        "4294967296",
        "9223372036854775807",
        "99999999999999999999",
        "-9223372036854775808",
        "9216",
        "9217",
        "63",
        "64",
    ]);
    prop_oneof![
        3 => edges.prop_map(str::to_string),
        1 => any::<f64>().prop_map(|v| format!("{v:?}").replace("inf", "inf")),
        1 => any::<i64>().prop_map(|v| v.to_string()),
        1 => (0.0..1.0f64).prop_map(|v| format!("{v:?}")),
    ]
}

/// A valid base: two senders through a switch with PAUSE and a scheme, capped small.
fn template(v: &[String; 14], scheme: &str, kind: &str) -> String {
    let traffic = match kind {
        "bernoulli" => format!("load = {}", v[8]),
        "cbr" => format!("rate_bps = {}", v[8]),
        _ => String::new(),
    };
    format!(
        r#"name = "fuzz"
duration_s = {d}
seed = {seed}

[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[hosts]]
name = "c"
rx_rate_bps = {rx}
rx_buffer_bytes = {rxb}

[[switches]]
name = "sw"
latency_s = {lat}
output_buffer_bytes = {ob}
pause = {{ trigger = "egress", xoff_bytes = {xoff}, xon_bytes = 1000.0 }}

[[links]]
ends = ["a", "sw"]
rate_bps = {rate}
delay_s = {delay}
[[links]]
ends = ["b", "sw"]
rate_bps = 1e10
[[links]]
ends = ["sw", "c"]
rate_bps = 1e10
schedule = [{{ from = "sw", at_s = {at}, rate_bps = {srate} }}]

[[traffic]]
kind = "{kind}"
hosts = ["a", "b"]
dst = "c"
frame_bytes = {fb}
{traffic}

[congestion]
scheme = "{scheme}"

[report]
probe_interval_s = {probe}

[limits]
max_events = 3e4
max_probe_samples = 1e5
"#,
        d = v[0],
        seed = v[1],
        rx = v[2],
        rxb = v[3],
        lat = v[4],
        ob = v[5],
        xoff = v[6],
        rate = v[7],
        delay = v[9],
        at = v[10],
        srate = v[11],
        fb = v[12],
        probe = v[13],
    )
}

/// Sane values for the template's slots (each case replaces some with hostile ones).
const SANE: [&str; 14] = [
    "0.002", "7", "5e9", "3e5", "1e-6", "1.5e5", "1.2e5", "1e10", "0.6", "1e-6", "0.001", "5e9",
    "1500", "0.0002",
];

fn scenario() -> impl Strategy<Value = String> {
    let slots = prop::collection::vec(prop::option::weighted(0.1, hostile_number()), 14);
    let scheme = prop::sample::select(vec!["none", "qcn", "bcn", "ecm"]);
    let kind = prop::sample::select(vec!["bernoulli", "cbr", "saturate"]);
    (slots, scheme, kind).prop_map(|(slots, scheme, kind)| {
        let v: [String; 14] =
            std::array::from_fn(|i| slots[i].clone().unwrap_or_else(|| SANE[i].to_string()));
        template(&v, scheme, kind)
    })
}

/// Override paths a user could type: real fields, scheme fields, wrong shapes.
fn override_pair() -> impl Strategy<Value = (String, String)> {
    let path = prop::sample::select(vec![
        "duration_s",
        "seed",
        "links[0].rate_bps",
        "links[2].delay_line_s",
        "links[5].delay_s",
        "hosts[2].rx_rate_bps",
        "hosts[0].nic_buffer_bytes",
        "hosts[1].response_delay_s",
        "traffic[0].frame_bytes",
        "traffic[0].start_s",
        "traffic[0].stop_s",
        "traffic[0].load",
        "report.probe_interval_s",
        "report.window_s",
        "model.wire_overhead_bytes",
        "model.control_frame_bytes",
        "congestion.qcn.timer_period_s",
        "congestion.qcn.w",
        "congestion.qcn.min_rate_bps",
        "congestion.bcn.drift_interval_s",
        "congestion.bcn.gi",
        "switches[0].pause.quanta",
        "pfc.xoff_bytes",
        "pfc.headroom_bytes",
        "pfc.alpha",
        "pfc.quanta",
        "pfc.lossless_classes",
        "traffic[0].priority",
        "limits.max_events",
        "name",
        "name.x",
        "traffic[x].load",
        "hosts..name",
        "",
        "links[0]",
        "report.plots",
    ]);
    let value = prop_oneof![
        4 => hostile_number(),
        1 => prop::sample::select(vec![
            "abc", "", "[1, 2]", "{ a = 1 }", "\"text\"", "true", "1e400", "[0.1, 0.05]",
            "[0.0, 0.001]", "\"\u{0}\"", "[[]]",
        ]).prop_map(str::to_string),
    ];
    (path, value).prop_map(|(p, v)| (p.to_string(), v))
}

/// The properties every outcome must have.
fn check_outcome(text: &str, overrides: &[(String, String)], seed: Option<u64>) {
    let start = Instant::now();
    let mut hung = false;
    let outcome = run_toml(text, overrides, seed, &mut |_| {
        hung = start.elapsed() > WALL_BUDGET;
        !hung
    });
    assert!(!hung, "run passed its wall budget:\n{text}\n{overrides:?}");
    match outcome {
        Err(e) => check_error(&e),
        Ok(report) => {
            let s = &report.summary;
            assert!(report.conserved, "frames not conserved: {s}");
            assert_eq!(s["completed"], Value::Bool(true), "{s}");
            assert_no_nulls(s, "");
            assert!(report.timeseries.value.iter().all(|v| v.is_finite()));
            let t = &report.timeseries.time_s;
            assert!(t.windows(2).all(|w| w[0] <= w[1]), "probes out of order");
        }
    }
}

fn check_error(e: &ConfigError) {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "multi-line error: {msg}");
    match e {
        ConfigError::Field { path, reason } => {
            assert!(!path.is_empty() && !reason.is_empty(), "{msg}");
            assert!(!path.contains('\n'));
        }
        ConfigError::Syntax(text) => assert!(text.contains("line "), "no line in: {msg}"),
    }
}

/// The sane base with `[pfc]` (two classes, `threshold` static or dynamic) whose numbers are
/// hostile: thresholds, headroom, alpha, quanta, DWRR quanta, priorities.
fn pfc_scenario() -> impl Strategy<Value = String> {
    let slots = prop::collection::vec(prop::option::weighted(0.15, hostile_number()), 8);
    let threshold = prop::sample::select(vec!["static", "dynamic"]);
    let scheduler = prop::sample::select(vec!["strict", "dwrr"]);
    let host_rx = any::<bool>();
    let scheme = prop::sample::select(vec!["none", "qcn", "dcqcn"]);
    // Not cbr: the template's sane slot 8 is a load, not a rate.
    let kind = prop::sample::select(vec!["bernoulli", "saturate"]);
    let base =
        (scheme, kind).prop_map(|(scheme, kind)| template(&SANE.map(str::to_string), scheme, kind));
    (base, slots, threshold, scheduler, host_rx).prop_map(
        |(base, slots, threshold, scheduler, host_rx)| {
            let v: [String; 8] = std::array::from_fn(|i| {
                slots[i].clone().unwrap_or_else(|| SANE_PFC[i].to_string())
            });
            with_pfc(&base, &v, threshold, scheduler, host_rx)
        },
    )
}

/// The PFC fields' sane values, in `with_pfc`'s order.
const SANE_PFC: [&str; 8] = [
    "20000", "10000", "0.25", "1000", "30000", "100", "1500", "3",
];

/// `base` (a `template` scenario) with a shared buffer, the traffic's class `v[7]` and a `[pfc]`
/// table of XOFF, XON, alpha, XON offset, headroom, quanta and class 0's DWRR quantum `v[0..7]`.
fn with_pfc(
    base: &str,
    v: &[String; 8],
    threshold: &str,
    scheduler: &str,
    host_rx: bool,
) -> String {
    let base = base
        .replace(
            "output_buffer_bytes =",
            "shared_buffer_bytes = 2e5\noutput_buffer_bytes =",
        )
        .replace(
            "hosts = [\"a\", \"b\"]",
            &format!("hosts = [\"a\", \"b\"]\npriority = {}", v[7]),
        );
    format!(
        "{base}\n[pfc]\nlossless_classes = [3, 5]\nthreshold = \"{threshold}\"\n\
         xoff_bytes = {}\nxon_bytes = {}\nalpha = {}\nxon_offset_bytes = {}\n\
         headroom_bytes = {}\nquanta = {}\nscheduler = \"{scheduler}\"\n\
         dwrr_quantum_bytes = [{}, 1500, 1500, 3000, 1500, 1500, 1500, 1500]\n\
         host_rx = {host_rx}\n",
        v[0], v[1], v[2], v[3], v[4], v[5], v[6]
    )
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn hostile_numbers_are_refused_or_run_soundly(text in scenario()) {
        check_outcome(&text, &[], None);
    }

    #[test]
    fn hostile_pfc_numbers_are_refused_or_run_soundly(text in pfc_scenario()) {
        check_outcome(&text, &[], None);
    }

    #[test]
    fn hostile_overrides_are_refused_or_run_soundly(
        text in scenario(),
        overrides in prop::collection::vec(override_pair(), 0..4),
        seed in prop::option::of(any::<u64>()),
    ) {
        check_outcome(&text, &overrides, seed);
    }

    #[test]
    fn mutated_text_is_refused_or_runs_soundly(
        text in scenario(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6),
    ) {
        let mut bytes = text.into_bytes();
        for (at, byte, op) in edits {
            let i = at.index(bytes.len().max(1));
            match op {
                0 if !bytes.is_empty() => { bytes.remove(i.min(bytes.len() - 1)); }
                1 => bytes.insert(i, byte),
                _ => if let Some(b) = bytes.get_mut(i) { *b = byte },
            }
        }
        // The core takes text (&str): non-UTF-8 bytes never reach it.
        if let Ok(text) = String::from_utf8(bytes) {
            check_outcome(&text, &[], None);
        }
    }
}

/// A case the PFC fuzzing found (2026-12-06): one quantum of pause at 10 Gb/s refreshed every
/// 25.6 ns, faster than the link sends a 64 B PFC frame (51.2 ns), so thousands of PFC frames
/// waited in the control queue. Each new one went behind the last of them and ahead of the
/// scheme messages (`net/link_pause.rs`); found by counting from the front, that place made the
/// run 30 times slower and past the wall budget in a debug build. Since session 32 a refresh
/// takes the place of its class's frame still waiting, so one frame per class waits at most.
#[test]
fn a_pause_refreshed_faster_than_its_link_sends_it_runs() {
    let base = template(&SANE.map(str::to_string), "qcn", "bernoulli");
    let mut v = SANE_PFC.map(str::to_string);
    (v[3], v[5]) = ("1e-6".to_string(), "1".to_string()); // XON offset; quanta
    check_outcome(&with_pfc(&base, &v, "static", "dwrr", true), &[], None);
}
