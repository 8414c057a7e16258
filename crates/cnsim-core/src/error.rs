//! Errors a user can cause: every message names the field (as a path such as
//! `traffic[2].load`) and the reason.

use thiserror::Error;

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

/// Collects validation checks in one place so each reads as one line.
pub struct Check<'a> {
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

    pub fn positive(&self, field: &str, v: f64) -> Result<(), ConfigError> {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(ConfigError::field(
                self.at(field),
                format!("must be > 0 (got {v})"),
            ))
        }
    }

    pub fn non_negative(&self, field: &str, v: f64) -> Result<(), ConfigError> {
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
    pub fn in_open_closed(&self, field: &str, v: f64, lo: f64, hi: f64) -> Result<(), ConfigError> {
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
    pub fn in_closed(&self, field: &str, v: f64, lo: f64, hi: f64) -> Result<(), ConfigError> {
        if v.is_finite() && v >= lo && v <= hi {
            Ok(())
        } else {
            Err(ConfigError::field(
                self.at(field),
                format!("must be in [{lo}, {hi}] (got {v})"),
            ))
        }
    }

    pub fn fail(&self, field: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError::field(self.at(field), reason)
    }
}
