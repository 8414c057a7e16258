//! DCTCP's arithmetic against numbers worked by hand (one alpha update, one window cut, the
//! marking against K) and N long flows into one port against the paper's analysis.

use rand::SeedableRng;

use super::*;

const MSS: u64 = 1500;

fn ack(acked: u64, in_flight: u64, ece: bool) -> AckEvent {
    AckEvent {
        now: SimTime::ZERO,
        newly_acked_bytes: acked,
        rtt: SimTime::ZERO,
        endpoint_delay: SimTime::ZERO,
        ece,
        in_flight_bytes: in_flight,
        telemetry: None,
    }
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
}

#[test]
fn alpha_moves_by_g_towards_the_marked_fraction_once_per_window() {
    let mut s = DctcpSender::new(&DctcpParams::default(), MSS as u32);
    // The first ACK passes WindowEnd = 0 (the ISN): its window is that one unmarked packet.
    s.on_ack(&ack(MSS, 9 * MSS, false));
    close(s.alpha, 15.0 / 16.0); // (1 - 1/16) x 1 + 1/16 x 0
    // The next window ends when SND.UNA passes SND.NXT = 1500 + 13500 = 15000 B: the 10 ACKs
    // from 3000 to 16500 B. Five of them echo CE: F = 7500 / 15000 = 1/2, and alpha moves
    // only at the tenth.
    for i in 0..10 {
        s.on_ack(&ack(MSS, 9 * MSS, i < 5));
        if i < 9 {
            close(s.alpha, 15.0 / 16.0);
        }
    }
    // (15/16) x (15/16) + (1/16) x (1/2) = 0.87890625 + 0.03125
    close(s.alpha, 0.91015625);
}

#[test]
fn an_echo_cuts_the_window_by_alpha_over_two_once_per_window() {
    let p = DctcpParams {
        alpha_init: 0.25,
        ..DctcpParams::default()
    };
    let mut s = DctcpSender::new(&p, 1000);
    close(s.cwnd_bytes, 10_000.0);
    // Marked: alpha = (15/16) 0.25 + 1/16 = 0.296875 first, then the cut by alpha / 2:
    // cwnd = 10000 (1 - 0.1484375) = 8515.625 B, and ssthresh with it.
    s.on_ack(&ack(1000, 9000, true));
    close(s.alpha, 0.296875);
    close(s.cwnd_bytes, 8515.625);
    close(s.ssthresh_bytes, 8515.625);
    // Within the window in flight at the cut (SND.NXT = 10000 B) no second cut: congestion
    // avoidance instead, + MSS x acked / cwnd.
    s.on_ack(&ack(1000, 8000, true));
    close(s.cwnd_bytes, 8515.625 + 1000.0 * 1000.0 / 8515.625);
    for _ in 0..7 {
        s.on_ack(&ack(1000, 8000, false));
    }
    // SND.UNA = 10000 B: the ACK of the last packet in flight at the cut. Its echo is about
    // that window (the packet left before the cut): no cut (ns-2's `seqno > recover_`,
    // Linux's CWR held until something above high_seq is acknowledged), and alpha's window
    // (WindowEnd = 10000 B) is still open.
    let before = s.cwnd_bytes;
    s.on_ack(&ack(1000, 8000, true));
    close(s.alpha, 0.296875);
    close(s.cwnd_bytes, before + 1000.0 * 1000.0 / before);
    // SND.UNA = 11000 B: the first ACK of data sent after the cut. Alpha's window closes first
    // (10 ACKs of 1000 B from 2000 to 11000 B, 3 marked: F = 0.3), then the echo cuts again
    // by the new alpha.
    let before = s.cwnd_bytes;
    s.on_ack(&ack(1000, 8000, true));
    let alpha = (15.0 / 16.0) * 0.296875 + (1.0 / 16.0) * 0.3;
    close(s.alpha, alpha);
    close(s.cwnd_bytes, before * (1.0 - alpha / 2.0));
    close(s.ssthresh_bytes, s.cwnd_bytes);
}

