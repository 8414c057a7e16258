//! Flow workloads in the scenario: `kind = "flows"` (Poisson arrivals of flows with a size
//! distribution) and `kind = "flow_trace"` (flows read from a file or listed inline).

use std::collections::HashSet;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Scenario, TrafficKind, TrafficSpec};
use crate::error::{Check, ConfigError};

/// `dst = "permutation"`: each sender of the entry gets one fixed partner.
pub(crate) const PERMUTATION: &str = "permutation";

/// Highest priority class (802.1Q: eight classes, 0-7).
pub(crate) const MAX_PRIORITY: u8 = 7;

/// Largest flow (and size-distribution parameter) accepted: 1 TB, far beyond any data-center
/// flow, and small enough that byte counts never overflow.
pub(crate) const MAX_FLOW_BYTES: f64 = 1e12;

/// How a flow's size is drawn (`size = { dist = "...", ... }`), in bytes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum SizeSpec {
    /// Every flow has `bytes` bytes (`dist` may be left out: `size = { bytes = 500000 }`).
    Fixed { bytes: f64 },
    /// Exponential with mean `mean_bytes` (seed 003).
    Exponential { mean_bytes: f64 },
    /// Pareto with `shape` and either its scale (the minimum size) or its mean (needs shape >
    /// 1): scale = mean x (shape - 1) / shape (seed 003: mean 60 KB).
    Pareto {
        shape: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scale_bytes: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mean_bytes: Option<f64>,
    },
    /// Pareto truncated to [min_bytes, max_bytes] (inverse-CDF sampling of the bounded law).
    BoundedPareto {
        shape: f64,
        min_bytes: f64,
        max_bytes: f64,
    },
    /// An empirical CDF: points `[size_bytes, cumulative_probability]`, sizes interpolated
    /// linearly between points; given inline (`cdf`: the points, or the name of a workload
    /// shipped with cnsim: "websearch", "fb_hadoop", "ali_storage") or as a file of `size_bytes
    /// cumulative_probability` lines, or `size_bytes cumulative_percent` as the HPCC
    /// simulator writes them (`cdf_file`, relative to the scenario file). `dist` may be left
    /// out when `cdf` or `cdf_file` is given.
    Empirical {
        #[serde(default, skip_serializing_if = "Cdf::is_empty")]
        cdf: Cdf,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cdf_file: Option<String>,
    },
}

/// An inline CDF: its points, or the name of a shipped workload (`traffic/cdf.rs`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Cdf {
    /// "websearch" (DCTCP, SIGCOMM 2010), "fb_hadoop" (Roy et al., SIGCOMM 2015) or
    /// "ali_storage" (Alibaba storage 2019), as the HPCC simulator ships them.
    Named(String),
    /// `[size_bytes, cumulative_probability]` points.
    Points(Vec<[f64; 2]>),
}

impl Default for Cdf {
    fn default() -> Self {
        Cdf::Points(Vec::new())
    }
}

impl Cdf {
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Cdf::Points(p) if p.is_empty())
    }

    /// The points (a named workload's from the crate); None for an unknown name.
    pub(crate) fn points(&self) -> Option<Vec<[f64; 2]>> {
        match self {
            Cdf::Named(name) => crate::scenario::cdf::named(name),
            Cdf::Points(p) => Some(p.clone()),
        }
    }
}

/// One flow of an inline list (`kind = "flow_trace"`, `flows = [...]`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlowSpec {
    pub(crate) start_s: f64,
    pub(crate) src: String,
    pub(crate) dst: String,
    pub(crate) size_bytes: f64,
    #[serde(default)]
    pub(crate) priority: u8,
}

