//! IRN (selective repeat, BDP cap, RTO_low / RTO_high), end to end: a lone flow's FCT against
//! an independent store-and-forward computation (with and without the BDP cap limiting it),
//! the computed BDP cap, one dropped frame resent alone (go-back-N resends the tail), and
//! every flow completing under random loss with every byte once, frames conserved, and with
//! a window scheme on top (the window gates new packets, not the retransmissions).

mod common;

use common::*;

const BITS: f64 = 8.0;

/// Per hop of the line: (propagation delay, the latency of the switch at its far end).
const FORWARD: [(f64, f64); 3] = [(1e-6, 0.5e-6), (2e-6, 0.25e-6), (3e-6, 0.0)];
const BACKWARD: [(f64, f64); 3] = [(3e-6, 0.25e-6), (2e-6, 0.5e-6), (1e-6, 0.0)];

/// Store and forward of frames in order through `hops`, each frame ready at the first hop at
/// its time: when its last bit reaches the far end of the last hop.
fn pipeline(ready: &[(f64, f64)], hops: &[(f64, f64)]) -> Vec<f64> {
    let mut free = vec![0.0f64; hops.len()];
    ready
        .iter()
        .map(|&(at, bytes)| {
            let mut t = at;
            for (h, &(delay, latency)) in hops.iter().enumerate() {
                let start = t.max(free[h]);
                free[h] = start + tx10(bytes);
                t = free[h] + delay + latency;
            }
            t - hops.last().map_or(0.0, |h| h.1)
        })
        .collect()
}

/// An independent computation of a lone IRN flow on the line with BDP cap `cap`: packet i
/// leaves when the NIC is free and the ACK of packet i - cap is back (in flight = next PSN -
/// cumulative ack < cap); each packet's ACK (64 B) leaves b when it arrives. Returns (the
/// last packet's arrival at b, the last ACK's arrival at a), from time 0. Packets go one at
/// a time through both directions, so the ACKs of earlier packets are known when needed.
fn ack_clocked(size: u64, cap: usize) -> (f64, f64) {
    let n = size.div_ceil(1500) as usize;
    let bytes = |i: usize| (size - 1500 * i as u64).min(1500) as f64;
    let (mut data, mut acks): (Vec<(f64, f64)>, Vec<f64>) = (Vec::new(), Vec::new());
    let mut nic_free = 0.0f64;
    for i in 0..n {
        let clock = if i >= cap { acks[i - cap] } else { 0.0 };
        let at = nic_free.max(clock);
        nic_free = at + tx10(bytes(i));
        data.push((at, bytes(i)));
        let arrivals = pipeline(&data, &FORWARD);
        let ack_ready: Vec<(f64, f64)> = arrivals.iter().map(|&t| (t, CTRL)).collect();
        acks = pipeline(&ack_ready, &BACKWARD);
    }
    let arrivals = pipeline(&data, &FORWARD);
    (arrivals[n - 1], acks[n - 1])
}

#[test]
fn a_lone_irn_flow_completes_in_the_closed_form_time_when_the_cap_exceeds_the_bdp() {
    let size = 100_001u64; // 66 frames of 1500 B and one of 1001 B
    let r = run(&transport_line(size, "irn", ""));
    let f = &r.flows;
    assert!(f.completed[0]);
    // The BDP cap, computed from the topology: 3 hops, 10 Gb/s, the largest delay 3 us and
    // switch latency 0.5 us: RTT = 3 x (2 x 3 us + (1500 + 64) B / R) + 4 x 0.5 us.
    let rtt = 3.0 * (6e-6 + tx10(1500.0 + 64.0)) + 4.0 * 0.5e-6;
    let cap = (G10 * rtt / (1500.0 * BITS)).ceil() as u64;
    assert_eq!(cap, 20);
    assert!(
        r.resolved_toml.contains("bdp_cap_packets = 20"),
        "{}",
        r.resolved_toml
    );
    assert!(r.resolved_toml.contains("rto_low_s"));
    // The first ACK is back after 17.3 us, 14.4 frame times: the cap (20) never binds, and
    // the FCT is the open-loop closed form (and the same as roce's).
    let one_way_delays = 1e-6 + 2e-6 + 3e-6 + 0.5e-6 + 0.25e-6;
    let want = tx10(size as f64) + 2.0 * tx10(MTU) + one_way_delays;
    assert!(
        (f.fct_s[0] - want).abs() < 1e-12,
        "{} vs {want}",
        f.fct_s[0]
    );
    let (last, last_ack) = ack_clocked(size, cap as usize);
    assert!((f.fct_s[0] - last).abs() < 1e-12);
    assert!((f.sender_end_s[0] - 0.001 - last_ack).abs() < 1e-12);
    let roce = run(&transport_line(size, "roce", ""));
    assert_eq!(f.fct_s[0], roce.flows.fct_s[0]);
    assert_eq!(u(&r.summary, "control_frames/ack"), 67);
    assert_eq!(u(&r.summary, "control_frames/nack"), 0);
    assert_eq!(u(&r.summary, "frames/generated"), 67);
    assert_eq!((f.retransmitted_bytes[0], f.timeouts[0]), (0, 0));
}

