//! Times the stages between a scenario file and its first event, as one JSON line:
//! `cargo run --release --example build_time -- FILE [RUN_S]`.
//!
//! parse_validate_s: TOML to a validated `Scenario` (what `Scenario::from_toml` does);
//! resolve_s: `resolve`, the same plus building the network once to check routes (what
//! `cnsim show --resolved` and every run do first); to_toml_s: printing the resolved scenario;
//! build_s: `Simulation::new` (building the network to run it); run_s: simulating RUN_S
//! seconds (`duration_s` replaced; 0 by default: not run); report_s: the report made from it. `benchmarks/bench_build.py` drives it.
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: build_time SCENARIO.toml [RUN_S]");
    let run_s: f64 = args
        .next()
        .map_or(0.0, |s| s.parse().expect("RUN_S in seconds"));
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let fail = |e: cnsim_core::ConfigError| -> ! {
        eprintln!("error: {e}");
        std::process::exit(2)
    };
    let t = Instant::now();
    cnsim_core::Scenario::from_toml(&text, &[]).unwrap_or_else(|e| fail(e));
    let parse_validate_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let scenario = cnsim_core::resolve(&text, &[], None).unwrap_or_else(|e| fail(e));
    let resolve_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let resolved = scenario.to_toml();
    let to_toml_s = t.elapsed().as_secs_f64();
    let overrides = if run_s > 0.0 {
        vec![("duration_s".to_string(), run_s.to_string())]
    } else {
        Vec::new()
    };
    let scenario = cnsim_core::resolve(&text, &overrides, None).unwrap_or_else(|e| fail(e));
    let t = Instant::now();
    let sim = cnsim_core::Simulation::new(scenario).unwrap_or_else(|e| fail(e));
    let build_s = t.elapsed().as_secs_f64();
    let mut run_wall_s = 0.0;
    let mut report_s = 0.0;
    let mut events = 0u64;
    if run_s > 0.0 {
        let t = Instant::now();
        let finished = sim.run(&mut |_| true);
        run_wall_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let report = cnsim_core::Report::new(finished);
        report_s = t.elapsed().as_secs_f64();
        events = report.summary["events"].as_u64().unwrap_or(0);
    }
    println!(
        "{{\"parse_validate_s\": {parse_validate_s:.4}, \"resolve_s\": {resolve_s:.4}, \
         \"to_toml_s\": {to_toml_s:.4}, \"resolved_bytes\": {}, \"build_s\": {build_s:.4}, \
         \"run_s\": {run_s}, \"run_wall_s\": {run_wall_s:.4}, \"report_s\": {report_s:.4}, \
         \"events\": {events}}}",
        resolved.len()
    );
}
