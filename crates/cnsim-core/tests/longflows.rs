//! Long flows: `saturate` and `cbr` sources over a transport, one flow per source-destination
//! pair that its application writes as the run goes (docs/transport.md, "Long flows").
//! Every expected number is computed here from the topology: a saturating TCP flow fills its
//! link, a cbr flow's size is its rate times its time in whole packets and it completes one
//! path delay after its last write, an idle cbr flow takes no timeout, a cbr TCP flow whose
//! window a loss held back catches up, and bad combinations are errors naming the field.

mod common;

use common::*;

/// a - sw - b: two 10 Gb/s links of 1 us, no switch latency; `model` holds extra `[model]`
/// keys; one entry of `kind` from a to b with `extra` keys, and `tail` TOML appended.
fn pair(duration_s: f64, model: &str, kind: &str, extra: &str, tail: &str) -> String {
    ScenarioToml::new("long", duration_s)
        .raw(&format!("[model]\n{model}\n"))
        .hosts(&["a", "b"])
        .switch("sw")
        .link("a", "sw", G10, 1e-6)
        .link("sw", "b", G10, 1e-6)
        .traffic(kind, &["a"], "b", extra)
        .raw(tail)
        .build()
}

/// One packet's path delay a -> b: store and forward over both links.
fn path_delay_s(frame_bytes: f64) -> f64 {
    2.0 * (tx_s(frame_bytes, G10) + 1e-6)
}

#[test]
fn a_saturating_tcp_flow_fills_its_link_and_is_in_flight_at_the_end() {
    // 24 B of wire overhead per frame (preamble, FCS, gap): the link carries 1524 B per
    // 1500 B packet. TCP's initial window (10 packets) is above the path's
    // bandwidth-delay product (about 6 packets), so the NIC never waits: the k-th packet
    // (0-based) leaves a at (k + 1) s and reaches b at (k + 2) s + 2 us (s = one frame's
    // time); ACKs take the other direction of each link, so they cost the data nothing.
    let t_end = 2e-3;
    let r = run(&pair(
        t_end,
        "wire_overhead_bytes = 24",
        "saturate",
        "transport = \"tcp\"",
        "",
    ));
    let f = &r.flows;
    assert_eq!(f.flow_id.len(), 1);
    let s = tx_s(1524.0, G10);
    let want_packets = ((t_end - 2e-6) / s).floor() - 1.0;
    let delivered_packets = f.delivered_bytes[0] as f64 / MTU;
    assert!(
        (delivered_packets - want_packets).abs() <= 1.0,
        "{delivered_packets} packets delivered, want {want_packets}"
    );
    let goodput = f.delivered_bytes[0] as f64 * 8.0 / t_end;
    assert_close(goodput, G10 * 1500.0 / 1524.0, 0.005, "goodput");
    // Running to the end: not complete, its size what the sender took, the rest in flight.
    assert!(!f.completed[0] && f.end_s[0].is_nan() && f.sender_end_s[0].is_nan());
    assert_eq!(f.size_bytes[0] % 1500, 0);
    assert!(f.size_bytes[0] > f.delivered_bytes[0]);
    assert_eq!(u(&r.summary, "frames/generated") * 1500, f.size_bytes[0]);
    assert_eq!((f.retransmitted_bytes[0], f.timeouts[0]), (0, 0));
    assert_eq!(u(&r.summary, "flows/started"), 1);
    assert_eq!(u(&r.summary, "flows/incomplete"), 1);
    assert_conserved(&r);
}

#[test]
fn saturating_flows_both_ways_share_each_link_with_the_other_flows_acks() {
    // a -> b and b -> a, each a saturating flow: each direction of each link carries one
    // flow's data and the other's ACKs (one 64 B ACK per packet), each frame with 24 B of
    // wire overhead, so a flow's goodput is C x 1500 / (1500 + 24 + 64 + 24).
    let t_end = 4e-3;
    for transport in ["tcp", "roce"] {
        let text = ScenarioToml::new("both", t_end)
            .raw("[model]\nwire_overhead_bytes = 24\n")
            .hosts(&["a", "b"])
            .switch("sw")
            .link("a", "sw", G10, 1e-6)
            .link("sw", "b", G10, 1e-6)
            .traffic(
                "saturate",
                &["a"],
                "b",
                &format!("transport = \"{transport}\""),
            )
            .traffic(
                "saturate",
                &["b"],
                "a",
                &format!("transport = \"{transport}\""),
            )
            .build();
        let r = run(&text);
        let want = G10 * 1500.0 / (1500.0 + 64.0 + 2.0 * 24.0);
        for flow in 0..2 {
            let goodput = r.flows.delivered_bytes[flow] as f64 * 8.0 / t_end;
            assert_close(goodput, want, 0.005, &format!("{transport} flow {flow}"));
        }
        assert_conserved(&r);
    }
}

