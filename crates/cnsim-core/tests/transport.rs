//! End-host transports (roce go-back-N), end to end: a lone flow's FCT and last ACK against a
//! closed form computed here, go-back-N after an explicitly dropped frame, and every flow
//! completing under random link loss with every byte delivered once, frames conserved.

mod common;

use common::*;

const BITS: f64 = 8.0;

fn tx(bytes: f64) -> f64 {
    bytes * BITS / G10
}

/// a - s1 - s2 - b: three 10 Gb/s links of 1, 2 and 3 us, switch latencies 0.5 and 0.25 us;
/// one flow of `size` bytes from a to b at 1 ms over `transport`, with `extra` TOML appended.
fn line(size: u64, transport: &str, extra: &str) -> String {
    ScenarioToml::new("line", 0.02)
        .hosts(&["a", "b"])
        .switch_with("s1", "latency_s = 0.5e-6")
        .switch_with("s2", "latency_s = 0.25e-6")
        .link("a", "s1", G10, 1e-6)
        .link("s1", "s2", G10, 2e-6)
        .link("s2", "b", G10, 3e-6)
        .raw(&format!(
            "[[traffic]]\nkind = \"flow_trace\"\ntransport = \"{transport}\"\nflows = [{{ start_s = 0.001, src = \"a\", dst = \"b\", size_bytes = {size} }}]\n{extra}"
        ))
        .build()
}

/// Three hops of equal rate, store and forward: the source sends every byte back to back; each
/// later hop finishes a full frame one full-frame time after the hop before, and the last
/// (smaller) frame right behind the last full one, so the last byte arrives one full-frame time
/// per extra hop after the source's last bit, plus the delays.
fn closed_form_fct_s(size: u64) -> f64 {
    let one_way_delays = 1e-6 + 2e-6 + 3e-6 + 0.5e-6 + 0.25e-6;
    tx(size as f64) + 2.0 * tx(MTU) + one_way_delays
}

#[test]
fn a_lone_roce_flow_completes_in_the_closed_form_time_and_its_last_ack_follows() {
    let size = 100_001u64; // 66 frames of 1500 B and one of 1001 B
    let r = run(&line(size, "roce", ""));
    let f = &r.flows;
    assert!(f.completed[0]);
    let want = closed_form_fct_s(size);
    assert!(
        (f.fct_s[0] - want).abs() < 1e-12,
        "{} vs {want}",
        f.fct_s[0]
    );
    // The transport does not slow the data down: the same as the open-loop flow.
    assert_eq!(f.fct_s[0], f.ideal_fct_s[0]);
    let none = run(&line(size, "none", ""));
    assert_eq!(f.fct_s[0], none.flows.fct_s[0]);
    // The last ACK (64 B) is made when the last frame arrives and crosses three hops back,
    // store and forward, with the reverse direction's delays (switch latencies included).
    let ack_back = 3.0 * tx(64.0) + 6e-6 + 0.25e-6 + 0.5e-6;
    let want_sender = 0.001 + want + ack_back;
    assert!(
        (f.sender_end_s[0] - want_sender).abs() < 1e-12,
        "{} vs {want_sender}",
        f.sender_end_s[0]
    );
    assert!(none.flows.sender_end_s[0].is_nan());
    assert_eq!(f.retransmitted_bytes[0], 0);
    assert_eq!(f.timeouts[0], 0);
    assert_eq!(f.delivered_bytes[0], size);
    let goodput = size as f64 * BITS / f.fct_s[0];
    assert_eq!(f.goodput_bps[0], goodput);
    // One ACK per packet (ack_every = 1), no NACK.
    assert_eq!(u(&r.summary, "control_frames/ack"), 67);
    assert_eq!(u(&r.summary, "control_frames/nack"), 0);
    assert_eq!(u(&none.summary, "control_frames/ack"), 0);
    assert_eq!(u(&r.summary, "frames/generated"), 67);
    assert_eq!(u(&r.summary, "flows/retransmitted_bytes"), 0);
}

#[test]
fn ack_every_n_acks_every_nth_packet_and_the_last() {
    let extra = "[transport.roce]\nack_every = 4\n";
    let r = run(&line(100_001, "roce", extra));
    assert!(r.flows.completed[0]);
    // 67 packets: ACKs after packets 4, 8, ..., 64 (16) and after the last one.
    assert_eq!(u(&r.summary, "control_frames/ack"), 17);
    // The resolved scenario shows what ran.
    assert!(r.resolved_toml.contains("ack_every = 4"));
    assert!(r.resolved_toml.contains("rto_s"));
}

