//! IEEE 802.1Qbb PFC (protocols.md sections 1 and 5) through switches (the per-class timing at a
//! host is tested in `net/host/pause_tests.rs`): lossless classes never drop,
//! headroom overflow is counted and explained, lossy classes drop, the dynamic threshold, the
//! strict and DWRR schedulers' shares, and the summary's "why" line.
//!
//! Units: at 10 Gb/s a 1500 B frame takes 1.2 us and one quantum (512 bit times) 51.2 ns.

mod common;

use common::*;
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Through a switch: three senders into one 10 Gb/s port.

/// Three saturating senders of `class` into `recv` through one switch with a 60 KB output
/// limit, 1 us links, 2 ms; `pfc` is the `[pfc]` table (empty: none).
fn incast(class: u8, pfc: &str) -> String {
    ScenarioToml::new("pfc-incast", 2e-3)
        .hosts(&["a", "b", "c", "recv"])
        .switch_with("sw", "output_buffer_bytes = 60000")
        .link("a", "sw", G10, 1e-6)
        .link("b", "sw", G10, 1e-6)
        .link("c", "sw", G10, 1e-6)
        .link("sw", "recv", G10, 1e-6)
        .traffic(
            "saturate",
            &["a", "b", "c"],
            "recv",
            &format!("priority = {class}"),
        )
        .probe_interval(1e-4)
        .raw(pfc)
        .build()
}

fn class<'a>(s: &'a Value, c: &str) -> &'a Value {
    at(s, &format!("pfc/classes/{c}"))
}

#[test]
fn a_lossless_class_never_drops_and_its_senders_share_the_port() {
    let r = run(&incast(3, "[pfc]\nxoff_bytes = 20000\nxon_bytes = 10000"));
    let s = &r.summary;
    assert!(r.conserved);
    assert_eq!(u(s, "frames/dropped/total"), 0);
    let c3 = class(s, "3");
    assert!(u(c3, "xoff_sent") > 0 && u(c3, "xon_sent") > 0);
    assert_eq!(u(c3, "headroom_overflow_drops"), 0);
    assert_eq!(
        u(c3, "peak_ingress_bytes"),
        19_500,
        "13 frames fit below XOFF 20,000 B"
    );
    // Headroom: the frame in flight when XOFF went out, the one the sender had started, plus
    // what the 1 us links hold each way: (2 x 1 us x 10 Gb/s + 2 frames) < 30 KB.
    let headroom = u(c3, "max_headroom_bytes");
    assert!(
        headroom > 0 && headroom <= 2 * 1250 + 2 * 1500 + 1500,
        "{headroom}"
    );
    assert!(at(c3, "why").as_str().unwrap().starts_with("fired:"));
    // The port runs at line rate; each sender gets a third of it.
    for h in ["a", "b", "c"] {
        let bps = f(s, &format!("per_source/{h}/throughput_bps"));
        assert!((bps / (10e9 / 3.0) - 1.0).abs() < 0.05, "{h}: {bps}");
    }
    assert_eq!(
        u(s, "control_frames/pfc_xoff"),
        u(c3, "xoff_sent"),
        "every PFC frame is of class 3"
    );
    assert!(!series(&r, "pfc_paused_frac", "a->sw:c3").is_empty());
}

#[test]
fn the_same_incast_without_pfc_drops_and_a_lossy_class_drops() {
    let none = run(&incast(3, ""));
    assert!(u(&none.summary, "frames/dropped/egress") > 0);
    assert!(none.summary["pfc"].is_null());
    // With PFC on but the traffic in class 0 (lossy): dropped at the output limit, and the
    // summary says why nothing was paused.
    let lossy = run(&incast(0, "[pfc]"));
    let s = &lossy.summary;
    assert!(u(s, "frames/dropped/egress") > 0);
    assert_eq!(u(s, "control_frames/pfc_xoff"), 0);
    let c0 = class(s, "0");
    assert_eq!(u(c0, "lossy_drops"), u(s, "frames/dropped/egress"));
    assert!(at(c0, "why").as_str().unwrap().starts_with("lossy"));
    let c3 = class(s, "3");
    assert_eq!(
        at(c3, "why").as_str().unwrap(),
        "never fired: no frame of class 3 entered a switch"
    );
}