#[test]
fn a_saturating_flow_with_a_stop_completes_with_what_was_written_by_then() {
    let (stop, s) = (1e-3, tx_s(1500.0, G10));
    let r = run(&pair(
        2e-3,
        "",
        "saturate",
        "transport = \"roce\"\nstop_s = 0.001",
        "",
    ));
    let f = &r.flows;
    // The sender takes packet k at k x s (back to back from 0): those taken before the stop.
    let packets = f.size_bytes[0] / 1500;
    let want = (stop / s).ceil() as u64;
    assert!(
        packets == want || packets == want + 1,
        "{packets} vs {want}"
    );
    assert!(f.completed[0]);
    assert_eq!(f.delivered_bytes[0], f.size_bytes[0]);
    // The last packet was taken within one frame time of the stop and arrives a path
    // delay later.
    let after_stop = f.end_s[0] - stop;
    let d = path_delay_s(1500.0);
    assert!(
        after_stop > d - s - 1e-12 && after_stop <= d + 1e-12,
        "end {} - stop = {after_stop}, path delay {d}",
        f.end_s[0]
    );
    assert!(f.sender_end_s[0] > f.end_s[0]);
    assert_close(f.goodput_bps[0], G10, 0.01, "goodput");
    assert_eq!(u(&r.summary, "flows/completed"), 1);
    assert_eq!(u(&r.summary, "frames/generated"), packets);
    assert_eq!(u(&r.summary, "control_frames/ack"), packets);
    assert_conserved(&r);
}

#[test]
fn a_cbr_roce_flow_writes_rate_times_time_and_completes_one_path_delay_after_its_last_write() {
    // 4 Gb/s of 1500 B packets: one every 3 us, the first at the start (as the open-loop
    // source's frames). From 0.1 ms to the stop at 1.1 ms: packets 0..=333 (333 x 3 us =
    // 999 us), the last written 1 us before the stop.
    let (start, stop, rate) = (1e-4, 1.1e-3, 4e9);
    let interval = tx_s(1500.0, rate);
    let r = run(&pair(
        2e-3,
        "",
        "cbr",
        "rate_bps = 4e9\nstart_s = 1e-4\nstop_s = 1.1e-3\ntransport = \"roce\"",
        "",
    ));
    let f = &r.flows;
    let packets = ((stop - start) / interval).ceil() as u64;
    assert_eq!(packets, 334);
    assert_eq!(f.size_bytes[0], packets * 1500);
    let written_bits = f.size_bytes[0] as f64 * 8.0;
    assert!((written_bits - rate * (stop - start)).abs() <= 1500.0 * 8.0);
    assert!(f.completed[0]);
    assert_eq!(f.delivered_bytes[0], f.size_bytes[0]);
    // The link is idle: each packet leaves when written and arrives a path delay later.
    let last_write = start + (packets - 1) as f64 * interval;
    let d = path_delay_s(1500.0);
    assert!(
        (f.end_s[0] - (last_write + d)).abs() < 1e-12,
        "{} vs {}",
        f.end_s[0],
        last_write + d
    );
    assert!(f.end_s[0] > stop + d - interval && f.end_s[0] <= stop + d);
    let ack_back = 2.0 * (tx_s(64.0, G10) + 1e-6);
    assert!((f.sender_end_s[0] - (f.end_s[0] + ack_back)).abs() < 1e-12);
    assert_eq!((f.retransmitted_bytes[0], f.timeouts[0]), (0, 0));
    assert_eq!(u(&r.summary, "frames/generated"), packets);
    assert_eq!(u(&r.summary, "control_frames/ack"), packets);
    assert_conserved(&r);
}

