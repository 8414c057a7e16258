//! The shared buffer's dynamic threshold (`shared_buffer_alpha`, Choudhury and Hahne 1998),
//! end to end: a queue takes a frame only while it holds less than alpha x the free buffer.
//!
//! Units: 1500 B frames; senders saturate 10 Gb/s links into a switch whose outputs run at
//! 1 Gb/s, so every output queue they feed fills until the buffer stops it.

mod common;

use common::*;

/// Hosts `a` -> `b` and (with `two`) `c` -> `d` through `sw`, 10 Gb/s in, 1 Gb/s out; the
/// switch shares 60,000 B, with `alpha` if given.
fn congested(two: bool, alpha: Option<f64>) -> String {
    let mut extra = "shared_buffer_bytes = 60000".to_string();
    if let Some(a) = alpha {
        extra += &format!("\nshared_buffer_alpha = {a:?}");
    }
    let mut t = ScenarioToml::new("shared", 2e-3)
        .hosts(&["a", "b", "c", "d"])
        .switch_with("sw", &extra)
        .link("a", "sw", G10, 1e-6)
        .link("sw", "b", 1e9, 1e-6)
        .link("c", "sw", G10, 1e-6)
        .link("sw", "d", 1e9, 1e-6)
        .saturate(&["a"], "b")
        .probe_interval(1e-3);
    if two {
        t = t.saturate(&["c"], "d");
    }
    t.build()
}

#[test]
fn without_a_threshold_one_queue_takes_the_whole_buffer() {
    let r = run(&congested(false, None));
    assert_eq!(u(&r.summary, "per_port/sw->b/peak_queue_bytes"), 60_000);
}

#[test]
fn alone_a_queue_stops_at_alpha_over_one_plus_alpha_of_the_buffer() {
    // alpha = 1: admitted while q < 60000 - q, q < 30,000 (q the bytes waiting; the frame
    // being sent no longer counts): the last frame in at q = 28,500, the peak 30,000 B, B / 2.
    // alpha = 0.5: while q < (60000 - q) / 2, q < 20,000: in at 19,500, peak 21,000 B.
    let r = run(&congested(false, Some(1.0)));
    assert_eq!(u(&r.summary, "per_port/sw->b/peak_queue_bytes"), 30_000);
    assert!(u(&r.summary, "frames/dropped/shared") > 0);
    let r = run(&congested(false, Some(0.5)));
    assert_eq!(u(&r.summary, "per_port/sw->b/peak_queue_bytes"), 21_000);
}

#[test]
fn two_congested_queues_share_it_and_leave_a_third_free() {
    // alpha = 1, two queues: each takes a frame while q < 60000 - q - q_other. Their frames
    // arrive at the same instants, a's first; at 19,500 each, b's next frame is in (19,500 <
    // 60,000 - 39,000 = 21,000) and then d's is not (19,500 < 60,000 - 40,500 fails): peaks
    // 21,000 and 19,500, 40,500 B held at most, where one queue alone (above) held half.
    let r = run(&congested(true, Some(1.0)));
    let s = &r.summary;
    assert_eq!(u(s, "per_port/sw->b/peak_queue_bytes"), 21_000);
    assert_eq!(u(s, "per_port/sw->d/peak_queue_bytes"), 19_500);
    assert!(u(s, "per_switch/sw/peak_memory_bytes") <= 40_500);
    assert_eq!(s["frames"]["conserved"], true);
}

#[test]
fn alpha_needs_a_shared_buffer_and_a_positive_value() {
    let no_buffer = congested(false, Some(1.0)).replace("shared_buffer_bytes = 60000\n", "");
    let e = run_error_of(&no_buffer, &[]).to_string();
    assert!(
        e.contains("shared_buffer_alpha") && e.contains("needs shared_buffer_bytes"),
        "{e}"
    );
    let e = run_error_of(&congested(false, Some(0.0)), &[]).to_string();
    assert!(e.contains("switches[0].shared_buffer_alpha"), "{e}");
}
