//! Errors a user can cause: every message names the field (as a path such as
//! `traffic[2].load`) and the reason.

use thiserror::Error;

use crate::time::{MAX_RATE_BPS, MAX_TIME_S, MIN_RATE_BPS, MIN_TIME_S};

/// Largest byte count a field may give: 2^53, the largest integer an f64 holds exactly (byte
/// fields are compared with integer counters).
pub(crate) const MAX_BYTES: f64 = 9_007_199_254_740_992.0;

/// Largest frame (a jumbo frame): data frames, control frames and the per-frame wire overhead.
pub(crate) const MAX_FRAME_BYTES: u32 = 9216;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ConfigError {
    /// The text is not valid TOML, or a value has the wrong type / an unknown key.
    #[error("{path}: {reason}")]
    Field { path: String, reason: String },
    /// Malformed TOML that could not be attributed to a field.
    #[error("scenario is not valid TOML: {0}")]
    Syntax(String),
}

impl ConfigError {
    pub fn field(path: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError::Field {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// The path of the offending field, when known.
    pub fn path(&self) -> Option<&str> {
        match self {
            ConfigError::Field { path, .. } => Some(path),
            ConfigError::Syntax(_) => None,
        }
    }
}

/// A TOML parse error as one line: the field's path when the offending line is a `key = value`
/// (a number too large for TOML, a bad value), else the line and column; never the parser's
/// multi-line excerpt.
pub(crate) fn toml_syntax_error(text: &str, e: &toml::de::Error) -> ConfigError {
    let message = e.message().trim_end().replace('\n', "; ");
    let Some(span) = e.span() else {
        return ConfigError::Syntax(message);
    };
    let start = span.start.min(text.len());
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    let where_ = format!("line {line}, column {column}");
    match field_path_at(text, line) {
        Some(path) => ConfigError::field(path, format!("not valid TOML: {message} ({where_})")),
        None => ConfigError::Syntax(format!("{where_}: {message}")),
    }
}

/// The dotted path of the `key = value` on 1-based `line`, from the table headers above it
/// (`[[traffic]]` counted into `traffic[i]`); None when the line is not a simple assignment.
fn field_path_at(text: &str, line: usize) -> Option<String> {
    let is_key = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    };
    let mut prefix = String::new();
    let mut arrays: std::collections::HashMap<String, usize> = Default::default();
    let mut target = None;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if i + 1 == line {
            target = Some(l);
            break;
        }
        if let Some(name) = l.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = name.trim().to_string();
            let n = arrays.entry(name.clone()).or_insert(0);
            prefix = format!("{name}[{n}]");
            *n += 1;
        } else if let Some(name) = l.strip_prefix('[').and_then(|r| r.split(']').next()) {
            prefix = name.trim().to_string();
        }
    }
    let (key, _) = target?.split_once('=')?;
    let key = key.trim();
    if !is_key(key) {
        return None;
    }
    Some(if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    })
}

/// A number for a message: plain when short (1500, 0.25), in exponent form when tiny or huge
/// (1e-17, 1e6, 1e300) so the message stays one readable line.
pub(crate) fn num(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() || (1e-4..1e6).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// Collects validation checks in one place so each reads as one line.
pub(crate) struct Check<'a> {
    pub path: &'a str,
}