#[test]
fn a_small_bdp_cap_clocks_the_flow_by_its_acks() {
    let size = 100_001u64;
    for cap in [1usize, 4, 9] {
        let extra = format!("[transport.irn]\nbdp_cap_packets = {cap}\n");
        let r = run(&transport_line(size, "irn", &extra));
        let f = &r.flows;
        assert!(f.completed[0]);
        let (last, last_ack) = ack_clocked(size, cap);
        assert!(
            (f.fct_s[0] - last).abs() < 1e-12,
            "cap {cap}: {} vs {last}",
            f.fct_s[0]
        );
        assert!((f.sender_end_s[0] - 0.001 - last_ack).abs() < 1e-12);
        // Window-limited: slower than the line rate allows.
        assert!(f.fct_s[0] > f.ideal_fct_s[0] + 1e-6, "cap {cap}");
        assert_eq!(u(&r.summary, "frames/generated"), 67);
    }
    // One packet in flight at a time: each waits for the previous one's ACK (a round trip).
    let (one, _) = ack_clocked(size, 1);
    let rtt = tx10(MTU) * 3.0 + tx10(CTRL) * 3.0 + 2.0 * 6.75e-6;
    assert!((one - 66.0 * rtt - (3.0 * tx10(1001.0) + 6.75e-6)).abs() < 1e-12);
}

#[test]
fn one_dropped_frame_is_resent_alone_where_go_back_n_resends_the_tail() {
    // 40 full frames; the first transmission of packet 7 is lost on a's link. Every packet
    // from 8 on reaching b is held and NACKed (cumulative 7, its own PSN); the first NACK
    // (packet 8's) reaches a while it is sending: a resends 7 after the frame in progress,
    // then goes on with new packets. The BDP cap (20) holds the sender at 7 + 20 = 27 until
    // the resent 7's ACK returns; nothing else is resent.
    let (n, k) = (40u64, 7u64);
    let extra = format!("[transport]\ndrop = [{{ flow = 0, psn = {k} }}]\n");
    let r = run(&transport_line(n * 1500, "irn", &extra));
    let f = &r.flows;
    assert!(f.completed[0]);
    assert_eq!(f.delivered_bytes[0], n * 1500);
    assert_eq!(f.retransmitted_bytes[0], 1500);
    assert_eq!(f.timeouts[0], 0);
    assert_eq!(u(&r.summary, "frames/generated"), n + 1);
    assert_eq!(u(&r.summary, "frames/dropped/link"), 1);
    // Frames started by the time the NACK is back: the resent 7 follows them.
    let sent_by = |t: f64| (t / tx10(MTU)).floor() as u64 + 1;
    let k1_arrives = tx10(MTU) * (k + 2) as f64 + 2.0 * tx10(MTU) + 6.75e-6;
    let nack_back = k1_arrives + 3.0 * tx10(64.0) + 6.75e-6;
    let before = sent_by(nack_back);
    assert!(before < k + 20, "the cap does not bind before the NACK");
    // NACKs: packets k+1..before-1 (each out of order); ACKs: 0..k-1, the resent k (it
    // releases k..before-1 at once), then before..n-1 in order.
    assert_eq!(u(&r.summary, "control_frames/nack"), before - (k + 1));
    assert_eq!(u(&r.summary, "control_frames/ack"), k + 1 + (n - before));
    assert_eq!(u(&r.summary, "frames/delivered"), n);
    assert!(at(&r.summary, "frames/conserved").as_bool().unwrap());
    // Go-back-N, the same drop: every frame from 7 to the NACK's return again.
    let gbn = run(&transport_line(n * 1500, "roce", &extra));
    assert!(gbn.flows.retransmitted_bytes[0] >= 10 * 1500);
    assert!(f.fct_s[0] <= gbn.flows.fct_s[0]);
}

