//! E2CM's fine loop's parameters, TOML table `[congestion.e2cm]` (the coarse loop is ECM's
//! `[congestion.bcn]`): their defaults (seed 003), their checks, and the scheme as it runs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cc::bcn::{Bcn00Reaction, BcnParams};
use crate::error::{Check, ConfigError};

/// `[congestion.e2cm]`: the fine loop. The coarse loop is `[congestion.bcn]` (ECM).
/// Defaults: seed 003 with M = 150 KB per port.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct E2cmParams {
    /// Per-flow equilibrium Qeq_flow (seed 003: M/20).
    pub(crate) qeq_flow_bytes: f64,
    /// Weight W of the flow's Qdelta.
    pub(crate) w: f64,
    /// Data bytes a rate-limited pair sends between two probes (seed 003: 2% of 1500 B frames,
    /// one per 75 KB).
    pub(crate) probe_interval_bytes: u64,
    pub(crate) probe_bytes: u32,
    /// Per-flow BCN-MAX threshold (seed 003: M/5); None = off.
    pub(crate) bcn_max_threshold_bytes: Option<f64>,
    /// Per-flow severe-congestion threshold for BCN(0,0) (seed 003: 4M/5).
    pub(crate) qsc_bytes: Option<f64>,
    /// Per-flow BCN(0,0); None = as the coarse loop (`congestion.bcn.bcn00`).
    pub(crate) bcn00: Option<bool>,
    /// Gi_flow = gi_factor * (R_link/Ru) / ((2W+1)*Qeq_flow) (seed 003: 0.005).
    pub(crate) gi_factor: f64,
    /// Explicit Gd_flow; None = 0.5/((2W+1)*Qeq_flow).
    pub(crate) gd: Option<f64>,
    /// Floor of the fine limiter (seed 003: Rmin = 1 Mb/s).
    pub(crate) rmin_bps: f64,
    pub(crate) stamp_combine: StampCombine,
    pub(crate) probe_measures: ProbeMeasures,
}

/// How the stamps of the switches along a path combine in a probe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StampCombine {
    /// The most severe feedback met (BCN(0,0), then BCN-MAX, then the most negative value).
    #[default]
    MostNegative,
    /// The last switch's feedback.
    Last,
}

/// What a switch measures for a probe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ProbeMeasures {
    /// The bytes of the probe's flow (its source and destination) in the egress queue.
    #[default]
    FlowBytes,
    /// The whole egress queue.
    QueueBytes,
}

impl Default for E2cmParams {
    fn default() -> Self {
        let m_bytes = 150_000.0;
        E2cmParams {
            qeq_flow_bytes: m_bytes / 20.0,
            w: 2.0,
            probe_interval_bytes: 75_000,
            probe_bytes: 64,
            bcn_max_threshold_bytes: Some(m_bytes / 5.0),
            qsc_bytes: Some(4.0 * m_bytes / 5.0),
            bcn00: None,
            gi_factor: 0.005,
            gd: None,
            rmin_bps: 1e6,
            stamp_combine: StampCombine::MostNegative,
            probe_measures: ProbeMeasures::FlowBytes,
        }
    }
}

impl E2cmParams {
    pub(crate) fn validate(&self, path: &str, coarse: &BcnParams) -> Result<(), ConfigError> {
        let c = Check { path };
        c.bytes_positive("qeq_flow_bytes", self.qeq_flow_bytes)?;
        c.non_negative("w", self.w)?;
        c.in_closed(
            "probe_interval_bytes",
            self.probe_interval_bytes as f64,
            64.0,
            1e12,
        )?;
        c.in_closed("probe_bytes", self.probe_bytes as f64, 64.0, 9216.0)?;
        if let Some(v) = self.bcn_max_threshold_bytes {
            c.bytes_positive("bcn_max_threshold_bytes", v)?;
        }
        if let Some(v) = self.qsc_bytes {
            c.bytes_positive("qsc_bytes", v)?;
        }
        if self.bcn00.unwrap_or(coarse.bcn00) && self.qsc_bytes.is_none() {
            return Err(c.fail("qsc_bytes", "required when the fine loop's bcn00 is on"));
        }
        c.positive("gi_factor", self.gi_factor)?;
        if let Some(gd) = self.gd {
            c.positive("gd", gd)?;
        }
        c.rate("rmin_bps", self.rmin_bps)
    }

