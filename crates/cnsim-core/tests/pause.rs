//! IEEE 802.3x PAUSE (protocols.md section 1), end to end: XOFF/XON timing and headroom through
//! a switch. The timer arithmetic is tested in `flow_control/lane.rs`, the host's "finish the
//! current frame, then hold data" rule, XON, timer replacement and control frames never paused
//! in `net/host/pause_tests.rs`.
//!
//! Units (protocols.md section 0): 1 bit at 10 Gb/s = 100 ps, a 1500 B frame = 1.2 us, a 64 B
//! PAUSE frame = 51.2 ns, 1 quantum = 512 bit times = 51.2 ns at 10 Gb/s.

mod common;

use common::*;

// ---------------------------------------------------------------------------------------------
// End to end: A -> sw -> B, the switch's egress queue watermarks pause A.

/// A saturating at 10 Gb/s into sw, sw -> B at `egress_bps`; egress trigger XOFF above 6000 B,
/// XON below 3000 B; all links have one-way delay `delay_s`, no switch latency.
fn a_sw_b(duration_s: f64, egress_bps: f64, delay_s: f64, switch_extra: &str) -> String {
    ScenarioToml::new("a-sw-b", duration_s)
        .hosts(&["a", "b"])
        .switch_with(
            "sw",
            &format!(
                "{switch_extra}\npause = {{ trigger = \"egress\", xoff_bytes = 6000, xon_bytes = 3000 }}"
            ),
        )
        .link("a", "sw", G10, delay_s)
        .link("sw", "b", egress_bps, delay_s)
        .saturate(&["a"], "b")
        .probe_interval(duration_s.min(1e-3))
        .build()
}

#[test]
fn xoff_then_xon_exact_timeline_through_a_switch() {
    // A starts frame k at 1.2k us; it reaches sw at a_k = 1.2(k+1) + 1 = 2.2 + 1.2k us.
    // sw -> B runs at 1 Gb/s (12 us a frame), busy from 2.2 us on: frame j starts at 2.2 + 12j.
    // Waiting bytes reach 7500 > 6000 when frame 5 arrives (8.2 us): XOFF queued, sent in
    // 51.2 ns, reaches A at 9.2512 us, in the middle of frame 7 (8.4 - 9.6 us). A finishes frame
    // 7 and stops: frames 0..7 sent, 7 waiting at sw after 10.6 us (peak 10500 B).
    // Each start at sw removes one: after frame 6 starts (74.2 us) 1 frame = 1500 B < 3000 waits
    // -> XON, which reaches A at 74.2 + 0.0512 + 1 = 75.2512 us. A was paused 66 us exactly.
    // A then sends frames 8.. at 75.2512 + 1.2n: 8, 9, 10, 11 start before 80 us -> 12 frames.
    // At 80 us the queue holds frames 7..10 = 6000 B, not > 6000, so there is no second XOFF.
    // B has fully received frames j whose arrival 2.2 + 12(j+1) + 1 <= 80: j = 0..5 -> 6.
    let r = run(&a_sw_b(80e-6, 1e9, 1e-6, ""));
    let s = &r.summary;
    assert_eq!(u(s, "per_source/a/tx_frames"), 12);
    assert_eq!(u(s, "control_frames/pause_xoff"), 1);
    assert_eq!(u(s, "control_frames/pause_xon"), 1);
    assert_eq!(u(s, "per_port/sw->b/peak_queue_bytes"), 10_500);
    assert_eq!(u(s, "frames/dropped/total"), 0);
    assert_eq!(u(s, "frames/delivered"), 6);
    // One probe at 80 us: A's port was paused 66 of 80 us.
    let paused = series(&r, "paused_frac", "a->sw");
    assert_eq!(paused.len(), 1);
    assert!((paused[0].1 - 66.0 / 80.0).abs() < 1e-9, "{paused:?}");
    // The switch's own ports were never paused.
    assert_eq!(f(s, "per_port/sw->b/paused_frac"), 0.0);
    assert_eq!(f(s, "per_port/sw->a/paused_frac"), 0.0);
    assert_conserved(&r);
}

