//! The scheme hooks: a scheme written only against them (`path_probe`: probes ride the data
//! queue, every switch stamps them with its queue, the receiver returns them) works end to end,
//! and the network elements name no scheme.

mod common;

use common::*;

/// Every Rust file under `src/<dir>`, read when the test runs (so a new file is checked too);
/// without `test_files`, leaving out test modules in files of their own (`tests.rs`,
/// `*_tests.rs`), which may drive an element with a scheme's messages.
fn rust_files_under(dir: &str, test_files: bool) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable source directory") {
            let path = entry.expect("a directory entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() {
                dirs.push(path.clone());
            } else if name.ends_with(".rs") && (test_files || !name.ends_with("tests.rs")) {
                let text = std::fs::read_to_string(&path).expect("a source file");
                files.push((path.display().to_string(), text));
            }
        }
    }
    files.sort();
    files
}

const SCHEMES: [&str; 9] = [
    "qcn",
    "bcn",
    "ecm",
    "cnm",
    "path_probe",
    "pathprobe",
    "dcqcn",
    "cnp",
    "e2cm",
];

/// A file's code, lowercase, without comment lines and without its inline unit tests (which
/// may drive an element with a scheme's messages; test modules in files of their own are not
/// read).
fn code_of(text: &str) -> String {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
        .to_lowercase();
    code.split("#[cfg(test)]\nmod tests {")
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn switches_and_hosts_name_no_scheme() {
    let elements = rust_files_under("src/net", false);
    assert!(elements.len() >= 10, "the network's files are read");
    for (file, text) in &elements {
        // ECMP is routing, not ECM.
        let code = code_of(text).replace("ecmp", "");
        for scheme in SCHEMES {
            assert!(!code.contains(scheme), "{file} names the scheme '{scheme}'");
        }
    }
}

/// A scheme's name reaches its own file under `cc/` and its line in the registry
/// (`cc/mod.rs`): the scenario's parsing, the network's build, the counters and the report
/// take the schemes from the registry.
#[test]
fn outside_cc_no_file_names_a_scheme() {
    let files = [
        ("scenario/mod.rs", include_str!("../src/scenario/mod.rs")),
        (
            "scenario/validate.rs",
            include_str!("../src/scenario/validate.rs"),
        ),
        (
            "scenario/validate_tables.rs",
            include_str!("../src/scenario/validate_tables.rs"),
        ),
        ("sim/build.rs", include_str!("../src/sim/build.rs")),
        ("stats/mod.rs", include_str!("../src/stats/mod.rs")),
        ("report/mod.rs", include_str!("../src/report/mod.rs")),
        (
            "report/control_frames.rs",
            include_str!("../src/report/control_frames.rs"),
        ),
        ("net/frame.rs", include_str!("../src/net/frame.rs")),
    ];
    for (file, text) in files {
        // ECMP is routing, not ECM.
        let code = code_of(text).replace("ecmp", "");
        for scheme in SCHEMES {
            assert!(!code.contains(scheme), "{file} names the scheme '{scheme}'");
        }
    }
}

/// `cc` sits below `net`: a frame reaches the hooks through `cc::HookFrame` and carries a
/// `cc::CcMsg`, so the two do not import each other; nor does `cc` import the scenario, the
/// simulation, the counters or the report, which all take the schemes from it.
#[test]
fn cc_imports_nothing_from_net() {
    let files = rust_files_under("src/cc", true);
    assert!(
        files.len() >= 10,
        "found {} files under src/cc",
        files.len()
    );
    for (file, text) in &files {
        let code = code_of(text);
        for net in [
            "crate::net",
            "net::",
            "crate::sim",
            "crate::scenario",
            "crate::stats",
            "crate::report",
        ] {
            assert!(!code.contains(net), "{file} imports from {net}");
        }
    }
}

/// Two senders saturate one 10 Gb/s output (a 100 KB queue limit) behind a second switch.
fn two_hops(extra_congestion: &str) -> String {
    ScenarioToml::new("probe", 0.01)
        .hosts(&["a", "b", "c"])
        .switch("s1")
        .switch_with("s2", "output_buffer_bytes = 100_000")
        .link("a", "s1", G10, 1e-6)
        .link("b", "s1", G10, 1e-6)
        .link_with("s1", "s2", 40e9, 1e-6, "")
        .link("s2", "c", G10, 1e-6)
        .saturate(&["a"], "c")
        .saturate(&["b"], "c")
        .raw(&format!(
            "[congestion]\nscheme = \"path_probe\"\n{extra_congestion}"
        ))
        .probe_interval(1e-3)
        .build()
}

#[test]
fn path_probes_report_the_longest_queue_on_the_path() {
    let r = run(&two_hops(
        "[congestion.path_probe]\ninterval_bytes = 30_000\n",
    ));
    assert_conserved(&r);
    let s = &r.summary;
    // The senders are not limited (path_probe never limits): each sends 10 ms x 10 Gb/s =
    // 12.5 MB, a probe per 30 KB: 416 each. A forward probe that met a full queue would be
    // turned away like data (a 64 B probe still fits where a 1500 B frame does not, so none
    // is here); the others come back, but for the few in flight at the end (about 100 us of
    // path with the full queue, a probe every 24 us per sender). Each is counted going out
    // and coming back.
    let probes = u(s, "control_frames/path_probe");
    let dropped = u(s, "control_frames/dropped");
    let forward = 2 * 416;
    let returned = probes - forward;
    assert!(
        returned + dropped <= forward && returned + dropped + 12 >= forward,
        "{probes} probe frames, {dropped} turned away"
    );
    for sender in ["a->c", "b->c"] {
        let seen = series(&r, "rp_feedback", sender);
        let late = values_between(&seen, 0.002, 0.01);
        assert!(!late.is_empty(), "no returned probe for {sender}");
        // The congested queue at s2 is full (100 KB limit, drops at egress): probes met it
        // at close to its limit, never beyond (it holds at most 100 KB of data and probes).
        assert!(min(&late) > 80_000.0, "{sender}: {late:?}");
        assert!(max(&late) <= 100_000.0, "{sender}: {late:?}");
    }
    assert_eq!(at(s, "variant/scheme"), "path_probe");
}

#[test]
fn probes_on_an_idle_path_see_only_themselves() {
    let text = ScenarioToml::new("idle", 0.005)
        .hosts(&["a", "c"])
        .switch("s1")
        .link("a", "s1", G10, 1e-6)
        .link("s1", "c", G10, 1e-6)
        .bernoulli(&["a"], "c", 0.3)
        .raw("[congestion]\nscheme = \"path_probe\"\n")
        .probe_interval(1e-3)
        .build();
    let r = run(&text);
    assert_conserved(&r);
    let seen = series(&r, "rp_feedback", "a->c");
    let late = values_between(&seen, 0.002, 0.005);
    assert!(!late.is_empty());
    // At 30% load the queue a probe meets is itself (64 B) or a frame or two more.
    assert!(max(&late) <= 64.0 + 2.0 * 1500.0, "{late:?}");
}
