//! Static shortest-path routing (sim/build.rs): every host pair of a two-tier network is
//! reachable, frames take shortest paths (checked on the switch ports' tx counters), and a
//! pair with no path is a configuration error at `traffic[i].dst`.
//!
//! Traffic is CBR at 0.5 Gb/s of 1500 B frames (one every 24 us) from t = 0 and stopping at
//! 0.3 ms: frames at 0, 24, ..., 288 us = 13 per source. The longest path here (4 links of
//! 1.2 us + 1 us, light load) takes about 10 us, so all are delivered by the 0.5 ms end.

mod common;

use common::*;

const FRAMES_PER_SOURCE: u64 = 13;

fn cbr(t: ScenarioToml, from: &str, to: &str) -> ScenarioToml {
    t.traffic("cbr", &[from], to, "rate_bps = 0.5e9\nstop_s = 0.3e-3")
}

/// Core `c`; edge switches e0 (hosts a0, a1), e1 (b0, b1), e2 (c0).
fn two_tier() -> ScenarioToml {
    ScenarioToml::new("two-tier", 0.5e-3)
        .hosts(&["a0", "a1", "b0", "b1", "c0"])
        .switch("c")
        .switch("e0")
        .switch("e1")
        .switch("e2")
        .link("a0", "e0", G10, 1e-6)
        .link("a1", "e0", G10, 1e-6)
        .link("b0", "e1", G10, 1e-6)
        .link("b1", "e1", G10, 1e-6)
        .link("c0", "e2", G10, 1e-6)
        .link("e0", "c", G10, 1e-6)
        .link("e1", "c", G10, 1e-6)
        .link("e2", "c", G10, 1e-6)
}

const ALL_PORTS: [&str; 16] = [
    "e0->a0", "e0->a1", "e1->b0", "e1->b1", "e2->c0", "e0->c", "e1->c", "e2->c", "c->e0", "c->e1",
    "c->e2", "e0->e2", "e2->e0", "e0->c2", "c2->e1", "e1->c2",
];

/// tx_frames of every switch port in the summary; ports not in this network are skipped.
fn port_frames(s: &serde_json::Value) -> Vec<(&'static str, u64)> {
    ALL_PORTS
        .iter()
        .filter(|p| s["per_port"].get(**p).is_some())
        .map(|p| (*p, u(s, &format!("per_port/{p}/tx_frames"))))
        .collect()
}

/// Every port carries exactly `want` frames if listed, else none.
fn assert_ports(s: &serde_json::Value, want: &[(&str, u64)]) {
    for (port, got) in port_frames(s) {
        let expected = want.iter().find(|(p, _)| *p == port).map_or(0, |w| w.1);
        assert_eq!(got, expected, "tx_frames of {port}");
    }
}

#[test]
fn every_host_pair_is_reachable() {
    // 5 x 4 ordered pairs, one CBR source each: every host receives 4 x 13 frames, nothing is
    // lost or left in flight.
    let hosts = ["a0", "a1", "b0", "b1", "c0"];
    let mut t = two_tier();
    for src in hosts {
        for dst in hosts.iter().filter(|d| **d != src) {
            t = cbr(t, src, dst);
        }
    }
    let r = run(&t.build());
    let s = &r.summary;
    for h in hosts {
        assert_eq!(
            u(s, &format!("per_source/{h}/rx_frames")),
            4 * FRAMES_PER_SOURCE,
            "frames received by {h}"
        );
    }
    assert_eq!(u(s, "frames/delivered"), 20 * FRAMES_PER_SOURCE);
    assert_eq!(u(s, "frames/in_flight"), 0);
    assert_conserved(&r);
}

#[test]
fn traffic_within_an_edge_switch_never_crosses_the_core() {
    let t = cbr(cbr(two_tier(), "a0", "a1"), "b1", "b0");
    let r = run(&t.build());
    assert_ports(
        &r.summary,
        &[("e0->a1", FRAMES_PER_SOURCE), ("e1->b0", FRAMES_PER_SOURCE)],
    );
}

