//! The standard workloads by name, and CDF files in the HPCC simulator's format (percent, a
//! first point at size 0) beside cnsim's own.

mod common;

use common::*;

/// 8 hosts on one switch sending flows of `size` to uniform destinations.
fn star(size: &str) -> String {
    let names: Vec<String> = (0..8).map(|i| format!("h{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut s = ScenarioToml::new("star", 20e-3).hosts(&names).switch("sw");
    for h in &names {
        s = s.link(h, "sw", G10, 1e-6);
    }
    s.traffic(
        "flows",
        &names,
        "uniform",
        &format!("load = 0.3\nsize = {size}\nstop_s = 10e-3"),
    )
    .probe_interval(5e-3)
    .build()
}

fn trace_of(text: &str) -> String {
    let sc = resolve_with(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut out = Vec::new();
    cnsim_core::write_flow_trace(&sc, &mut out).expect("writes");
    String::from_utf8(out).expect("utf-8")
}

#[test]
fn a_workload_by_name_needs_no_dist_and_resolves_to_its_name() {
    let sc = resolve_with(&star("{ cdf = \"fb_hadoop\" }"), &[]).unwrap_or_else(|e| panic!("{e}"));
    let text = sc.to_toml();
    assert!(
        text.contains("dist = \"empirical\"") && text.contains("cdf = \"fb_hadoop\""),
        "{text}"
    );
    // With or without the tag, the same workload.
    assert_eq!(
        trace_of(&star("{ cdf = \"fb_hadoop\" }")),
        trace_of(&star("{ dist = \"empirical\", cdf = \"fb_hadoop\" }"))
    );
}

#[test]
fn an_hpcc_file_and_the_named_workload_are_the_same_workload() {
    let dir = std::env::temp_dir().join(format!("cnsim-workloads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let hpcc = dir.join("WebSearch_distribution.txt");
    std::fs::write(&hpcc, include_str!("../workloads/websearch.txt")).expect("write");
    // The same points as probabilities, in cnsim's own format.
    let own = dir.join("websearch_prob.txt");
    let prob: String = include_str!("../workloads/websearch.txt")
        .lines()
        .map(|l| {
            let (size, percent) = l.split_once(' ').expect("two columns");
            format!("{size} {}\n", percent.parse::<f64>().unwrap() / 100.0)
        })
        .collect();
    std::fs::write(&own, prob).expect("write");
    let named = trace_of(&star("{ cdf = \"websearch\" }"));
    assert!(named.lines().count() > 10, "{named}");
    for file in [&hpcc, &own] {
        let size = format!("{{ cdf_file = {:?} }}", file.display().to_string());
        assert_eq!(trace_of(&star(&size)), named, "{}", file.display());
    }
    let report = run(&star("{ cdf = \"websearch\" }"));
    assert_conserved(&report);
    let asked = f(&report.summary, "flows/requested_size_mean_bytes");
    assert!((asked - 1_711_250.0).abs() < 0.5, "{asked}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_workloads_name_the_field() {
    let e = error_of(&star("{ cdf = \"web_search\" }"), &[]);
    assert_field_error(&e, "traffic[0].size.cdf", "unknown workload 'web_search'");
    assert!(e.to_string().contains("\"websearch\""), "{e}");
    let e = error_of(&star("{ cdf = [[0, 0.5], [0, 1]] }"), &[]);
    assert_field_error(&e, "traffic[0].size.cdf[1]", ">= 1 byte");
    let e = error_of(&star("{ cdf = [[10, 50], [20, 100]] }"), &[]);
    assert_field_error(&e, "traffic[0].size.cdf[0]", "[0, 1]");
}
