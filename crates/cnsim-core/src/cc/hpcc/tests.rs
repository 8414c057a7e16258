//! HPCC's arithmetic against numbers worked by hand: one MeasureInflight (the most loaded hop,
//! the EWMA weight tau/T), one ComputeWind of each kind, the once-per-RTT reference update and
//! the named parameter set.

use super::*;
use crate::cc::HopTelemetry;
use crate::time::SimTime;

const LINE_BPS: f64 = 100e9;
/// T = 10 us: W_max = 100 Gb/s x 10 us = 125,000 B; W_AI = 40 Mb/s x 10 us = 50 B.
const T_S: f64 = 10e-6;

fn params() -> HpccParams {
    HpccParams {
        base_rtt_s: T_S,
        ..HpccParams::default()
    }
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-9 * want.abs().max(1.0), "{got} vs {want}");
}

/// Telemetry of one path: per hop (queue bytes, tx bytes, time in ns), all at 100 Gb/s.
fn int(hops: &[(u64, u64, u64)]) -> Telemetry {
    let mut t = Telemetry::default();
    for &(queue_bytes, tx_bytes, at_ns) in hops {
        t.push(HopTelemetry {
            queue_bytes,
            tx_bytes,
            at: SimTime::from_nanos(at_ns),
            rate_bps: LINE_BPS,
        });
    }
    t
}

#[test]
fn a_flow_starts_at_line_rate_with_the_bdp_as_window() {
    let s = HpccSender::new(&params(), LINE_BPS);
    close(s.w_bytes, 125_000.0);
    close(s.wc_bytes, 125_000.0);
    close(s.rate_bps(), LINE_BPS);
    close(s.u, 1.0);
}

#[test]
fn the_first_telemetry_is_only_recorded() {
    let mut s = HpccSender::new(&params(), LINE_BPS);
    s.on_telemetry(&int(&[(50_000, 1_000_000, 1_000)]), 1_000, 126_000);
    close(s.w_bytes, 125_000.0);
    close(s.u, 1.0);
}

#[test]
fn the_most_loaded_hop_sets_u_weighted_by_tau_over_t() {
    let mut s = HpccSender::new(&params(), LINE_BPS);
    s.on_telemetry(&int(&[(0, 0, 0), (20_000, 0, 0)]), 1_000, 126_000);
    // 2 us later: hop 0 sent 25,000 B (100 Gb/s: u' = 1.0, no queue);
    // hop 1 sent 25,000 B with min(queue) = 20,000 B: u' = 1.0 + 160,000 / (1e11 x 1e-5) = 1.16.
    let now = int(&[(0, 25_000, 2_000), (30_000, 25_000, 2_000)]);
    s.on_telemetry(&now, 2_000, 127_000);
    // tau = 2 us: U = (1 - 0.2) x 1 + 0.2 x 1.16 = 1.032.
    close(s.u, 1.032);
    // Acked 2,000 > lastUpdateSeq 126,000? No: a per-ACK update, Wc kept.
    // U >= eta: W = Wc / (U / eta) + W_AI = 125,000 x 0.95 / 1.032 + 50.
    close(s.w_bytes, 125_000.0 * 0.95 / 1.032 + 50.0);
    close(s.wc_bytes, 125_000.0);
    assert_eq!(s.inc_stage, 0);
}