#[test]
fn go_back_n_after_a_dropped_frame_resends_exactly_the_frames_from_it_on() {
    // 40 full frames; the first transmission of packet 7 is lost on a's link. The round trip
    // (2 x 6.75 us plus frame times) is shorter than the 48 us the flow takes to send, so the
    // NACK for 7 reaches the sender while it is still sending: it goes back to 7 and sends
    // 7..39 again (the receiver discarded 8.. as out of order).
    let (n, k) = (40u64, 7u64);
    let extra = format!("[transport]\ndrop = [{{ flow = 0, psn = {k} }}]\n");
    let r = run(&line(n * 1500, "roce", &extra));
    let f = &r.flows;
    assert!(f.completed[0]);
    assert_eq!(f.delivered_bytes[0], n * 1500);
    assert_eq!(u(&r.summary, "frames/dropped/link"), 1);
    assert_eq!(f.frames_dropped[0], 1);
    assert_eq!(u(&r.summary, "control_frames/nack"), 1);
    assert_eq!(f.timeouts[0], 0);
    // How many frames the sender had sent when the NACK came back: the NACK is made when
    // packet k+1 reaches b, and crosses three hops back.
    let sent_by = |t: f64| (t / tx(MTU)).floor() as u64 + 1; // the frame started at t counts
    let k1_arrives = tx(MTU) * (k + 2) as f64 + 2.0 * tx(MTU) + 6.75e-6;
    let nack_back = k1_arrives + 3.0 * tx(64.0) + 6.75e-6;
    let sent = sent_by(nack_back).min(n);
    assert!(
        sent < n,
        "the NACK should come back while the flow is sending"
    );
    let resent = sent - k;
    assert_eq!(f.retransmitted_bytes[0], resent * 1500);
    assert_eq!(u(&r.summary, "frames/generated"), n + resent);
    assert!(at(&r.summary, "frames/conserved").as_bool().unwrap());
}

#[test]
fn a_short_flow_whose_frame_is_dropped_resends_every_frame_from_it() {
    // The whole flow (10 frames) has left before the NACK returns (long links): go-back-N
    // resends exactly packets k..n-1.
    let (n, k) = (10u64, 3u64);
    let text = ScenarioToml::new("long", 0.02)
        .hosts(&["a", "b"])
        .switch("sw")
        .link("a", "sw", G10, 20e-6)
        .link("sw", "b", G10, 20e-6)
        .raw(&format!(
            "[[traffic]]\nkind = \"flow_trace\"\ntransport = \"roce\"\nflows = [{{ start_s = 0.001, src = \"a\", dst = \"b\", size_bytes = {} }}]\n[transport]\ndrop = [{{ flow = 0, psn = {k} }}]\n",
            n * 1500
        ))
        .build();
    let r = run(&text);
    let f = &r.flows;
    assert!(f.completed[0]);
    assert_eq!(f.retransmitted_bytes[0], (n - k) * 1500);
    assert_eq!(u(&r.summary, "frames/generated"), n + (n - k));
    // The receiver discarded k+1..n-1 (they arrived, out of order) and NACKed once.
    assert_eq!(u(&r.summary, "frames/delivered"), n + (n - k) - 1);
    assert_eq!(u(&r.summary, "control_frames/nack"), 1);
    // ACKs: 0..k-1 in order, then k..n-1 after the go-back.
    assert_eq!(u(&r.summary, "control_frames/ack"), n);
    // The FCT: the NACK's round trip and the resent frames, at least.
    assert!(f.fct_s[0] > f.ideal_fct_s[0] + 80e-6);
}

/// 8 hosts on one switch, every link losing `loss` of its frames, roce flows at 30% load for
/// 2 ms, run long enough for every retransmission.
fn lossy_star(loss: f64, seed: u64) -> String {
    let names: Vec<String> = (1..=8).map(|i| format!("h{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut s = ScenarioToml::new("lossy", 0.05)
        .seed(seed)
        .hosts(&names)
        .switch("sw");
    for h in &names {
        s = s.link_with(h, "sw", G10, 1e-6, &format!("loss_rate = {loss:?}"));
    }
    s.traffic(
        "flows",
        &names,
        "uniform",
        "load = 0.3\nsize = { dist = \"exponential\", mean_bytes = 60000 }\nstop_s = 0.002\ntransport = \"roce\"",
    )
    .probe_interval(0.005)
    .build()
}

#[test]
fn under_random_loss_every_roce_flow_completes_with_every_byte_once() {
    for (loss, seed) in [(1e-4, 1), (1e-3, 2), (1e-2, 3)] {
        let r = run(&lossy_star(loss, seed));
        let f = &r.flows;
        let s = &r.summary;
        assert!(f.flow_id.len() > 50, "{loss}: {} flows", f.flow_id.len());
        for i in 0..f.flow_id.len() {
            assert!(f.completed[i], "{loss}: flow {i} did not complete");
            // The receiver accepts each packet once, in order: exactly the flow's bytes.
            assert_eq!(f.delivered_bytes[i], f.size_bytes[i], "{loss}: flow {i}");
            assert!(f.sender_end_s[i] > f.end_s[i], "{loss}: flow {i}");
        }
        let dropped = u(s, "frames/dropped/total");
        assert_eq!(dropped, u(s, "frames/dropped/link"));
        assert_eq!(
            u(s, "frames/generated"),
            u(s, "frames/delivered") + dropped + u(s, "frames/in_flight")
        );
        assert!(at(s, "frames/conserved").as_bool().unwrap());
        // Every frame made beyond the flows' packets is a retransmission.
        let packets: u64 = f.size_bytes.iter().map(|b| b.div_ceil(1500)).sum();
        let resent: u64 = u(s, "frames/generated") - packets;
        assert!(resent >= dropped, "{loss}: {resent} resent, {dropped} lost");
        let retx: u64 = f.retransmitted_bytes.iter().sum();
        assert_eq!(u(s, "flows/retransmitted_bytes"), retx);
        assert_eq!(
            u(s, "flows/delivered_bytes"),
            f.size_bytes.iter().sum::<u64>()
        );
        if loss >= 1e-3 {
            assert!(dropped > 0 && retx > 0, "{loss}: no loss seen");
        }
    }
}

#[test]
fn random_loss_repeats_exactly_with_the_seed() {
    let a = run(&lossy_star(1e-2, 5));
    let b = run(&lossy_star(1e-2, 5));
    assert_eq!(a.flows.fct_s.len(), b.flows.fct_s.len());
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a.flows.fct_s), bits(&b.flows.fct_s));
    assert_eq!(
        u(&a.summary, "frames/dropped/link"),
        u(&b.summary, "frames/dropped/link")
    );
}