#[test]
fn host_sends_nothing_while_the_pause_is_refreshed() {
    // sw -> B at 1 kb/s: the first frame occupies it for 12 s, so the egress queue never
    // drains and the XON never comes. As above A sends frames 0..7 (XOFF reaches it at
    // 9.2512 us during frame 7) and nothing after.
    // XOFF is re-sent every half pause time (65535 quanta / 2 = 1.677696 ms) from 8.2 us on:
    // at 8.2 + 1677.696 n us <= 10 ms for n = 0..5 -> 6 XOFF, 0 XON in 10 ms.
    // Probes every 1 ms: A's port paused (1000 - 9.2512)/1000 of the first, all of the rest.
    let r = run(&a_sw_b(10e-3, 1e3, 1e-6, ""));
    let s = &r.summary;
    assert_eq!(u(s, "per_source/a/tx_frames"), 8);
    assert_eq!(u(s, "per_source/a/generated_frames"), 8);
    assert_eq!(u(s, "control_frames/pause_xoff"), 6);
    assert_eq!(u(s, "control_frames/pause_xon"), 0);
    assert_eq!(u(s, "control_frames/bytes"), 6 * 64);
    let paused = series(&r, "paused_frac", "a->sw");
    assert_eq!(paused.len(), 10);
    assert!((paused[0].1 - (1000.0 - 9.2512) / 1000.0).abs() < 1e-9);
    for (t, v) in &paused[1..] {
        assert!((v - 1.0).abs() < 1e-9, "paused_frac {v} at {t}");
    }
    // No data left A after the pause: its transmit rate is 0 in every probe after the first.
    for (t, v) in &series(&r, "host_tx_bps", "a")[1..] {
        assert_eq!(*v, 0.0, "A sent data while paused (probe at {t})");
    }
    assert_conserved(&r);
}

#[test]
fn headroom_of_bw_rtt_plus_two_mtu_loses_nothing() {
    // 10 us links. a_k = 1.2(k+1) + 10 us; frame 0 starts on the 1 kb/s egress at 11.2 us and
    // holds it, so k frames wait after frame k arrives. XOFF when frame 5 arrives (17.2 us),
    // reaches A at 27.2512 us during frame 22 (26.4 - 27.6 us): 23 frames sent, 22 wait.
    // protocols.md: watermarks must leave BW x RTT + 2 MTU = 10G x 20 us / 8 + 3000 = 28000 B,
    // so an output limit of xoff + 28000 = 34000 B must absorb all of them (peak 33000 B).
    let r = run(&a_sw_b(200e-6, 1e3, 10e-6, "output_buffer_bytes = 34000"));
    let s = &r.summary;
    assert_eq!(u(s, "per_source/a/tx_frames"), 23);
    assert_eq!(u(s, "frames/dropped/total"), 0);
    assert_eq!(u(s, "per_port/sw->b/peak_queue_bytes"), 33_000);
    assert_conserved(&r);
}

#[test]
fn too_little_headroom_drops_and_counts_the_drops() {
    // Same timeline with a 15000 B output limit: 10 frames fit behind the one being sent; of
    // the 22 that arrive to wait, 12 are dropped at the egress queue.
    let r = run(&a_sw_b(200e-6, 1e3, 10e-6, "output_buffer_bytes = 15000"));
    let s = &r.summary;
    assert_eq!(u(s, "per_source/a/tx_frames"), 23);
    assert_eq!(u(s, "frames/dropped/egress"), 12);
    assert_eq!(u(s, "frames/dropped/total"), 12);
    assert_eq!(u(s, "per_port/sw->b/dropped_frames"), 12);
    assert_eq!(u(s, "per_switch/sw/dropped_frames"), 12);
    assert_eq!(u(s, "per_port/sw->b/peak_queue_bytes"), 15_000);
    assert_eq!(u(s, "frames/in_flight"), 11);
    assert_conserved(&r);
}