impl SizeSpec {
    pub(crate) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        match self {
            SizeSpec::Fixed { bytes } => c.in_closed("bytes", *bytes, 1.0, MAX_FLOW_BYTES),
            SizeSpec::Exponential { mean_bytes } => {
                c.in_closed("mean_bytes", *mean_bytes, 1.0, MAX_FLOW_BYTES)
            }
            SizeSpec::Pareto {
                shape,
                scale_bytes,
                mean_bytes,
            } => {
                c.positive("shape", *shape)?;
                match (scale_bytes, mean_bytes) {
                    (Some(s), None) => c.in_closed("scale_bytes", *s, 1.0, MAX_FLOW_BYTES),
                    (None, Some(m)) => {
                        if *shape <= 1.0 {
                            return Err(c.fail(
                                "mean_bytes",
                                format!("a Pareto mean needs shape > 1 (got shape {shape})"),
                            ));
                        }
                        c.in_closed("mean_bytes", *m, 1.0, MAX_FLOW_BYTES)
                    }
                    _ => Err(c.fail(
                        "scale_bytes",
                        "give exactly one of scale_bytes and mean_bytes",
                    )),
                }
            }
            SizeSpec::BoundedPareto {
                shape,
                min_bytes,
                max_bytes,
            } => {
                c.positive("shape", *shape)?;
                c.in_closed("min_bytes", *min_bytes, 1.0, MAX_FLOW_BYTES)?;
                if max_bytes.is_nan() || max_bytes <= min_bytes {
                    return Err(c.fail(
                        "max_bytes",
                        format!("must be above min_bytes (got {max_bytes})"),
                    ));
                }
                Ok(())
            }
            SizeSpec::Empirical { cdf, cdf_file } => match (cdf.is_empty(), cdf_file) {
                (false, None) => match cdf.points() {
                    Some(points) => validate_cdf(&points, &format!("{path}.cdf")),
                    None => Err(c.fail(
                        "cdf",
                        format!(
                            "unknown workload {} (known: {}; or give the points, or a cdf_file)",
                            match cdf {
                                Cdf::Named(name) => format!("'{name}'"),
                                Cdf::Points(_) => String::new(),
                            },
                            crate::scenario::cdf::names()
                        ),
                    )),
                },
                (true, Some(_)) => Ok(()),
                _ => Err(c.fail("cdf", "give exactly one of cdf and cdf_file")),
            },
        }
    }
}

/// An empirical CDF: sizes >= 1 (the first may be 0, as the HPCC simulator's files start) and
/// non-decreasing, probabilities non-decreasing in [0, 1], the last one 1.
pub(crate) fn validate_cdf(points: &[[f64; 2]], path: &str) -> Result<(), ConfigError> {
    check_cdf(points).map_err(|(index, msg)| match index {
        Some(i) => ConfigError::field(format!("{path}[{i}]"), msg),
        None => ConfigError::field(path, msg),
    })
}

/// As [`validate_cdf`], the fault as (the index of the point at fault, if one is, the reason),
/// so a file's reader can name the point's line instead (`cdf.rs`).
pub(crate) fn check_cdf(points: &[[f64; 2]]) -> Result<(), (Option<usize>, String)> {
    if points.is_empty() {
        return Err((None, "the CDF has no points".into()));
    }
    let mut prev = [0.0, 0.0];
    for (i, &[size, p]) in points.iter().enumerate() {
        let smallest = if i == 0 { 0.0 } else { 1.0 };
        if !(size >= smallest && size.is_finite()) || size < prev[0] {
            return Err((
                Some(i),
                format!(
                    "sizes must be >= 1 byte (the first may be 0) and non-decreasing (got {size})"
                ),
            ));
        }
        if !(0.0..=1.0).contains(&p) || p < prev[1] {
            return Err((
                Some(i),
                format!("probabilities must be in [0, 1] and non-decreasing (got {p})"),
            ));
        }
        prev = [size, p];
    }
    if prev[1] != 1.0 {
        return Err((
            None,
            format!(
                "the last cumulative probability must be 1 (got {})",
                prev[1]
            ),
        ));
    }
    Ok(())
}

/// The `dist` a size table without one means: `cdf` or `cdf_file` an empirical CDF,
/// `bytes` a fixed size (an incast's usual size; any entry may write it).
fn implied_dist(size: &toml::Table) -> Option<&'static str> {
    if size.contains_key("cdf") || size.contains_key("cdf_file") {
        Some("empirical")
    } else if size.contains_key("bytes") {
        Some("fixed")
    } else {
        None
    }
}

