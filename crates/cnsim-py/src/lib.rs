//! Python bindings of cnsim-core: convert arguments, release the GIL while simulating, hand the
//! results over as numpy arrays, and map scenario errors to `cnsim.ScenarioError`. No logic.

use numpy::IntoPyArray;
use pyo3::create_exception;
use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The simulation's allocations (its elements, queues and records) through mimalloc, which
/// asks the kernel for transparent huge pages where the system leaves them to the program
/// (`madvise`): a large fabric's state then costs the CPU far fewer page-table walks, and the
/// 6,144-host fabric's event loop ran about 15% faster per frame-hop than on the system
/// allocator (docs/performance.md, "Session 15"). Outputs do not depend on the allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    _native,
    ScenarioError,
    PyValueError,
    "A scenario field is missing or invalid; the message names its path."
);

fn scenario_error(e: cnsim_core::ConfigError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

/// Validates the scenario (with overrides and seed) and returns it resolved, as TOML.
/// Relative file paths in it are taken from `base_dir` (default: the current directory).
#[pyfunction]
#[pyo3(signature = (scenario_toml, overrides = Vec::new(), seed = None, base_dir = None))]
fn resolve(
    py: Python<'_>,
    scenario_toml: &str,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    base_dir: Option<PathBuf>,
) -> PyResult<String> {
    // Seconds on a large network (it is built to check its routes): without the GIL.
    py.allow_threads(|| {
        cnsim_core::resolve_in(scenario_toml, &overrides, seed, base_dir.as_deref())
            .map(|s| s.to_toml())
    })
    .map_err(scenario_error)
}

/// Writes the flows the scenario's workload starts to `out_path` as a trace CSV; returns how
/// many.
#[pyfunction]
#[pyo3(signature = (scenario_toml, out_path, overrides = Vec::new(), seed = None, base_dir = None))]
fn write_flow_trace(
    scenario_toml: &str,
    out_path: PathBuf,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    base_dir: Option<PathBuf>,
) -> PyResult<usize> {
    let scenario = cnsim_core::resolve_in(scenario_toml, &overrides, seed, base_dir.as_deref())
        .map_err(scenario_error)?;
    let file = std::fs::File::create(&out_path)
        .map_err(|e| PyOSError::new_err(format!("cannot write '{}': {e}", out_path.display())))?;
    cnsim_core::write_flow_trace(&scenario, std::io::BufWriter::new(file)).map_err(scenario_error)
}

/// Runs a scenario. Returns a dict with `summary_json`, `resolved_toml`, `timeseries`
/// (long-format columns as numpy arrays plus the metric and entity name lists), `flows` (one
/// numpy column per field) and `late_drops`. `stage`, if given, is called with what the run is
/// doing ("building the network", then "simulating"). With `sink`, the run is streamed: the
/// sink's `hosts(names)` is called once before simulating, then `batch(timeseries, flows)`
/// after each progress call and once at the end, with the rows since the last batch (the
/// time series' `entities` are the names new since); the returned tables are then empty and
/// `late_drops` lists the `(flow_id, frames_dropped)` to patch in the written flows.
#[pyfunction]
#[pyo3(signature = (scenario_toml, overrides = Vec::new(), seed = None, progress = None, base_dir = None, stage = None, sink = None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    scenario_toml: &str,
    overrides: Vec<(String, String)>,
    seed: Option<u64>,
    progress: Option<PyObject>,
    base_dir: Option<PathBuf>,
    stage: Option<PyObject>,
    sink: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    if let Some(cb) = &stage {
        cb.call1(py, ("building the network",))?;
    }
    // Parsing and building a large network takes seconds: without the GIL, so other threads
    // (the progress bar's clock) go on. The network is built once (`prepare_in`).
    let base_dir = base_dir.as_deref();
    let streamed = sink.is_some();
    let sim = py
        .allow_threads(|| match streamed {
            true => cnsim_core::prepare_streamed_in(scenario_toml, &overrides, seed, base_dir),
            false => cnsim_core::prepare_in(scenario_toml, &overrides, seed, base_dir),
        })
        .map_err(scenario_error)?;
    if let Some(s) = &sink {
        s.call_method1(py, "hosts", (sim.host_names(),))?;
    }
    if let Some(cb) = &stage {
        cb.call1(py, ("simulating",))?;
    }
    // The callbacks run with the GIL; an exception in one (or a pending KeyboardInterrupt)
    // stops the run and is raised once the simulation has unwound.
    let mut failure: Option<PyErr> = None;
    let mut report_progress = |fraction: f64| {
        Python::with_gil(|py| {
            let outcome = match &progress {
                Some(cb) => cb.call1(py, (fraction,)).map(|_| ()),
                None => Ok(()),
            };
            match outcome.and_then(|_| py.check_signals()) {
                Ok(()) => true,
                Err(e) => {
                    failure = Some(e);
                    false
                }
            }
        })
    };
    let finished = match &sink {
        None => py.allow_threads(|| sim.run(&mut report_progress)),
        Some(s) => {
            let mut sink_failure: Option<PyErr> = None;
            let mut hand_over = |batch: cnsim_core::Drained| {
                Python::with_gil(|py| {
                    if sink_failure.is_some() {
                        return false; // the last batch after a failed one: not written
                    }
                    let outcome = series_dict(py, batch.series).and_then(|series| {
                        let flows = flows_dict(py, batch.flows)?;
                        s.call_method1(py, "batch", (series, flows)).map(|_| ())
                    });
                    outcome.map_err(|e| sink_failure = Some(e)).is_ok()
                })
            };
            let finished =
                py.allow_threads(|| sim.run_streaming(&mut report_progress, &mut hand_over));
            if let Some(e) = sink_failure {
                return Err(e);
            }
            finished
        }
    };
    let report = py.allow_threads(|| cnsim_core::Report::new(finished));
    if let Some(e) = failure {
        return Err(e);
    }
    let out = PyDict::new(py);
    out.set_item("summary_json", report.summary.to_string())?;
    out.set_item("flows", flows_dict(py, report.flows)?)?;
    out.set_item("resolved_toml", report.resolved_toml)?;
    out.set_item("timeseries", series_dict(py, report.timeseries)?)?;
    out.set_item("late_drops", report.late_drops)?;
    Ok(out)
}