#[test]
fn why_pfc_did_not_fire_names_the_peak_and_xoff() {
    // One sender at 50%: the queue never builds past a frame or two.
    let text = ScenarioToml::new("pfc-light", 1e-3)
        .hosts(&["a", "recv"])
        .switch("sw")
        .link("a", "sw", G10, 1e-6)
        .link("sw", "recv", G10, 1e-6)
        .traffic("bernoulli", &["a"], "recv", "load = 0.5\npriority = 3")
        .raw("[pfc]")
        .build();
    let s = run(&text).summary;
    let c3 = class(&s, "3");
    assert_eq!(u(c3, "xoff_sent"), 0);
    assert_eq!(
        at(c3, "why").as_str().unwrap(),
        "never fired: peak ingress bytes of class 3 were 1.5 KB < XOFF 40 KB"
    );
}

#[test]
fn a_headroom_smaller_than_the_round_trip_overflows_and_says_so() {
    // 20 us links hold 25 KB each way: 5 KB of headroom cannot absorb what is in flight.
    let text = incast(
        3,
        "[pfc]\nxoff_bytes = 20000\nxon_bytes = 10000\nheadroom_bytes = 5000",
    )
    .replace("delay_s = 1e-6", "delay_s = 2e-5");
    let r = run(&text);
    let s = &r.summary;
    assert!(r.conserved);
    let c3 = class(s, "3");
    let overflow = u(c3, "headroom_overflow_drops");
    assert!(overflow > 0);
    assert_eq!(u(s, "frames/dropped/ingress"), overflow);
    assert_eq!(u(c3, "max_headroom_bytes"), 4500);
    let why = at(c3, "why").as_str().unwrap();
    assert!(why.contains("overran the headroom"), "{why}");
    // The senders start together; which of a, b, c overran first is the events' order.
    assert!(
        ["a", "b", "c"]
            .iter()
            .any(|h| why.contains(&format!("were dropped, among them frames from {h}->sw ("))),
        "{why}"
    );
}

/// Three saturating 400 Gb/s senders of lossless class 3 into one port, 1 us links, 1 KB
/// frames, 0.2 ms; `headroom` is `[pfc] headroom_bytes`.
fn incast_400g(headroom: &str) -> String {
    ScenarioToml::new("pfc-incast-400g", 2e-4)
        .hosts(&["a", "b", "c", "recv"])
        .switch_with("sw", "output_buffer_bytes = 2000000")
        .link("a", "sw", 400e9, 1e-6)
        .link("b", "sw", 400e9, 1e-6)
        .link("c", "sw", 400e9, 1e-6)
        .link("sw", "recv", 400e9, 1e-6)
        .traffic(
            "saturate",
            &["a", "b", "c"],
            "recv",
            "priority = 3\nframe_bytes = 1000",
        )
        .probe_interval(1e-5)
        .raw(&format!(
            "[pfc]\nxoff_bytes = 40000\nxon_bytes = 20000\nheadroom_bytes = {headroom}"
        ))
        .build()
}

#[test]
fn auto_headroom_keeps_a_400g_lossless_class_lossless_where_30_kb_overflows() {
    // At 400 Gb/s a 1 us link holds 50 KB each way: the default 30 KB overflows.
    let fixed = run(&incast_400g("30000"));
    let c3 = class(&fixed.summary, "3");
    assert!(u(c3, "headroom_overflow_drops") > 0);
    assert!(at(c3, "why").as_str().unwrap().contains("\"auto\""));
    assert!(at(&fixed.summary, "pfc").get("headroom_auto").is_none());
    // "auto": each switch port's own bound, 1,064 B at 400 Gb/s (21.28 ns) + 2 us of links at
    // 50 GB/s = 101,064 B, + 2 frames = 103,064 B (scenario/pfc.rs works the numbers).
    let auto = run(&incast_400g("\"auto\""));
    let s = &auto.summary;
    assert!(auto.conserved);
    assert_eq!(u(s, "frames/dropped/total"), 0);
    let c3 = class(s, "3");
    assert!(u(c3, "xoff_sent") > 0);
    assert_eq!(u(c3, "headroom_overflow_drops"), 0);
    assert_eq!(u(c3, "headroom_bytes"), 103_064);
    let used = u(c3, "max_headroom_bytes");
    assert!(used > 30_000 && used <= 103_064, "{used}");
    assert!(at(c3, "why")
        .as_str()
        .unwrap()
        .ends_with("of 103 KB; no frame lost"));
    assert_eq!(at(s, "pfc/headroom_auto"), &Value::Bool(true));
}

