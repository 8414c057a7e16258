//! BCN's parameters, TOML table `[congestion.bcn]` (ECM's are [`BcnParams::ecm`]): their
//! defaults, their checks and the name of the variant they make.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cc::check_frame_bytes;
use crate::error::{Check, ConfigError};
use crate::time::MAX_RATE_BPS;

/// TOML table `[congestion.bcn]`. All sizes in bytes in the file; feedback arithmetic in fb
/// units of `fb_unit_bytes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct BcnParams {
    /// Size of one feedback unit: 64 (seed 000 pages) or 1500 (seed 002 frames).
    pub(crate) fb_unit_bytes: f64,
    /// Equilibrium queue Qeq (24,000 B = 375 pages = 16 frames).
    pub(crate) qeq_bytes: f64,
    /// Weight W of Qdelta.
    pub(crate) w: f64,
    pub(crate) sampling: BcnSampling,
    /// Clamp of Qoff in multiples of Qeq.
    pub(crate) qoff_range: [f64; 2],
    /// Clamp of Qdelta in multiples of Qeq.
    pub(crate) qdelta_range: [f64; 2],
    /// BCN-MAX is on when set: at q >= this the CP sends -Fbmax.
    pub(crate) bcn_max_threshold_bytes: Option<f64>,
    /// Severe-congestion threshold Qsc for BCN(0,0) and oversampling.
    pub(crate) qsc_bytes: Option<f64>,
    /// Send BCN(0,0) when q >= Qsc.
    pub(crate) bcn00: bool,
    pub(crate) bcn00_reaction: Bcn00Reaction,
    /// Upper end of the random stop time of the "stop" reaction.
    pub(crate) bcn00_stop_max_s: f64,
    /// Sampling probability while q >= Qsc (seed 001: 0.10, 0.20, 0.30).
    pub(crate) oversample_probability: Option<f64>,
    /// Rate unit Ru of the increase.
    pub(crate) ru_bps: f64,
    /// Increase gain per fb unit; `None`: from the formula (see [`BcnParams::gi_for`]).
    pub(crate) gi: Option<f64>,
    /// Decrease gain per fb unit; `None`: 0.5/((1+2W)*Qeq).
    pub(crate) gd: Option<f64>,
    /// Factor on the Gi formula (not on an explicit `gi`).
    pub(crate) gi_scale: f64,
    /// How the Gi formula uses (1+2W)*Qeq: divides by it (seed 001, the default) or multiplies
    /// by it (as seed 003 prints Gi0); see [`GiFormula`].
    pub(crate) gi_formula: GiFormula,
    pub(crate) rmin_bps: f64,
    /// ECM self-increase without feedback.
    pub(crate) drift: bool,
    pub(crate) drift_interval_s: f64,
    /// Additive increase per drift interval.
    pub(crate) drift_step_bps: f64,
    /// Size of a BCN message on the wire.
    pub(crate) bcn_bytes: u32,
}

/// How the CP picks the frames it samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum BcnSampling {
    /// One sample every `interval_bytes` +- `jitter_bytes` (uniform) of enqueued data.
    Bytes {
        #[serde(default = "default_interval_bytes")]
        interval_bytes: f64,
        #[serde(default = "default_jitter_bytes")]
        jitter_bytes: f64,
    },
    /// Every data frame is sampled with probability `p` (2% ~ one per 75 KB of 1500 B frames).
    Probability {
        #[serde(default = "default_sampling_p")]
        p: f64,
    },
}

fn default_interval_bytes() -> f64 {
    150_000.0
}
fn default_jitter_bytes() -> f64 {
    5_000.0
}
fn default_sampling_p() -> f64 {
    0.02
}

impl Default for BcnSampling {
    fn default() -> Self {
        BcnSampling::Bytes {
            interval_bytes: default_interval_bytes(),
            jitter_bytes: default_jitter_bytes(),
        }
    }
}