#[test]
fn slow_start_then_congestion_avoidance_and_losses_as_rfc_5681() {
    let mut s = DctcpSender::new(&DctcpParams::default(), MSS as u32);
    s.on_ack(&ack(MSS, 9 * MSS, false));
    close(s.cwnd_bytes, 11.0 * MSS as f64); // slow start: + one MSS per ACK
    // A NACK halves the window, once per window.
    s.on_loss(LossSignal::Nack);
    close(s.cwnd_bytes, 5.5 * MSS as f64);
    s.on_loss(LossSignal::Nack);
    close(s.cwnd_bytes, 5.5 * MSS as f64);
    s.on_ack(&ack(MSS, 4 * MSS, false)); // above ssthresh? equal: congestion avoidance
    close(s.cwnd_bytes, 5.5 * 1500.0 + 1500.0 / 5.5);
    // A timeout: ssthresh = cwnd / 2, cwnd = one MSS.
    let half = s.cwnd_bytes / 2.0;
    s.on_loss(LossSignal::Timeout);
    close(s.cwnd_bytes, MSS as f64);
    close(s.ssthresh_bytes, half);
    // The floor of a reduction: 2 MSS.
    let mut t = DctcpSender::new(
        &DctcpParams {
            initial_cwnd_packets: 3,
            ..DctcpParams::default()
        },
        1500,
    );
    t.on_loss(LossSignal::Nack);
    close(t.cwnd_bytes, 3000.0);
}

fn cp_marks(p: &DctcpParams, at: MarkOn, queue_bytes: u64, frame_bytes: u32) -> bool {
    cp_at_rate_marks(p, 10e9, at, queue_bytes, frame_bytes)
}

/// As `cp_marks`, for a CP on a port of `port_rate_bps`.
fn cp_at_rate_marks(
    p: &DctcpParams,
    port_rate_bps: f64,
    at: MarkOn,
    queue_bytes: u64,
    frame_bytes: u32,
) -> bool {
    let mut cp = Dctcp::new_cp(p, 0, port_rate_bps, &mut SimRng::seed_from_u64(1));
    let mut rng = SimRng::seed_from_u64(2);
    let mut ce = false;
    let frame = CpFrame {
        src: 0,
        flow: 1,
        bytes: frame_bytes,
        rl_tag: super::super::NO_TAG,
        ecn_ce: &mut ce,
        payload: Carried::Data,
    };
    match at {
        MarkOn::Enqueue => {
            Dctcp::on_enqueue(&mut cp, frame, queue_bytes, 0, &mut rng);
        }
        MarkOn::Dequeue => Dctcp::on_dequeue(&mut cp, frame, queue_bytes, &mut rng),
    }
    assert_eq!(Dctcp::ecn_marked(&cp), Some(ce as u64));
    ce
}

#[test]
fn a_data_frame_is_marked_when_the_queue_it_finds_exceeds_k() {
    let p = DctcpParams {
        k_bytes: 30_000.0,
        ..DctcpParams::default()
    };
    // At enqueue the hook's queue includes the frame: it finds 30000 B (not above K), then
    // 30001 B (above).
    assert!(!cp_marks(&p, MarkOn::Enqueue, 31_500, 1500));
    assert!(cp_marks(&p, MarkOn::Enqueue, 31_501, 1500));
    // Marking at enqueue never marks at dequeue, and the other way round.
    assert!(!cp_marks(&p, MarkOn::Dequeue, 90_000, 1500));
    let deq = DctcpParams {
        mark_on: MarkOn::Dequeue,
        ..p.clone()
    };
    assert!(!cp_marks(&deq, MarkOn::Enqueue, 90_000, 1500));
    // At dequeue, the queue left behind.
    assert!(!cp_marks(&deq, MarkOn::Dequeue, 30_000, 1500));
    assert!(cp_marks(&deq, MarkOn::Dequeue, 30_001, 1500));
}