#[test]
fn dynamic_thresholds_keep_the_shared_buffer_and_drop_nothing() {
    let text = incast(
        3,
        "[pfc]\nthreshold = \"dynamic\"\nalpha = 0.5\nheadroom_bytes = 30000",
    )
    .replace("output_buffer_bytes = 60000", "shared_buffer_bytes = 90000");
    let r = run(&text);
    let s = &r.summary;
    assert!(r.conserved);
    assert_eq!(u(s, "frames/dropped/total"), 0);
    let c3 = class(s, "3");
    assert!(u(c3, "xoff_sent") > 0);
    // Three inputs at alpha 0.5 settle where each holds 0.5 x the free buffer: X = 0.5 x
    // (90,000 - 3X) -> X = 18 KB (give or take a frame), never past the XOFF of its time.
    let peak = u(c3, "peak_ingress_bytes");
    let xoff = u(c3, "xoff_at_peak_bytes");
    assert!(peak <= xoff, "{peak} > {xoff}");
    assert!(peak.abs_diff(18_000) <= 1500, "{peak}");
}

/// Two saturating senders, `a` in class 0 and `b` in class 1, both lossless, into one port.
fn two_classes(scheduler: &str) -> cnsim_core::Report {
    let text = ScenarioToml::new("pfc-sched", 4e-3)
        .hosts(&["a", "b", "recv"])
        .switch("sw")
        .link("a", "sw", G10, 1e-6)
        .link("b", "sw", G10, 1e-6)
        .link("sw", "recv", G10, 1e-6)
        .traffic("saturate", &["a"], "recv", "priority = 0")
        .traffic("saturate", &["b"], "recv", "priority = 1")
        .raw(&format!(
            "[pfc]\nlossless_classes = [0, 1]\nxoff_bytes = 20000\nxon_bytes = 10000\n{scheduler}"
        ))
        .probe_interval(1e-4)
        .build();
    let r = run(&text);
    assert!(r.conserved);
    assert_eq!(u(&r.summary, "frames/dropped/total"), 0);
    r
}

#[test]
fn strict_priority_gives_the_port_to_the_higher_class() {
    let r = two_classes("scheduler = \"strict\"");
    let s = &r.summary;
    // The class queues split the port's queue: class 0 holds what it sent and cannot leave.
    let total = series(&r, "queue_bytes", "sw->recv");
    let c0 = series(&r, "class_queue_bytes", "sw->recv:c0");
    let c1 = series(&r, "class_queue_bytes", "sw->recv:c1");
    assert_eq!(total.len(), c0.len());
    for ((t, q), ((_, q0), (_, q1))) in total.iter().zip(c0.iter().zip(&c1)) {
        assert_eq!(*q, q0 + q1, "at {t} s");
    }
    assert!(c0.last().unwrap().1 >= 20_000.0);
    let a = f(s, "per_source/a/throughput_bps");
    let b = f(s, "per_source/b/throughput_bps");
    // Class 0 only gets what it sent before its first pause: XOFF + headroom, 20 KB + a few
    // frames, over 4 ms.
    assert!(a < 0.1e9, "{a}");
    assert!(b > 9.8e9, "{b}");
}

#[test]
fn dwrr_shares_the_port_by_quantum() {
    let r = two_classes(
        "scheduler = \"dwrr\"\ndwrr_quantum_bytes = [1500, 4500, 1500, 1500, 1500, 1500, 1500, 1500]",
    );
    let s = &r.summary;
    let a = f(s, "per_source/a/throughput_bps");
    let b = f(s, "per_source/b/throughput_bps");
    // Quanta 1:3 -> 2.5 and 7.5 Gb/s (the senders are held to what the port serves).
    assert!((a / 2.5e9 - 1.0).abs() < 0.03, "{a}");
    assert!((b / 7.5e9 - 1.0).abs() < 0.03, "{b}");
}

