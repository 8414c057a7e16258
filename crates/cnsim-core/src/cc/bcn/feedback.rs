//! BCN's feedback rule, shared by ECM's CP (on the whole queue) and E2CM's fine loop (on one
//! flow's bytes): Fb = -(Qoff + W Qdelta) / fb unit with its clamps, BCN-MAX and BCN(0,0).

use super::{BcnFeedback, BcnKind, BcnParams};

/// The feedback rule of a sample (protocols.md section 3): Fb = -(Qoff + W*Qdelta) / fb_unit
/// with the clamps, replaced by -Fbmax at the BCN-MAX threshold and by BCN(0,0) at Qsc. ECM's CP
/// applies it to the whole queue; E2CM's fine loop (`cc/e2cm.rs`) to one flow's bytes, with
/// its own Qeq and thresholds.
#[derive(Clone, Debug)]
pub(crate) struct FeedbackRule {
    pub(crate) qeq_bytes: f64,
    pub(crate) w: f64,
    pub(crate) fb_unit_bytes: f64,
    pub(crate) qoff_bounds_bytes: [f64; 2],
    pub(crate) qdelta_bounds_bytes: [f64; 2],
    /// Qeq*(1+2W) in fb units: the magnitude BCN-MAX and BCN(0,0) carry.
    pub(crate) fb_max_units: f64,
    /// `f64::INFINITY` when the feature is off, so `q >= threshold` never holds.
    pub(crate) max_threshold_bytes: f64,
    pub(crate) bcn00_threshold_bytes: f64,
}

impl FeedbackRule {
    /// The rule of `params` (its Qeq, W, clamps in multiples of Qeq, thresholds).
    pub(crate) fn of(params: &BcnParams) -> FeedbackRule {
        let qeq = params.qeq_bytes;
        FeedbackRule {
            qeq_bytes: qeq,
            w: params.w,
            fb_unit_bytes: params.fb_unit_bytes,
            qoff_bounds_bytes: params.qoff_range.map(|m| m * qeq),
            qdelta_bounds_bytes: params.qdelta_range.map(|m| m * qeq),
            fb_max_units: params.fb_max_units(),
            max_threshold_bytes: params.bcn_max_threshold_bytes.unwrap_or(f64::INFINITY),
            bcn00_threshold_bytes: match params.qsc_bytes {
                Some(qsc) if params.bcn00 => qsc,
                _ => f64::INFINITY,
            },
        }
    }

    /// The feedback of a sample at queue length `q_bytes` when the previous sample saw
    /// `q_old_bytes`. Precedence: BCN(0,0), then BCN-MAX, then the computed value.
    pub(crate) fn feedback(&self, q_bytes: f64, q_old_bytes: f64) -> BcnFeedback {
        let [off_lo, off_hi] = self.qoff_bounds_bytes;
        let [delta_lo, delta_hi] = self.qdelta_bounds_bytes;
        let qoff_bytes = (q_bytes - self.qeq_bytes).clamp(off_lo, off_hi);
        let qdelta_bytes = (q_bytes - q_old_bytes).clamp(delta_lo, delta_hi);
        let kind = if q_bytes >= self.bcn00_threshold_bytes {
            BcnKind::ZeroZero
        } else if q_bytes >= self.max_threshold_bytes {
            BcnKind::Max
        } else {
            let fb = -(qoff_bytes + self.w * qdelta_bytes) / self.fb_unit_bytes;
            return BcnFeedback {
                fb,
                kind: BcnKind::Normal,
            };
        };
        BcnFeedback {
            fb: -self.fb_max_units,
            kind,
        }
    }
}
