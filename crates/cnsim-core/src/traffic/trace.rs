//! Flow trace files: CSV with a header `start_s,src,dst,size_bytes[,priority]` (hosts by
//! name), read as a workload and written by `cnsim trace`; and empirical size-CDF files of
//! `size_bytes cumulative_probability` lines.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::flows::FlowRow;
use crate::error::ConfigError;
use crate::scenario::flows::{MAX_FLOW_BYTES, MAX_PRIORITY};

/// One row of a trace file.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct TraceRow {
    start_s: f64,
    src: String,
    dst: String,
    size_bytes: f64,
    #[serde(default)]
    priority: u8,
}

/// Reads a trace; errors name the scenario field, the file, and the line.
pub fn read_csv(
    file: &Path,
    host_index: &HashMap<&str, u32>,
    field: &str,
) -> Result<Vec<FlowRow>, ConfigError> {
    let fail = |msg: String| ConfigError::field(format!("{field}.trace"), msg);
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(file)
        .map_err(|e| fail(format!("cannot read '{}': {e}", file.display())))?;
    let mut rows = Vec::new();
    for (i, rec) in reader.deserialize::<TraceRow>().enumerate() {
        let line = i + 2; // 1-based, after the header
        let at = |msg: String| fail(format!("'{}' line {line}: {msg}", file.display()));
        let r = rec.map_err(|e| at(csv_reason(&e)))?;
        let host = |name: &str| {
            host_index
                .get(name)
                .copied()
                .ok_or_else(|| at(format!("unknown host '{name}'")))
        };
        let (src, dst) = (host(&r.src)?, host(&r.dst)?);
        if src == dst {
            return Err(at(format!("host '{}' cannot send to itself", r.src)));
        }
        if !(r.start_s.is_finite() && r.start_s >= 0.0) {
            return Err(at(format!("start_s must be >= 0 (got {})", r.start_s)));
        }
        if !(1.0..=MAX_FLOW_BYTES).contains(&r.size_bytes) {
            return Err(at(format!(
                "size_bytes must be in [1, {MAX_FLOW_BYTES}] (got {})",
                r.size_bytes
            )));
        }
        if r.priority > MAX_PRIORITY {
            return Err(at(format!("priority must be in 0-{MAX_PRIORITY}")));
        }
        rows.push(FlowRow {
            start_s: r.start_s,
            src,
            dst,
            size_bytes: r.size_bytes.round() as u64,
            priority: r.priority,
            frame_bytes: 0,
        });
    }
    Ok(rows)
}

fn csv_reason(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => match err.field() {
            Some(col) => format!("column {}: {}", col + 1, err.kind()),
            None => err.kind().to_string(),
        },
        _ => e.to_string(),
    }
}

/// Writes a workload as a trace that `read_csv` reads back to the same rows (floats are
/// written in their shortest round-trip form).
pub fn write_csv(
    out: impl std::io::Write,
    rows: &[FlowRow],
    host_names: &[&str],
) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    for r in rows {
        w.serialize(TraceRow {
            start_s: r.start_s,
            src: host_names[r.src as usize].to_string(),
            dst: host_names[r.dst as usize].to_string(),
            size_bytes: r.size_bytes as f64,
            priority: r.priority,
        })?;
    }
    w.flush()
}

/// Reads `size_bytes cumulative_probability` lines (blank lines and `#` comments skipped).
pub fn read_cdf(file: &Path, field: &str) -> Result<Vec<[f64; 2]>, ConfigError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| ConfigError::field(field, format!("cannot read '{}': {e}", file.display())))?;
    let mut points = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let nums: Vec<f64> = line
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|_| {
                ConfigError::field(
                    field,
                    format!("'{}' line {}: expected two numbers", file.display(), i + 1),
                )
            })?;
        let [size, p] = nums[..] else {
            return Err(ConfigError::field(
                field,
                format!("'{}' line {}: expected two numbers", file.display(), i + 1),
            ));
        };
        points.push([size, p]);
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_trace_reads_back_identically() {
        let names = ["a", "b", "c"];
        let index: HashMap<&str, u32> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i as u32))
            .collect();
        let rows = vec![
            FlowRow {
                start_s: 0.1 + 0.2,
                src: 0,
                dst: 2,
                size_bytes: 60_123,
                priority: 3,
                frame_bytes: 0,
            },
            FlowRow {
                start_s: 1.0 / 3.0,
                src: 2,
                dst: 1,
                size_bytes: 1,
                priority: 0,
                frame_bytes: 0,
            },
        ];
        let mut buf = Vec::new();
        write_csv(&mut buf, &rows, &names).unwrap();
        let dir = std::env::temp_dir().join(format!("cnsim-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.csv");
        std::fs::write(&file, &buf).unwrap();
        assert_eq!(read_csv(&file, &index, "traffic[0]").unwrap(), rows);
        std::fs::write(&file, "start_s,src,dst,size_bytes\n0.5,a,zz,100\n").unwrap();
        let err = read_csv(&file, &index, "traffic[0]")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("traffic[0].trace:") && err.contains("line 2") && err.contains("'zz'"),
            "{err}"
        );
        std::fs::write(&file, "start_s,src,dst,size_bytes\nsoon,a,b,100\n").unwrap();
        let err = read_csv(&file, &index, "traffic[0]")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2") && err.contains("column 1"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