    /// The fine loop as ECM parameters: its Qeq, W, thresholds and BCN(0,0) with the coarse
    /// loop's feedback unit, clamp ranges and Ru; no drift; BCN(0,0) drops to Rmin.
    pub(crate) fn fine_loop(&self, coarse: &BcnParams) -> BcnParams {
        BcnParams {
            qeq_bytes: self.qeq_flow_bytes,
            w: self.w,
            bcn_max_threshold_bytes: self.bcn_max_threshold_bytes,
            qsc_bytes: self.qsc_bytes,
            bcn00: self.bcn00.unwrap_or(coarse.bcn00),
            bcn00_reaction: Bcn00Reaction::Rmin,
            oversample_probability: None,
            gi: None,
            gd: self.gd,
            rmin_bps: self.rmin_bps,
            drift: false,
            ..coarse.clone()
        }
    }

    /// Gi_flow = gi_factor * (R_link/Ru) / ((2W+1)*Qeq_flow), in fb units.
    pub(crate) fn gi_flow(&self, coarse: &BcnParams, line_rate_bps: f64) -> f64 {
        let fine = self.fine_loop(coarse);
        self.gi_factor * (line_rate_bps / fine.ru_bps) / fine.fb_max_units()
    }
}

/// The scheme as it runs: the coarse loop (ECM) and the fine loop.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct E2cmConfig {
    pub(crate) coarse: BcnParams,
    pub(crate) fine: E2cmParams,
}

impl E2cmConfig {
    /// `e2cm` with the coarse loop's name (`e2cm(ecm+max+00)`), then the fine loop's choices
    /// when they are not the defaults.
    pub(crate) fn variant_name(&self) -> String {
        let mut name = format!("e2cm({})", self.coarse.variant_name());
        if self.fine.stamp_combine == StampCombine::Last {
            name.push_str("+stamp_last");
        }
        if self.fine.probe_measures == ProbeMeasures::QueueBytes {
            name.push_str("+probe_queue");
        }
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_names_fields_and_fine_bcn00_follows_the_coarse_loop() {
        let coarse = BcnParams::ecm();
        assert_eq!(
            E2cmParams::default().validate("congestion.e2cm", &coarse),
            Ok(())
        );
        let bad = E2cmParams {
            qeq_flow_bytes: 0.0,
            ..E2cmParams::default()
        };
        let err = bad.validate("congestion.e2cm", &coarse).unwrap_err();
        assert_eq!(err.path(), Some("congestion.e2cm.qeq_flow_bytes"));
        let no_qsc = E2cmParams {
            qsc_bytes: None,
            ..E2cmParams::default()
        };
        assert_eq!(no_qsc.validate("congestion.e2cm", &coarse), Ok(()));
        let on = BcnParams {
            bcn00: true,
            ..coarse.clone()
        };
        let err = no_qsc.validate("congestion.e2cm", &on).unwrap_err();
        assert_eq!(err.path(), Some("congestion.e2cm.qsc_bytes"));
        assert!(no_qsc.fine_loop(&on).bcn00);
        let off = E2cmParams {
            bcn00: Some(false),
            ..no_qsc
        };
        assert!(!off.fine_loop(&on).bcn00);
        assert!(toml::from_str::<E2cmParams>("qeq_flow = 1").is_err());
        let p: E2cmParams =
            toml::from_str("stamp_combine = \"last\"\nprobe_measures = \"queue_bytes\"").unwrap();
        assert_eq!(p.stamp_combine, StampCombine::Last);
        let name = E2cmConfig { coarse, fine: p }.variant_name();
        assert_eq!(name, "e2cm(ecm+max)+stamp_last+probe_queue");
    }
}
