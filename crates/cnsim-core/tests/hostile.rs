//! Hostile input (issue 13): values at and past the edges of what the picosecond clock, the
//! counters and the machine can represent. Each one is either refused with one line naming the
//! field, or runs to a summary that conserves frames; never a wrap-around, a hang or a panic.

mod common;

use cnsim_core::limits::{MAX_PORTS_PER_NODE, MIN_LOAD};
use cnsim_core::limits::{MAX_RATE_BPS, MAX_TIME_S, MIN_RATE_BPS};
use common::*;

fn refused(overrides: &[(&str, &str)], path: &str, reason: &str) {
    assert_field_error(&error_of(&base().build(), overrides), path, reason);
}

#[test]
fn times_that_overflow_the_clock_are_refused() {
    // u64 picoseconds end at 1.8e7 s: a 1e8 s delay used to wrap around to an early arrival.
    refused(&[("links[0].delay_s", "1e8")], "links[0].delay_s", "1e6] s");
    refused(
        &[("duration_s", "1e7")],
        "duration_s",
        "time counts whole picoseconds",
    );
    refused(
        &[("switches[0].latency_s", "1e300")],
        "switches[0].latency_s",
        "1e6",
    );
    refused(
        &[("traffic[0].start_s", "2e6")],
        "traffic[0].start_s",
        "1e6",
    );
    refused(&[("traffic[0].stop_s", "1e19")], "traffic[0].stop_s", "1e6");
    refused(
        &[("hosts[1].response_delay_s", "5e7")],
        "hosts[1].response_delay_s",
        "1e6",
    );
}

#[test]
fn times_that_round_to_zero_picoseconds_are_refused() {
    // A probe interval of 0.1 ps rounded to 0 and probed at t = 0 forever.
    refused(
        &[("report.probe_interval_s", "1e-13")],
        "report.probe_interval_s",
        "1e-12",
    );
    refused(&[("duration_s", "4e-13")], "duration_s", "1e-12");
    refused(
        &[("links[1].delay_s", "3e-13")],
        "links[1].delay_s",
        "must be 0 or in",
    );
    // Zero delays stay allowed: "no delay" is a real choice.
    resolve_with(&base().build(), &[("links[1].delay_s", "0")]).expect("0 s delay");
}

#[test]
fn rates_outside_the_clock_are_refused() {
    // 1e-3 b/s: a frame would take 1.2e7 s, past the end of the clock.
    refused(
        &[("links[0].rate_bps", "1e-3")],
        "links[0].rate_bps",
        "[1000, 1e12] b/s (got 0.001)",
    );
    // 1e15 b/s: a bit takes a thousandth of the clock's picosecond.
    refused(
        &[("links[0].rate_bps", "1e15")],
        "links[0].rate_bps",
        "1e12] b/s",
    );
    refused(
        &[("hosts[1].rx_rate_bps", "1e-9")],
        "hosts[1].rx_rate_bps",
        "b/s",
    );
    let cbr = base()
        .traffic("cbr", &["b"], "a", "rate_bps = 1e-6")
        .build();
    assert_field_error(
        &error_of(&cbr, &[]),
        "traffic[1].rate_bps",
        "[1000, 1e12] b/s",
    );
    // Negative and NaN keep their plain message.
    refused(
        &[("links[0].rate_bps", "-1.0")],
        "links[0].rate_bps",
        "must be > 0",
    );
    refused(
        &[("links[0].rate_bps", "nan")],
        "links[0].rate_bps",
        "must be > 0",
    );
}

#[test]
fn a_load_whose_complement_rounds_to_one_is_refused_not_hung() {
    // 1 - 1e-17 == 1.0: building the geometric gap sampler used to loop forever (in
    // resolve, so a sweep hung while planning).
    refused(&[("traffic[0].load", "1e-17")], "traffic[0].load", "1e-9");
    refused(
        &[("traffic[0].load", "5e-324")],
        "traffic[0].load",
        "of the line rate",
    );
    let ok = &[("traffic[0].load", &*format!("{MIN_LOAD:e}"))];
    let r = try_run(&base().build(), ok, None).expect("the smallest load runs");
    assert_conserved(&r);
}