/// How the Gi formula combines the rate term with (1+2W)*Qeq.
///
/// Seed 001 (and the BCN baseline) divide: Gi = (line/10)/Ru / ((1+2W)*Qeq). Seed 003 prints
/// ECM's Gi0 = (R_link/R_unit) * ((2W+1)*Qeq), a product, but its E2CM line for the same
/// quantity divides, and the product is dimensionally a gain times Qeq^2: with seed 003's
/// numbers (M = 150 KB, Qeq 586 pages) it gives Gi = 2.9e6 per page, so one page of positive
/// feedback adds 2.9 Tb/s and any positive BCN restores line rate at once. `Divide` is taken
/// to be meant; `Multiply` keeps the printed formula selectable (docs/seed003.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum GiFormula {
    /// Gi = (line/10)/Ru / ((1+2W)*Qeq) * gi_scale.
    #[default]
    Divide,
    /// Gi = (line/10)/Ru * ((1+2W)*Qeq) * gi_scale (seed 003 as printed).
    Multiply,
}

/// What an RP does on BCN(0,0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Bcn00Reaction {
    /// The limiter drops to Rmin.
    #[default]
    Rmin,
    /// The limiter stops for U[0, bcn00_stop_max_s], then resumes at Rmin.
    Stop,
}

impl Default for BcnParams {
    fn default() -> Self {
        BcnParams {
            fb_unit_bytes: 64.0,
            qeq_bytes: 24_000.0,
            w: 2.0,
            sampling: BcnSampling::default(),
            qoff_range: [-1.0, 1.0],
            qdelta_range: [-2.0, 2.0],
            bcn_max_threshold_bytes: None,
            qsc_bytes: None,
            bcn00: false,
            bcn00_reaction: Bcn00Reaction::Rmin,
            bcn00_stop_max_s: 0.001,
            oversample_probability: None,
            ru_bps: 1e6,
            gi: None,
            gd: None,
            gi_scale: 1.0,
            gi_formula: GiFormula::Divide,
            rmin_bps: 1e6,
            drift: false,
            drift_interval_s: 0.001,
            drift_step_bps: 10e6,
            bcn_bytes: 64,
        }
    }
}

impl BcnParams {
    /// ECM as configured in seed 003 (IBM Zurich, May 2007) for M = 150 KB of memory per port:
    /// Qeq = M/4, W = 2, 2% sampling, BCN-MAX at M, Qsc = 4M (BCN(0,0) off; turn it on with
    /// `bcn00 = true`), drift on, Ru = Rmin = 1 Mb/s, gains from the formula (see the module
    /// doc on Gi0). `scheme = "ecm"` starts from these and applies `[congestion.bcn]` over them.
    pub(crate) fn ecm() -> BcnParams {
        let m_bytes = 150_000.0;
        BcnParams {
            qeq_bytes: m_bytes / 4.0,
            sampling: BcnSampling::Probability { p: 0.02 },
            bcn_max_threshold_bytes: Some(m_bytes),
            qsc_bytes: Some(4.0 * m_bytes),
            drift: true,
            ..BcnParams::default()
        }
    }

