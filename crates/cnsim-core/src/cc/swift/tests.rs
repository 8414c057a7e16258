//! Swift's arithmetic against numbers worked by hand: the target's flow scaling at two windows
//! (and its clamps), one additive-increase step above and below one packet, one multiplicative
//! decrease with the max_mdf bound and the once-per-RTT rule, the loss rules, the clamp and the
//! pacing rate below one packet.

use super::*;

const MSS: u32 = 1500;
const US: f64 = 1e-6;

/// base 20 us, h = 2 us per switch, fs_range 100 us between 1 and 4 packets: alpha = 100 /
/// (1/1 - 1/2) = 200 us, beta_fs = -200/2 = -100 us (numbers that work by hand).
fn params() -> SwiftParams {
    SwiftParams {
        base_target_s: 20.0 * US,
        hop_scale_s: 2.0 * US,
        fs_range_s: 100.0 * US,
        fs_min_cwnd_packets: 1.0,
        fs_max_cwnd_packets: 4.0,
        ..SwiftParams::default()
    }
}

/// No flow scaling: the target is base + hops x h = 24 us with 2 switches.
fn flat() -> SwiftSender {
    let p = SwiftParams {
        fs_range_s: 0.0,
        ..params()
    };
    SwiftSender::new(&p, MSS, 2)
}

fn at(us: f64) -> SimTime {
    SimTime::from_secs_f64(us * US)
}

fn ack(now_us: f64, rtt_us: f64, packets: u64) -> AckEvent {
    AckEvent {
        now: at(now_us),
        newly_acked_bytes: packets * MSS as u64,
        rtt: at(rtt_us),
        endpoint_delay: SimTime::ZERO,
        ece: false,
        in_flight_bytes: 0,
        telemetry: None,
    }
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-9 * want.abs().max(1e-6), "{got} vs {want}");
}

#[test]
fn the_target_scales_with_hops_and_the_window() {
    let s = SwiftSender::new(&params(), MSS, 2);
    // 20 + 2 x 2 = 24 us, plus 200 / sqrt(cwnd) - 100 clamped to [0, 100].
    close(s.target_delay_s(2.56), (24.0 + 25.0) * US); // sqrt 1.6: 125 - 100
    close(s.target_delay_s(16.0 / 9.0), (24.0 + 50.0) * US); // sqrt 4/3: 150 - 100
    close(s.target_delay_s(4.0), 24.0 * US); // fs_max_cwnd: nothing
    close(s.target_delay_s(100.0), 24.0 * US); // above: clamped at 0
    close(s.target_delay_s(1.0), 124.0 * US); // fs_min_cwnd: fs_range
    close(s.target_delay_s(0.01), 124.0 * US); // below: clamped at fs_range
}

#[test]
fn the_default_flow_scaling_is_fs_range_at_fs_min_cwnd_and_zero_at_fs_max_cwnd() {
    // Defaults: alpha = 100 us / (1/sqrt(0.1) - 1/10) = 32.6554 us; one switch adds 20/6.55 us.
    let s = SwiftSender::new(&SwiftParams::default(), MSS, 1);
    let path = 20.0 * US + 20.0 * US / 6.55;
    let alpha = 100.0 * US / (1.0 / 0.1f64.sqrt() - 0.1);
    close(s.target_delay_s(0.1), path + 100.0 * US);
    close(s.target_delay_s(100.0), path);
    // 25 packets: alpha / 5 - alpha / 10 = alpha / 10 = 3.2655 us.
    close(s.target_delay_s(25.0), path + alpha / 10.0);
    assert!((alpha / 10.0 - 3.2655 * US).abs() < 1e-4 * US);
}

#[test]
fn below_the_target_the_window_grows_by_ai_per_window() {
    let mut s = flat();
    s.cwnd = 10.0;
    s.on_ack(&ack(100.0, 10.0, 1)); // 10 us < 24 us: + 1 x 1 / 10
    close(s.cwnd, 10.1);
    s.on_ack(&ack(101.0, 10.0, 2)); // two packets: + 2 / 10.1
    close(s.cwnd, 10.1 + 2.0 / 10.1);
}

#[test]
fn below_one_packet_the_increase_is_ai_per_packet_acked() {
    let mut s = flat();
    s.cwnd = 0.25;
    s.on_ack(&ack(100.0, 10.0, 1)); // cwnd < 1: + ai x 1
    close(s.cwnd, 1.25);
    s.on_ack(&ack(101.0, 10.0, 1)); // now >= 1: + 1 / 1.25
    close(s.cwnd, 1.25 + 0.8);
}

