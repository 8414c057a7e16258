//! `[report] probe = "tiers"`: per tier (hosts, switches by hops from the nearest host, ports
//! by the pair of tiers they join) the sum of the elements' series, the same run's numbers.

use std::collections::BTreeMap;

use cnsim_core::{run_toml, Report, Scenario};

fn leaf_spine(probe: &str) -> String {
    format!(
        r#"
name = "tiers"
seed = 5
duration_s = 0.003
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate_bps = 10e9
fabric_rate_bps = 10e9
switch = {{ output_buffer_bytes = 100_000 }}
[[traffic]]
kind = "flows"
hosts = "all"
dst = "uniform"
load = 0.6
size = {{ cdf = "websearch" }}
[report]
probe_interval_s = 2e-4
{probe}
"#
    )
}

fn run(text: &str) -> Report {
    run_toml(text, &[], None, &mut |_| true).expect("the scenario runs")
}

/// (metric, entity, time bits) -> value.
fn rows(r: &Report) -> BTreeMap<(String, String, u64), f64> {
    let ts = &r.timeseries;
    (0..ts.time_s.len())
        .map(|i| {
            let metric = ts.metrics[ts.metric[i] as usize].clone();
            let entity = ts.entities[ts.entity[i] as usize].clone();
            ((metric, entity, ts.time_s[i].to_bits()), ts.value[i])
        })
        .collect()
}

/// An element's tier in this leaf-spine: hosts h*, leaves tier1, spines tier2.
fn tier(name: &str) -> &'static str {
    if name.starts_with("leaf") {
        "tier1"
    } else if name.starts_with("spine") {
        "tier2"
    } else {
        "hosts"
    }
}

fn tier_of_entity(entity: &str) -> String {
    match entity.split_once("->") {
        Some((a, b)) => format!("{}->{}", tier(a), tier(b)),
        None => tier(entity).to_string(),
    }
}

#[test]
fn tier_series_are_the_sums_of_the_element_series() {
    let elements = run(&leaf_spine("probe = \"elements\""));
    let tiers = run(&leaf_spine("probe = \"tiers\""));
    // Probing does not change the run.
    assert_eq!(elements.summary["frames"], tiers.summary["frames"]);
    assert_eq!(elements.summary["flows"], tiers.summary["flows"]);
    let mut sums: BTreeMap<(String, String, u64), f64> = BTreeMap::new();
    for ((metric, entity, t), v) in rows(&elements) {
        *sums
            .entry((metric, tier_of_entity(&entity), t))
            .or_default() += v;
    }
    let got = rows(&tiers);
    assert_eq!(got.len(), sums.len());
    for (key, want) in &sums {
        let v = got[key];
        assert!(
            (v - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{key:?}: {v} vs {want}"
        );
    }
    let mut entities = tiers.timeseries.entities.clone();
    entities.sort();
    let expected = [
        "hosts",
        "hosts->tier1",
        "tier1",
        "tier1->hosts",
        "tier1->tier2",
        "tier2",
        "tier2->tier1",
    ];
    assert_eq!(entities, expected);
    let traffic = got
        .keys()
        .filter(|(m, e, _)| m == "port_tx_bps" && e == "tier1->tier2");
    assert!(traffic.count() > 5);
}

#[test]
fn auto_probes_elements_until_their_rows_would_pass_1e7() {
    let with = |interval: &str| {
        let set = [("report.probe_interval_s".to_string(), interval.to_string())];
        Scenario::from_toml(&leaf_spine(""), &set).expect("valid")
    };
    // 8 hosts, 4 switches, 12 links: 8 x 6 + 4 x 2 + 12 x 10 = 176 rows per probe.
    let short = with("2e-4").estimate().probe_samples;
    assert_eq!(short, 15.0 * 176.0);
    // 60,000 probes: 1.06e7 rows of elements, so per-tier sums (at most 400 rows a probe).
    let long = with("5e-8").estimate().probe_samples;
    assert_eq!(long, 60_000.0 * 400.0);
    // Asked for, elements stay.
    let set = [
        ("report.probe_interval_s".to_string(), "5e-8".to_string()),
        ("report.probe".to_string(), "\"elements\"".to_string()),
    ];
    let kept = Scenario::from_toml(&leaf_spine(""), &set).expect("valid");
    assert_eq!(kept.estimate().probe_samples, 60_000.0 * 176.0);
}

#[test]
fn a_bad_probe_value_names_the_field() {
    let e = Scenario::from_toml(&leaf_spine("probe = \"ports\""), &[]).expect_err("refused");
    assert!(e.to_string().contains("report.probe"), "{e}");
}