#[test]
fn traffic_between_edges_goes_up_to_the_core_and_down() {
    // a0 -> c0: e0 -> c -> e2 -> c0 (3 switch hops); b0 -> a1: e1 -> c -> e0 -> a1.
    let t = cbr(cbr(two_tier(), "a0", "c0"), "b0", "a1");
    let r = run(&t.build());
    let n = FRAMES_PER_SOURCE;
    assert_ports(
        &r.summary,
        &[
            ("e0->c", n),
            ("c->e2", n),
            ("e2->c0", n),
            ("e1->c", n),
            ("c->e0", n),
            ("e0->a1", n),
        ],
    );
}

#[test]
fn a_shortcut_link_is_preferred_over_the_core() {
    // With a direct e0 - e2 link, a0 -> c0 is a0, e0, e2, c0 (3 links) instead of 4 through c.
    let t = cbr(two_tier().link("e0", "e2", G10, 1e-6), "a0", "c0");
    let r = run(&t.build());
    let n = FRAMES_PER_SOURCE;
    assert_ports(&r.summary, &[("e0->e2", n), ("e2->c0", n)]);
}

#[test]
fn equal_cost_paths_are_chosen_deterministically_by_lowest_port() {
    // Two cores c and c2, each linked to e0 and e1 (build.rs: "ties go to the lowest port
    // index"; ports are numbered in link order). All of a flow's frames take one path, so
    // they stay in order; listing e0's core links the other way round moves the flow.
    let fabric = |first: &str, second: &str| {
        ScenarioToml::new("ecmp", 0.5e-3)
            .hosts(&["a0", "b0"])
            .switch("e0")
            .switch("e1")
            .switch("c")
            .switch("c2")
            .link("a0", "e0", G10, 1e-6)
            .link("b0", "e1", G10, 1e-6)
            .link("e0", first, G10, 1e-6)
            .link("e0", second, G10, 1e-6)
            .link("e1", "c", G10, 1e-6)
            .link("e1", "c2", G10, 1e-6)
    };
    let n = FRAMES_PER_SOURCE;
    let r = run(&cbr(fabric("c", "c2"), "a0", "b0").build());
    assert_ports(&r.summary, &[("e0->c", n), ("c->e1", n), ("e1->b0", n)]);
    let r = run(&cbr(fabric("c2", "c"), "a0", "b0").build());
    assert_ports(&r.summary, &[("e0->c2", n), ("c2->e1", n), ("e1->b0", n)]);
}

#[test]
fn two_hosts_on_one_link_need_no_switch() {
    let t = ScenarioToml::new("direct", 0.5e-3)
        .hosts(&["a", "b"])
        .link("a", "b", G10, 1e-6);
    let r = run(&cbr(t, "a", "b").build());
    assert_eq!(u(&r.summary, "per_source/b/rx_frames"), FRAMES_PER_SOURCE);
    assert_conserved(&r);
}

/// Two islands: a0, a1 on s0 and b0, b1 on s1, no link between the switches.
fn islands() -> ScenarioToml {
    ScenarioToml::new("islands", 0.5e-3)
        .hosts(&["a0", "a1", "b0", "b1"])
        .switch("s0")
        .switch("s1")
        .link("a0", "s0", G10, 1e-6)
        .link("a1", "s0", G10, 1e-6)
        .link("b0", "s1", G10, 1e-6)
        .link("b1", "s1", G10, 1e-6)
}

#[test]
fn a_disconnected_pair_is_an_error_at_traffic_dst() {
    let t = cbr(cbr(islands(), "a0", "a1"), "a1", "b1");
    let e = run_error_of(&t.build(), &[]);
    assert_eq!(e.path(), Some("traffic[1].dst"), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("no route") && msg.contains("a1") && msg.contains("b1"),
        "{msg}"
    );
}

#[test]
fn uniform_destinations_must_all_be_reachable() {
    let t = islands().bernoulli(&["a0"], "uniform", 0.1);
    let e = run_error_of(&t.build(), &[]);
    assert_eq!(e.path(), Some("traffic[0].dst"), "{e}");
    assert!(e.to_string().contains("no route"), "{e}");
}

#[test]
fn resolve_rejects_an_unroutable_pair_too() {
    let t = cbr(islands(), "a1", "b1");
    let e = error_of(&t.build(), &[]);
    assert_eq!(e.path(), Some("traffic[0].dst"), "{e}");
}

