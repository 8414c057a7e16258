//! `--set path=value`: edit the parsed TOML tree before it is deserialised, so overrides go
//! through exactly the same checks as the file.

use crate::error::ConfigError;

enum Segment<'a> {
    Key(&'a str),
    Index(&'a str, usize),
}

fn parse_path(path: &str) -> Result<Vec<Segment<'_>>, ConfigError> {
    let bad = |why: &str| ConfigError::field(path.to_string(), format!("bad override path: {why}"));
    if path.is_empty() {
        // No path to name: the error names the option instead of an empty field.
        return Err(ConfigError::field("set", "bad override path: empty"));
    }
    path.split('.')
        .map(|seg| match seg.split_once('[') {
            None if !seg.is_empty() => Ok(Segment::Key(seg)),
            None => Err(bad("empty segment")),
            Some((key, rest)) => {
                let idx = rest
                    .strip_suffix(']')
                    .and_then(|s| s.parse::<usize>().ok())
                    .ok_or_else(|| bad("expected name[index]"))?;
                Ok(Segment::Index(key, idx))
            }
        })
        .collect()
}

/// Parses `raw` as a TOML value (`0.3`, `true`, `[1, 2]`, `"text"`); anything else is a string.
fn parse_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t.remove("v").expect("key v was written"),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

/// Sets `path` (e.g. `traffic[0].load`, `congestion.qcn.w`) to `raw` in `root`, creating missing
/// tables on the way so defaulted fields can be set too.
pub(crate) fn apply_override(
    root: &mut toml::Table,
    path: &str,
    raw: &str,
) -> Result<(), ConfigError> {
    let segments = parse_path(path)?;
    let mut table = root;
    let (last, init) = segments
        .split_last()
        .expect("parse_path never returns empty");
    for seg in init {
        let slot = descend(table, seg, path)?;
        table = match slot {
            toml::Value::Table(t) => t,
            _ => {
                return Err(ConfigError::field(
                    path,
                    "override path goes through a non-table value",
                ))
            }
        };
    }
    let value = parse_value(raw);
    match last {
        Segment::Key(k) => {
            table.insert((*k).to_string(), value);
        }
        Segment::Index(..) => {
            *descend(table, last, path)? = value;
        }
    }
    Ok(())
}

fn descend<'t>(
    table: &'t mut toml::Table,
    seg: &Segment<'_>,
    path: &str,
) -> Result<&'t mut toml::Value, ConfigError> {
    match seg {
        Segment::Key(k) => Ok(table
            .entry((*k).to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))),
        Segment::Index(k, i) => {
            let arr = table
                .get_mut(*k)
                .and_then(|v| v.as_array_mut())
                .ok_or_else(|| ConfigError::field(path, format!("'{k}' is not a list")))?;
            let len = arr.len();
            arr.get_mut(*i).ok_or_else(|| {
                ConfigError::field(path, format!("index {i} out of range ('{k}' has {len})"))
            })
        }
    }
}