#[test]
fn bad_transport_fields_are_errors_naming_the_field() {
    let text = line(10_000, "roce", "[transport.roce]\nack_every = 0\n");
    assert!(run_error_of(&text, &[])
        .to_string()
        .contains("transport.roce.ack_every"));
    let text = line(10_000, "roce", "[transport.roce]\nrto_s = -1.0\n");
    assert!(run_error_of(&text, &[])
        .to_string()
        .contains("transport.roce.rto_s"));
    let text = line(
        10_000,
        "roce",
        "[transport]\ndrop = [{ flow = 3, psn = 0 }]\n",
    );
    assert!(run_error_of(&text, &[])
        .to_string()
        .contains("transport.drop[0].flow"));
    let text = line(
        10_000,
        "roce",
        "[transport]\ndrop = [{ flow = 0, psn = 7 }]\n",
    );
    assert!(run_error_of(&text, &[])
        .to_string()
        .contains("transport.drop[0].psn"));
    let text = line(
        10_000,
        "none",
        "[transport]\ndrop = [{ flow = 0, psn = 0 }]\n",
    );
    assert!(run_error_of(&text, &[])
        .to_string()
        .contains("transport.drop[0].flow"));
    // Bernoulli frames are no flow (saturate and cbr carry one: tests/longflows.rs).
    let bern = ScenarioToml::new("s", 0.001)
        .hosts(&["a", "b"])
        .link("a", "b", G10, 1e-6)
        .traffic("bernoulli", &["a"], "b", "load = 0.5\ntransport = \"roce\"")
        .build();
    assert!(run_error_of(&bern, &[])
        .to_string()
        .contains("traffic[0].transport"));
    let lossy = ScenarioToml::new("s", 0.001)
        .hosts(&["a", "b"])
        .link_with("a", "b", G10, 1e-6, "loss_rate = 1.5")
        .build();
    assert!(run_error_of(&lossy, &[])
        .to_string()
        .contains("links[0].loss_rate"));
}

#[test]
fn the_retransmission_timer_is_off_while_nothing_is_outstanding() {
    // Three roce flows under TIMELY into one 10 Gb/s port: from line rate TIMELY cuts every
    // rate to its 10 Mb/s floor (docs/timely.md), one 1500 B packet per 1.2 ms, so each flow
    // has nothing in flight most of the time. A timer left running then (320 us RTO) fires
    // with no packet missing and goes back for nothing: 27 timeouts here before the timer
    // was turned off with nothing outstanding (RFC 6298 5.2).
    let star = ScenarioToml::new("star", 0.004)
        .hosts(&["a", "b", "c", "r"])
        .switch_with("sw", "output_buffer_bytes = 200_000")
        .link("a", "sw", G10, 1e-6)
        .link("b", "sw", G10, 1e-6)
        .link("c", "sw", G10, 1e-6)
        .link("r", "sw", G10, 1e-6)
        .raw(concat!(
            "[[traffic]]\nkind = \"flow_trace\"\ntransport = \"roce\"\nflows = [",
            "{ start_s = 0.0, src = \"a\", dst = \"r\", size_bytes = 1_000_000 }, ",
            "{ start_s = 0.0, src = \"b\", dst = \"r\", size_bytes = 1_000_000 }, ",
            "{ start_s = 0.0, src = \"c\", dst = \"r\", size_bytes = 1_000_000 }]\n",
            "[congestion]\nscheme = \"timely\"\n",
        ))
        .build();
    let r = run(&star);
    assert!(
        u(&r.summary, "flows/delivered_bytes") > 300_000,
        "the flows make progress"
    );
    assert_eq!(u(&r.summary, "flows/timeouts"), 0);
}
