//! Errors a user can cause (scenario/mod.rs: "every error names the path of the field") and
//! `--set path=value` overrides, which go through the same checks as the file.

mod common;

use cnsim_core::ConfigError;
use common::*;

#[test]
fn the_base_scenario_is_valid() {
    cnsim_core::resolve(&base().build(), &[], None).expect("valid");
}

#[test]
fn unknown_key_is_named_with_its_path() {
    let text = base()
        .build()
        .replace("name = \"a\"", "name = \"a\"\ncolour = \"red\"");
    assert_field_error(
        &error_of(&text, &[]),
        "hosts[0].colour",
        "unknown field `colour`",
    );
    let text = base().raw("[model]\nwire_overhead = 20").build();
    assert_field_error(
        &error_of(&text, &[]),
        "model.wire_overhead",
        "unknown field",
    );
}

#[test]
fn negative_rate_is_rejected() {
    let text = base()
        .build()
        .replacen("rate_bps = 10000000000.0", "rate_bps = -1e9", 1);
    assert_field_error(&error_of(&text, &[]), "links[0].rate_bps", "must be > 0");
}

#[test]
fn load_above_one_is_rejected() {
    let text = base().build().replace("load = 0.5", "load = 1.5");
    assert_field_error(
        &error_of(&text, &[]),
        "traffic[0].load",
        "must be in (0, 1] (got 1.5)",
    );
}

#[test]
fn malformed_toml_is_a_syntax_error() {
    let text = base().build().replace("[[traffic]]", "[[traffic]");
    let e = error_of(&text, &[]);
    assert!(matches!(e, ConfigError::Syntax(_)), "{e:?}");
    assert!(e.to_string().contains("not valid TOML"), "{e}");
}

#[test]
fn malformed_toml_error_names_the_line() {
    let text = base().build();
    let line = text
        .lines()
        .position(|l| l == "[[traffic]]")
        .expect("traffic table")
        + 1;
    let e = error_of(&text.replace("[[traffic]]", "[[traffic]"), &[]);
    assert!(
        e.to_string().contains(&format!("line {line}")),
        "no line {line} in: {e}"
    );
}

#[test]
fn unknown_node_in_a_link_is_rejected() {
    let text = base().link("sw", "nowhere", G10, 0.0).build();
    assert_field_error(
        &error_of(&text, &[]),
        "links[2].ends",
        "unknown node 'nowhere'",
    );
}

#[test]
fn host_with_two_links_is_rejected() {
    let text = base().link("a", "b", G10, 0.0).build();
    assert_field_error(
        &error_of(&text, &[]),
        "hosts[0]",
        "must have exactly one link (has 2)",
    );
}

#[test]
fn bad_override_paths_are_rejected() {
    let text = base().build();
    for path in ["traffic[x].load", "traffic[0.load", "traffic..load"] {
        let e = error_of(&text, &[(path, "0.3")]);
        assert_field_error(&e, path, "bad override path");
    }
    assert_field_error(
        &error_of(&text, &[("", "0.3")]),
        "set",
        "bad override path: empty",
    );
    assert_field_error(
        &error_of(&text, &[("duration_s.x", "1")]),
        "duration_s.x",
        "non-table",
    );
    assert_field_error(
        &error_of(&text, &[("name[0]", "1")]),
        "name[0]",
        "not a list",
    );
}

#[test]
fn override_index_out_of_range_is_rejected() {
    assert_field_error(
        &error_of(&base().build(), &[("traffic[3].load", "0.3")]),
        "traffic[3].load",
        "index 3 out of range ('traffic' has 1)",
    );
}

#[test]
fn override_of_the_wrong_type_is_rejected() {
    let text = base().build();
    assert_field_error(
        &error_of(&text, &[("traffic[0].load", "abc")]),
        "traffic[0].load",
        "invalid type",
    );
    assert_field_error(
        &error_of(&text, &[("links[1].rate_bps", "[1, 2]")]),
        "links[1].rate_bps",
        "invalid type",
    );
    assert_field_error(&error_of(&text, &[("seed", "1.5")]), "seed", "invalid type");
}

#[test]
fn overrides_are_validated_like_the_file() {
    assert_field_error(
        &error_of(&base().build(), &[("traffic[0].load", "1.5")]),
        "traffic[0].load",
        "must be in (0, 1]",
    );
    assert_field_error(
        &error_of(&base().build(), &[("hosts[1].colour", "1")]),
        "hosts[1].colour",
        "unknown field",
    );
}

