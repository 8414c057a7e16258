//! End-host transports (roce go-back-N), end to end: a lone flow's FCT and last ACK against a
//! closed form computed here, go-back-N after an explicitly dropped frame, and every flow
//! completing under random link loss with every byte delivered once, frames conserved.

mod common;

use common::*;

const BITS: f64 = 8.0;

/// Three hops of equal rate, store and forward: the source sends every byte back to back; each
/// later hop finishes a full frame one full-frame time after the hop before, and the last
/// (smaller) frame right behind the last full one, so the last byte arrives one full-frame time
/// per extra hop after the source's last bit, plus the delays.
fn closed_form_fct_s(size: u64) -> f64 {
    let one_way_delays = 1e-6 + 2e-6 + 3e-6 + 0.5e-6 + 0.25e-6;
    tx10(size as f64) + 2.0 * tx10(MTU) + one_way_delays
}

#[test]
fn a_lone_roce_flow_completes_in_the_closed_form_time_and_its_last_ack_follows() {
    let size = 100_001u64; // 66 frames of 1500 B and one of 1001 B
    let r = run(&transport_line(size, "roce", ""));
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
    let none = run(&transport_line(size, "none", ""));
    assert_eq!(f.fct_s[0], none.flows.fct_s[0]);
    // The last ACK (64 B) is made when the last frame arrives and crosses three hops back,
    // store and forward, with the reverse direction's delays (switch latencies included).
    let ack_back = 3.0 * tx10(64.0) + 6e-6 + 0.25e-6 + 0.5e-6;
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
    let r = run(&transport_line(100_001, "roce", extra));
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
    let r = run(&transport_line(n * 1500, "roce", &extra));
    let f = &r.flows;
    assert!(f.completed[0]);
    assert_eq!(f.delivered_bytes[0], n * 1500);
    assert_eq!(u(&r.summary, "frames/dropped/link"), 1);
    assert_eq!(f.frames_dropped[0], 1);
    assert_eq!(u(&r.summary, "control_frames/nack"), 1);
    assert_eq!(f.timeouts[0], 0);
    // How many frames the sender had sent when the NACK came back: the NACK is made when
    // packet k+1 reaches b, and crosses three hops back.
    let sent_by = |t: f64| (t / tx10(MTU)).floor() as u64 + 1; // the frame started at t counts
    let k1_arrives = tx10(MTU) * (k + 2) as f64 + 2.0 * tx10(MTU) + 6.75e-6;
    let nack_back = k1_arrives + 3.0 * tx10(64.0) + 6.75e-6;
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

/// `lossy_star` over roce, 50 ms.
fn roce_star(loss: f64, seed: u64) -> String {
    lossy_star(loss, seed, "roce", 0.05, "")
}

#[test]
fn under_random_loss_every_roce_flow_completes_with_every_byte_once() {
    for (loss, seed) in [(1e-4, 1), (1e-3, 2), (1e-2, 3)] {
        let r = run(&roce_star(loss, seed));
        assert_every_flow_completes_once(&r, loss, &format!("loss {loss}"));
    }
}

#[test]
fn random_loss_repeats_exactly_with_the_seed() {
    let a = run(&roce_star(1e-2, 5));
    let b = run(&roce_star(1e-2, 5));
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
    let text = transport_line(10_000, "roce", "[transport.roce]\nack_every = 0\n");
    assert!(run_error_of(&text, &[])
        .to_string()
        .contains("transport.roce.ack_every"));
    let text = transport_line(10_000, "roce", "[transport.roce]\nrto_s = -1.0\n");
    assert!(run_error_of(&text, &[])
        .to_string()
        .contains("transport.roce.rto_s"));
    let text = transport_line(
        10_000,
        "roce",
        "[transport]\ndrop = [{ flow = 3, psn = 0 }]\n",
    );
    assert!(run_error_of(&text, &[])
        .to_string()
        .contains("transport.drop[0].flow"));
    let text = transport_line(
        10_000,
        "roce",
        "[transport]\ndrop = [{ flow = 0, psn = 7 }]\n",
    );
    assert!(run_error_of(&text, &[])
        .to_string()
        .contains("transport.drop[0].psn"));
    let text = transport_line(
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
