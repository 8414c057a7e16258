//! Generated fabrics end to end: a `[topology]` scenario runs, its resolved (expanded) form
//! runs again to the same results, and ECMP spreads traffic over the fabric's equal paths.

mod common;

use common::*;

/// A k = 4 fat tree, every host sending Poisson flows to uniform destinations.
const FAT_TREE_FLOWS: &str = r#"
name = "fat-tree-flows"
duration_s = 4e-3

[topology]
kind = "fat_tree"
k = 4

[[traffic]]
kind = "flows"
hosts = "all"
dst = "uniform"
load = 0.3
stop_s = 3e-3
size = { dist = "exponential", mean_bytes = 20000 }

[report]
probe_interval_s = 1e-3
"#;

#[test]
fn a_fat_tree_with_flows_runs_and_its_resolved_form_runs_the_same() {
    let report = run(FAT_TREE_FLOWS);
    assert_conserved(&report);
    let s = &report.summary;
    let started = u(s, "flows/started");
    assert!(started > 100, "{started} flows");
    assert_eq!(
        u(s, "flows/completed"),
        started,
        "infinite buffers: every flow completes"
    );
    // Every one of the 16 hosts sent.
    let senders = at(s, "per_source")
        .as_object()
        .expect("per_source")
        .values()
        .filter(|v| v["generated_frames"].as_u64().unwrap() > 0)
        .count();
    assert_eq!(senders, 16);
    // The saved scenario is the expanded one: no [topology], ECMP, hosts listed.
    let resolved = resolve_with(FAT_TREE_FLOWS, &[])
        .expect("resolves")
        .to_toml();
    assert!(!resolved.contains("[topology]"));
    assert!(resolved.contains("multipath = \"ecmp\""));
    assert!(resolved.contains("\"h3_1_1\""));
    let again = run(&resolved);
    assert_eq!(deterministic_part(&again.summary), deterministic_part(s));
}

#[test]
fn ecmp_spreads_one_leafs_traffic_over_every_spine() {
    let text = r#"
name = "leaf-spine"
duration_s = 2e-3
[topology]
kind = "leaf_spine"
leaves = 2
spines = 4
hosts_per_leaf = 8
[[traffic]]
kind = "bernoulli"
hosts = { leaf = 0 }
dst = { leaf = 1 }
load = 0.5
"#;
    let report = run(text);
    assert_conserved(&report);
    let s = &report.summary;
    let frames = |port: &str| u(s, &format!("per_port/{port}/tx_frames"));
    let up: Vec<u64> = (0..4)
        .map(|j| frames(&format!("leaf0->spine{j}")))
        .collect();
    // 64 (source, destination) pairs hashed onto 4 spines: each gets some, none all.
    let total: u64 = up.iter().sum();
    assert!(up.iter().all(|&n| n > total / 10), "{up:?}");
    assert_eq!(
        frames("leaf1->spine0"),
        0,
        "leaf 1 sends no data and no control here"
    );
    // Single path: everything through spine 0.
    let report = try_run(text, &[("routing.multipath", "lowest_port")], None).expect("runs");
    let s = &report.summary;
    let up: Vec<u64> = (0..4)
        .map(|j| u(s, &format!("per_port/leaf0->spine{j}/tx_frames")))
        .collect();
    assert_eq!(&up[1..], [0, 0, 0], "{up:?}");
}
