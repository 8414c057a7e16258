//! Flow trace files: CSV with a header `start_s,src,dst,size_bytes[,priority]`, or Parquet
//! with those columns (hosts by name), read as a workload; CSV written by `cnsim trace` (size
//! CDF files: `cdf.rs`).

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::flows::FlowRow;
use crate::error::ConfigError;
use crate::scenario::flows::{MAX_FLOW_BYTES, MAX_PRIORITY};
use crate::scenario::Transport;

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

/// A trace's columns, in `TraceRow`'s order (the header `write_csv` writes).
const TRACE_COLUMNS: [&str; 5] = ["start_s", "src", "dst", "size_bytes", "priority"];

/// Reads a trace, Parquet if the file name ends in `.parquet`, else CSV.
pub(crate) fn read(
    file: &Path,
    host_index: &HashMap<&str, u32>,
    field: &str,
) -> Result<Vec<FlowRow>, ConfigError> {
    let is_parquet = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"));
    if is_parquet {
        read_parquet(file, host_index, field)
    } else {
        read_csv(file, host_index, field)
    }
}

/// The columns of a trace, the last optional.
const COLUMNS: [&str; 5] = ["start_s", "src", "dst", "size_bytes", "priority"];

/// Reads a CSV trace; errors name the scenario field, the file, and the file's own line (the
/// header is line 1; blank lines count).
pub(crate) fn read_csv(
    file: &Path,
    host_index: &HashMap<&str, u32>,
    field: &str,
) -> Result<Vec<FlowRow>, ConfigError> {
    let fail = |msg: String| ConfigError::field(format!("{field}.trace"), msg);
    let name = file.display();
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_path(file)
        .map_err(|e| fail(format!("cannot read '{name}': {e}")))?;
    let headers = reader
        .headers()
        .map_err(|e| {
            fail(format!(
                "'{name}' line {}: {}",
                error_line(&e, 1),
                csv_reason(&e)
            ))
        })?
        .clone();
    check_header(&headers).map_err(|msg| fail(format!("'{name}' line 1 (the header): {msg}")))?;
    let mut rows = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(|e| {
            fail(format!(
                "'{name}' line {}: {}",
                error_line(&e, 0),
                csv_reason(&e)
            ))
        })?;
        let line = rec.position().map_or(0, csv::Position::line);
        let at = |msg: String| fail(format!("'{name}' line {line}: {msg}"));
        let r: TraceRow = rec
            .deserialize(Some(&headers))
            .map_err(|e| at(csv_reason(&e)))?;
        rows.push(r.check(host_index).map_err(at)?);
    }
    Ok(rows)
}

/// The header names the four columns (and maybe `priority`), nothing else, each once.
fn check_header(headers: &csv::StringRecord) -> Result<(), String> {
    let expected = "expected start_s,src,dst,size_bytes[,priority]";
    for (i, col) in headers.iter().enumerate() {
        if !COLUMNS.contains(&col) {
            return Err(format!("unknown column '{col}' ({expected})"));
        }
        if headers.iter().take(i).any(|c| c == col) {
            return Err(format!("column '{col}' appears twice"));
        }
    }
    match COLUMNS[..4]
        .iter()
        .find(|c| !headers.iter().any(|h| h == **c))
    {
        Some(missing) => Err(format!("missing column '{missing}' ({expected})")),
        None => Ok(()),
    }
}

/// The file line of a CSV error, or `otherwise` when it carries none.
fn error_line(e: &csv::Error, otherwise: u64) -> u64 {
    e.position().map_or(otherwise, csv::Position::line)
}