#[test]
fn below_eta_the_window_grows_by_w_ai_and_wc_moves_once_per_rtt() {
    let mut s = HpccSender::new(&params(), LINE_BPS);
    // Start at half the line rate so the additive step is not clamped.
    s.w_bytes = 62_500.0;
    s.wc_bytes = 62_500.0;
    s.on_telemetry(&int(&[(0, 0, 0)]), 0, 62_500);
    // An idle-ish hop: 12,500 B in 10 us (tau = T) = 10 Gb/s: U = 0.1 after one full-weight step.
    s.on_telemetry(&int(&[(0, 12_500, 10_000)]), 62_501, 125_000);
    close(s.u, 0.1);
    // Past lastUpdateSeq (62,500): the reference moves. W = Wc + W_AI = 62,550, stage 1.
    close(s.w_bytes, 62_550.0);
    close(s.wc_bytes, 62_550.0);
    assert_eq!(s.inc_stage, 1);
    // The next ACK, still before the new lastUpdateSeq (125,000): W = Wc + W_AI, Wc stays.
    s.on_telemetry(&int(&[(0, 25_000, 20_000)]), 70_000, 130_000);
    close(s.w_bytes, 62_600.0);
    close(s.wc_bytes, 62_550.0);
    assert_eq!(s.inc_stage, 1);
}

#[test]
fn max_stage_forces_a_multiplicative_update() {
    let mut s = HpccSender::new(&params(), LINE_BPS);
    s.w_bytes = 62_500.0;
    s.wc_bytes = 62_500.0;
    s.inc_stage = 5;
    s.on_telemetry(&int(&[(0, 0, 0)]), 0, 62_500);
    s.on_telemetry(&int(&[(0, 12_500, 10_000)]), 62_501, 125_000);
    // U = 0.1 < eta, but incStage = maxStage: W = 62,500 / (0.1 / 0.95) + 50 = 593,800, which
    // the line rate clamps to 125,000; stage back to 0.
    close(s.w_bytes, 125_000.0);
    assert_eq!(s.inc_stage, 0);
}

#[test]
fn hops_whose_time_did_not_advance_leave_u_alone() {
    let mut s = HpccSender::new(&params(), LINE_BPS);
    let same = int(&[(10_000, 5_000, 3_000)]);
    s.on_telemetry(&same, 0, 1_000);
    s.on_telemetry(&same, 2_000, 3_000);
    close(s.u, 1.0);
    close(s.w_bytes, 125_000.0);
}

#[test]
fn the_rate_floor_bounds_the_window() {
    let mut s = HpccSender::new(&params(), LINE_BPS);
    s.on_telemetry(&int(&[(10_000_000, 0, 0)]), 0, 1_000);
    // A standing queue of 10 MB (the smaller of two samples counts): u' = 8e7 / (1e11 x 1e-5)
    // + 1 = 81; tau = T: U = 81, W = 125,000 x 0.95 / 81 + 50 = 1,516 B, above the floor
    // (100 Mb/s x 10 us = 125 B); acked 2,000 > lastUpdateSeq 1,000: Wc = W.
    s.on_telemetry(&int(&[(10_000_000, 125_000, 10_000)]), 2_000, 3_000);
    close(s.w_bytes, 125_000.0 * 0.95 / 81.0 + 50.0);
    close(s.wc_bytes, s.w_bytes);
    // Again: W = 1,516 x 0.95 / 81 + 50 = 68 B, below the floor: 125 B.
    s.on_telemetry(&int(&[(10_000_000, 250_000, 20_000)]), 4_000, 5_000);
    close(s.w_bytes, 125.0);
}

#[test]
fn the_ns3_set_updates_multiplicatively_every_time() {
    let p = HpccParams::of_set(HpccSet::HpccNs3);
    assert_eq!(p.max_stage, 0);
    close(p.min_rate_bps, 1e9);
    close(p.eta, 0.95);
    let mut s = HpccSender::new(
        &HpccParams {
            base_rtt_s: T_S,
            ..p
        },
        LINE_BPS,
    );
    s.w_bytes = 62_500.0;
    s.wc_bytes = 62_500.0;
    s.on_telemetry(&int(&[(0, 0, 0)]), 0, 62_500);
    s.on_telemetry(&int(&[(0, 62_500, 10_000)]), 62_501, 125_000);
    // U = 0.5 (50 Gb/s for T): W = 62,500 x 0.95 / 0.5 + 50 = 118,800.
    close(s.u, 0.5);
    close(s.w_bytes, 118_800.0);
}
