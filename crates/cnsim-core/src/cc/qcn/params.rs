//! QCN's parameters, TOML table `[congestion.qcn]`: their defaults (the standard's) and their
//! checks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cc::check_frame_bytes;
use crate::error::{Check, ConfigError};

/// When a CNM copies CR into TR (protocols.md 2, RP.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TrUpdate {
    /// TR = CR at every CNM.
    #[default]
    Always,
    /// TR = CR only if a self-increase happened since the last CNM (always on the first CNM).
    IfIncreased,
}

/// How the stage count is compared with FAST_RECOVERY_THRESHOLD F (protocols.md 2, RP.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FastRecoveryCmp {
    /// Fast recovery while max(si, ts) <= F: F cycles (5), as published.
    #[default]
    Le,
    /// Fast recovery while max(si, ts) < F: F - 1 cycles (4), as some code has it.
    Lt,
}

impl FastRecoveryCmp {
    /// True while `cycles` completed cycles still count as fast recovery.
    pub(super) fn in_fast_recovery(self, cycles: u32, threshold: u32) -> bool {
        match self {
            FastRecoveryCmp::Le => cycles <= threshold,
            FastRecoveryCmp::Lt => cycles < threshold,
        }
    }
}

/// Scenario parameters, TOML table `[congestion.qcn]`. Defaults are the standard's
/// (IEEE8021-CN-MIB); seed 004 uses Qeq 33 KB, 30 % jitters and a 10 ms timer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct QcnParams {
    /// CP equilibrium queue length Qeq.
    pub(crate) qeq_bytes: f64,
    /// CP weight of the queue growth Qdelta in Fb.
    pub(crate) w: f64,
    /// Width of the quantised feedback: qFb in 0..=2^bits - 1.
    pub(crate) fb_bits: u8,
    /// CP sampling interval at qFb 0 (the first row of the sampling table).
    pub(crate) sample_base_bytes: f64,
    /// CP sampling randomness r: interval times a uniform factor in [1-r, 1+r].
    pub(crate) sample_jitter: f64,
    /// Size of a CNM frame on the wire.
    pub(crate) cnm_bytes: u32,
    /// RP byte-counter cycle BC_LIMIT.
    pub(crate) bc_limit_bytes: f64,
    /// RP byte-counter randomness r.
    pub(crate) bc_jitter: f64,
    /// RP timer period T.
    pub(crate) timer_period_s: f64,
    /// RP timer randomness r.
    pub(crate) timer_jitter: f64,
    /// FAST_RECOVERY_THRESHOLD F.
    pub(crate) fast_recovery_threshold: u32,
    /// Active-increase step R_AI.
    pub(crate) r_ai_bps: f64,
    /// Hyper-active-increase step R_HAI.
    pub(crate) r_hai_bps: f64,
    /// Decrease gain Gd per unit of qFb.
    pub(crate) gd: f64,
    /// Smallest factor one CNM may multiply CR by.
    pub(crate) min_dec_factor: f64,
    /// Floor of CR.
    pub(crate) min_rate_bps: f64,
    /// Token-bucket depth of the RP's rate limiter: while it waits (paused, seed 004 "Paused
    /// RPs": it "keeps adding tokens based on the crate value") it accrues up to this many
    /// bytes at CR, sent back to back when it may send again. 0 = no credit beyond the frame
    /// being paced (the behaviour before this parameter).
    pub(crate) rp_bucket_bytes: f64,
    pub(crate) tr_update: TrUpdate,
    pub(crate) fast_recovery_cmp: FastRecoveryCmp,
}

impl Default for QcnParams {
    fn default() -> Self {
        QcnParams {
            qeq_bytes: 26_000.0,
            w: 2.0,
            fb_bits: 6,
            sample_base_bytes: 150_000.0,
            sample_jitter: 0.0,
            cnm_bytes: 64,
            bc_limit_bytes: 150_000.0,
            bc_jitter: 0.0,
            timer_period_s: 0.015,
            timer_jitter: 0.0,
            fast_recovery_threshold: 5,
            r_ai_bps: 5e6,
            r_hai_bps: 50e6,
            gd: 1.0 / 128.0,
            min_dec_factor: 0.5,
            min_rate_bps: 5e6,
            rp_bucket_bytes: 0.0,
            tr_update: TrUpdate::Always,
            fast_recovery_cmp: FastRecoveryCmp::Le,
        }
    }
}