#[test]
fn xoff_is_refreshed_every_half_pause_time_while_the_condition_holds() {
    // Under strict priority class 0 never drains: its XOFF (65535 quanta = 3.355392 ms at
    // 10 Gb/s) goes out once early and is re-sent every 1.677696 ms: at most 3 in 4 ms, no XON.
    let r = two_classes("scheduler = \"strict\"");
    let c0 = class(&r.summary, "0");
    assert_eq!(u(c0, "xoff_sent"), 3);
    assert_eq!(u(c0, "xon_sent"), 0);
    let paused = f(c0, "paused_s_by_port/a->sw");
    assert!(paused > 4e-3 - 30e-6 && paused < 4e-3, "{paused}");
    // Class 1 is served first at the line rate it arrives at: never paused.
    assert_eq!(u(class(&r.summary, "1"), "xoff_sent"), 0);
}

#[test]
fn an_802_3x_pause_still_holds_every_class() {
    // The receiver pauses its switch port (802.3x, all classes) with a small receive buffer;
    // frames of both lossless classes wait in the switch and nothing is lost.
    let text = ScenarioToml::new("pfc-and-pause", 2e-3)
        .hosts(&["a", "b"])
        .host_with(
            "recv",
            "rx_rate_bps = 5e9\nrx_buffer_bytes = 60000\n\
             rx_pause = { xoff_bytes = 30000, xon_bytes = 15000 }",
        )
        .switch("sw")
        .link("a", "sw", G10, 1e-6)
        .link("b", "sw", G10, 1e-6)
        .link("sw", "recv", G10, 1e-6)
        .traffic("saturate", &["a"], "recv", "priority = 0")
        .traffic("saturate", &["b"], "recv", "priority = 1")
        .raw("[pfc]\nlossless_classes = [0, 1]\nxoff_bytes = 20000\nxon_bytes = 10000")
        .build();
    let r = run(&text);
    let s = &r.summary;
    assert!(r.conserved);
    assert_eq!(u(s, "frames/dropped/total"), 0);
    assert!(u(s, "control_frames/pause_xoff") > 0);
    // Both classes back up into PFC at the switch while the 802.3x pause holds the port.
    assert!(u(class(s, "1"), "xoff_sent") > 0);
    let rx = f(s, "per_source/recv/rx_throughput_bps");
    assert!((rx / 5e9 - 1.0).abs() < 0.05, "{rx}");
}

#[test]
fn a_slow_receiver_sends_pfc_and_the_pause_spreads_back_to_the_sender() {
    // recv serves 5 Gb/s; with host_rx it pauses class 3 on sw->recv when 20 KB wait in its
    // receive queue; sw then holds the class, its ingress count from `a` passes XOFF, and it
    // pauses `a`: a sends at 5 Gb/s and nothing is lost (60 KB of receive buffer covers the
    // bytes in flight after XOFF).
    let text = ScenarioToml::new("pfc-host-rx", 4e-3)
        .hosts(&["a"])
        .host_with("recv", "rx_rate_bps = 5e9\nrx_buffer_bytes = 60000")
        .switch("sw")
        .link("a", "sw", G10, 1e-6)
        .link("sw", "recv", G10, 1e-6)
        .traffic("saturate", &["a"], "recv", "priority = 3")
        .raw("[pfc]\nxoff_bytes = 20000\nxon_bytes = 10000\nhost_rx = true")
        .build();
    let r = run(&text);
    let s = &r.summary;
    assert!(r.conserved);
    assert_eq!(u(s, "frames/dropped/total"), 0);
    let c3 = class(s, "3");
    assert!(
        f(c3, "paused_s_by_port/sw->recv") > 0.0,
        "the receiver paused its switch port"
    );
    assert!(
        f(c3, "paused_s_by_port/a->sw") > 0.0,
        "the switch paused the sender"
    );
    let a = f(s, "per_source/a/throughput_bps");
    assert!((a / 5e9 - 1.0).abs() < 0.03, "{a}");
    // Without host_rx the receive buffer overflows instead.
    let lossy = run(&text.replace("host_rx = true", "host_rx = false"));
    assert!(u(&lossy.summary, "frames/dropped/rx") > 0);
}