impl Check<'_> {
    fn at(&self, field: &str) -> String {
        if self.path.is_empty() {
            field.to_string()
        } else {
            format!("{}.{}", self.path, field)
        }
    }

    pub(crate) fn positive(&self, field: &str, v: f64) -> Result<(), ConfigError> {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(ConfigError::field(
                self.at(field),
                format!("must be > 0 (got {v})"),
            ))
        }
    }

    pub(crate) fn non_negative(&self, field: &str, v: f64) -> Result<(), ConfigError> {
        if v.is_finite() && v >= 0.0 {
            Ok(())
        } else {
            Err(ConfigError::field(
                self.at(field),
                format!("must be >= 0 (got {v})"),
            ))
        }
    }

    /// `lo < v <= hi` (for loads and probabilities that may not be zero).
    pub(crate) fn in_open_closed(
        &self,
        field: &str,
        v: f64,
        lo: f64,
        hi: f64,
    ) -> Result<(), ConfigError> {
        if v.is_finite() && v > lo && v <= hi {
            Ok(())
        } else {
            Err(ConfigError::field(
                self.at(field),
                format!("must be in ({lo}, {hi}] (got {v})"),
            ))
        }
    }

    /// `lo <= v <= hi`.
    pub(crate) fn in_closed(
        &self,
        field: &str,
        v: f64,
        lo: f64,
        hi: f64,
    ) -> Result<(), ConfigError> {
        if v.is_finite() && v >= lo && v <= hi {
            Ok(())
        } else {
            Err(ConfigError::field(
                self.at(field),
                format!("must be in [{lo}, {hi}] (got {v})"),
            ))
        }
    }

    /// A time that must be > 0: between the clock's resolution and `MAX_TIME_S`.
    pub(crate) fn time_positive(&self, field: &str, v: f64) -> Result<(), ConfigError> {
        self.positive(field, v)?;
        if v.is_finite() && (MIN_TIME_S..=MAX_TIME_S).contains(&v) {
            Ok(())
        } else {
            Err(self.fail(
                field,
                format!(
                    "must be in [{}, {}] s (time counts whole picoseconds; got {})",
                    num(MIN_TIME_S),
                    num(MAX_TIME_S),
                    num(v)
                ),
            ))
        }
    }

    /// A time that may be 0 (a delay, a start): 0, or as `time_positive`.
    pub(crate) fn time_non_negative(&self, field: &str, v: f64) -> Result<(), ConfigError> {
        self.non_negative(field, v)?;
        if v == 0.0 {
            return Ok(());
        }
        if v.is_finite() && (MIN_TIME_S..=MAX_TIME_S).contains(&v) {
            Ok(())
        } else {
            Err(self.fail(
                field,
                format!(
                    "must be 0 or in [{}, {}] s (time counts whole picoseconds; got {})",
                    num(MIN_TIME_S),
                    num(MAX_TIME_S),
                    num(v)
                ),
            ))
        }
    }

    /// A service rate (link, receiver, CBR source): `MIN_RATE_BPS..=MAX_RATE_BPS`.
    pub(crate) fn rate(&self, field: &str, v: f64) -> Result<(), ConfigError> {
        self.positive(field, v)?;
        self.in_range(field, v, MIN_RATE_BPS, MAX_RATE_BPS, "b/s")
    }

    /// A rate step or increment that may be 0: `0..=MAX_RATE_BPS`.
    pub(crate) fn rate_non_negative(&self, field: &str, v: f64) -> Result<(), ConfigError> {
        self.non_negative(field, v)?;
        self.in_range(field, v, 0.0, MAX_RATE_BPS, "b/s")
    }

    /// A byte count that must be > 0: `(0, MAX_BYTES]`.
    pub(crate) fn bytes_positive(&self, field: &str, v: f64) -> Result<(), ConfigError> {
        self.positive(field, v)?;
        if v.is_finite() && v > 0.0 && v <= MAX_BYTES {
            Ok(())
        } else {
            Err(self.fail(
                field,
                format!("must be in (0, 2^53] bytes (got {})", num(v)),
            ))
        }
    }

    /// `lo <= v <= hi` with a unit in the message.
    pub(crate) fn in_range(
        &self,
        field: &str,
        v: f64,
        lo: f64,
        hi: f64,
        unit: &str,
    ) -> Result<(), ConfigError> {
        if v.is_finite() && v >= lo && v <= hi {
            Ok(())
        } else {
            Err(self.fail(
                field,
                format!(
                    "must be in [{}, {}] {unit} (got {})",
                    num(lo),
                    num(hi),
                    num(v)
                ),
            ))
        }
    }

    pub(crate) fn fail(&self, field: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError::field(self.at(field), reason)
    }
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown variant") with the closest
/// valid name suggested, when one is close enough to be a misspelling:
/// "... (did you mean `qeq_bytes`?)".
pub(crate) fn with_suggestion(message: String) -> String {
    let Some(suggestion) = closest_expected(&message) else {
        return message;
    };
    format!("{message} (did you mean `{suggestion}`?)")
}

fn closest_expected(message: &str) -> Option<&str> {
    let rest = (message.strip_prefix("unknown field `"))
        .or_else(|| message.strip_prefix("unknown variant `"))?;
    let (given, rest) = rest.split_once('`')?;
    let (_, expected) = rest.split_once("expected one of ")?;
    let names = expected.split(", ").map(|n| n.trim_matches('`'));
    // Normalised Damerau-Levenshtein similarity: a typo or two in a name, not another name.
    let (best, score) = names
        .map(|name| (name, strsim::normalized_damerau_levenshtein(given, name)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    (score >= 0.7).then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_name_gets_the_closest_valid_one() {
        let m = "unknown field `qeq_byts`, expected one of `qeq_bytes`, `w`, `fb_bits`";
        assert_eq!(
            with_suggestion(m.into()),
            format!("{m} (did you mean `qeq_bytes`?)")
        );
        let v = "unknown variant `dcqnc`, expected one of `none`, `qcn`, `dcqcn`, `e2cm`";
        assert!(with_suggestion(v.into()).ends_with("(did you mean `dcqcn`?)"));
        // Transposed letters count as one edit.
        let t = "unknown field `rtae_bps`, expected one of `rate_bps`, `delay_s`";
        assert!(with_suggestion(t.into()).ends_with("(did you mean `rate_bps`?)"));
    }

    #[test]
    fn an_unrelated_name_or_another_message_gets_no_guess() {
        let far = "unknown field `colour`, expected one of `rate_bps`, `delay_s`";
        assert_eq!(with_suggestion(far.into()), far);
        let other = "invalid type: string \"100G\", expected f64";
        assert_eq!(with_suggestion(other.into()), other);
    }
}