#[test]
fn with_a_reference_rate_k_scales_with_the_ports_rate() {
    // K = 30 KB at 10 Gb/s (Parsimon's runs of HPCC's simulator): 120 KB at 40 Gb/s, 7.5 KB
    // at 2.5 Gb/s; at enqueue the queue the frame finds is the hook's less its 1500 B.
    let p = DctcpParams {
        k_bytes: 30_000.0,
        k_reference_rate_bps: Some(10e9),
        ..DctcpParams::default()
    };
    let marks = |rate, q| cp_at_rate_marks(&p, rate, MarkOn::Enqueue, q, 1500);
    assert!(!marks(10e9, 31_500) && marks(10e9, 31_501));
    assert!(!marks(40e9, 121_500) && marks(40e9, 121_501));
    assert!(!marks(2.5e9, 9_000) && marks(2.5e9, 9_001));
    // Without one, every port marks at K as given.
    let fixed = DctcpParams {
        k_reference_rate_bps: None,
        ..p.clone()
    };
    assert!(cp_at_rate_marks(&fixed, 40e9, MarkOn::Enqueue, 31_501, 1500));
    // RED's thresholds scale alike: 10-50 KB at 10 Gb/s is 40-200 KB at 40 Gb/s.
    let red = DctcpParams {
        marking: DctcpMarking::Red,
        kmin_bytes: 10_000.0,
        kmax_bytes: 50_000.0,
        ..p.clone()
    };
    let at_40 = red.at_rate(40e9);
    assert_eq!((at_40.kmin_bytes, at_40.kmax_bytes), (40_000.0, 200_000.0));
    close(at_40.mark_probability(120_000.0), 0.5);
}

#[test]
fn a_window_cap_holds_the_window_in_slow_start_and_after() {
    // 18 packets of 1000 B (HPCC's simulator's window in Parsimon's runs): slow start from 10
    // stops at 18,000 B, and congestion avoidance does not pass it either.
    let p = DctcpParams {
        max_cwnd_packets: Some(18),
        ..DctcpParams::default()
    };
    let mut s = DctcpSender::new(&p, 1000);
    close(s.cwnd_bytes, 10_000.0);
    for k in 0..7 {
        s.on_ack(&ack(1000, 9_000, false));
        close(s.cwnd_bytes, 11_000.0 + 1_000.0 * k as f64);
    }
    for _ in 0..50 {
        s.on_ack(&ack(1000, 17_000, false));
    }
    close(s.cwnd_bytes, 18_000.0);
    // A cut from the cap, then growth back to it and no further.
    s.on_loss(LossSignal::Nack);
    close(s.cwnd_bytes, 9_000.0);
    for _ in 0..2_000 {
        s.on_ack(&ack(1000, 8_000, false));
    }
    close(s.cwnd_bytes, 18_000.0);
    // Without a cap the same ACKs take it past 18 packets.
    let mut free = DctcpSender::new(&DctcpParams::default(), 1000);
    for _ in 0..50 {
        free.on_ack(&ack(1000, 9_000, false));
    }
    assert!(free.cwnd_bytes > 18_000.0, "{}", free.cwnd_bytes);
}

#[test]
fn the_red_variant_ramps_from_kmin_to_kmax() {
    let p = DctcpParams {
        marking: DctcpMarking::Red,
        kmin_bytes: 10_000.0,
        kmax_bytes: 50_000.0,
        pmax: 0.2,
        ..DctcpParams::default()
    };
    close(p.mark_probability(10_000.0), 0.0);
    close(p.mark_probability(30_000.0), 0.1);
    close(p.mark_probability(50_000.0), 0.2);
    close(p.mark_probability(50_001.0), 1.0);
    // Both thresholds at K with pmax 1: the step.
    let step = DctcpParams::default();
    let red = DctcpParams {
        marking: DctcpMarking::Red,
        ..DctcpParams::default()
    };
    for q in [0.0, 97_499.0, 97_500.0, 97_501.0, 200_000.0] {
        assert_eq!(step.mark_probability(q), red.mark_probability(q), "{q}");
    }
}

#[test]
fn bad_fields_are_errors_naming_the_field() {
    for (p, field) in [
        (
            DctcpParams {
                g: 0.0,
                ..DctcpParams::default()
            },
            "g",
        ),
        (
            DctcpParams {
                kmin_bytes: 2.0,
                kmax_bytes: 1.0,
                ..DctcpParams::default()
            },
            "kmax_bytes",
        ),
        (
            DctcpParams {
                initial_cwnd_packets: 0,
                ..DctcpParams::default()
            },
            "initial_cwnd_packets",
        ),
        (
            DctcpParams {
                max_cwnd_packets: Some(9),
                ..DctcpParams::default()
            },
            "max_cwnd_packets",
        ),
        (
            DctcpParams {
                k_reference_rate_bps: Some(0.0),
                ..DctcpParams::default()
            },
            "k_reference_rate_bps",
        ),
    ] {
        let e = p.validate("congestion.dctcp").unwrap_err().to_string();
        assert!(e.contains(&format!("congestion.dctcp.{field}")), "{e}");
    }
}

mod long_flows;
