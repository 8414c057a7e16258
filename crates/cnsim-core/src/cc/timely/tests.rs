//! TIMELY's arithmetic against numbers worked by hand: one update in each regime of Algorithm 1
//! (below T_low, above T_high, positive and negative gradient with hyper-active increase), the
//! patched rule, the segment count and the clamp.

use super::*;
use crate::time::SimTime;

const LINE_BPS: f64 = 100e9;
const US: f64 = 1e-6;

fn sender(variant: TimelyVariant) -> TimelySender {
    let p = TimelyParams {
        variant,
        initial_rate_bps: 10e9,
        ..TimelyParams::default()
    };
    TimelySender::new(&p, LINE_BPS)
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-6 * want.abs().max(1.0), "{got} vs {want}");
}

#[test]
fn the_first_completion_only_records_the_rtt() {
    let mut s = sender(TimelyVariant::Sigcomm2015);
    s.on_completion(30.0 * US);
    close(s.rate_bps, 10e9);
    close(s.rtt_diff_s, 0.0);
}

#[test]
fn below_t_low_the_rate_grows_by_delta() {
    let mut s = sender(TimelyVariant::Sigcomm2015);
    s.on_completion(30.0 * US);
    s.on_completion(30.0 * US); // 30 us < T_low = 50 us: + 10 Mb/s
    close(s.rate_bps, 10.01e9);
}

#[test]
fn above_t_high_the_rate_falls_by_the_rtt() {
    let mut s = sender(TimelyVariant::Sigcomm2015);
    s.on_completion(100.0 * US);
    // 1000 us > T_high = 500 us: x (1 - 0.8 (1 - 500/1000)) = x 0.6
    s.on_completion(1000.0 * US);
    close(s.rate_bps, 6e9);
    close(s.rtt_diff_s, 0.875 * 900.0 * US);
}

#[test]
fn a_positive_gradient_cuts_by_beta_times_it() {
    let mut s = sender(TimelyVariant::Sigcomm2015);
    s.on_completion(100.0 * US);
    // new_rtt_diff = 10 us, rtt_diff = 0.875 x 10 = 8.75 us, gradient = 8.75 / 20 = 0.4375:
    // x (1 - 0.8 x 0.4375) = x 0.65
    s.on_completion(110.0 * US);
    close(s.rtt_diff_s, 8.75 * US);
    close(s.rate_bps, 6.5e9);
}

#[test]
fn five_negative_gradients_in_a_row_turn_on_hyper_active_increase() {
    let mut s = sender(TimelyVariant::Sigcomm2015);
    s.on_completion(100.0 * US);
    // Gradient 0 (<= 0) four times: + delta each.
    for _ in 0..4 {
        s.on_completion(100.0 * US);
    }
    close(s.rate_bps, 10.04e9);
    // The fifth in a row: + 5 delta.
    s.on_completion(100.0 * US);
    close(s.rate_bps, 10.09e9);
    // A positive gradient resets the count: rtt_diff = 0.875 x 2 us = 1.75 us, g = 0.0875,
    // x (1 - 0.07); the next zero-difference completion has rtt_diff = 0.21875 us > 0 again.
    s.on_completion(102.0 * US);
    close(s.rate_bps, 10.09e9 * 0.93);
}

#[test]
fn patched_steep_gradient_decreases_by_the_rtt_error() {
    let mut s = sender(TimelyVariant::Patched);
    s.on_completion(100.0 * US);
    // g = 0.4375 >= 1/4: w = 1; e = (110 - 50) / 50 = 1.2: x (1 - 0.008 x 1.2) = x 0.9904
    s.on_completion(110.0 * US);
    close(s.rate_bps, 9.904e9);
}

#[test]
fn patched_flat_gradient_mixes_increase_and_decrease() {
    let mut s = sender(TimelyVariant::Patched);
    s.on_completion(100.0 * US);
    // g = 0: w = 1/2; e = (100 - 50) / 50 = 1:
    // 10e9 (1 - 0.008 x 0.5 x 1) + 10e6 x 0.5 = 9.96e9 + 5e6
    s.on_completion(100.0 * US);
    close(s.rate_bps, 9.965e9);
    // The fixed point of a flat RTT: rate x beta w e = delta (1 - w), e = delta / (beta R).
}

#[test]
fn patch_weight_is_the_papers_ramp() {
    close(patch_weight(-1.0), 0.0);
    close(patch_weight(-0.25), 0.0);
    close(patch_weight(0.0), 0.5);
    close(patch_weight(0.125), 0.75);
    close(patch_weight(0.25), 1.0);
    close(patch_weight(3.0), 1.0);
}

fn ack(bytes: u64, rtt_us: u64) -> AckEvent {
    AckEvent {
        now: SimTime::ZERO,
        newly_acked_bytes: bytes,
        rtt: SimTime::from_micros(rtt_us),
        endpoint_delay: SimTime::ZERO,
        ece: false,
        in_flight_bytes: 0,
        telemetry: None,
    }
}

#[test]
fn a_completion_is_one_segment_of_acknowledged_bytes() {
    let mut s = sender(TimelyVariant::Sigcomm2015);
    // 16384 B segments of 1500 B ACKs: the 11th ACK (16500 B) completes the first (prev_rtt
    // recorded), 116 B carry over, and the 22nd (116 + 16500 B) the second: + delta.
    for _ in 0..21 {
        s.on_ack(&ack(1500, 30));
    }
    close(s.rate_bps, 10e9);
    s.on_ack(&ack(1500, 30));
    close(s.rate_bps, 10.01e9);
}

#[test]
fn the_rate_stays_between_min_rate_and_line_rate() {
    let p = TimelyParams::default();
    let mut s = TimelySender::new(&p, LINE_BPS);
    close(s.rate_bps, LINE_BPS); // starts at line rate
    s.on_completion(10.0 * US);
    s.on_completion(10.0 * US);
    close(s.rate_bps, LINE_BPS);
    // A huge gradient: 1 - 0.8 x g < 0, floored at min_rate.
    s.on_completion(400.0 * US);
    close(s.rate_bps, 10e6);
}

#[test]
fn bad_constants_name_their_field() {
    let p = TimelyParams {
        t_high_s: 10e-6,
        ..TimelyParams::default()
    };
    let e = p.validate("congestion.timely").unwrap_err().to_string();
    assert!(e.contains("congestion.timely.t_high_s"), "{e}");
    let p = TimelyParams {
        segment_bytes: 0,
        ..TimelyParams::default()
    };
    let e = p.validate("congestion.timely").unwrap_err().to_string();
    assert!(e.contains("segment_bytes"), "{e}");
}
