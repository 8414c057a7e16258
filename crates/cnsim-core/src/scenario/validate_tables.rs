//! The checks of one table: a host, a switch, a rate schedule, watermarks, the report and its
//! plots. `validate.rs` walks the scenario and calls them; each failure names its field's path.

use std::collections::HashSet;

use super::*;
use crate::error::Check;

impl HostSpec {
    pub(super) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        if let Some(b) = self.nic_buffer_bytes {
            c.bytes_positive("nic_buffer_bytes", b)?;
        }
        if let Some(r) = self.rx_rate_bps {
            c.rate("rx_rate_bps", r)?;
        }
        validate_schedule(&self.rx_schedule, &format!("{path}.rx_schedule"))?;
        if let Some(b) = self.rx_buffer_bytes {
            c.bytes_positive("rx_buffer_bytes", b)?;
        }
        if let Some(w) = &self.rx_pause {
            validate_watermarks(w.xoff_bytes, w.xon_bytes, &format!("{path}.rx_pause"))?;
            if w.quanta == 0 {
                return Err(c.fail("rx_pause.quanta", "must be > 0 (0 is XON)"));
            }
        }
        let has_rx_server = self.rx_rate_bps.is_some() || !self.rx_schedule.is_empty();
        if !has_rx_server && (self.rx_buffer_bytes.is_some() || self.rx_pause.is_some()) {
            let field = if self.rx_pause.is_some() {
                "rx_pause"
            } else {
                "rx_buffer_bytes"
            };
            return Err(c.fail(
                field,
                "needs rx_rate_bps or rx_schedule (a receiver without a service rate never queues)",
            ));
        }
        c.time_non_negative("response_delay_s", self.response_delay_s)
    }
}

fn validate_schedule(steps: &[RateStep], path: &str) -> Result<(), ConfigError> {
    let mut last = -1.0;
    for (j, s) in steps.iter().enumerate() {
        let sp = format!("{path}[{j}]");
        let c = Check { path: &sp };
        c.time_non_negative("at_s", s.at_s)?;
        c.rate("rate_bps", s.rate_bps)?;
        if s.at_s < last {
            return Err(c.fail("at_s", "steps must be in time order"));
        }
        last = s.at_s;
    }
    Ok(())
}

fn validate_watermarks(xoff: f64, xon: f64, path: &str) -> Result<(), ConfigError> {
    let c = Check { path };
    c.bytes_positive("xoff_bytes", xoff)?;
    c.non_negative("xon_bytes", xon)?;
    if xon > xoff {
        return Err(c.fail(
            "xon_bytes",
            format!("must be <= xoff_bytes ({xoff}) (got {xon})"),
        ));
    }
    Ok(())
}

/// Largest `shared_buffer_alpha`: beyond it the threshold no longer limits a queue before the
/// buffer is full (Broadcom's settings go from 1/128 to 8; 64 as PFC's `alpha`).
const MAX_SHARED_BUFFER_ALPHA: f64 = 64.0;

impl SwitchSpec {
    pub(super) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.time_non_negative("latency_s", self.latency_s)?;
        for (field, v) in [
            ("shared_buffer_bytes", self.shared_buffer_bytes),
            ("output_buffer_bytes", self.output_buffer_bytes),
            ("input_buffer_bytes", self.input_buffer_bytes),
        ] {
            if let Some(v) = v {
                c.bytes_positive(field, v)?;
            }
        }
        if let Some(alpha) = self.shared_buffer_alpha {
            c.in_open_closed("shared_buffer_alpha", alpha, 0.0, MAX_SHARED_BUFFER_ALPHA)?;
            if self.shared_buffer_bytes.is_none() {
                return Err(c.fail(
                    "shared_buffer_alpha",
                    "a dynamic threshold needs shared_buffer_bytes (the buffer it shares)",
                ));
            }
        }
        if let Some(p) = &self.pause {
            validate_watermarks(p.xoff_bytes, p.xon_bytes, &format!("{path}.pause"))?;
            if p.quanta == 0 {
                return Err(c.fail("pause.quanta", "must be > 0 (0 is XON)"));
            }
        }
        Ok(())
    }
}