/// `size = { cdf = ... }`, `{ cdf_file = ... }` or `{ bytes = ... }` without `dist`: the
/// implied tag (`implied_dist`) is added to the TOML before it is read, so the resolved
/// scenario shows it.
pub(super) fn default_size_dist(root: &mut toml::Table) {
    let Some(toml::Value::Array(entries)) = root.get_mut("traffic") else {
        return;
    };
    for entry in entries {
        let Some(toml::Value::Table(size)) = entry.get_mut("size") else {
            continue;
        };
        if size.contains_key("dist") {
            continue;
        }
        if let Some(dist) = implied_dist(size) {
            size.insert("dist".into(), toml::Value::String(dist.into()));
        }
    }
}

/// The JSON Schema's side of `default_size_dist` (the derived schema requires `dist`, so
/// `size = { cdf = "websearch" }`, which runs, failed the schema): the empirical variant of
/// `SizeSpec` needs `dist`, or `cdf` or `cdf_file` without it; the fixed one `bytes` only.
pub(super) fn schema_allows_dist_less_sizes(schema: &mut serde_json::Value) {
    let variants = schema
        .pointer_mut("/$defs/SizeSpec/oneOf")
        .and_then(|v| v.as_array_mut());
    for variant in variants.into_iter().flatten() {
        let dist = variant.pointer("/properties/dist/const").cloned();
        let Some(object) = variant.as_object_mut() else {
            continue;
        };
        if dist == Some("empirical".into()) {
            object.remove("required");
            object.insert(
                "anyOf".into(),
                serde_json::json!([
                    { "required": ["dist"] },
                    { "required": ["cdf"] },
                    { "required": ["cdf_file"] },
                ]),
            );
        } else if dist == Some("fixed".into()) {
            object.insert("required".into(), serde_json::json!(["bytes"]));
        }
    }
}

impl FlowSpec {
    pub(crate) fn validate(
        &self,
        path: &str,
        host_exists: impl Fn(&str) -> bool,
    ) -> Result<(), ConfigError> {
        let c = Check { path };
        c.non_negative("start_s", self.start_s)?;
        for (field, name) in [("src", &self.src), ("dst", &self.dst)] {
            if !host_exists(name) {
                return Err(c.fail(field, format!("unknown host '{name}'")));
            }
        }
        if self.src == self.dst {
            return Err(c.fail("dst", format!("host '{}' cannot send to itself", self.dst)));
        }
        c.in_closed("size_bytes", self.size_bytes, 1.0, MAX_FLOW_BYTES)?;
        check_priority(&c, self.priority)
    }
}

pub(crate) fn check_priority(c: &Check, priority: u8) -> Result<(), ConfigError> {
    if priority > MAX_PRIORITY {
        return Err(c.fail(
            "priority",
            format!("must be a class in 0-{MAX_PRIORITY} (got {priority})"),
        ));
    }
    Ok(())
}

impl Scenario {
    /// The flow-workload fields: only where they apply, and complete where they are needed.
    pub(super) fn validate_flow_fields(
        &self,
        t: &TrafficSpec,
        path: &str,
        host_names: &HashSet<&str>,
    ) -> Result<(), ConfigError> {
        let c = Check { path };
        let stray = match t.kind {
            TrafficKind::Flows => [
                (!t.flows.is_empty()).then_some("flows"),
                t.trace.as_ref().map(|_| "trace"),
            ],
            TrafficKind::FlowTrace => [t.size.as_ref().map(|_| "size"), t.load.map(|_| "load")],
            _ => [
                t.size.as_ref().map(|_| "size"),
                (!t.flows.is_empty())
                    .then_some("flows")
                    .or(t.trace.as_ref().map(|_| "trace")),
            ],
        };
        if let Some(field) = stray.into_iter().flatten().next() {
            return Err(c.fail(
                field,
                format!("does not apply to kind = \"{}\"", t.kind.name()),
            ));
        }
        match t.kind {
            TrafficKind::Flows => {
                let Some(size) = &t.size else {
                    return Err(c.fail("size", "required for kind = \"flows\""));
                };
                size.validate(&format!("{path}.size"))?;
                check_priority(&c, t.priority)
            }
            TrafficKind::FlowTrace => validate_flow_trace(t, &c, path, host_names),
            _ => check_priority(&c, t.priority),
        }
    }
}