#[test]
fn above_the_target_the_window_falls_once_per_rtt() {
    let mut s = flat();
    s.cwnd = 10.0;
    // 30 us against 24 us: x (1 - 0.8 x 6 / 30) = x 0.84.
    s.on_ack(&ack(100.0, 30.0, 1));
    close(s.cwnd, 8.4);
    // 10 us later, within an RTT of the decrease: no second decrease, and no increase.
    s.on_ack(&ack(110.0, 30.0, 1));
    close(s.cwnd, 8.4);
    // 30 us (one RTT) after the decrease: x 0.84 again.
    s.on_ack(&ack(130.0, 30.0, 1));
    close(s.cwnd, 8.4 * 0.84);
}

#[test]
fn one_decrease_takes_at_most_max_mdf() {
    let mut s = flat();
    s.cwnd = 10.0;
    // 240 us against 24 us: 1 - 0.8 x 216 / 240 = 0.28, bounded by 1 - max_mdf = 0.5.
    s.on_ack(&ack(100.0, 240.0, 1));
    close(s.cwnd, 5.0);
}

#[test]
fn the_window_is_clamped_to_min_and_max() {
    let mut s = flat();
    s.cwnd = 0.0015;
    s.on_ack(&ack(100.0, 240.0, 0)); // x 0.5 = 0.00075, clamped at min_cwnd
    close(s.cwnd, 0.001);
    s.cwnd = 999.9995;
    s.on_ack(&ack(1000.0, 10.0, 1)); // + 1 / 999.9995, clamped at max_cwnd
    close(s.cwnd, 1000.0);
}

#[test]
fn below_one_packet_the_flow_is_paced_at_cwnd_mss_per_rtt() {
    let mut s = flat();
    s.cwnd = 2.0;
    s.on_ack(&ack(100.0, 30.0, 0)); // x 0.84 = 1.68: a window, no pacing
    assert_eq!(s.pacing_bps(), None);
    s.cwnd = 0.5;
    s.rtt_s = 30.0 * US;
    // One 1500 B packet every 30 / 0.5 = 60 us: 0.5 x 1500 x 8 / 30 us = 200 Mb/s.
    close(s.pacing_bps().expect("paced"), 200e6);
    close(s.window_bytes(), 750.0);
}

#[test]
fn fast_recovery_cuts_by_max_mdf_once_per_rtt() {
    let mut s = flat();
    s.cwnd = 10.0;
    s.on_ack(&ack(100.0, 20.0, 0)); // 20 us < 24 us: sets rtt; + 0
    s.on_loss(LossSignal::FastRetransmit, at(101.0));
    close(s.cwnd, 5.0);
    s.on_loss(LossSignal::Nack, at(110.0)); // within 20 us of the cut
    close(s.cwnd, 5.0);
    s.on_loss(LossSignal::Nack, at(121.0));
    close(s.cwnd, 2.5);
}

#[test]
fn retransmit_timeouts_in_a_row_reset_the_window_to_min_cwnd() {
    let mut s = flat();
    s.cwnd = 64.0;
    s.on_ack(&ack(0.0, 20.0, 0));
    // Timeouts far apart: x 0.5 each, the fifth in a row resets to min_cwnd.
    for (i, want) in [32.0, 16.0, 8.0, 4.0].into_iter().enumerate() {
        s.on_loss(LossSignal::Timeout, at(1000.0 * (i + 1) as f64));
        close(s.cwnd, want);
    }
    s.on_loss(LossSignal::Timeout, at(5000.0));
    close(s.cwnd, 0.001);
    // An ACK clears the count.
    s.on_ack(&ack(6000.0, 10.0, 1));
    assert_eq!(s.retransmit_cnt, 0);
}

#[test]
fn bad_parameters_are_refused_naming_the_field() {
    let bad = |p: SwiftParams, field: &str| {
        let e = p.validate("congestion.swift").expect_err(field).to_string();
        assert!(e.contains(&format!("congestion.swift.{field}")), "{e}");
    };
    let d = SwiftParams::default;
    bad(SwiftParams { base_target_s: 0.0, ..d() }, "base_target_s");
    bad(SwiftParams { hop_scale_s: -1.0, ..d() }, "hop_scale_s");
    bad(SwiftParams { fs_max_cwnd_packets: 0.1, ..d() }, "fs_max_cwnd_packets");
    bad(SwiftParams { beta: 0.0, ..d() }, "beta");
    bad(SwiftParams { max_mdf: 1.5, ..d() }, "max_mdf");
    bad(SwiftParams { min_cwnd_packets: 0.0, ..d() }, "min_cwnd_packets");
    bad(SwiftParams { max_cwnd_packets: 0.0001, ..d() }, "max_cwnd_packets");
    bad(SwiftParams { initial_cwnd_packets: 5000.0, ..d() }, "initial_cwnd_packets");
    bad(SwiftParams { retx_reset_threshold: 0, ..d() }, "retx_reset_threshold");
    bad(SwiftParams { ai_packets: f64::NAN, ..d() }, "ai_packets");
    assert!(d().validate("congestion.swift").is_ok());
}