#[test]
fn load_override_changes_the_offered_load() {
    // Bernoulli: offered = load x 10 Gb/s; over 1 ms (833 slots) the binomial sd of the frame
    // count at p = 0.5 is 14.4 frames = 1.7%, so 0.5 -> 5 Gb/s and 0.3 -> 3 Gb/s +- 10%.
    let text = base().build();
    let offered = |o: &[(&str, &str)]| {
        let r = try_run(&text, o, None).expect("runs");
        f(&r.summary, "per_source/a/offered_bps")
    };
    assert_close(offered(&[]), 5e9, 0.1, "offered at load 0.5");
    assert_close(
        offered(&[("traffic[0].load", "0.3")]),
        3e9,
        0.1,
        "offered at load 0.3",
    );
}

#[test]
fn override_can_set_a_field_the_file_left_to_its_default() {
    // b has no rx_rate_bps in the file; setting it to 1 Gb/s caps what b absorbs (5 Gb/s
    // arrive): b receives ~1 Gb/s over 1 ms, minus the first frame's 2.2 us of latency.
    let text = base().traffic("saturate", &["b"], "a", "").build();
    let r = try_run(&text, &[("hosts[1].rx_rate_bps", "1e9")], None).expect("runs");
    assert_close(
        f(&r.summary, "per_source/b/rx_throughput_bps"),
        1e9,
        0.02,
        "b rx",
    );
    let resolved = resolve_with(&text, &[("hosts[1].rx_rate_bps", "1e9")]).expect("valid");
    let resolved = resolved_toml(&resolved);
    assert_eq!(resolved["hosts"][1]["rx_rate_bps"].as_float(), Some(1e9));
}

#[test]
fn the_seed_argument_overrides_the_file() {
    let text = base().seed(5).build();
    let s = cnsim_core::resolve(&text, &[], Some(9)).expect("valid");
    assert_eq!(resolved_toml(&s)["seed"].as_integer(), Some(9));
}

#[test]
fn seeds_are_63_bit_and_larger_ones_are_a_clear_error() {
    // TOML integers are i64 and the resolved scenario stores its seed, so seeds live in
    // [0, 2^63); a larger one is refused with the field named, never mangled.
    let max = i64::MAX as u64;
    let s = cnsim_core::resolve(&base().build(), &[], Some(max)).expect("2^63 - 1 is valid");
    assert_eq!(resolved_toml(&s)["seed"].as_integer(), Some(max as i64));
    for seed in [1u64 << 63, u64::MAX] {
        let e = cnsim_core::resolve(&base().build(), &[], Some(seed)).expect_err("too large");
        assert_field_error(&e, "seed", "2^63");
    }
}

#[test]
fn a_sender_cannot_be_its_own_single_destination() {
    let text = base()
        .build()
        .replace("hosts = [\"a\"]", "hosts = [\"a\", \"b\"]");
    let e = match try_run(&text, &[], None) {
        Ok(r) => panic!(
            "accepted; b sent {} frames, b received {}, port sw->b sent {}",
            u(&r.summary, "per_source/b/tx_frames"),
            u(&r.summary, "per_source/b/rx_frames"),
            u(&r.summary, "per_port/sw->b/tx_frames"),
        ),
        Err(e) => e,
    };
    assert_field_error(&e, "traffic[0].dst", "itself");
}

#[test]
fn pfc_errors_name_the_field() {
    let cases = [
        (
            "[pfc]\nlossless_classes = [3, 8]",
            "pfc.lossless_classes",
            "0-7 (got 8)",
        ),
        (
            "[pfc]\nlossless_classes = [3, 3]",
            "pfc.lossless_classes",
            "listed twice",
        ),
        ("[pfc]\nxoff_bytes = 0", "pfc.xoff_bytes", "must be"),
        (
            "[pfc]\nxoff_bytes = 1000\nxon_bytes = 2000",
            "pfc.xon_bytes",
            "must not exceed xoff_bytes",
        ),
        (
            "[pfc]\nheadroom_bytes = -1",
            "pfc.headroom_bytes",
            "must be in [0",
        ),
        ("[pfc]\nquanta = 0", "pfc.quanta", "at least 1"),
        (
            "[pfc]\nthreshold = \"dynamic\"",
            "pfc.threshold",
            "needs shared_buffer_bytes",
        ),
        ("[pfc]\nalpha = 0", "pfc.alpha", "must be in (0, 64]"),
        (
            "[pfc]\nscheduler = \"wfq\"",
            "pfc.scheduler",
            "unknown variant",
        ),
        (
            "[pfc]\ndwrr_quantum_bytes = [1500]",
            "pfc.dwrr_quantum_bytes",
            "one quantum per class",
        ),
        (
            "[pfc]\ndwrr_quantum_bytes = [1, 1, 0, 1, 1, 1, 1, 1]",
            "pfc.dwrr_quantum_bytes[2]",
            "at least 1 byte",
        ),
        ("[pfc]\nxof_bytes = 1", "pfc.xof_bytes", "unknown field"),
    ];
    for (raw, path, reason) in cases {
        let text = base().raw(raw).build();
        assert_field_error(&error_of(&text, &[]), path, reason);
    }
}

