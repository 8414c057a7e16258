//! Time-varying service rates (protocols.md section 6): a scheduled link direction and a
//! scheduled host receiver, under saturating traffic, read back from the probes.
//!
//! Probes every 0.25 ms measure a rate as (bytes done in the interval) x 8 / 0.25 ms. A frame
//! in progress at a step or at a probe boundary is counted whole in one interval, so a sample
//! is within one frame (1500 B x 8 / 0.25 ms = 48 Mb/s) of the level, plus, right after a
//! step, up to one frame still served at the old rate (at most 6 us of 250 = 2.4%): 3%.

mod common;

use common::*;

const PROBE_S: f64 = 0.25e-3;

/// The samples of a series in three phases [0, 1) ms, [1, 2) ms, [2, 3] ms, leaving out the
/// first probe (the pipe fills in its first 2.2 us).
fn phases(s: &[(f64, f64)]) -> [Vec<f64>; 3] {
    [
        values_between(s, 2.0 * PROBE_S, 1e-3),
        values_between(s, 1e-3 + PROBE_S, 2e-3),
        values_between(s, 2e-3 + PROBE_S, 3e-3),
    ]
}

fn assert_levels(s: &[(f64, f64)], levels: [f64; 3], what: &str) {
    // Probes at 0.5, 0.75, 1.0 | 1.25 .. 2.0 | 2.25 .. 3.0 ms.
    for ((phase, level), n) in phases(s).iter().zip(levels).zip([3, 4, 4]) {
        assert_eq!(phase.len(), n, "{what}: {s:?}");
        for v in phase {
            assert_close(*v, level, 0.03, &format!("{what} in {s:?}"));
        }
    }
}

#[test]
fn a_link_direction_steps_10_2_10_gbps() {
    // sw -> b is scheduled 10 -> 2 (at 1 ms) -> 10 Gb/s (at 2 ms); sw -> a, the other
    // direction's twin carrying b's traffic, must stay at 10 Gb/s throughout.
    let text = ScenarioToml::new("link-schedule", 3e-3)
        .hosts(&["a", "b"])
        .switch_with("sw", "output_buffer_bytes = 100000")
        .link("a", "sw", G10, 1e-6)
        .link_with(
            "sw",
            "b",
            G10,
            1e-6,
            "schedule = [\n\
             { from = \"sw\", at_s = 1e-3, rate_bps = 2e9 },\n\
             { from = \"sw\", at_s = 2e-3, rate_bps = 10e9 },\n]",
        )
        .saturate(&["a"], "b")
        .saturate(&["b"], "a")
        .probe_interval(PROBE_S)
        .build();
    let r = run(&text);
    assert_levels(
        &series(&r, "port_tx_bps", "sw->b"),
        [G10, 2e9, G10],
        "sw->b",
    );
    assert_levels(
        &series(&r, "port_tx_bps", "sw->a"),
        [G10, G10, G10],
        "sw->a",
    );
    // What the 2 Gb/s phase could not carry was dropped at the 100 KB egress queue.
    assert!(u(&r.summary, "frames/dropped/egress") > 0);
    assert_conserved(&r);
}

#[test]
fn a_host_receiver_steps_10_2_10_gbps() {
    // b absorbs at 10 Gb/s, 2 Gb/s from 1 ms, 10 Gb/s again from 2 ms (its receive queue,
    // unlimited, holds the backlog, so it stays busy in the last phase too).
    let text = ScenarioToml::new("rx-schedule", 3e-3)
        .host("a")
        .host_with(
            "b",
            "rx_rate_bps = 10e9\n\
             rx_schedule = [{ at_s = 1e-3, rate_bps = 2e9 }, { at_s = 2e-3, rate_bps = 10e9 }]",
        )
        .switch("sw")
        .link("a", "sw", G10, 1e-6)
        .link("sw", "b", G10, 1e-6)
        .saturate(&["a"], "b")
        .probe_interval(PROBE_S)
        .build();
    let r = run(&text);
    assert_levels(&series(&r, "host_rx_bps", "b"), [G10, 2e9, G10], "b rx");
    // 8 Gb/s x 1 ms = 1 MB piled up in b's receive queue during the slow phase and is still
    // there at the end (the link delivers as fast as b serves).
    let rxq = series(&r, "rx_queue_bytes", "b");
    let at_2ms = values_between(&rxq, 2e-3, 2e-3)[0];
    assert_close(at_2ms, 1e6, 0.01, "b's receive queue at 2 ms");
    assert_conserved(&r);
}

#[test]
fn seed004_rate_drop_under_pause_loses_nothing() {
    // Seed 004 in miniature: the egress steps 9.5 -> 2 -> 9.5 Gb/s (1 ms each) under egress
    // PAUSE 130/110 KB with a 150 KB queue: zero drops through both steps, the egress runs
    // at each level, and the queue never leaves [110000 - 6000, 150000] once filled
    // (bounds derived in tests/triggers.rs; at 2 Gb/s the drain is slower, so the same hold).
    let mut t = ScenarioToml::new("seed004-mini", 3e-3);
    let senders = ["rp1", "rp2", "rp3", "rp4"];
    for h in senders {
        t = t.host(h);
    }
    t = t.host("recv").switch_with(
        "sw",
        "output_buffer_bytes = 150000\n\
         pause = { trigger = \"egress\", xoff_bytes = 130000, xon_bytes = 110000 }",
    );
    for h in senders {
        t = t.link(h, "sw", G10, 1e-6);
    }
    let text = t
        .link_with(
            "sw",
            "recv",
            G10,
            1e-6,
            "schedule = [\n\
             { from = \"sw\", at_s = 0.0, rate_bps = 9.5e9 },\n\
             { from = \"sw\", at_s = 1e-3, rate_bps = 2e9 },\n\
             { from = \"sw\", at_s = 2e-3, rate_bps = 9.5e9 },\n]",
        )
        .saturate(&senders, "recv")
        .probe_interval(PROBE_S)
        .build();
    let r = run(&text);
    assert_eq!(u(&r.summary, "frames/dropped/total"), 0);
    assert_levels(
        &series(&r, "port_tx_bps", "sw->recv"),
        [9.5e9, 2e9, 9.5e9],
        "sw->recv",
    );
    let q = values_between(&series(&r, "queue_bytes", "sw->recv"), 0.25e-3, 3e-3);
    assert!(min(&q) >= 104_000.0 && max(&q) <= 150_000.0, "{q:?}");
    assert_conserved(&r);
}