/// Two cores c and c2 between edges e0 (hosts a0..a7) and e1 (b0..b7): every a_i -> b_i pair
/// has two equal-cost paths.
fn two_core_fabric(routing: &str) -> ScenarioToml {
    let mut t = ScenarioToml::new("two-core", 0.5e-3)
        .switch("e0")
        .switch("e1")
        .switch("c")
        .switch("c2")
        .raw(routing);
    for i in 0..8 {
        t = t.host(&format!("a{i}")).host(&format!("b{i}"));
        t = t.link(&format!("a{i}"), "e0", G10, 1e-6);
        t = t.link(&format!("b{i}"), "e1", G10, 1e-6);
    }
    t.link("e0", "c", G10, 1e-6)
        .link("e0", "c2", G10, 1e-6)
        .link("e1", "c", G10, 1e-6)
        .link("e1", "c2", G10, 1e-6)
}

fn pairs_a_to_b(mut t: ScenarioToml) -> ScenarioToml {
    for i in 0..8 {
        t = cbr(t, &format!("a{i}"), &format!("b{i}"));
    }
    t
}

#[test]
fn without_ecmp_every_pair_takes_the_lowest_port_core() {
    let r = run(&pairs_a_to_b(two_core_fabric("")).build());
    assert_eq!(
        u(&r.summary, "per_port/e0->c/tx_frames"),
        8 * FRAMES_PER_SOURCE
    );
    assert_eq!(u(&r.summary, "per_port/e0->c2/tx_frames"), 0);
}

#[test]
fn ecmp_spreads_pairs_over_both_cores_and_keeps_each_pair_on_one() {
    let ecmp = "[routing]\nmultipath = \"ecmp\"\n";
    let r = run(&pairs_a_to_b(two_core_fabric(ecmp)).build());
    let s = &r.summary;
    let (via_c, via_c2) = (
        u(s, "per_port/e0->c/tx_frames"),
        u(s, "per_port/e0->c2/tx_frames"),
    );
    assert_eq!(via_c + via_c2, 8 * FRAMES_PER_SOURCE);
    assert!(
        via_c > 0 && via_c2 > 0,
        "both cores used: {via_c} / {via_c2}"
    );
    // A pair's frames all take one core: each core carries whole pairs.
    assert_eq!(via_c % FRAMES_PER_SOURCE, 0, "{via_c}");
    // The core forwards towards e1 on its single path, whatever it received.
    assert_eq!(u(s, "per_port/c->e1/tx_frames"), via_c);
    assert_eq!(u(s, "per_port/c2->e1/tx_frames"), via_c2);
    assert_conserved(&r);
    // The same scenario and seed choose the same paths.
    let again = run(&pairs_a_to_b(two_core_fabric(ecmp)).build());
    assert_eq!(u(&again.summary, "per_port/e0->c/tx_frames"), via_c);
}

#[test]
fn ecmp_by_flow_spreads_the_flows_of_one_pair() {
    let ecmp = "[routing]\nmultipath = \"ecmp\"\necmp_key = \"flow\"\n";
    let flows = "load = 0.3\nsize = { dist = \"fixed\", bytes = 15000 }\nstop_s = 0.2e-3";
    let t = two_core_fabric(ecmp).traffic("flows", &["a0"], "b0", flows);
    let r = run(&t.build());
    let s = &r.summary;
    let (via_c, via_c2) = (
        u(s, "per_port/e0->c/tx_frames"),
        u(s, "per_port/e0->c2/tx_frames"),
    );
    assert!(
        via_c > 0 && via_c2 > 0,
        "both cores used: {via_c} / {via_c2}"
    );
    // Every flow is 10 frames and keeps its path.
    assert_eq!(via_c % 10, 0, "{via_c}");
    assert_eq!(u(s, "flows/completed"), u(s, "flows/started"));
    assert_conserved(&r);
}

#[test]
fn a_bad_multipath_value_names_the_field() {
    let t = two_core_fabric("[routing]\nmultipath = \"spray\"\n");
    let e = error_of(&cbr(t, "a0", "b0").build(), &[]);
    assert!(e.to_string().contains("routing.multipath"), "{e}");
}