impl TraceRow {
    /// The row as a flow, or why it is not one.
    fn check(self, host_index: &HashMap<&str, u32>) -> Result<FlowRow, String> {
        let host = |name: &str| {
            host_index
                .get(name)
                .copied()
                .ok_or_else(|| format!("unknown host '{name}'"))
        };
        let (src, dst) = (host(&self.src)?, host(&self.dst)?);
        if src == dst {
            return Err(format!("host '{}' cannot send to itself", self.src));
        }
        if !(self.start_s.is_finite() && self.start_s >= 0.0) {
            return Err(format!("start_s must be >= 0 (got {})", self.start_s));
        }
        if !(1.0..=MAX_FLOW_BYTES).contains(&self.size_bytes) {
            return Err(format!(
                "size_bytes must be in [1, {MAX_FLOW_BYTES}] (got {})",
                self.size_bytes
            ));
        }
        if self.priority > MAX_PRIORITY {
            return Err(format!("priority must be in 0-{MAX_PRIORITY}"));
        }
        Ok(FlowRow {
            start_s: self.start_s,
            src,
            dst,
            size_bytes: self.size_bytes.round() as u64,
            priority: self.priority,
            frame_bytes: 0,
            transport: Transport::None,
            writes: None,
        })
    }
}

/// Reads a Parquet trace (columns by name; numbers of any integer or float type, hosts as
/// strings, dictionary-encoded or not); errors name the field, the file and the row.
pub(crate) fn read_parquet(
    file: &Path,
    host_index: &HashMap<&str, u32>,
    field: &str,
) -> Result<Vec<FlowRow>, ConfigError> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let fail = |msg: String| ConfigError::field(format!("{field}.trace"), msg);
    let name = file.display();
    let reader = std::fs::File::open(file)
        .map_err(|e| e.to_string())
        .and_then(|f| SerializedFileReader::new(f).map_err(|e| e.to_string()))
        .map_err(|e| fail(format!("cannot read '{name}': {e}")))?;
    let rows = reader
        .get_row_iter(None)
        .map_err(|e| fail(format!("cannot read '{name}': {e}")))?;
    let mut out = Vec::new();
    for (i, row) in rows.enumerate() {
        let at = |msg: String| fail(format!("'{name}' row {}: {msg}", i + 1));
        let row = row.map_err(|e| at(e.to_string()))?;
        out.push(
            parquet_row(&row)
                .and_then(|r| r.check(host_index))
                .map_err(at)?,
        );
    }
    Ok(out)
}

fn parquet_row(row: &parquet::record::Row) -> Result<TraceRow, String> {
    use parquet::record::Field;
    let mut r = TraceRow {
        start_s: f64::NAN,
        src: String::new(),
        dst: String::new(),
        size_bytes: f64::NAN,
        priority: 0,
    };
    let number = |col: &str, f: &Field| -> Result<f64, String> {
        match f {
            Field::Double(x) => Ok(*x),
            Field::Float(x) => Ok(f64::from(*x)),
            Field::Long(x) => Ok(*x as f64),
            Field::Int(x) => Ok(f64::from(*x)),
            Field::Short(x) => Ok(f64::from(*x)),
            Field::Byte(x) => Ok(f64::from(*x)),
            Field::ULong(x) => Ok(*x as f64),
            Field::UInt(x) => Ok(f64::from(*x)),
            Field::UShort(x) => Ok(f64::from(*x)),
            Field::UByte(x) => Ok(f64::from(*x)),
            other => Err(format!("column {col}: expected a number (got {other})")),
        }
    };
    let text = |col: &str, f: &Field| match f {
        Field::Str(s) => Ok(s.clone()),
        other => Err(format!("column {col}: expected a host name (got {other})")),
    };
    for (col, f) in row.get_column_iter() {
        match col.as_str() {
            "start_s" => r.start_s = number(col, f)?,
            "src" => r.src = text(col, f)?,
            "dst" => r.dst = text(col, f)?,
            "size_bytes" => r.size_bytes = number(col, f)?,
            "priority" => {
                let p = number(col, f)?;
                if !(0.0..=f64::from(MAX_PRIORITY)).contains(&p) || p.fract() != 0.0 {
                    return Err(format!("priority must be in 0-{MAX_PRIORITY} (got {p})"));
                }
                r.priority = p as u8;
            }
            other => return Err(format!("unknown column '{other}'")),
        }
    }
    for (col, missing) in [
        ("start_s", r.start_s.is_nan()),
        ("src", r.src.is_empty()),
        ("dst", r.dst.is_empty()),
        ("size_bytes", r.size_bytes.is_nan()),
    ] {
        if missing {
            return Err(format!("missing column {col}"));
        }
    }
    Ok(r)
}