/// `kind = "flow_trace"`: a file or an inline list, and none of the generated kinds' fields.
fn validate_flow_trace(
    t: &TrafficSpec,
    c: &Check,
    path: &str,
    host_names: &HashSet<&str>,
) -> Result<(), ConfigError> {
    for (field, given) in [
        ("hosts", !t.hosts.is_empty()),
        ("dst", t.dst.is_some()),
        ("priority", t.priority != 0),
        ("stop_s", t.stop_s.is_some()),
    ] {
        if given {
            return Err(c.fail(
                field,
                "does not apply to kind = \"flow_trace\" (the trace gives each flow's)",
            ));
        }
    }
    match (&t.trace, t.flows.is_empty()) {
        (Some(file), true) if !file.is_empty() => {}
        (None, false) => {
            for (i, f) in t.flows.iter().enumerate() {
                f.validate(&format!("{path}.flows[{i}]"), |h| host_names.contains(h))?;
            }
        }
        _ => return Err(c.fail("trace", "give exactly one of trace (a file) and flows")),
    }
    if !(64..=9216).contains(&t.frame_bytes) {
        return Err(c.fail(
            "frame_bytes",
            format!("must be in [64, 9216] (got {})", t.frame_bytes),
        ));
    }
    c.non_negative("start_s", t.start_s)
}

impl TrafficKind {
    pub(crate) fn name(&self) -> &'static str {
        match self {
            TrafficKind::Bernoulli => "bernoulli",
            TrafficKind::Cbr => "cbr",
            TrafficKind::Saturate => "saturate",
            TrafficKind::Flows => "flows",
            TrafficKind::FlowTrace => "flow_trace",
            TrafficKind::Incast => "incast",
        }
    }
}

impl Scenario {
    /// Makes relative trace and CDF file paths absolute (from `base_dir`, else the current
    /// directory), so the resolved scenario names the files that ran.
    pub(crate) fn make_paths_absolute(&mut self, base_dir: Option<&Path>) {
        let base = match base_dir {
            Some(b) => b.to_path_buf(),
            None => std::env::current_dir().unwrap_or_default(),
        };
        let absolute = |p: &mut String| {
            if !p.is_empty() && Path::new(p.as_str()).is_relative() {
                *p = base.join(p.as_str()).to_string_lossy().into_owned();
            }
        };
        for t in &mut self.traffic {
            if let Some(file) = t.trace.as_mut() {
                absolute(file);
            }
            if let Some(SizeSpec::Empirical {
                cdf_file: Some(file),
                ..
            }) = t.size.as_mut()
            {
                absolute(file);
            }
        }
    }
}

/// Mean of the bounded Pareto law with shape `a` on [l, h].
pub(crate) fn bounded_pareto_mean(a: f64, l: f64, h: f64) -> f64 {
    let norm = 1.0 - (l / h).powf(a);
    if (a - 1.0).abs() < 1e-12 {
        l * (h / l).ln() / norm
    } else {
        l.powf(a) / norm * a / (a - 1.0) * (l.powf(1.0 - a) - h.powf(1.0 - a))
    }
}

/// Mean of the piecewise-linear CDF: each segment contributes its probability mass times its
/// midpoint; mass at the first point counts at that size.
pub(crate) fn empirical_mean(points: &[[f64; 2]]) -> f64 {
    let mut mean = points[0][0] * points[0][1];
    for w in points.windows(2) {
        let ([x0, p0], [x1, p1]) = (w[0], w[1]);
        mean += (p1 - p0) * (x0 + x1) / 2.0;
    }
    mean
}