#[test]
fn traffic_priority_must_be_a_class() {
    let text = base()
        .build()
        .replace("load = 0.5", "load = 0.5\npriority = 9");
    assert_field_error(
        &error_of(&text, &[]),
        "traffic[0].priority",
        "must be a class in 0-7 (got 9)",
    );
}

/// Each scheme checks its own `[congestion.<scheme>]` table (`cc/<scheme>.rs`), every field
/// once, whichever scheme runs; the errors name the field.
#[test]
fn scheme_tables_are_checked_by_their_scheme_whichever_runs() {
    let cases = [
        (
            "qcn",
            "qcn",
            "qeq_bytes = 0",
            "qeq_bytes",
            "must be > 0 (got 0)",
        ),
        // The bound the counters hold, in the same check as the sign.
        (
            "qcn",
            "qcn",
            "qeq_bytes = 1e300",
            "qeq_bytes",
            "(0, 2^53] bytes",
        ),
        (
            "none",
            "qcn",
            "cnm_bytes = 10",
            "cnm_bytes",
            "an Ethernet minimum",
        ),
        (
            "none",
            "qcn",
            "cnm_bytes = 10000",
            "cnm_bytes",
            "[64, 9216]",
        ),
        (
            "ecm",
            "bcn",
            "drift_interval_s = 1e9",
            "drift_interval_s",
            "must be in",
        ),
        (
            "bcn",
            "bcn",
            "bcn00 = true",
            "qsc_bytes",
            "required when bcn00",
        ),
        (
            "none",
            "path_probe",
            "probe_bytes = 1",
            "probe_bytes",
            "[64, 9216]",
        ),
        ("qcn", "dcqcn", "g = 0", "g", "must be in (0, 1]"),
        (
            "dcqcn",
            "dcqcn",
            "kmax_bytes = 1",
            "kmax_bytes",
            "above kmin_bytes",
        ),
        (
            "dcqcn",
            "dcqcn",
            "parameter_set = \"x\"",
            "parameter_set",
            "unknown variant",
        ),
        (
            "hpcc",
            "hpcc",
            "parameter_set = \"x\"",
            "parameter_set",
            "unknown variant",
        ),
        ("hpcc", "hpcc", "eta = 1.5", "eta", "must be in (0, 1]"),
        (
            "hpcc",
            "hpcc",
            "min_rate_bps = 0",
            "min_rate_bps",
            "must be > 0",
        ),
        ("e2cm", "e2cm", "w = -1", "w", "must be >= 0"),
        ("none", "e2cm", "rmin_bps = 0", "rmin_bps", "must be > 0"),
        ("qcn", "qcn", "qeq = 1", "qeq", "unknown field"),
    ];
    for (scheme, table, body, field, reason) in cases {
        let raw = format!("[congestion]\nscheme = \"{scheme}\"\n[congestion.{table}]\n{body}");
        let text = base().raw(&raw).build();
        let path = format!("congestion.{table}.{field}");
        assert_field_error(&error_of(&text, &[]), &path, reason);
    }
    // E2CM's fine loop follows its coarse loop's BCN(0,0), which needs a threshold.
    let raw = "[congestion]\nscheme = \"e2cm\"\n[congestion.bcn]\nbcn00 = true\n\
               qsc_bytes = 1e6\n[congestion.e2cm]\nqsc_bytes = 0";
    let e = error_of(&base().raw(raw).build(), &[]);
    assert_field_error(&e, "congestion.e2cm.qsc_bytes", "must be > 0");
}

#[test]
fn an_unknown_scheme_lists_the_registered_names() {
    let text = base().raw("[congestion]\nscheme = \"tcp\"").build();
    assert_field_error(
        &error_of(&text, &[]),
        "congestion.scheme",
        "unknown variant `tcp`, expected one of `none`, `qcn`, `bcn`, `ecm`, `path_probe`, \
         `dcqcn`, `e2cm`",
    );
    let text = base().raw("[congestion]\nscheme = 3").build();
    assert_field_error(&error_of(&text, &[]), "congestion.scheme", "invalid type");
}

