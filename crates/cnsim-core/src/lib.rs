//! cnsim-core: a packet-level discrete-event simulator of data-center Ethernet congestion
//! management (IEEE 802.3x PAUSE, 802.1Qau QCN, BCN/ECM).
//!
//! Entry point: [`run_toml`] (or [`scenario::Scenario::from_toml`] + [`sim::Simulation`]).

pub mod cc;
pub mod engine;
pub mod error;
pub mod flow_control;
pub mod flows;
pub mod net;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod stats;
#[cfg(test)]
mod testkit;
pub mod time;
pub mod traffic;

pub use error::ConfigError;
pub use report::Report;
pub use scenario::Scenario;
pub use sim::Simulation;

/// Parses, validates and runs a scenario. `seed` overrides the scenario's seed.
pub fn run_toml(
    text: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<Report, ConfigError> {
    let scenario = resolve(text, overrides, seed)?;
    Ok(Report::new(Simulation::new(scenario)?.run(progress)))
}

/// Parses and validates a scenario with overrides and an optional seed; relative file paths
/// in it (flow traces, size CDFs) are taken from the current directory.
pub fn resolve(
    text: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> Result<Scenario, ConfigError> {
    resolve_in(text, overrides, seed, None)
}

/// As [`resolve`], with relative file paths taken from `base_dir` (the scenario file's
/// folder). The resolved scenario holds absolute paths, so it runs again from anywhere.
pub fn resolve_in(
    text: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
    base_dir: Option<&std::path::Path>,
) -> Result<Scenario, ConfigError> {
    let mut all = overrides.to_vec();
    if let Some(s) = seed {
        // TOML integers are i64, and the resolved scenario must hold its seed.
        if s > i64::MAX as u64 {
            return Err(ConfigError::field(
                "seed",
                format!("must be < 2^63 (got {s})"),
            ));
        }
        all.push(("seed".into(), s.to_string()));
    }
    let mut scenario = Scenario::from_toml(text, &all)?;
    scenario.make_paths_absolute(base_dir);
    // Routes and destinations are checked by building the network, so a scenario that
    // resolves also runs (a sweep validates every point before running any).
    sim::check_buildable(&scenario)?;
    Ok(scenario)
}

/// The flows a scenario's workload starts, as the trace CSV `cnsim trace` writes: running the
/// scenario with this file as a `flow_trace` reproduces the run exactly.
pub fn write_flow_trace(
    scenario: &Scenario,
    out: impl std::io::Write,
) -> Result<usize, ConfigError> {
    let (rows, names) = sim::workload_rows(scenario)?;
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    traffic::trace::write_csv(out, &rows, &names)
        .map_err(|e| ConfigError::field("trace", format!("cannot write the trace: {e}")))?;
    Ok(rows.len())
}
