//! E2CM end to end (cc/e2cm.rs, protocols.md section 4): the coarse (ECM) loop installs the
//! limiters, rate-limited pairs probe, the switch stamps the probes and the receivers return
//! them, the fine limiter acts, probes are counted as control traffic, and frames are conserved.

mod common;

use common::*;

/// Four senders saturate one 10 Gb/s output of a switch (memory 150 KB per input, no PAUSE),
/// E2CM with seed 003's parameters for M = 150 KB (the defaults).
fn incast(scheme: &str, extra: &str) -> String {
    ScenarioToml::new("e2cm", 0.02)
        .hosts(&["a", "b", "c", "d", "r"])
        .switch_with("sw", "input_buffer_bytes = 150_000")
        .link("a", "sw", G10, 1e-6)
        .link("b", "sw", G10, 1e-6)
        .link("c", "sw", G10, 1e-6)
        .link("d", "sw", G10, 1e-6)
        .link("sw", "r", G10, 1e-6)
        .saturate(&["a"], "r")
        .saturate(&["b"], "r")
        .saturate(&["c"], "r")
        .saturate(&["d"], "r")
        .raw(&format!("[congestion]\nscheme = \"{scheme}\"\n{extra}"))
        .probe_interval(1e-3)
        .build()
}

#[test]
fn rate_limited_pairs_probe_and_the_fine_loop_acts() {
    let r = run(&incast("e2cm", ""));
    assert_conserved(&r);
    let s = &r.summary;
    assert_eq!(at(s, "variant/scheme"), "e2cm");
    assert_eq!(at(s, "variant/name"), "e2cm(ecm+max)");
    assert_eq!(at(s, "variant/probe_measures"), "flow_bytes");
    let probes = u(s, "control_frames/e2cm_probe");
    // Each sender is limited from the first negative BCN on and sends at most 20 ms x 10 Gb/s
    // = 25 MB, a probe per 75 KB: at most 333 forward probes each, and as many returned.
    assert!(probes > 100, "{probes} probe frames");
    assert!(probes <= 4 * 2 * 334, "{probes} probe frames");
    // Probe bytes are control bytes: 64 B for every control frame of every kind.
    let kinds = [
        "pause_xoff",
        "pause_xon",
        "bcn_negative",
        "bcn_positive",
        "bcn_max",
        "bcn_00",
        "e2cm_probe",
    ];
    let frames: u64 = kinds
        .iter()
        .map(|k| u(s, &format!("control_frames/{k}")))
        .sum();
    assert_eq!(u(s, "control_frames/bytes"), 64 * frames);
    // Returned probes reach the RPs (their feedback is recorded per pair).
    let seen = series(&r, "rp_feedback", "a->r");
    assert!(!values_between(&seen, 0.005, 0.02).is_empty());
    // The output stays busy: the four limited senders share the 10 Gb/s port.
    let tx = series(&r, "port_tx_bps", "sw->r");
    let late = values_between(&tx, 0.01, 0.02);
    assert!(mean(&late) > 8e9, "{late:?}");
}

#[test]
fn ecm_sends_no_probes_and_e2cm_variants_are_named() {
    let r = run(&incast("ecm", ""));
    assert_conserved(&r);
    assert_eq!(u(&r.summary, "control_frames/e2cm_probe"), 0);
    let r = run(&incast(
        "e2cm",
        "[congestion.e2cm]\nstamp_combine = \"last\"\nprobe_measures = \"queue_bytes\"\n",
    ));
    assert_conserved(&r);
    assert_eq!(
        at(&r.summary, "variant/name"),
        "e2cm(ecm+max)+stamp_last+probe_queue"
    );
    assert!(u(&r.summary, "control_frames/e2cm_probe") > 0);
}

#[test]
fn bad_fine_loop_fields_name_their_path() {
    let e = error_of(
        &incast("e2cm", "[congestion.e2cm]\nqeq_flow_bytes = -1\n"),
        &[],
    );
    assert_eq!(e.path(), Some("congestion.e2cm.qeq_flow_bytes"));
    let e = error_of(
        &incast("e2cm", "[congestion.e2cm]\nstamp = \"last\"\n"),
        &[],
    );
    assert!(e.to_string().contains("congestion.e2cm"), "{e}");
}