/// Time-series columns as numpy arrays (moved, not copied) and the name lists.
fn series_dict(py: Python<'_>, ts: cnsim_core::TimeSeries) -> PyResult<Bound<'_, PyDict>> {
    let series = PyDict::new(py);
    series.set_item("time_s", ts.time_s.into_pyarray(py))?;
    series.set_item("metric", ts.metric.into_pyarray(py))?;
    series.set_item("entity", ts.entity.into_pyarray(py))?;
    series.set_item("value", ts.value.into_pyarray(py))?;
    series.set_item("metrics", ts.metrics)?;
    series.set_item("entities", ts.entities)?;
    Ok(series)
}

/// Flow-record columns as numpy arrays (moved, not copied).
fn flows_dict(py: Python<'_>, f: cnsim_core::FlowRecords) -> PyResult<Bound<'_, PyDict>> {
    let flows = PyDict::new(py);
    flows.set_item("flow_id", f.flow_id.into_pyarray(py))?;
    flows.set_item("src", f.src.into_pyarray(py))?;
    flows.set_item("dst", f.dst.into_pyarray(py))?;
    flows.set_item("size_bytes", f.size_bytes.into_pyarray(py))?;
    flows.set_item("priority", f.priority.into_pyarray(py))?;
    flows.set_item("start_s", f.start_s.into_pyarray(py))?;
    flows.set_item("end_s", f.end_s.into_pyarray(py))?;
    flows.set_item("fct_s", f.fct_s.into_pyarray(py))?;
    flows.set_item("ideal_fct_s", f.ideal_fct_s.into_pyarray(py))?;
    flows.set_item("completed", f.completed.into_pyarray(py))?;
    flows.set_item("frames_dropped", f.frames_dropped.into_pyarray(py))?;
    flows.set_item("delivered_bytes", f.delivered_bytes.into_pyarray(py))?;
    flows.set_item(
        "retransmitted_bytes",
        f.retransmitted_bytes.into_pyarray(py),
    )?;
    flows.set_item("timeouts", f.timeouts.into_pyarray(py))?;
    flows.set_item("goodput_bps", f.goodput_bps.into_pyarray(py))?;
    flows.set_item("sender_end_s", f.sender_end_s.into_pyarray(py))?;
    Ok(flows)
}

/// The JSON Schema of scenario files, generated from the Rust types, as JSON text.
#[pyfunction]
fn scenario_schema() -> String {
    cnsim_core::Scenario::json_schema().to_string()
}

/// The JSON Schema of `summary.json`, generated from the Rust types, as JSON text.
#[pyfunction]
fn summary_schema() -> String {
    cnsim_core::Summary::json_schema().to_string()
}

/// Probe metric names (the time series' `metric` column can hold).
#[pyfunction]
fn probe_metrics() -> Vec<&'static str> {
    cnsim_core::METRICS.to_vec()
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(write_flow_trace, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(summary_schema, m)?)?;
    m.add_function(wrap_pyfunction!(probe_metrics, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    Ok(())
}