#[test]
fn a_cbr_flow_without_a_stop_delivers_what_was_written_but_the_last_path_delay() {
    let (t_end, rate) = (1e-3, 4e9);
    let interval = tx_s(1500.0, rate);
    let r = run(&pair(
        t_end,
        "",
        "cbr",
        "rate_bps = 4e9\ntransport = \"irn\"",
        "",
    ));
    let f = &r.flows;
    let written = (t_end / interval).ceil() as u64; // packets at 0, 3 us, ... before the end
    assert_eq!(f.size_bytes[0], written * 1500);
    assert!((f.size_bytes[0] as f64 * 8.0 - rate * t_end).abs() <= 1500.0 * 8.0);
    // Packet k arrives at k x 3 us + 4.4 us: those by the end are delivered.
    let arrived = ((t_end - path_delay_s(1500.0)) / interval).floor() as u64 + 1;
    assert_eq!(f.delivered_bytes[0], arrived * 1500);
    assert!(!f.completed[0]);
    assert_conserved(&r);
}

#[test]
fn an_idle_cbr_flow_takes_no_timeout_between_its_writes() {
    // 10 Mb/s: a packet every 1.2 ms, far apart beyond RoCE's 320 us timeout and TCP's 1 ms
    // minimum. Everything written is acknowledged long before the next write: the timer is
    // off, so nothing is resent.
    for transport in ["roce", "irn", "tcp"] {
        let r = run(&pair(
            20e-3,
            "",
            "cbr",
            &format!("rate_bps = 1e7\ntransport = \"{transport}\""),
            "[transport.tcp]\nmin_rto_s = 1e-3\n",
        ));
        let f = &r.flows;
        // Written at 0, 1.2, ..., 19.2 ms: 17 packets, each delivered 4.4 us later.
        assert_eq!(f.size_bytes[0], 17 * 1500, "{transport}");
        assert_eq!(f.delivered_bytes[0], 17 * 1500, "{transport}");
        assert_eq!(
            (f.timeouts[0], f.retransmitted_bytes[0]),
            (0, 0),
            "{transport}"
        );
        assert_eq!(u(&r.summary, "frames/generated"), 17, "{transport}");
        assert_conserved(&r);
    }
}

/// A 5 Gb/s cbr TCP flow over the 10 Gb/s pair, without SACK and with fast retransmit out
/// of reach (a duplicate-ACK threshold of 10^6), so that the first transmission of packet
/// 20, lost, is resent only by the retransmission timeout (1 ms).
fn held_by_loss(duration_s: f64, stop: &str) -> String {
    pair(
        duration_s,
        "",
        "cbr",
        &format!("rate_bps = 5e9\ntransport = \"tcp\"\n{stop}"),
        "[transport.tcp]\nmin_rto_s = 1e-3\nsack = false\ndupack_threshold = 1000000\n\
         [transport]\ndrop = [{ flow = 0, psn = 20 }]\n",
    )
}

#[test]
fn a_cbr_tcp_flow_whose_window_a_loss_held_back_catches_up() {
    let interval = tx_s(1500.0, 5e9); // 2.4 us
                                      // While the timeout runs, the application goes on writing but the receiver releases
                                      // nothing past packet 19, and the window (30 packets after slow start's 20 ACKs) holds
                                      // the rest back.
                                      // (Run ends and stops between two writes: a write exactly at the end would count.)
    let during = run(&held_by_loss(0.91e-3, ""));
    let f = &during.flows;
    let written = (0.91e-3 / interval).ceil() as u64;
    assert_eq!(f.size_bytes[0], written * 1500);
    assert_eq!(f.delivered_bytes[0], 20 * 1500);
    assert_eq!(f.timeouts[0], 0);
    assert!(u(&during.summary, "frames/generated") <= 20 + 30 + 1);
    assert_conserved(&during);
    // After the timeout the sender resends and then sends the backlog as fast as its window
    // and the NIC let it (slow start from one packet, at up to 10 Gb/s against 5 Gb/s of
    // writes): long before 6 ms it is back to sending each packet as it is written, so what
    // is undelivered at the end is what was written in the last path delay.
    let after = run(&held_by_loss(6.01e-3, ""));
    let f = &after.flows;
    let written = (6.01e-3 / interval).ceil() as u64;
    assert_eq!(f.size_bytes[0], written * 1500);
    assert_eq!(f.timeouts[0], 1);
    assert!(f.retransmitted_bytes[0] >= 1500);
    let in_last_path_delay = (path_delay_s(1500.0) / interval).ceil() as u64 + 1;
    let behind = f.size_bytes[0] - f.delivered_bytes[0];
    assert!(
        behind <= in_last_path_delay * 1500,
        "{behind} B behind, at most {in_last_path_delay} packets"
    );
    assert_conserved(&after);
    // With a stop, it completes: every written byte delivered once.
    let stopped = run(&held_by_loss(6e-3, "stop_s = 3.001e-3"));
    let f = &stopped.flows;
    assert!(f.completed[0]);
    assert_eq!(f.size_bytes[0], (3.001e-3 / interval).ceil() as u64 * 1500);
    assert_eq!(f.delivered_bytes[0], f.size_bytes[0]);
    assert!(f.end_s[0] > 3e-3 && f.sender_end_s[0] > f.end_s[0]);
    assert_eq!(f.timeouts[0], 1);
    assert_conserved(&stopped);
}