#[test]
fn a_lost_tail_packet_is_recovered_by_rto_low() {
    // 2 packets; the last one is lost: nothing comes back for it, so the timer (RTO_low:
    // 1 packet in flight < N = 3) resends it 100 us after the ACK of packet 0 moved it.
    let extra = "[transport]\ndrop = [{ flow = 0, psn = 1 }]\n";
    let r = run(&transport_line(3000, "irn", extra));
    let f = &r.flows;
    assert!(f.completed[0]);
    assert_eq!((f.timeouts[0], f.retransmitted_bytes[0]), (1, 1500));
    let ack0_back = 3.0 * tx10(MTU) + 6.75e-6 + 3.0 * tx10(CTRL) + 6.75e-6;
    let want = ack0_back + 100e-6 + 3.0 * tx10(MTU) + 6.75e-6;
    assert!(
        (f.fct_s[0] - want).abs() < 1e-12,
        "{} vs {want}",
        f.fct_s[0]
    );
    // RTO_high when N = 1 (never fewer than 1 in flight while waiting).
    let high = format!("{extra}[transport.irn]\nrto_low_packets = 1\n");
    let r = run(&transport_line(3000, "irn", &high));
    let want_high = want - 100e-6 + 320e-6;
    assert!((r.flows.fct_s[0] - want_high).abs() < 1e-12);
}

#[test]
fn under_random_loss_every_irn_flow_completes_with_every_byte_once() {
    for (loss, seed) in [(1e-4, 1), (1e-3, 2), (1e-2, 3)] {
        let r = run(&lossy_star(loss, seed, "irn", 0.05, ""));
        let resent = assert_every_flow_completes_once(&r, loss, &format!("loss {loss}"));
        if loss >= 1e-3 {
            // Selective repeat resends far less than go-back-N on the same workload.
            let gbn = run(&lossy_star(loss, seed, "roce", 0.05, ""));
            let gbn_retx = u(&gbn.summary, "flows/retransmitted_bytes");
            assert!(
                resent.bytes < gbn_retx,
                "{loss}: irn {} vs roce {gbn_retx}",
                resent.bytes
            );
        }
    }
}

#[test]
fn a_window_scheme_over_irn_resends_what_was_lost() {
    // 20 packets, one of them lost (the first, one in the middle, the last) under each
    // window scheme. IRN counts in flight as the next new PSN minus the cumulative ack, the
    // packets the receiver holds beyond the hole included; the loss cuts the window below
    // that, so a window that gated the hole's retransmission held it, and the ack that would
    // open the window, for ever (the flow never completed: one timeout after another). The
    // window gates new packets only, as BDP-FC does: every flow completes, resending one
    // packet.
    for scheme in ["dctcp", "swift", "hpcc"] {
        for psn in [0, 5, 10, 19] {
            let extra = format!(
                "[transport]\ndrop = [{{ flow = 0, psn = {psn} }}]\n\
                 [congestion]\nscheme = \"{scheme}\"\n"
            );
            let r = run(&transport_line(20 * 1500, "irn", &extra));
            let f = &r.flows;
            let case = format!("{scheme}, packet {psn} lost");
            assert!(f.completed[0], "{case}: timeouts {}", f.timeouts[0]);
            assert_eq!(f.delivered_bytes[0], 20 * 1500, "{case}");
            assert_eq!(f.retransmitted_bytes[0], 1500, "{case}");
            assert!(at(&r.summary, "frames/conserved").as_bool().unwrap());
        }
    }
}

#[test]
fn bad_irn_fields_are_errors_naming_the_field() {
    for (body, field) in [
        ("rto_low_s = -1.0", "transport.irn.rto_low_s"),
        ("rto_high_s = 0.0", "transport.irn.rto_high_s"),
        ("rto_low_s = 1e-3", "transport.irn.rto_low_s"),
        ("bdp_cap_packets = 0", "transport.irn.bdp_cap_packets"),
        ("ack_every = 0", "transport.irn.ack_every"),
        ("ack_bytes = 10", "transport.irn.ack_bytes"),
        ("rto_s = 1e-3", "rto_s"),
    ] {
        let text = transport_line(10_000, "irn", &format!("[transport.irn]\n{body}\n"));
        let e = run_error_of(&text, &[]).to_string();
        assert!(e.contains(field), "{body}: {e}");
    }
}