#[test]
fn sizes_past_the_frame_and_byte_ranges_are_refused() {
    refused(
        &[("model.wire_overhead_bytes", "4000000000")],
        "model.wire_overhead_bytes",
        "9216",
    );
    refused(
        &[("model.control_frame_bytes", "100000")],
        "model.control_frame_bytes",
        "9216",
    );
    refused(
        &[("switches[0].output_buffer_bytes", "1e300")],
        "switches[0].output_buffer_bytes",
        "2^53",
    );
    let qcn = &[
        ("congestion.scheme", "\"qcn\""),
        ("congestion.qcn.cnm_bytes", "1000000"),
    ];
    refused(qcn, "congestion.qcn.cnm_bytes", "9216");
    let qcn = &[
        ("congestion.scheme", "\"qcn\""),
        ("congestion.qcn.timer_period_s", "1e-15"),
    ];
    refused(qcn, "congestion.qcn.timer_period_s", "1e-12");
    let bcn = &[
        ("congestion.scheme", "\"bcn\""),
        ("congestion.bcn.drift_interval_s", "1e9"),
    ];
    refused(bcn, "congestion.bcn.drift_interval_s", "1e6");
}

#[test]
fn toml_integers_too_large_name_their_field_on_one_line() {
    // Past i64 the TOML parser fails; its message used to be a multi-line excerpt naming no
    // field.
    let text = base().build().replace(
        "load = 0.5",
        "load = 0.5\nframe_bytes = 99999999999999999999",
    );
    assert_field_error(&error_of(&text, &[]), "traffic[0].frame_bytes", "line");
    // Within i64 but past the field's type: serde names the field.
    let text = base()
        .build()
        .replace("load = 0.5", "load = 0.5\nframe_bytes = 5000000000");
    assert_field_error(&error_of(&text, &[]), "traffic[0].frame_bytes", "u32");
    let text = base().build().replace("name = \"sw\"", "name = \"sw\"\npause = { trigger = \"egress\", xoff_bytes = 1e5, xon_bytes = 5e4, quanta = 70000 }");
    assert_field_error(&error_of(&text, &[]), "switches[0].pause.quanta", "u16");
    // A top-level key.
    let text = base().build().replace(
        "duration_s = 0.001",
        "duration_s = 0.001\nseed = 123456789012345678901234",
    );
    assert_field_error(&error_of(&text, &[]), "seed", "line 3");
}

#[test]
fn runs_past_the_event_cap_are_refused_before_they_start() {
    // 10^5 s of a saturated 10 Gb/s link: ~8e10 frames, days of wall time.
    let long = base().saturate(&["b"], "a").build();
    let e = error_of(
        &long,
        &[("duration_s", "1e5"), ("report.probe_interval_s", "1")],
    );
    assert_field_error(&e, "limits.max_events", "raise limits.max_events");
    // The cap is the user's to raise: with it raised, the same scenario resolves.
    resolve_with(
        &long,
        &[
            ("duration_s", "1e5"),
            ("report.probe_interval_s", "1"),
            ("limits.max_events", "1e13"),
        ],
    )
    .expect("raised cap");
}

#[test]
fn probe_samples_past_the_cap_are_refused() {
    // 10^7 probes x (2 hosts, 1 switch, 4 ports) = 3.4e8 samples > 1e8.
    let e = error_of(
        &base().build(),
        &[
            ("duration_s", "10"),
            ("report.probe_interval_s", "1e-6"),
            ("traffic[0].load", "1e-9"),
        ],
    );
    assert_field_error(&e, "limits.max_probe_samples", "probe samples");
}

#[test]
fn a_workload_too_large_for_memory_is_refused() {
    // 10 hosts start a 64 B flow each ~0.1 us (load 0.5 at 10 Gb/s) for 1.5 s: 1.5e8 flow
    // records, ~23 GB, refused before anything is built; the events (~9e8) would pass.
    let mut t = ScenarioToml::new("many", 1.5).switch("sw");
    let hosts: Vec<String> = (0..10).map(|i| format!("h{i}")).collect();
    for h in &hosts {
        t = t.host(h).link(h, "sw", G10, 0.0);
    }
    let senders: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let text = t
        .traffic(
            "flows",
            &senders,
            "uniform",
            "load = 0.5\nsize = { dist = \"fixed\", bytes = 64 }",
        )
        .build();
    assert_field_error(
        &error_of(&text, &[]),
        "limits.max_memory_bytes",
        "bytes of memory",
    );
}