#[test]
fn open_loop_sources_are_untouched_by_the_long_flows_code() {
    // transport = "none" (the default): no flow at all, frames as before.
    let r = run(&pair(1e-3, "", "cbr", "rate_bps = 4e9", ""));
    assert!(r.flows.flow_id.is_empty());
    assert_eq!(u(&r.summary, "control_frames/ack"), 0);
    assert_eq!(u(&r.summary, "frames/generated"), 334);
}

#[test]
fn bad_long_flow_combinations_are_errors_naming_the_field() {
    let bern = pair(1e-3, "", "bernoulli", "load = 0.5\ntransport = \"tcp\"", "");
    assert_field_error(
        &run_error_of(&bern, &[]),
        "traffic[0].transport",
        "saturate",
    );
    let three = |dst: &str, extra: &str| {
        ScenarioToml::new("long", 1e-3)
            .hosts(&["a", "b", "c"])
            .switch("sw")
            .link("a", "sw", G10, 1e-6)
            .link("sw", "b", G10, 1e-6)
            .link("sw", "c", G10, 1e-6)
            .traffic("cbr", &["a"], dst, extra)
            .build()
    };
    let cbr = three("[\"b\", \"c\"]", "rate_bps = 1e9\ntransport = \"tcp\"");
    assert_field_error(
        &run_error_of(&cbr, &[]),
        "traffic[0].dst",
        "one destination",
    );
    let uniform = three("uniform", "rate_bps = 1e9\ntransport = \"roce\"");
    assert_field_error(
        &run_error_of(&uniform, &[]),
        "traffic[0].dst",
        "one destination",
    );
    // Open loop, the same destinations are fine (a destination drawn per frame).
    run(&three("[\"b\", \"c\"]", "rate_bps = 1e9"));
    // The drop list reaches a long flow's packets up to what it can write by the end: at
    // 1 Gb/s for 1 ms, 84 packets (0..=83).
    let drop = |psn: u32| {
        pair(
            1e-3,
            "",
            "cbr",
            "rate_bps = 1e9\ntransport = \"roce\"",
            &format!("[transport]\ndrop = [{{ flow = 0, psn = {psn} }}]\n"),
        )
    };
    // Packet 40 lost: 41's arrival brings the NACK, go-back-N resends 40 and 41.
    assert!(run(&drop(40)).flows.retransmitted_bytes[0] >= 1500);
    run(&drop(83));
    assert_field_error(&run_error_of(&drop(84), &[]), "transport.drop[0].psn", "84");
}

#[test]
fn a_long_flow_with_more_packets_than_sequence_numbers_is_refused() {
    // 64 B packets written at 1 Tb/s for 3 s: 5.9e9 packets, past the 32-bit PSN space.
    let text = ScenarioToml::new("long", 3.0)
        .hosts(&["a", "b"])
        .link("a", "b", 1e12, 1e-6)
        .traffic(
            "cbr",
            &["a"],
            "b",
            "rate_bps = 1e12\nframe_bytes = 64\ntransport = \"roce\"",
        )
        .raw("[limits]\nmax_events = 1e30\nmax_memory_bytes = 1e30\nmax_probe_samples = 1e30\n")
        .build();
    assert_field_error(&run_error_of(&text, &[]), "traffic[0].transport", "2^32");
}