    /// Checks every field, each once (sizes, times and rates also within what the clock and
    /// the counters hold); errors name the field as `<path>.<field>`.
    pub(crate) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.positive("fb_unit_bytes", self.fb_unit_bytes)?;
        c.bytes_positive("qeq_bytes", self.qeq_bytes)?;
        c.non_negative("w", self.w)?;
        self.sampling.validate(&sub_path(path, "sampling"))?;
        check_clamp_range(&c, "qoff_range", self.qoff_range)?;
        check_clamp_range(&c, "qdelta_range", self.qdelta_range)?;
        check_optional_positive(&c, "bcn_max_threshold_bytes", self.bcn_max_threshold_bytes)?;
        check_optional_positive(&c, "qsc_bytes", self.qsc_bytes)?;
        if self.bcn00 && self.qsc_bytes.is_none() {
            return Err(c.fail("qsc_bytes", "required when bcn00 = true"));
        }
        c.time_non_negative("bcn00_stop_max_s", self.bcn00_stop_max_s)?;
        if let Some(p) = self.oversample_probability {
            c.in_open_closed("oversample_probability", p, 0.0, 1.0)?;
            if self.qsc_bytes.is_none() {
                return Err(c.fail("qsc_bytes", "required when oversample_probability is set"));
            }
        }
        self.validate_rp(&c)
    }

    fn validate_rp(&self, c: &Check) -> Result<(), ConfigError> {
        c.rate("ru_bps", self.ru_bps)?;
        check_optional_positive(c, "gi", self.gi)?;
        check_optional_positive(c, "gd", self.gd)?;
        c.positive("gi_scale", self.gi_scale)?;
        c.rate("rmin_bps", self.rmin_bps)?;
        c.time_positive("drift_interval_s", self.drift_interval_s)?;
        c.positive("drift_step_bps", self.drift_step_bps)?;
        c.in_range("drift_step_bps", self.drift_step_bps, 0.0, MAX_RATE_BPS, "b/s")?;
        if self.bcn_bytes < 64 {
            return Err(c.fail(
                "bcn_bytes",
                format!("must be >= 64 (got {})", self.bcn_bytes),
            ));
        }
        check_frame_bytes(c, "bcn_bytes", self.bcn_bytes)
    }

    /// Qeq in feedback units.
    fn qeq_units(&self) -> f64 {
        self.qeq_bytes / self.fb_unit_bytes
    }

    /// Increase gain: explicit `gi`, or (line/10)/Ru / ((1+2W)*Qeq) * gi_scale (times
    /// (1+2W)*Qeq instead with `gi_formula = "multiply"`).
    pub(crate) fn gi_for(&self, line_rate_bps: f64) -> f64 {
        let rate_term = (line_rate_bps / 10.0) / self.ru_bps;
        let formula = || match self.gi_formula {
            GiFormula::Divide => rate_term / self.fb_max_units() * self.gi_scale,
            GiFormula::Multiply => rate_term * self.fb_max_units() * self.gi_scale,
        };
        self.gi.unwrap_or_else(formula)
    }

    /// Decrease gain: explicit `gd`, or 0.5/((1+2W)*Qeq).
    pub(crate) fn gd_value(&self) -> f64 {
        self.gd.unwrap_or_else(|| 0.5 / self.fb_max_units())
    }

    /// Fbmax = Qeq*(1+2W) in fb units: the BCN-MAX feedback magnitude.
    pub(crate) fn fb_max_units(&self) -> f64 {
        self.qeq_units() * (1.0 + 2.0 * self.w)
    }

    /// Name of the variant that runs: "bcn" or "ecm" (drift on), then "+max" (BCN-MAX),
    /// "+00" or "+00stop" (BCN(0,0) and its reaction), "+os" (oversampling).
    pub(crate) fn variant_name(&self) -> String {
        let mut name = String::from(if self.drift { "ecm" } else { "bcn" });
        if self.bcn_max_threshold_bytes.is_some() {
            name.push_str("+max");
        }
        if self.bcn00 {
            name.push_str(match self.bcn00_reaction {
                Bcn00Reaction::Rmin => "+00",
                Bcn00Reaction::Stop => "+00stop",
            });
        }
        if self.oversample_probability.is_some() {
            name.push_str("+os");
        }
        name
    }
}

impl BcnSampling {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        match *self {
            BcnSampling::Bytes {
                interval_bytes,
                jitter_bytes,
            } => {
                c.positive("interval_bytes", interval_bytes)?;
                c.in_closed("jitter_bytes", jitter_bytes, 0.0, interval_bytes)
            }
            BcnSampling::Probability { p } => c.in_open_closed("p", p, 0.0, 1.0),
        }
    }
}