#[test]
fn many_hosts_need_no_per_pair_memory() {
    // 8,000 hosts once needed 8000^2 queues (16 GB) and were refused; hosts now keep queues
    // only for destinations they have work for.
    let n = 8000;
    let mut t = ScenarioToml::new("many", 1e-3).switch("sw");
    for i in 0..n {
        t = t
            .host(&format!("h{i}"))
            .link(&format!("h{i}"), "sw", G10, 0.0);
    }
    let estimate = resolve_with(&t.bernoulli(&["h0"], "uniform", 0.1).build(), &[])
        .expect("accepted")
        .estimate();
    assert!(estimate.memory_bytes < 1e9, "{estimate:?}");
}

#[test]
fn parallel_links_past_the_port_index_are_refused() {
    // 65,535 links between two switches: the u16 port index used to wrap (u16::MAX is also
    // the "no route" mark).
    let mut t = base().switch("sw2");
    for _ in 0..=MAX_PORTS_PER_NODE {
        t = t.link("sw", "sw2", G10, 0.0);
    }
    let e = error_of(&t.build(), &[]);
    assert_field_error(&e, "switches[0]", "65534 fit its port numbers");
}

#[test]
fn plots_that_would_share_a_file_are_refused() {
    let text = base()
        .raw("[[report.plots]]\nname = \"q 1\"\nmetric = \"queue_bytes\"\n[[report.plots]]\nname = \"q/1\"\nmetric = \"queue_bytes\"")
        .build();
    assert_field_error(
        &error_of(&text, &[]),
        "report.plots[1].name",
        "plots/q_1.png",
    );
    let text = base()
        .raw("[[report.plots]]\nname = \"..\"\nmetric = \"queue_bytes\"")
        .build();
    assert_field_error(
        &error_of(&text, &[]),
        "report.plots[0].name",
        "no file name",
    );
}

#[test]
fn the_edges_of_the_accepted_ranges_run_without_wrapping() {
    // The slowest links and CBR rate, the longest delays: a 1500 B frame takes 12 s at 1 kb/s,
    // so a CBR source at 1 kb/s over 100 s sends at 0, 12, ..., 96 s = 9 frames, each
    // delivered after 12 s + 12 s (store and forward) + 2 x 1 s of delay.
    let text = ScenarioToml::new("edge", 100.0)
        .hosts(&["a", "b"])
        .switch("sw")
        .link("a", "sw", MIN_RATE_BPS, 1.0)
        .link("sw", "b", MIN_RATE_BPS, 1.0)
        .traffic("cbr", &["a"], "b", &format!("rate_bps = {MIN_RATE_BPS:?}"))
        .probe_interval(1.0)
        .build();
    let r = try_run(&text, &[], None).expect("runs");
    assert_conserved(&r);
    assert_eq!(u(&r.summary, "frames/generated"), 9);
    // Latency 26 s: frames sent at 0..=72 s arrive by 98 s (7), those of 84 and 96 s do not.
    assert_eq!(u(&r.summary, "frames/delivered"), 7, "{}", r.summary);
    assert_eq!(f(&r.summary, "latency_s/max"), 26.0);
    assert_no_nulls(&r.summary, "");
    // Probes are in time order and inside the run.
    let t = &r.timeseries.time_s;
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "probes out of order");
    assert!(t.iter().all(|&x| x > 0.0 && x <= 100.0));

    // The longest accepted delay: nothing arrives within the run, nothing wraps to early.
    let far = &[("links[1].delay_s", &*format!("{MAX_TIME_S:e}"))];
    let r = try_run(&text, far, None).expect("runs");
    assert_conserved(&r);
    assert_eq!(u(&r.summary, "frames/delivered"), 0);

    // The fastest accepted rate: 1500 B in 12 ns.
    let fast = base().build().replace(
        "rate_bps = 10000000000.0",
        &format!("rate_bps = {MAX_RATE_BPS:?}"),
    );
    let r = try_run(&fast, &[], None).expect("runs");
    assert_conserved(&r);
    assert_no_nulls(&r.summary, "");
}
