//! IEEE 802.3x PAUSE (protocols.md section 1): timer arithmetic, the receiving side's
//! "finish the current frame, then hold data" rule, XON, timer replacement, control frames
//! never paused, and end-to-end XOFF/XON timing and headroom through a switch.
//!
//! Units (protocols.md section 0): 1 bit at 10 Gb/s = 100 ps, a 1500 B frame = 1.2 us, a 64 B
//! PAUSE frame = 51.2 ns, 1 quantum = 512 bit times = 51.2 ns at 10 Gb/s.

mod common;

use cnsim_core::net::port::Port;
use cnsim_core::time::SimTime;
use common::one_host::{Inject, OneHost};
use common::*;

fn us(x: f64) -> SimTime {
    SimTime::from_secs_f64(x * 1e-6)
}

// ---------------------------------------------------------------------------------------------
// The receiving side, unit level: a port's 802.3x lane (the port hands it its line rate).

// These read the pause state through `is_paused` / `paused_until`, not through what
// `receive` returns (the lane's timer-scheduling contract, tested in flow_control/lane.rs).

#[test]
fn max_pause_is_65535_quanta_of_512_bit_times_at_the_line_rate() {
    // 65535 x 512 bit x 100 ps = 3,355,392,000 ps = 3.355392 ms at 10 Gb/s; 10x that at 1 Gb/s.
    for (rate, want_ps) in [(10e9, 3_355_392_000u64), (1e9, 33_553_920_000)] {
        let mut p = Port::new("a->b".into(), 1, 0, rate, SimTime::ZERO);
        let t0 = us(7.0);
        p.pause.receive(u16::MAX, p.line_rate_bps, t0);
        let until = t0 + SimTime(want_ps);
        assert_eq!(p.pause.paused_until(), until, "rate {rate}");
        assert!(p.is_paused(t0));
        assert!(p.is_paused(until - SimTime(1)));
        assert!(!p.is_paused(until), "the pause ends exactly at the timer");
    }
}

#[test]
fn quanta_use_the_line_rate_not_a_scheduled_service_rate() {
    // A schedule lowers rate_bps to 2 Gb/s; one quantum is still 512 bit times at the 10 Gb/s
    // line rate = 51.2 ns (802.3x defines the quantum on the PHY rate).
    let mut p = Port::new("a->b".into(), 1, 0, 10e9, SimTime::ZERO);
    p.rate_bps = 2e9;
    p.pause.receive(1, p.line_rate_bps, SimTime::ZERO);
    assert_eq!(p.pause.paused_until(), SimTime(51_200));
}

#[test]
fn xon_resumes_at_once_and_a_new_pause_replaces_the_timer() {
    let mut p = Port::new("a->b".into(), 1, 0, 10e9, SimTime::ZERO);
    // XOFF(65535) at 1 us, then XON at 5 us: paused for exactly 4 us.
    p.pause.receive(u16::MAX, p.line_rate_bps, us(1.0));
    p.pause.receive(0, p.line_rate_bps, us(5.0));
    assert!(!p.is_paused(us(5.0)));
    assert_eq!(p.pause.paused_time(us(9.0)), us(4.0));
    // A shorter pause replaces a longer one (it is not max(old, new)): XOFF(65535) at 10 us,
    // XOFF(10) at 11 us -> ends at 11 us + 512 ns.
    p.pause.receive(u16::MAX, p.line_rate_bps, us(10.0));
    p.pause.receive(10, p.line_rate_bps, us(11.0));
    assert_eq!(p.pause.paused_until(), us(11.512));
    assert!(!p.is_paused(us(11.512)));
    // A longer one extends: XOFF(10) at 20 us, XOFF(100) at 20.2 us -> ends at 25.32 us.
    p.pause.receive(10, p.line_rate_bps, us(20.0));
    p.pause.receive(100, p.line_rate_bps, us(20.2));
    assert_eq!(p.pause.paused_until(), us(25.32));
    assert!(p.is_paused(us(25.0)));
}

// ---------------------------------------------------------------------------------------------
// The receiving side inside a host: a one-node harness driving the public element API.

/// `n` data frames to host 1, all of class 0.
fn to_b(n: usize) -> Vec<(u32, u8)> {
    vec![(1, 0); n]
}

#[test]
fn host_finishes_its_frame_then_holds_data_until_the_timer_ends() {
    // Frame 0 is sent 0 - 1.2 us. PAUSE(100 quanta = 5.12 us) arrives at 0.5 us, mid-frame:
    // frame 0 still completes at 1.2 us; frame 1 may start only at 0.5 + 5.12 = 5.62 us, so it
    // completes at 6.82 us, and the rest follow back to back every 1.2 us.
    let mut h = OneHost::new(&to_b(4), vec![(us(0.5), Inject::Pause(100))]);
    h.run(us(100.0));
    assert_eq!(
        h.data_done(None),
        vec![us(1.2), us(6.82), us(8.02), us(9.22)],
        "data frame completion times"
    );
    assert_eq!(h.node.ports()[0].pause.paused_time(us(100.0)), us(5.12));
}

#[test]
fn host_resumes_at_xon() {
    // XOFF(65535) at 0.5 us, XON at 3 us: frame 1 starts at 3 us, completes at 4.2 us.
    let mut h = OneHost::new(
        &to_b(3),
        vec![
            (us(0.5), Inject::Pause(u16::MAX)),
            (us(3.0), Inject::Pause(0)),
        ],
    );
    h.run(us(100.0));
    assert_eq!(h.data_done(None), vec![us(1.2), us(4.2), us(5.4)]);
    assert_eq!(h.node.ports()[0].pause.paused_time(us(100.0)), us(2.5));
}

#[test]
fn host_obeys_a_longer_replacing_pause() {
    // XOFF(20) at 0.5 us (would end at 1.524 us), XOFF(100 = 5.12 us) at 1.0 us -> resume at
    // 6.12 us; the first timer's expiry must not release the host. Frame 1 completes at
    // 7.32 us.
    let mut h = OneHost::new(
        &to_b(2),
        vec![(us(0.5), Inject::Pause(20)), (us(1.0), Inject::Pause(100))],
    );
    h.run(us(100.0));
    assert_eq!(h.data_done(None), vec![us(1.2), us(7.32)]);
}

#[test]
fn host_obeys_a_shorter_replacing_pause() {
    // XOFF(65535) at 0.5 us, XOFF(20 = 1.024 us) at 3 us: 802.3x replaces the timer, so the
    // host resumes at 4.024 us and frame 1 completes at 5.224 us (not at the end of the first
    // pause, 0.5 + 3355.392 + 1.2 = 3357.092 us).
    let mut h = OneHost::new(
        &to_b(2),
        vec![
            (us(0.5), Inject::Pause(u16::MAX)),
            (us(3.0), Inject::Pause(20)),
        ],
    );
    h.run(us(4000.0));
    assert_eq!(h.data_done(None), vec![us(1.2), us(5.224)]);
    assert_eq!(h.node.ports()[0].pause.paused_time(us(4000.0)), us(3.524));
}

#[test]
fn control_frames_are_never_paused() {
    // Paused from 0.5 us for 3.36 ms; a control frame queued at 2 us leaves at once (64 B =
    // 51.2 ns -> done at 2.0512 us) while data stays held for the whole run.
    let mut h = OneHost::new(
        &to_b(3),
        vec![
            (us(0.5), Inject::Pause(u16::MAX)),
            (us(2.0), Inject::Control),
        ],
    );
    h.run(us(100.0));
    assert_eq!(h.sent, vec![(us(1.2), true, 0), (us(2.0512), false, 0)]);
}

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