impl ReportSpec {
    pub(super) fn validate(&self, path: &str, duration_s: f64) -> Result<(), ConfigError> {
        let c = Check { path };
        c.time_positive("probe_interval_s", self.probe_interval_s)?;
        check_size_edges(&c, &self.slowdown_size_edges_bytes)?;
        if duration_s / self.probe_interval_s > 1e7 {
            return Err(c.fail(
                "probe_interval_s",
                "more than 10 million probes per run; raise it",
            ));
        }
        if let Some([a, b]) = self.window_s {
            if !(a >= 0.0 && a < b && b <= duration_s) {
                return Err(c.fail(
                    "window_s",
                    format!("must satisfy 0 <= start < end <= duration_s (got [{a}, {b}])"),
                ));
            }
        }
        if let Some(r) = &self.recovery {
            let rp = format!("{path}.recovery");
            let rc = Check { path: &rp };
            rc.time_non_negative("after_s", r.after_s)?;
            rc.positive("capacity_bps", r.capacity_bps)?;
            rc.in_open_closed("band", r.band, 0.0, 1.0)?;
            if let Some(h) = r.hold_s {
                rc.time_non_negative("hold_s", h)?;
            }
            check_metric(&rc, "metric", &r.metric)?;
        }
        if let Some(t) = &self.transient {
            let tp = format!("{path}.transient");
            let tc = Check { path: &tp };
            check_metric(&tc, "metric", &t.metric)?;
            tc.positive("tol", t.tol)?;
            tc.in_open_closed("max_fraction", t.max_fraction, 0.0, 1.0)?;
            if let Some(r) = t.rtt_s {
                tc.time_positive("rtt_s", r)?;
            }
            for (field, v) in [("start_s", t.start_s), ("end_s", t.end_s)] {
                if let Some(v) = v {
                    tc.time_non_negative(field, v)?;
                }
            }
        }
        if let Some(s) = &self.steady {
            let sp = format!("{path}.steady");
            let sc = Check { path: &sp };
            // Not checked against duration_s (as [report.transient]): a run shortened with
            // --set duration_s keeps working, and the analysis warns of an empty window.
            sc.time_non_negative("start_s", s.start_s)?;
            if let Some(end) = s.end_s {
                if end <= s.start_s {
                    return Err(sc.fail(
                        "end_s",
                        format!("must be above start_s (got start {}, end {end})", s.start_s),
                    ));
                }
            }
            if s.port.is_empty() {
                return Err(sc.fail("port", "must name a port, e.g. \"sw->recv\""));
            }
        }
        if self.min_window_samples == 0 {
            return Err(c.fail("min_window_samples", "must be >= 1"));
        }
        for (i, h) in self.headline.iter().enumerate() {
            let hp = format!("{path}.headline[{i}]");
            h.validate(&Check { path: &hp })?;
        }
        let mut files = HashSet::new();
        for (i, p) in self.plots.iter().enumerate() {
            let pp = format!("{path}.plots[{i}]");
            let pc = Check { path: &pp };
            check_metric(&pc, "metric", &p.metric)?;
            check_plot_name(&pc, &p.name, &mut files)?;
        }
        Ok(())
    }
}

impl HeadlineSpec {
    fn validate(&self, c: &Check) -> Result<(), ConfigError> {
        if self.label.trim().is_empty() {
            return Err(c.fail("label", "must say what the number is"));
        }
        if self.metric.trim().is_empty() {
            return Err(c.fail(
                "metric",
                format!(
                    "must be a path into summary.json such as \"metrics.recovery_time_s\" (got \"{}\")",
                    self.metric
                ),
            ));
        }
        if let Some(r) = self.reference {
            if !r.is_finite() {
                return Err(c.fail("reference", format!("must be a finite number (got {r})")));
            }
        }
        Ok(())
    }
}

fn check_metric(c: &Check, field: &str, metric: &str) -> Result<(), ConfigError> {
    if METRICS.contains(&metric) {
        Ok(())
    } else {
        Err(c.fail(
            field,
            format!("unknown metric '{metric}' (known: {})", METRICS.join(", ")),
        ))
    }
}

/// A plot's name is its file name (plots/<name>.png): two plots with one file would leave only
/// the last one, so names must differ once made safe for a path.
fn check_plot_name(c: &Check, name: &str, files: &mut HashSet<String>) -> Result<(), ConfigError> {
    // Same rule as plots.file_stem: each run of other characters becomes one '_'.
    let mut stem = String::new();
    let mut in_run = false;
    for ch in name.chars() {
        if ch.is_ascii_alphanumeric() || "_.-".contains(ch) {
            stem.push(ch);
            in_run = false;
        } else if !in_run {
            stem.push('_');
            in_run = true;
        }
    }
    let stem = stem.trim_matches(|ch| ch == '.' || ch == '_');
    if stem.is_empty() {
        return Err(c.fail(
            "name",
            format!("{name:?} gives no file name (use letters, digits, '_', '-', '.')"),
        ));
    }
    if !files.insert(stem.to_string()) {
        return Err(c.fail(
            "name",
            format!("{name:?} is the file plots/{stem}.png of an earlier plot too"),
        ));
    }
    Ok(())
}

/// `[report] slowdown_size_edges_bytes`: finite, positive, strictly increasing.
fn check_size_edges(c: &Check, edges: &[f64]) -> Result<(), ConfigError> {
    let field = "slowdown_size_edges_bytes";
    for (i, &e) in edges.iter().enumerate() {
        if !(e.is_finite() && e > 0.0) {
            return Err(c.fail(
                field,
                format!("edges must be positive byte counts (got {e})"),
            ));
        }
        if i > 0 && e <= edges[i - 1] {
            return Err(c.fail(
                field,
                format!(
                    "edges must increase strictly (got {} then {e})",
                    edges[i - 1]
                ),
            ));
        }
    }
    Ok(())
}
