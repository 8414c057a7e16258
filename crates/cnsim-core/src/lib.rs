//! cnsim-core: a packet-level discrete-event simulator of data-center Ethernet congestion
//! management (IEEE 802.3x PAUSE, 802.1Qbb PFC, 802.1Qau QCN, BCN/ECM, E2CM, DCQCN; flow
//! workloads).
//!
//! The public API is what the Python binding, the examples and the benches use:
//! - [`run_toml`]: parse, validate and run a scenario, giving a [`Report`];
//! - [`resolve`] / [`resolve_in`]: parse and validate only, giving a [`Scenario`] (every
//!   default filled in; [`Scenario::to_toml`] prints it, [`Scenario::json_schema`] the format,
//!   [`Scenario::estimate`] the run's cost as an [`Estimate`]);
//! - [`prepare_in`]: resolve and build in one step (the network built once), giving a
//!   [`Simulation`];
//! - [`Simulation::new`] and [`Simulation::run`] (with a progress callback that may stop the
//!   run), giving a [`FinishedRun`], and [`Report::new`] on it; [`Simulation::run_streaming`]
//!   hands the flow records and probe rows over in batches ([`Drained`]) as the run goes;
//! - [`Report`]: the summary as JSON ([`Summary`] is its typed form and schema), the probe
//!   [`TimeSeries`] and the [`FlowRecords`] as columns, the resolved scenario's TOML;
//! - [`write_flow_trace`]: a workload's flows as a trace file;
//! - [`METRICS`] (the probe metrics a plot may name) and [`limits`] (the bounds validation
//!   enforces); errors are [`ConfigError`], naming the field.
//!
//! Everything else is private to the crate: the elements, the schemes and the event queue are
//! reached only through a scenario.

#![deny(unreachable_pub)]
pub(crate) mod cc;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod flow_control;
pub(crate) mod flow_digest;
pub(crate) mod flows;
pub(crate) mod ids;
pub(crate) mod net;
pub(crate) mod report;
pub(crate) mod rng;
pub(crate) mod scenario;
pub(crate) mod sim;
pub(crate) mod stats;
#[cfg(test)]
mod testkit;
pub(crate) mod time;
pub(crate) mod traffic;

pub use error::ConfigError;
pub use flows::FlowRecords;
pub use report::{Report, Summary};
pub use scenario::{Estimate, Scenario, METRICS};
pub use sim::{Drained, FinishedRun, Simulation};
pub use stats::TimeSeries;

/// The bounds that validation enforces on a scenario's numbers.
pub mod limits {
    pub use crate::scenario::{MAX_PORTS_PER_NODE, MIN_LOAD};
    pub use crate::time::{MAX_RATE_BPS, MAX_TIME_S, MIN_RATE_BPS};
}

/// Parses, validates and runs a scenario. `seed` overrides the scenario's seed.
pub fn run_toml(
    text: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<Report, ConfigError> {
    Ok(Report::new(
        prepare_in(text, overrides, seed, None)?.run(progress),
    ))
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
    let scenario = parse_in(text, overrides, seed, base_dir)?;
    // Routes and destinations are checked by building the network, so a scenario that
    // resolves also runs (a sweep validates every point before running any).
    sim::check_buildable(&scenario)?;
    Ok(scenario)
}

/// As [`resolve_in`] followed by [`Simulation::new`], building the network once: the build
/// that runs is the check (the same errors), where resolving then starting built it twice.
pub fn prepare_in(
    text: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
    base_dir: Option<&std::path::Path>,
) -> Result<Simulation, ConfigError> {
    Simulation::new(parse_in(text, overrides, seed, base_dir)?)
}

/// As [`prepare_in`] for a run that will stream its outputs ([`Simulation::run_streaming`]):
/// the memory estimate of `[limits]` then counts no flow record and one batch of probe rows.
pub fn prepare_streamed_in(
    text: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
    base_dir: Option<&std::path::Path>,
) -> Result<Simulation, ConfigError> {
    Simulation::new(parse_for(text, overrides, seed, base_dir, true)?)
}

/// Parses and validates, with the seed as an override; no network built.
fn parse_in(
    text: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
    base_dir: Option<&std::path::Path>,
) -> Result<Scenario, ConfigError> {
    parse_for(text, overrides, seed, base_dir, false)
}

fn parse_for(
    text: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
    base_dir: Option<&std::path::Path>,
    streamed: bool,
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
    Scenario::from_toml_for(text, &all, base_dir, streamed)
}

/// The flows a scenario's workload starts, as the trace CSV `cnsim trace` writes: running the
/// scenario with this file as a `flow_trace` reproduces the run exactly. The long flows of
/// `saturate` and `cbr` entries over a transport are left out: their size is what their
/// application writes during the run (keep those entries beside the trace).
pub fn write_flow_trace(
    scenario: &Scenario,
    out: impl std::io::Write,
) -> Result<usize, ConfigError> {
    let (mut rows, names) = sim::workload_rows(scenario)?;
    rows.retain(|r| r.writes.is_none());
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    traffic::trace::write_csv(out, &rows, &names)
        .map_err(|e| ConfigError::field("trace", format!("cannot write the trace: {e}")))?;
    Ok(rows.len())
}