fn sub_path(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

fn check_optional_positive(c: &Check, field: &str, v: Option<f64>) -> Result<(), ConfigError> {
    v.map_or(Ok(()), |v| c.positive(field, v))
}

/// A clamp range [lo, hi] in multiples of Qeq must be finite and contain 0 with lo < hi.
fn check_clamp_range(c: &Check, field: &str, [lo, hi]: [f64; 2]) -> Result<(), ConfigError> {
    if lo.is_finite() && hi.is_finite() && lo <= 0.0 && hi >= 0.0 && lo < hi {
        Ok(())
    } else {
        Err(c.fail(
            field,
            format!("must be [lo, hi] with lo <= 0 <= hi, lo < hi (got [{lo}, {hi}])"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_path(p: &BcnParams) -> String {
        let err = p.validate("congestion.bcn").unwrap_err();
        err.path().unwrap().to_string()
    }

    #[test]
    fn validate_reports_field_paths() {
        assert_eq!(BcnParams::default().validate("congestion.bcn"), Ok(()));
        let d = BcnParams::default;
        let cases: [(BcnParams, &str); 12] = [
            (
                BcnParams {
                    qeq_bytes: 0.0,
                    ..d()
                },
                "qeq_bytes",
            ),
            (
                BcnParams {
                    fb_unit_bytes: -64.0,
                    ..d()
                },
                "fb_unit_bytes",
            ),
            (BcnParams { w: f64::NAN, ..d() }, "w"),
            (
                BcnParams {
                    sampling: BcnSampling::Probability { p: 1.5 },
                    ..d()
                },
                "sampling.p",
            ),
            (
                BcnParams {
                    sampling: BcnSampling::Bytes {
                        interval_bytes: 1e4,
                        jitter_bytes: 2e4,
                    },
                    ..d()
                },
                "sampling.jitter_bytes",
            ),
            (
                BcnParams {
                    qoff_range: [1.0, 2.0],
                    ..d()
                },
                "qoff_range",
            ),
            (
                BcnParams {
                    qdelta_range: [2.0, -2.0],
                    ..d()
                },
                "qdelta_range",
            ),
            (BcnParams { bcn00: true, ..d() }, "qsc_bytes"),
            (
                BcnParams {
                    oversample_probability: Some(0.1),
                    ..d()
                },
                "qsc_bytes",
            ),
            (
                BcnParams {
                    oversample_probability: Some(0.0),
                    qsc_bytes: Some(1e5),
                    ..d()
                },
                "oversample_probability",
            ),
            (
                BcnParams {
                    gd: Some(-1.0),
                    ..d()
                },
                "gd",
            ),
            (
                BcnParams {
                    bcn_bytes: 0,
                    ..d()
                },
                "bcn_bytes",
            ),
        ];
        for (params, field) in cases {
            assert_eq!(error_path(&params), format!("congestion.bcn.{field}"));
        }
        let no_rmin = BcnParams {
            rmin_bps: 0.0,
            ..d()
        };
        assert_eq!(no_rmin.validate("").unwrap_err().path(), Some("rmin_bps"));
    }

    #[test]
    fn toml_table_parses_with_defaults_and_rejects_unknown_fields() {
        let text = r#"
            qeq_bytes = 150000
            sampling = { kind = "probability", p = 0.02 }
            bcn_max_threshold_bytes = 600000
            qsc_bytes = 300000
            oversample_probability = 0.1
        "#;
        let p: BcnParams = toml::from_str(text).unwrap();
        assert_eq!(p.sampling, BcnSampling::Probability { p: 0.02 });
        assert_eq!(p.oversample_probability, Some(0.1));
        assert_eq!(p.w, 2.0);
        assert_eq!(p.validate("congestion.bcn"), Ok(()));
        let back: BcnParams = toml::from_str(&toml::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        let stop: BcnParams = toml::from_str("bcn00_reaction = \"stop\"").unwrap();
        assert_eq!(stop.bcn00_reaction, Bcn00Reaction::Stop);
        let bytes: BcnParams = toml::from_str("sampling = { kind = \"bytes\" }").unwrap();
        assert_eq!(bytes.sampling, BcnSampling::default());
        assert!(toml::from_str::<BcnParams>("qeq = 1").is_err());
        assert!(
            toml::from_str::<BcnParams>("sampling = { kind = \"probability\", q = 1 }").is_err()
        );
    }

    #[test]
    fn variant_names() {
        let d = BcnParams::default;
        assert_eq!(d().variant_name(), "bcn");
        let max = BcnParams {
            bcn_max_threshold_bytes: Some(1e5),
            ..d()
        };
        assert_eq!(max.variant_name(), "bcn+max");
        let max00 = BcnParams {
            bcn00: true,
            qsc_bytes: Some(4e5),
            ..max.clone()
        };
        assert_eq!(max00.variant_name(), "bcn+max+00");
        let os = BcnParams {
            oversample_probability: Some(0.1),
            ..max.clone()
        };
        assert_eq!(os.variant_name(), "bcn+max+os");
        let ecm = BcnParams {
            drift: true,
            ..max00
        };
        assert_eq!(ecm.variant_name(), "ecm+max+00");
        let stop = BcnParams {
            bcn00_reaction: Bcn00Reaction::Stop,
            ..ecm
        };
        assert_eq!(stop.variant_name(), "ecm+max+00stop");
    }
}