// ---------------------------------------------------------------------------------------------
// `headroom_bytes = "auto"` is a bound: no lossless frame overruns it, whatever the links.

mod auto_headroom_bound {
    use super::*;
    use proptest::prelude::*;

    const RATES_BPS: [f64; 5] = [10e9, 25e9, 40e9, 100e9, 400e9];

    /// Three saturating senders of lossless class 3 through a chain of two switches (so a
    /// switch is paused by a switch too: `sw2` pauses `sw1`, whose port may be mid-frame) into
    /// one receiver, each link its own rate and delay but the receiver's, 10 Gb/s, the slowest
    /// (so PFC fires); a second lossless class rides along from one sender, so two PFC frames
    /// can queue at a port.
    fn chain(rates: [usize; 4], delays_ns: [u32; 5], frame_bytes: u32, xoff: u32) -> String {
        let rate = |i: usize| rates.get(i).map_or(RATES_BPS[0], |&r| RATES_BPS[r]);
        let delay = |i: usize| f64::from(delays_ns[i]) * 1e-9;
        ScenarioToml::new("auto-headroom-bound", 1e-3)
            .hosts(&["a", "b", "c", "recv"])
            .switch("sw1")
            .switch("sw2")
            .link("a", "sw1", rate(0), delay(0))
            .link("b", "sw1", rate(1), delay(1))
            .link("c", "sw2", rate(2), delay(2))
            .link("sw1", "sw2", rate(3), delay(3))
            .link("sw2", "recv", rate(4), delay(4))
            .traffic(
                "saturate",
                &["a", "b", "c"],
                "recv",
                &format!("priority = 3\nframe_bytes = {frame_bytes}"),
            )
            .traffic(
                "saturate",
                &["b"],
                "recv",
                &format!("priority = 5\nframe_bytes = {frame_bytes}"),
            )
            .probe_interval(1e-4)
            .raw(&format!(
                "[pfc]\nlossless_classes = [3, 5]\nxoff_bytes = {xoff}\nxon_bytes = {}\n\
                 headroom_bytes = \"auto\"",
                xoff / 2
            ))
            .build()
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 256,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn no_lossless_frame_overruns_an_auto_headroom(
            rates in prop::array::uniform4(0..RATES_BPS.len()),
            delays_ns in prop::array::uniform5(100u32..20_000),
            frame_bytes in 64u32..9_000,
            xoff in 10_000u32..100_000,
        ) {
            let r = run(&chain(rates, delays_ns, frame_bytes, xoff));
            prop_assert!(r.conserved);
            let pfc = at(&r.summary, "pfc/classes");
            for c in ["3", "5"] {
                let class = &pfc[c];
                prop_assert_eq!(u(class, "headroom_overflow_drops"), 0, "class {}", c);
                prop_assert!(u(class, "max_headroom_bytes") <= u(class, "headroom_bytes"));
            }
            prop_assert_eq!(u(&r.summary, "frames/dropped/total"), 0);
            prop_assert!(u(&pfc["3"], "xoff_sent") > 0, "the test pauses someone");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A host's receive queue has no headroom: the summary says when a lossless class lost frames
// there, and what `rx_buffer_bytes` the host needs; with that much, none is lost.

mod host_rx_buffer {
    use super::*;
    use proptest::prelude::*;

    const RATES_BPS: [f64; 4] = [10e9, 25e9, 40e9, 100e9];

    /// `a` saturates `recv` with class 3 through `sw`; `recv` serves its receive queue at 1 Gb/s
    /// and holds `rx_buffer_bytes`; with `host_rx` it pauses `sw` at `xoff` bytes (the switch's
    /// headroom sized for its links, so that only the host can lose a frame).
    fn slow_receiver(rate: usize, delay_ns: u32, frame_bytes: u32, xoff: u64, rx: u64) -> String {
        let (rate, delay) = (RATES_BPS[rate], f64::from(delay_ns) * 1e-9);
        ScenarioToml::new("host-rx-buffer", 1e-3)
            .hosts(&["a"])
            .host_with(
                "recv",
                &format!("rx_rate_bps = 1e9\nrx_buffer_bytes = {rx}"),
            )
            .switch("sw")
            .link("a", "sw", rate, delay)
            .link("sw", "recv", rate, delay)
            .traffic(
                "saturate",
                &["a"],
                "recv",
                &format!("priority = 3\nframe_bytes = {frame_bytes}"),
            )
            .raw(&format!(
                "[pfc]\nxoff_bytes = {xoff}\nxon_bytes = {}\nhost_rx = true\n\
                 headroom_bytes = \"auto\"",
                xoff / 2
            ))
            .build()
    }

    /// The rx_buffer_bytes the class-3 "why" line asks for, if it asks.
    fn asked_rx_buffer_bytes(summary: &Value) -> Option<u64> {
        let why = at(summary, "pfc/classes/3/why").as_str().expect("a line");
        let (_, asked) = why.split_once("rx_buffer_bytes >= ")?;
        let digits: String = asked.chars().take_while(char::is_ascii_digit).collect();
        Some(digits.parse().expect("a byte count"))
    }

    #[test]
    fn a_short_receive_buffer_is_named_with_the_size_it_needs() {
        // 10 Gb/s, 1 us links, 1,500 B frames, XOFF 20 KB, 21 KB of buffer: after XOFF up to
        // 10 Gb/s x (the frame in progress and a PFC frame at 10 Gb/s, 1.25 us, + 2 us) + 2
        // frames = 7,064 B arrive, so the host needs 27,064 B; with them it loses nothing.
        let short = run(&slow_receiver(0, 1_000, 1_500, 20_000, 21_000)).summary;
        let drops = u(&short, "frames/dropped/rx");
        assert!(drops > 0);
        assert_eq!(u(class(&short, "3"), "rx_drops"), drops);
        let why = at(&short, "pfc/classes/3/why").as_str().unwrap();
        assert!(
            why.contains(&format!(
                "{drops} frames dropped at hosts' receive queues, among them at recv"
            )),
            "{why}"
        );
        assert!(!why.contains("no frame lost"), "{why}");
        assert_eq!(asked_rx_buffer_bytes(&short), Some(27_064));
        let enough = run(&slow_receiver(0, 1_000, 1_500, 20_000, 27_064)).summary;
        assert_eq!(u(&enough, "frames/dropped/total"), 0);
        let why = at(&enough, "pfc/classes/3/why").as_str().unwrap();
        assert!(why.ends_with("; no frame lost"), "{why}");
    }

    #[test]
    fn without_host_rx_the_line_says_hosts_send_no_pfc() {
        let text = slow_receiver(0, 1_000, 1_500, 20_000, 60_000);
        let lossy = run(&text.replace("host_rx = true", "host_rx = false")).summary;
        let why = at(&lossy, "pfc/classes/3/why").as_str().unwrap();
        assert!(u(class(&lossy, "3"), "rx_drops") > 0);
        assert!(
            why.ends_with("(hosts send no PFC: host_rx = false)"),
            "{why}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 48,
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn the_size_the_line_asks_for_loses_nothing(
            rate in 0..RATES_BPS.len(),
            delay_ns in 100u32..10_000,
            frame_bytes in 64u32..9_000,
            xoff in 10_000u64..100_000,
        ) {
            // With no more than XOFF the receiver drops, and the line asks for more.
            let short = run(&slow_receiver(rate, delay_ns, frame_bytes, xoff, xoff)).summary;
            prop_assert!(u(&short, "frames/dropped/rx") > 0);
            let asked = asked_rx_buffer_bytes(&short).expect("the line asks for a size");
            prop_assert!(asked > xoff);
            let enough = run(&slow_receiver(rate, delay_ns, frame_bytes, xoff, asked));
            prop_assert!(enough.conserved);
            prop_assert_eq!(u(&enough.summary, "frames/dropped/total"), 0, "asked {}", asked);
        }
    }
}