fn csv_reason(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Deserialize { err, .. } => deserialize_reason(err),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields where the header has {expected_len}"),
        _ => e.to_string(),
    }
}

fn deserialize_reason(err: &csv::DeserializeError) -> String {
    match err.field() {
        Some(col) => format!("column {}: {}", col + 1, err.kind()),
        None => err.kind().to_string(),
    }
}

/// Writes a workload as a trace that `read_csv` reads back to the same rows (floats are
/// written in their shortest round-trip form).
pub(crate) fn write_csv(
    out: impl std::io::Write,
    rows: &[FlowRow],
    host_names: &[&str],
) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    if rows.is_empty() {
        // The writer writes the header with the first row: a workload without flows would
        // leave an empty file, which no `flow_trace` entry reads. Its header alone is a trace.
        w.write_record(TRACE_COLUMNS)?;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_without_flows_is_its_header() {
        let mut out = Vec::new();
        write_csv(&mut out, &[], &["a"]).expect("written");
        assert_eq!(out, b"start_s,src,dst,size_bytes,priority\n");
        // And the header of a trace with rows is the same.
        let row = FlowRow {
            start_s: 0.5,
            src: 0,
            dst: 0,
            size_bytes: 1000,
            priority: 0,
            frame_bytes: 1500,
            transport: Default::default(),
            writes: None,
        };
        let mut out = Vec::new();
        write_csv(&mut out, &[row], &["a"]).expect("written");
        let text = String::from_utf8(out).expect("utf-8");
        assert_eq!(
            text.lines().next(),
            Some("start_s,src,dst,size_bytes,priority")
        );
    }

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
                transport: Transport::None,
                writes: None,
            },
            FlowRow {
                start_s: 1.0 / 3.0,
                src: 2,
                dst: 1,
                size_bytes: 1,
                priority: 0,
                frame_bytes: 0,
                transport: Transport::None,
                writes: None,
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

    fn read_text(text: &str, tag: &str) -> Result<Vec<FlowRow>, String> {
        let index: HashMap<&str, u32> = [("a", 0), ("b", 1)].into_iter().collect();
        let dir = std::env::temp_dir().join(format!("cnsim-trace-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.csv");
        std::fs::write(&file, text).unwrap();
        let got = read_csv(&file, &index, "traffic[0]").map_err(|e| e.to_string());
        std::fs::remove_dir_all(&dir).unwrap();
        got
    }

    #[test]
    fn a_bad_header_is_line_1_and_names_the_columns() {
        let err = read_text("start_s,src,dst,size\n0.5,a,b,100\n", "h1").unwrap_err();
        assert!(
            err.contains("line 1 (the header): unknown column 'size'"),
            "{err}"
        );
        assert!(
            err.contains("start_s,src,dst,size_bytes[,priority]"),
            "{err}"
        );
        let err = read_text("start_s,src,dst\n0.5,a,b\n", "h2").unwrap_err();
        assert!(
            err.contains("line 1 (the header): missing column 'size_bytes'"),
            "{err}"
        );
        let err = read_text("start_s,src,src,size_bytes\n", "h3").unwrap_err();
        assert!(
            err.contains("line 1 (the header): column 'src' appears twice"),
            "{err}"
        );
    }

    #[test]
    fn errors_give_the_files_own_line_past_blank_lines() {
        let text = "start_s,src,dst,size_bytes\n0.1,a,b,100\n\n\n0.2,a,b,100\n0.3,a,zz,100\n";
        let err = read_text(text, "l1").unwrap_err();
        assert!(err.contains("line 6: unknown host 'zz'"), "{err}");
        let err = read_text("start_s,src,dst,size_bytes\n0.1,a,b,100\n0.2,a,b\n", "l2");
        let err = err.unwrap_err();
        assert!(
            err.contains("line 3: 3 fields where the header has 4"),
            "{err}"
        );
        let ok = read_text("start_s,src,dst,size_bytes,priority\n0.1,a,b,100,3\n", "l3");
        assert_eq!(ok.unwrap()[0].priority, 3);
    }
}