/// A scheme's table is checked with the scenario's other fields, before the `[limits]` caps
/// (which only estimate what a valid scenario costs).
#[test]
fn a_scheme_table_error_comes_before_the_resource_caps() {
    for (scheme, body, path) in [
        ("dcqcn", "g = 0", "congestion.dcqcn.g"),
        (
            "path_probe",
            "probe_bytes = 1",
            "congestion.path_probe.probe_bytes",
        ),
        ("e2cm", "w = -1", "congestion.e2cm.w"),
    ] {
        let table = path.split('.').nth(1).unwrap();
        let raw = format!(
            "[limits]\nmax_events = 1\n[congestion]\nscheme = \"{scheme}\"\n\
             [congestion.{table}]\n{body}"
        );
        let e = error_of(&base().raw(&raw).build(), &[]);
        assert_eq!(e.path(), Some(path), "{e}");
    }
}

/// The resolved scenario as the run saves it (`scenario.toml`), read back.
fn resolved_toml(scenario: &cnsim_core::Scenario) -> toml::Table {
    toml::from_str(&scenario.to_toml()).expect("the resolved scenario is TOML")
}

#[test]
fn report_headlines_and_the_window_sample_floor_are_checked_and_kept() {
    let with = |report: &str| base().raw(report).build();
    let e = error_of(&with("[report]\nmin_window_samples = 0\n"), &[]);
    assert_field_error(&e, "report.min_window_samples", ">= 1");
    let headline = |label: &str, metric: &str| {
        format!("[[report.headline]]\nlabel = \"{label}\"\nmetric = \"{metric}\"\n")
    };
    let e = error_of(&with(&headline(" ", "metrics.x")), &[]);
    assert_field_error(&e, "report.headline[0].label", "what the number is");
    let e = error_of(&with(&headline("a", "")), &[]);
    assert_field_error(&e, "report.headline[0].metric", "path into summary.json");
    // A declared headline is part of the resolved scenario, so the Python side reads it there.
    let text = with(&(headline("fairness", "window.fairness_index") + "reference = 1.0\n"));
    let resolved = resolved_toml(&cnsim_core::resolve(&text, &[], None).expect("valid"));
    let report = resolved["report"].as_table().expect("[report]");
    assert_eq!(report["min_window_samples"].as_integer(), Some(10));
    let first = &report["headline"][0];
    assert_eq!(first["label"].as_str(), Some("fairness"));
    assert_eq!(first["reference"].as_float(), Some(1.0));
}

#[test]
fn a_misspelt_field_or_scheme_suggests_the_closest_name() {
    let e = error_of(&base().build(), &[("links[0].rate_bsp", "1e9")]);
    assert_field_error(&e, "links[0].rate_bsp", "did you mean `rate_bps`?");
    let text = base().raw("[congestion]\nscheme = \"dcqnc\"\n").build();
    let e = error_of(&text, &[]);
    assert_field_error(&e, "congestion.scheme", "did you mean `dcqcn`?");
}

#[test]
fn load_basis_applies_only_to_kinds_with_a_load() {
    // Incast and flow_trace entries returned from validation before the check, and the build
    // then panicked reading the load they do not have.
    let traffic = [
        (
            "incast",
            "kind = \"incast\"\nhosts = [\"a\"]\ndst = \"b\"\nfan_in = 1\ninterval_s = 1e-4\n\
             size = { bytes = 10000 }",
        ),
        (
            "flow_trace",
            "kind = \"flow_trace\"\nflows = [{ start_s = 0.0, src = \"a\", dst = \"b\", \
             size_bytes = 10000 }]",
        ),
        (
            "cbr",
            "kind = \"cbr\"\nhosts = [\"a\"]\ndst = \"b\"\nrate_bps = 1e9",
        ),
    ];
    for (kind, entry) in traffic {
        let text = ScenarioToml::new("lb", 1e-3)
            .hosts(&["a", "b"])
            .switch("sw")
            .link("a", "sw", G10, 1e-6)
            .link("sw", "b", G10, 1e-6)
            .raw(&format!(
                "[[traffic]]\n{entry}\nload_basis = \"busiest_link\"\n"
            ))
            .build();
        assert_field_error(
            &error_of(&text, &[]),
            "traffic[0].load_basis",
            &format!("does not apply to kind = \"{kind}\""),
        );
    }
}