impl QcnParams {
    /// Checks every field, each once (sizes, times and rates also within what the clock and
    /// the counters hold); errors name the field as `<path>.<field>`.
    pub(crate) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.bytes_positive("qeq_bytes", self.qeq_bytes)?;
        c.non_negative("w", self.w)?;
        if !(1..=8).contains(&self.fb_bits) {
            let reason = format!("must be in 1..=8 (got {})", self.fb_bits);
            return Err(c.fail("fb_bits", reason));
        }
        c.bytes_positive("sample_base_bytes", self.sample_base_bytes)?;
        check_jitter(&c, "sample_jitter", self.sample_jitter)?;
        if self.cnm_bytes < 64 {
            let got = self.cnm_bytes;
            return Err(c.fail(
                "cnm_bytes",
                format!("must be >= 64, an Ethernet minimum frame (got {got})"),
            ));
        }
        check_frame_bytes(&c, "cnm_bytes", self.cnm_bytes)?;
        c.bytes_positive("bc_limit_bytes", self.bc_limit_bytes)?;
        check_jitter(&c, "bc_jitter", self.bc_jitter)?;
        c.time_positive("timer_period_s", self.timer_period_s)?;
        check_jitter(&c, "timer_jitter", self.timer_jitter)?;
        c.rate_non_negative("r_ai_bps", self.r_ai_bps)?;
        c.rate_non_negative("r_hai_bps", self.r_hai_bps)?;
        c.in_open_closed("gd", self.gd, 0.0, 1.0)?;
        c.in_closed("min_dec_factor", self.min_dec_factor, 0.0, 1.0)?;
        c.rate("min_rate_bps", self.min_rate_bps)?;
        c.non_negative("rp_bucket_bytes", self.rp_bucket_bytes)
    }

    /// Saturation of |Fb|: Fbmax = Qeq * (1 + 2w) (protocols.md 2, CP.3).
    pub(crate) fn fb_max_bytes(&self) -> f64 {
        self.qeq_bytes * (1.0 + 2.0 * self.w)
    }
}

/// A jitter r must keep the factor [1-r, 1+r] positive: 0 <= r < 1.
fn check_jitter(c: &Check, field: &str, r: f64) -> Result<(), ConfigError> {
    if r.is_finite() && (0.0..1.0).contains(&r) {
        Ok(())
    } else {
        Err(c.fail(field, format!("must be in [0, 1) (got {r})")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_names_the_field() {
        let path = "congestion.qcn";
        assert_eq!(QcnParams::default().validate(path), Ok(()));
        let bad = QcnParams {
            qeq_bytes: -1.0,
            ..QcnParams::default()
        };
        let err = bad.validate(path).unwrap_err();
        assert_eq!(err.path(), Some("congestion.qcn.qeq_bytes"));
        for r in [-0.1, 1.0, 1.5, f64::NAN] {
            let bad = QcnParams {
                bc_jitter: r,
                ..QcnParams::default()
            };
            let err = bad.validate(path).unwrap_err();
            assert_eq!(err.path(), Some("congestion.qcn.bc_jitter"));
        }
        let ok = QcnParams {
            sample_jitter: 0.3,
            timer_jitter: 0.3,
            ..QcnParams::default()
        };
        assert_eq!(ok.validate(path), Ok(()));
        for bits in [0, 9] {
            let bad = QcnParams {
                fb_bits: bits,
                ..QcnParams::default()
            };
            let err = bad.validate(path).unwrap_err();
            assert_eq!(err.path(), Some("congestion.qcn.fb_bits"));
        }
        let eight = QcnParams {
            fb_bits: 8,
            ..QcnParams::default()
        };
        assert_eq!(eight.validate(path), Ok(()));
    }

    #[test]
    fn params_read_from_toml_with_defaults_and_variants() {
        let text = "qeq_bytes = 33000\nsample_jitter = 0.3\ntr_update = \"if_increased\"\n\
                    fast_recovery_cmp = \"lt\"\n";
        let p: QcnParams = toml::from_str(text).unwrap();
        assert_eq!(p.qeq_bytes, 33_000.0);
        assert_eq!(p.tr_update, TrUpdate::IfIncreased);
        assert_eq!(p.fast_recovery_cmp, FastRecoveryCmp::Lt);
        assert_eq!(p.bc_limit_bytes, 150_000.0);
        assert!(toml::from_str::<QcnParams>("qeq = 1.0").is_err());
        assert!(toml::from_str::<QcnParams>("tr_update = \"sometimes\"").is_err());
    }
}
