//! BCN: Backward Congestion Notification (Cisco, IEEE 802.1 "au" contributions 2006-07), with
//! the extensions studied in the seeds: BCN-MAX, BCN(0,0), oversampling, and drift
//! (self-increase), which together with BCN-MAX and BCN(0,0) make ECM (IBM Zurich 2007).
//! Implements protocols.md section 3: the congestion point ([`BcnCp`], one per switch egress
//! queue) and the reaction point ([`BcnRp`], one rate limiter per source flow). Both are pure
//! state machines: the engine feeds them events and carries their messages.
//!
//! Arithmetic (sizes in bytes, feedback in units of `fb_unit_bytes`: 64 B pages in seed 000,
//! 1500 B frames in seed 002): Qoff = clamp(q - Qeq), Qdelta = clamp(q - q_old),
//! Fb = -(Qoff + W*Qdelta) / fb_unit; q_old = q at every sample. The RP applies
//! R = min(R + Gi*Fb*Ru, line rate) for Fb > 0 and R = max(R*max(1 - Gd*|Fb|, 0), Rmin) for
//! Fb < 0, with Gi = (line/10)/Ru / ((1+2W)*Qeq) * gi_scale and Gd = 0.5/((1+2W)*Qeq) unless
//! given explicitly.
//!
//! Parameters (all in [`BcnParams`], `bcn/params.rs`, TOML table `[congestion.bcn]`): feedback unit, Qeq, W,
//! sampling (byte interval with jitter, or a probability), the Qoff/Qdelta clamp ranges, the
//! BCN-MAX threshold, Qsc with BCN(0,0) and/or an oversampling probability, the BCN(0,0) reaction
//! (Rmin, or stop-then-Rmin), Ru, Gi/Gd or their formula with `gi_scale`, Rmin, and drift.
//!
//! Reconstruction choices (the public record does not pin these down):
//! - Byte sampling works like the QCN CP: a counter is decremented by every enqueued data frame;
//!   the frame that takes it to <= 0 is sampled and the counter is reloaded with a fresh draw
//!   from U[interval - jitter, interval + jitter] (the overshoot is discarded, so samples are at
//!   least one drawn interval apart and less than one frame more).
//! - Oversampling: while q >= Qsc every data frame is sampled with `oversample_probability`,
//!   whatever the sampling kind; a byte counter is frozen meanwhile. A higher rate throughout is
//!   simply a higher `sampling.p`.
//! - q_old starts at 0 (empty queue) and is updated at every sample, BCN-MAX and BCN(0,0) ones
//!   included. Thresholds are inclusive (q >= threshold); q includes the frame just enqueued.
//! - Precedence at a sample: BCN(0,0) (q >= Qsc, when `bcn00`), then BCN-MAX, then normal.
//! - Normal feedback is limited only by the clamp ranges, not saturated at Fbmax: seed 001
//!   studies wider ranges precisely because they allow stronger feedback. BCN-MAX sends -Fbmax.
//! - A BCN(0,0) message carries fb = -Fbmax so that any "negative feedback installs a limiter"
//!   test treats it as the most severe one; the RP's reaction depends only on its kind.
//! - Fb = 0 sends nothing. Negative feedback (normal, MAX, (0,0)) goes to any source; positive
//!   only to a frame tagged with this CP's CPID.
//! - The RP's tag is the CPID of the CP that last sent it negative feedback (the installing CP
//!   at first); positive feedback from any other CPID is ignored, so two CPs cannot both raise
//!   one limiter.
//! - The decrease factor 1 - Gd*|Fb| is clamped at 0 (wide clamp ranges can exceed 1/Gd), then
//!   the Rmin floor applies. Rmin is capped at the line rate.
//! - BCN(0,0) "stop": the limiter drops to Rmin at once and may send nothing before
//!   now + U[0, `bcn00_stop_max_s`]; a later BCN(0,0) never shortens a running stop.
//! - Drift (ECM self-increase): additive, R += `drift_step_bps` (default 10 Mb/s) every
//!   `drift_interval_s` (default 1 ms) without accepted feedback, capped at line rate, so a
//!   limiter at Rmin recovers the full 10 Gb/s in about one second. Every accepted BCN and every
//!   drift step restarts the interval; drift also runs while the limiter is stopped.
//! - The limiter is released once R >= line rate.
//! - `gi`/`gd` given explicitly are used as they are (`gi_scale` scales only the formula).
//!   Note on seed 003: it defines Gi0 = (R_link/R_unit)/((2W+1)Qeq), without the /10 of the
//!   baseline formula, and Gi = 0.1*Gi0; that equals the formula here with `gi_scale` = 1.0.

mod feedback;
mod params;

use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Carried, CcScheme, CongestionSpec, CpFrame, MessageKind, NO_TAG, Named, NoNp, NoSender, Pacing, Registered, lay_table_over};
use crate::error::ConfigError;
use crate::rng::{jitter_factor, SimRng};
use crate::time::SimTime;

pub(crate) use feedback::FeedbackRule;
pub(crate) use params::*;


/// One BCN message as the CP computes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BcnFeedback {
    /// Feedback in fb units; negative = decrease. -Fbmax for `Max` and `ZeroZero`.
    pub(crate) fb: f64,
    pub(crate) kind: BcnKind,
}

impl BcnFeedback {
    /// True for every message that decreases a rate (and so may install a limiter).
    pub(crate) fn is_negative(&self) -> bool {
        self.kind != BcnKind::Normal || self.fb < 0.0
    }
}

/// BCN messages a CP sent, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BcnCounts {
    pub(crate) negative: u64,
    pub(crate) positive: u64,
    pub(crate) max: u64,
    pub(crate) zero_zero: u64,
}

/// Congestion point: one per switch egress queue; `cpid` identifies it.
#[derive(Clone, Debug)]
pub(crate) struct BcnCp {
    cpid: u32,
    rule: FeedbackRule,
    oversample_threshold_bytes: f64,
    oversample_p: f64,
    sampling: BcnSampling,
    bytes_to_sample: f64,
    q_old_bytes: f64,
    samples: u64,
    last_fb: f64,
    sent: BcnCounts,
}

impl BcnCp {
    pub(crate) fn new(params: &BcnParams, cpid: u32, rng: &mut SimRng) -> BcnCp {
        debug_assert_ne!(cpid, NO_TAG, "NO_TAG is not a valid CPID");
        let qsc = params.qsc_bytes.unwrap_or(f64::INFINITY);
        let mut cp = BcnCp {
            cpid,
            rule: FeedbackRule::of(params),
            oversample_threshold_bytes: params
                .oversample_probability
                .map_or(f64::INFINITY, |_| qsc),
            oversample_p: params.oversample_probability.unwrap_or(0.0),
            sampling: params.sampling,
            bytes_to_sample: 0.0,
            q_old_bytes: 0.0,
            samples: 0,
            last_fb: 0.0,
            sent: BcnCounts::default(),
        };
        cp.reload_byte_counter(rng);
        cp
    }

    /// A data frame was just enqueued (`queue_bytes` includes it). `rl_tag` is the CPID the
    /// frame's rate limiter carries (`NO_TAG` if none). Returns the BCN message to send to the
    /// frame's source, if any.
    pub(crate) fn on_data_enqueue(
        &mut self,
        queue_bytes: u64,
        frame_bytes: u32,
        rl_tag: u32,
        rng: &mut SimRng,
    ) -> Option<BcnFeedback> {
        let q_bytes = queue_bytes as f64;
        if !self.takes_sample(q_bytes, frame_bytes, rng) {
            return None;
        }
        self.samples += 1;
        let feedback = self.feedback_at(q_bytes);
        self.last_fb = feedback.fb;
        let positive_to_owner = feedback.fb > 0.0 && rl_tag == self.cpid;
        if !(feedback.is_negative() || positive_to_owner) {
            return None;
        }
        self.count(feedback);
        Some(feedback)
    }

    fn takes_sample(&mut self, q_bytes: f64, frame_bytes: u32, rng: &mut SimRng) -> bool {
        if q_bytes >= self.oversample_threshold_bytes {
            return rng.random::<f64>() < self.oversample_p;
        }
        match self.sampling {
            BcnSampling::Probability { p } => rng.random::<f64>() < p,
            BcnSampling::Bytes { .. } => {
                self.bytes_to_sample -= f64::from(frame_bytes);
                if self.bytes_to_sample > 0.0 {
                    return false;
                }
                self.reload_byte_counter(rng);
                true
            }
        }
    }

    fn reload_byte_counter(&mut self, rng: &mut SimRng) {
        if let BcnSampling::Bytes {
            interval_bytes,
            jitter_bytes,
        } = self.sampling
        {
            self.bytes_to_sample =
                interval_bytes * jitter_factor(rng, jitter_bytes / interval_bytes);
        }
    }

    /// The feedback of a sample at queue length `q_bytes`; updates q_old.
    fn feedback_at(&mut self, q_bytes: f64) -> BcnFeedback {
        let feedback = self.rule.feedback(q_bytes, self.q_old_bytes);
        self.q_old_bytes = q_bytes;
        feedback
    }

    fn count(&mut self, feedback: BcnFeedback) {
        let counter = match feedback.kind {
            BcnKind::ZeroZero => &mut self.sent.zero_zero,
            BcnKind::Max => &mut self.sent.max,
            BcnKind::Normal if feedback.fb < 0.0 => &mut self.sent.negative,
            BcnKind::Normal => &mut self.sent.positive,
        };
        *counter += 1;
    }

    /// Frames sampled so far (whether or not a message went out).
    #[cfg(test)]
    pub(crate) fn samples(&self) -> u64 {
        self.samples
    }

    /// Feedback of the last sample in fb units, after BCN-MAX / BCN(0,0) substitution, whether
    /// or not it was sent.
    pub(crate) fn last_fb(&self) -> f64 {
        self.last_fb
    }

    #[cfg(test)]
    pub(crate) fn sent(&self) -> BcnCounts {
        self.sent
    }
}

/// ECM drift timer state.
#[derive(Clone, Debug)]
struct Drift {
    interval: SimTime,
    step_bps: f64,
    deadline: SimTime,
    generation: u32,
}

/// Reaction point: one rate limiter per (source, destination flow), keyed by the CPID that
/// installed it.
#[derive(Clone, Debug)]
pub(crate) struct BcnRp {
    line_rate_bps: f64,
    rate_bps: f64,
    rmin_bps: f64,
    gi: f64,
    gd: f64,
    ru_bps: f64,
    cpid: u32,
    bcn00_reaction: Bcn00Reaction,
    bcn00_stop_max_s: f64,
    stopped_until: SimTime,
    drift: Option<Drift>,
}

impl BcnRp {
    /// Installed by the first negative BCN at line rate; the caller then calls `on_bcn`.
    pub(crate) fn new(line_rate_bps: f64, params: &BcnParams, cpid: u32, now: SimTime) -> BcnRp {
        let drift = params.drift.then(|| Drift {
            interval: SimTime::from_secs_f64(params.drift_interval_s),
            step_bps: params.drift_step_bps,
            deadline: now + SimTime::from_secs_f64(params.drift_interval_s),
            generation: 0,
        });
        BcnRp {
            line_rate_bps,
            rate_bps: line_rate_bps,
            rmin_bps: params.rmin_bps.min(line_rate_bps),
            gi: params.gi_for(line_rate_bps),
            gd: params.gd_value(),
            ru_bps: params.ru_bps,
            cpid,
            bcn00_reaction: params.bcn00_reaction,
            bcn00_stop_max_s: params.bcn00_stop_max_s,
            stopped_until: SimTime::ZERO,
            drift,
        }
    }

    /// Applies a BCN message from CP `cpid`. Negative feedback retags the limiter with `cpid`;
    /// positive feedback from a CP other than the tag is ignored.
    pub(crate) fn on_bcn(&mut self, fb: &BcnFeedback, cpid: u32, now: SimTime, rng: &mut SimRng) {
        match fb.kind {
            BcnKind::ZeroZero => self.severe_congestion(now, rng),
            _ if fb.fb < 0.0 => self.decrease(fb.fb),
            BcnKind::Normal if fb.fb > 0.0 && cpid == self.cpid => self.increase(fb.fb),
            _ => return,
        }
        if fb.is_negative() {
            self.cpid = cpid;
        }
        self.restart_drift(now);
    }

    fn decrease(&mut self, fb: f64) {
        let factor = (1.0 - self.gd * fb.abs()).max(0.0);
        self.rate_bps = (self.rate_bps * factor).max(self.rmin_bps);
    }

    fn increase(&mut self, fb: f64) {
        self.rate_bps = (self.rate_bps + self.gi * fb * self.ru_bps).min(self.line_rate_bps);
    }

    fn severe_congestion(&mut self, now: SimTime, rng: &mut SimRng) {
        self.rate_bps = self.rmin_bps;
        if self.bcn00_reaction == Bcn00Reaction::Stop {
            let stop = SimTime::from_secs_f64(rng.random::<f64>() * self.bcn00_stop_max_s);
            self.stopped_until = self.stopped_until.max(now + stop);
        }
    }

    fn restart_drift(&mut self, now: SimTime) {
        if let Some(drift) = &mut self.drift {
            drift.generation = drift.generation.wrapping_add(1);
            drift.deadline = now + drift.interval;
        }
    }

    /// Tag for frames sent through this limiter: the CP that last sent negative feedback.
    pub(crate) fn cpid(&self) -> u32 {
        self.cpid
    }

    pub(crate) fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    /// BCN(0,0) "stop" variant: no frame may be sent before this time.
    pub(crate) fn stopped_until(&self) -> SimTime {
        self.stopped_until
    }

    /// When drift is on: the time of the next drift step. After `new`, `on_bcn` and `on_drift`
    /// the engine schedules an event here carrying `drift_generation()` if that changed.
    pub(crate) fn drift_deadline(&self) -> Option<SimTime> {
        self.drift.as_ref().map(|d| d.deadline)
    }

    pub(crate) fn drift_generation(&self) -> u32 {
        self.drift.as_ref().map_or(0, |d| d.generation)
    }

    /// A drift event scheduled with `generation` fires; stale generations are ignored.
    pub(crate) fn on_drift(&mut self, generation: u32, now: SimTime) {
        let Some(drift) = &self.drift else { return };
        if drift.generation != generation {
            return;
        }
        self.rate_bps = (self.rate_bps + drift.step_bps).min(self.line_rate_bps);
        self.restart_drift(now);
    }

    /// True when R has reached line rate; the limiter is then removed.
    pub(crate) fn is_released(&self) -> bool {
        self.rate_bps >= self.line_rate_bps
    }
}

/// Which BCN message a congestion point sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BcnKind {
    /// Ordinary feedback, Fb = -(Qoff + W*Qdelta), negative or positive.
    Normal,
    /// BCN-MAX: the queue is at or above the BCN-MAX threshold; Fb is -Fbmax.
    Max,
    /// BCN(0,0): severe congestion (q >= Qsc); the RP drops to Rmin (or stops).
    ZeroZero,
}

/// The BCN message a CP sends to the sampled frame's source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BcnMsg {
    pub(crate) feedback: BcnFeedback,
    /// The congestion point that sent it.
    pub(crate) cpid: u32,
}

impl BcnMsg {
    /// Its place in [`Bcn::CONTROL_KINDS`]: negative, positive, BCN-MAX, BCN(0,0).
    fn kind_index(&self) -> usize {
        match self.feedback.kind {
            BcnKind::Normal if self.feedback.fb > 0.0 => 1,
            BcnKind::Normal => 0,
            BcnKind::Max => 2,
            BcnKind::ZeroZero => 3,
        }
    }
}

/// The name of BCN with ECM's defaults.
pub(crate) const ECM: &str = "ecm";

// What the summary says ran (a comment: the summary's schema describes
// the variant by its fields).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BcnVariant {
    /// `bcn`, `bcn+max`, `ecm+max+00`...
    pub(crate) name: String,
}

/// BCN as registered: `scheme = "bcn"` and `"ecm"` (BCN over ECM's defaults),
/// `[congestion.bcn]`; CP and RP, no NP.
pub(crate) struct Bcn;

impl Bcn {
    /// The table's defaults under `selected`: ECM's under "ecm", plain BCN's otherwise.
    fn defaults(selected: &str) -> BcnParams {
        if selected == ECM {
            BcnParams::ecm()
        } else {
            BcnParams::default()
        }
    }
}

impl CcScheme for Bcn {
    type Params = BcnParams;
    type Config = BcnParams;
    type Msg = BcnMsg;
    type Cp = BcnCp;
    type Rp = BcnRp;
    type Np = NoNp;
    type Sender = NoSender;
    type Variant = BcnVariant;

    const NAMES: &'static [Named] = &[
        Named {
            name: "bcn",
            doc: "",
        },
        Named {
            name: ECM,
            doc: "BCN with ECM's defaults (`BcnParams::ecm`), overridden by `[congestion.bcn]`.",
        },
    ];
    const CONTROL_KINDS: &'static [Named] = &[
        Named {
            name: "bcn_negative",
            doc: "",
        },
        Named {
            name: "bcn_positive",
            doc: "",
        },
        Named {
            name: "bcn_max",
            doc: "",
        },
        Named {
            name: "bcn_00",
            doc: "",
        },
    ];

    /// Under "ecm" the user's `[congestion.bcn]` keys are laid over ECM's defaults, so a
    /// partial table keeps ECM's values (not plain BCN's) for what it leaves out.
    fn prepare(congestion: &mut toml::Table, selected: &str) -> Result<(), ConfigError> {
        if selected == ECM {
            lay_table_over(congestion, Self::TABLE, &BcnParams::ecm());
        }
        Ok(())
    }

    fn fill_defaults(spec: &mut CongestionSpec, selected: &str) {
        spec.bcn.get_or_insert_with(|| Self::defaults(selected));
    }

    fn validate(params: &BcnParams, _: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        params.validate(path)
    }

    fn resolve(spec: &CongestionSpec, selected: &str) -> BcnParams {
        spec.bcn.clone().unwrap_or_else(|| Self::defaults(selected))
    }

    fn variant(p: &BcnParams) -> BcnVariant {
        BcnVariant {
            name: p.variant_name(),
        }
    }

    fn kind(m: &BcnMsg) -> MessageKind {
        Self::message_kind(m.kind_index())
    }

    fn msg_bytes(_: &BcnMsg, p: &BcnParams) -> u32 {
        p.bcn_bytes
    }

    fn new_cp(p: &BcnParams, cpid: u32, _: f64, rng: &mut SimRng) -> BcnCp {
        BcnCp::new(p, cpid, rng)
    }

    fn on_enqueue(
        cp: &mut BcnCp,
        frame: CpFrame<'_, BcnMsg>,
        queue_bytes: u64,
        cpid: u32,
        rng: &mut SimRng,
    ) -> Option<BcnMsg> {
        match frame.payload {
            Carried::Data => cp
                .on_data_enqueue(queue_bytes, frame.bytes, frame.rl_tag, rng)
                .map(|feedback| BcnMsg { feedback, cpid }),
            _ => None,
        }
    }

    fn last_fb(cp: &BcnCp) -> f64 {
        cp.last_fb()
    }

    /// Only negative feedback installs a limiter.
    fn install(
        p: &BcnParams,
        m: &BcnMsg,
        line_rate_bps: f64,
        now: SimTime,
        _: &mut SimRng,
    ) -> Option<BcnRp> {
        m.feedback
            .is_negative()
            .then(|| BcnRp::new(line_rate_bps, p, m.cpid, now))
    }

    fn on_feedback(rp: &mut BcnRp, m: &BcnMsg, now: SimTime, rng: &mut SimRng) {
        rp.on_bcn(&m.feedback, m.cpid, now, rng);
    }

    fn rate_bps(rp: &BcnRp) -> f64 {
        rp.rate_bps()
    }

    fn stopped_until(rp: &BcnRp) -> SimTime {
        rp.stopped_until()
    }

    /// Frames carry the CPID of the limiter's tag (positive feedback goes to them only).
    fn pacing(rp: &BcnRp) -> Pacing {
        Pacing {
            rate_bps: rp.rate_bps(),
            tag: rp.cpid(),
            bucket_bytes: 0.0,
        }
    }

    fn timer(rp: &BcnRp) -> Option<(SimTime, u32)> {
        rp.drift_deadline().map(|t| (t, rp.drift_generation()))
    }

    fn on_timer(rp: &mut BcnRp, generation: u32, now: SimTime, _: &mut SimRng) {
        rp.on_drift(generation, now);
    }

    fn is_released(rp: &BcnRp) -> bool {
        rp.is_released()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, StreamKind};

    const LINE_BPS: f64 = 10e9;
    const CPID: u32 = 7;

    fn rng() -> SimRng {
        stream(42, StreamKind::CongestionPoint, 0)
    }

    /// Seed 000: Qeq 375 pages of 64 B, W 2, Ru 1 Mb/s, Rmin 1 Gb/s; every frame sampled.
    fn seed000() -> BcnParams {
        BcnParams {
            rmin_bps: 1e9,
            sampling: BcnSampling::Probability { p: 1.0 },
            ..BcnParams::default()
        }
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    fn feedback(fb: f64, kind: BcnKind) -> BcnFeedback {
        BcnFeedback { fb, kind }
    }

    fn normal(fb: f64) -> BcnFeedback {
        feedback(fb, BcnKind::Normal)
    }

    /// An RP installed by CP `CPID` at t = 0 after the given first feedback.
    fn rp_after(params: &BcnParams, first: BcnFeedback) -> BcnRp {
        let mut rp = BcnRp::new(LINE_BPS, params, CPID, SimTime::ZERO);
        rp.on_bcn(&first, CPID, SimTime::ZERO, &mut rng());
        rp
    }

    #[test]
    fn gains_seed000_pages() {
        let p = BcnParams::default();
        assert_eq!(p.fb_max_units(), 1875.0);
        assert!(close(p.gi_for(LINE_BPS), 0.533_333_333, 1e-9));
        assert!(close(p.gd_value(), 2.666_666_667e-4, 1e-12));
    }

    #[test]
    fn gains_seed002_frames() {
        let p = BcnParams {
            fb_unit_bytes: 1500.0,
            ..BcnParams::default()
        };
        assert_eq!(p.fb_max_units(), 80.0);
        assert!(close(p.gi_for(LINE_BPS), 12.5, 1e-12));
        assert!(close(p.gd_value(), 6.25e-3, 1e-15));
    }

    #[test]
    fn gains_seed001_frames_for_both_buffer_sizes() {
        // Seed 001: Qeq = B/4 in 1500 B frames (seed 002's conversion), W = 2, Ru = 1 Mb/s.
        for (qeq_bytes, gi, gd) in [(150_000.0, 2.0, 1e-3), (18_750.0, 16.0, 8e-3)] {
            let p = BcnParams {
                fb_unit_bytes: 1500.0,
                qeq_bytes,
                ..BcnParams::default()
            };
            assert!(close(p.gi_for(LINE_BPS), gi, 1e-12));
            assert!(close(p.gd_value(), gd, 1e-15));
        }
    }

    #[test]
    fn explicit_gains_override_formula_and_scale_applies_to_formula_only() {
        let scaled = BcnParams {
            gi_scale: 0.1,
            ..BcnParams::default()
        };
        assert!(close(scaled.gi_for(LINE_BPS), 0.053_333_333, 1e-9));
        let explicit = BcnParams {
            gi: Some(12.42),
            gd: Some(6.09e-3),
            gi_scale: 0.1,
            ..scaled
        };
        assert_eq!(explicit.gi_for(LINE_BPS), 12.42);
        assert_eq!(explicit.gd_value(), 6.09e-3);
    }

    #[test]
    fn negative_and_positive_bcn_give_exact_rates() {
        let p = seed000();
        // Fb = -375: factor 1 - 375/3750 = 0.9.
        let mut rp = rp_after(&p, normal(-375.0));
        assert!(close(rp.rate_bps(), 9e9, 1e-3));
        // BCN-MAX, Fb = -1875: factor 0.5.
        let max = feedback(-1875.0, BcnKind::Max);
        rp.on_bcn(&max, CPID, SimTime::ZERO, &mut rng());
        assert!(close(rp.rate_bps(), 4.5e9, 1e-3));
        // Fb = +375: + 0.5333 * 375 * 1 Mb/s = + 200 Mb/s.
        rp.on_bcn(&normal(375.0), CPID, SimTime::ZERO, &mut rng());
        assert!(close(rp.rate_bps(), 4.7e9, 1e-3));
    }

    #[test]
    fn positive_feedback_only_to_frames_tagged_with_this_cpid() {
        let mut r = rng();
        let mut cp = BcnCp::new(&seed000(), CPID, &mut r);
        // q = 12,000 B below Qeq 24,000 B, q_old 0 -> Fb = -(-12000 + 2*12000)/64 < 0: first
        // sample a negative one; then a steady q gives Fb = 12000/64 = +187.5.
        assert!(cp.on_data_enqueue(12_000, 1500, NO_TAG, &mut r).is_some());
        assert_eq!(cp.on_data_enqueue(12_000, 1500, NO_TAG, &mut r), None);
        assert_eq!(cp.on_data_enqueue(12_000, 1500, CPID + 1, &mut r), None);
        let fb = cp.on_data_enqueue(12_000, 1500, CPID, &mut r).unwrap();
        assert_eq!(fb, feedback(187.5, BcnKind::Normal));
        assert_eq!(cp.samples(), 4);
        assert_eq!(cp.last_fb(), 187.5);
        let want = BcnCounts {
            negative: 1,
            positive: 1,
            ..BcnCounts::default()
        };
        assert_eq!(cp.sent(), want);
    }

    #[test]
    fn zero_feedback_sends_nothing() {
        let mut r = rng();
        let mut cp = BcnCp::new(&seed000(), CPID, &mut r);
        assert!(cp.on_data_enqueue(24_000, 1500, CPID, &mut r).is_some()); // Qdelta > 0
        assert_eq!(cp.on_data_enqueue(24_000, 1500, CPID, &mut r), None); // Qoff = Qdelta = 0
        assert_eq!(cp.samples(), 2);
    }

    #[test]
    fn rp_tag_follows_last_negative_and_ignores_foreign_positive() {
        let mut rp = rp_after(&seed000(), normal(-375.0));
        let other = CPID + 1;
        rp.on_bcn(&normal(-375.0), other, SimTime::ZERO, &mut rng());
        assert_eq!(rp.cpid(), other);
        let before = rp.rate_bps();
        rp.on_bcn(&normal(375.0), CPID, SimTime::ZERO, &mut rng());
        assert_eq!(rp.rate_bps(), before);
        rp.on_bcn(&normal(375.0), other, SimTime::ZERO, &mut rng());
        assert!(rp.rate_bps() > before);
    }

    /// Samples q = 200,000 B from q_old = 0, then q = 0; returns both feedbacks.
    fn clamp_pair(qoff_range: [f64; 2], qdelta_range: [f64; 2]) -> (f64, f64) {
        let p = BcnParams {
            qoff_range,
            qdelta_range,
            ..seed000()
        };
        let mut r = rng();
        let mut cp = BcnCp::new(&p, CPID, &mut r);
        let up = cp.on_data_enqueue(200_000, 1500, CPID, &mut r).unwrap().fb;
        let down = cp.on_data_enqueue(0, 1500, CPID, &mut r).unwrap().fb;
        (up, down)
    }

    #[test]
    fn clamps_seed001_qoff_1_qdelta_2() {
        // Qoff in [-24000, 24000], Qdelta in [-48000, 48000]:
        // up: -(24000 + 2*48000)/64 = -1875; down: -(-24000 - 2*48000)/64 = +1875.
        assert_eq!(clamp_pair([-1.0, 1.0], [-2.0, 2.0]), (-1875.0, 1875.0));
    }

    #[test]
    fn clamps_seed001_qoff_2_qdelta_4() {
        // Qoff in [-24000, 48000], Qdelta in [-96000, 96000]:
        // up: -(48000 + 2*96000)/64 = -3750; down: -(-24000 - 2*96000)/64 = +3375.
        assert_eq!(clamp_pair([-1.0, 2.0], [-4.0, 4.0]), (-3750.0, 3375.0));
    }

    #[test]
    fn qdelta_uses_q_of_previous_sample() {
        let mut r = rng();
        let mut cp = BcnCp::new(&seed000(), CPID, &mut r);
        cp.on_data_enqueue(24_000, 1500, CPID, &mut r);
        // Qoff = 6400, Qdelta = 6400 -> Fb = -(6400 + 12800)/64 = -300.
        assert_eq!(
            cp.on_data_enqueue(30_400, 1500, CPID, &mut r).unwrap().fb,
            -300.0
        );
    }

    #[test]
    fn bcn_max_sends_minus_fbmax_at_threshold() {
        let p = BcnParams {
            bcn_max_threshold_bytes: Some(150_000.0),
            ..seed000()
        };
        let mut r = rng();
        let mut cp = BcnCp::new(&p, CPID, &mut r);
        let below = cp.on_data_enqueue(149_999, 1500, NO_TAG, &mut r).unwrap();
        assert_eq!(below.kind, BcnKind::Normal);
        let at = cp.on_data_enqueue(150_000, 1500, NO_TAG, &mut r).unwrap();
        assert_eq!(at, feedback(-1875.0, BcnKind::Max));
        assert_eq!(cp.sent().max, 1);
        assert_eq!(cp.sent().negative, 1);
    }

    #[test]
    fn bcn00_at_qsc_takes_precedence_over_max() {
        let p = BcnParams {
            bcn_max_threshold_bytes: Some(50_000.0),
            qsc_bytes: Some(112_500.0),
            bcn00: true,
            ..seed000()
        };
        let mut r = rng();
        let mut cp = BcnCp::new(&p, CPID, &mut r);
        assert_eq!(
            cp.on_data_enqueue(112_499, 1500, NO_TAG, &mut r)
                .unwrap()
                .kind,
            BcnKind::Max
        );
        let severe = cp.on_data_enqueue(112_500, 1500, NO_TAG, &mut r).unwrap();
        assert_eq!(severe, feedback(-1875.0, BcnKind::ZeroZero));
        assert!(severe.is_negative());
        assert_eq!(
            cp.sent(),
            BcnCounts {
                max: 1,
                zero_zero: 1,
                ..BcnCounts::default()
            }
        );
    }

    const ZERO_ZERO: BcnFeedback = BcnFeedback {
        fb: -1875.0,
        kind: BcnKind::ZeroZero,
    };

    #[test]
    fn bcn00_rmin_reaction_drops_to_rmin_without_stop() {
        let rp = rp_after(&seed000(), ZERO_ZERO);
        assert_eq!(rp.rate_bps(), 1e9);
        assert_eq!(rp.stopped_until(), SimTime::ZERO);
    }

    #[test]
    fn bcn00_stop_reaction_stops_for_random_time_then_rmin() {
        let p = BcnParams {
            bcn00_reaction: Bcn00Reaction::Stop,
            ..seed000()
        };
        let now = SimTime::from_micros(500);
        let max_stop = SimTime::from_micros(1000);
        let mut r = rng();
        let n = 1000;
        let mut total_ps = 0u64;
        for _ in 0..n {
            let mut rp = BcnRp::new(LINE_BPS, &p, CPID, now);
            rp.on_bcn(&ZERO_ZERO, CPID, now, &mut r);
            assert_eq!(rp.rate_bps(), 1e9);
            let stop = rp.stopped_until() - now;
            assert!(stop <= max_stop);
            total_ps += stop.ps();
        }
        // Mean of U[0, 1 ms] is 0.5 ms; std of the mean 1 ms/sqrt(12 n) = 9.1 us; allow 5 sigma.
        let mean_us = total_ps as f64 / n as f64 / 1e6;
        assert!(close(mean_us, 500.0, 46.0), "mean stop {mean_us} us");
    }

    #[test]
    fn bcn00_stop_never_shortens_a_running_stop() {
        let p = BcnParams {
            bcn00_reaction: Bcn00Reaction::Stop,
            ..seed000()
        };
        let mut r = rng();
        let mut rp = BcnRp::new(LINE_BPS, &p, CPID, SimTime::ZERO);
        let mut latest = SimTime::ZERO;
        for _ in 0..100 {
            rp.on_bcn(&ZERO_ZERO, CPID, SimTime::ZERO, &mut r);
            assert!(rp.stopped_until() >= latest);
            latest = rp.stopped_until();
        }
    }

    #[test]
    fn rmin_floor_and_decrease_factor_guard() {
        let p = seed000();
        let max = feedback(-1875.0, BcnKind::Max);
        let mut rp = rp_after(&p, max);
        for want in [2.5e9, 1.25e9, 1e9, 1e9] {
            rp.on_bcn(&max, CPID, SimTime::ZERO, &mut rng());
            assert_eq!(rp.rate_bps(), want);
        }
        // |Fb| beyond 1/Gd (wide clamp ranges) would give a negative factor: floor at Rmin.
        let mut rp = rp_after(&p, normal(-5000.0));
        assert_eq!(rp.rate_bps(), 1e9);
        rp.on_bcn(&normal(-3750.0), CPID, SimTime::ZERO, &mut rng());
        assert_eq!(rp.rate_bps(), 1e9);
    }

    #[test]
    fn drift_adds_step_after_quiet_interval_and_feedback_restarts_it() {
        let p = BcnParams {
            drift: true,
            ..seed000()
        };
        let ms = SimTime::from_micros(1000);
        let mut rp = rp_after(&p, normal(-375.0));
        let g = rp.drift_generation();
        assert_eq!(rp.drift_deadline(), Some(ms));
        rp.on_drift(g, ms);
        assert!(close(rp.rate_bps(), 9e9 + 10e6, 1e-3));
        assert_eq!(rp.drift_deadline(), Some(ms + ms));
        rp.on_drift(g, ms + ms); // stale generation
        assert!(close(rp.rate_bps(), 9.01e9, 1e-3));
        let g = rp.drift_generation();
        let t = SimTime::from_micros(1500);
        rp.on_bcn(&normal(375.0), CPID, t, &mut rng());
        let after_feedback = rp.rate_bps();
        assert_eq!(rp.drift_deadline(), Some(t + ms));
        rp.on_drift(g, ms + ms); // superseded by the feedback at 1.5 ms
        assert_eq!(rp.rate_bps(), after_feedback);
    }

    #[test]
    fn drift_off_has_no_timer_and_caps_at_line_rate_when_on() {
        let mut off = rp_after(&seed000(), normal(-375.0));
        assert_eq!(off.drift_deadline(), None);
        off.on_drift(off.drift_generation(), SimTime::from_micros(1000));
        assert!(close(off.rate_bps(), 9e9, 1e-3));
        let p = BcnParams {
            drift: true,
            drift_step_bps: 5e9,
            ..seed000()
        };
        let mut on = rp_after(&p, normal(-375.0));
        on.on_drift(on.drift_generation(), on.drift_deadline().unwrap());
        assert_eq!(on.rate_bps(), LINE_BPS);
        assert!(on.is_released());
    }

    #[test]
    fn released_when_rate_reaches_line_rate() {
        let mut rp = rp_after(&seed000(), normal(-375.0));
        assert!(!rp.is_released());
        // + 0.5333 * 1875 * 1 Mb/s = + 1 Gb/s from 9 Gb/s: capped at exactly 10 Gb/s.
        rp.on_bcn(&normal(1875.0), CPID, SimTime::ZERO, &mut rng());
        assert_eq!(rp.rate_bps(), LINE_BPS);
        assert!(rp.is_released());
    }

    #[test]
    fn byte_interval_sampling_spacing_within_jitter() {
        let sampling = BcnSampling::Bytes {
            interval_bytes: 10_000.0,
            jitter_bytes: 5_000.0,
        };
        let p = BcnParams {
            sampling,
            ..BcnParams::default()
        };
        let mut r = rng();
        let mut cp = BcnCp::new(&p, CPID, &mut r);
        let (mut since_bytes, mut lo, mut hi) = (0u64, u64::MAX, 0u64);
        for _ in 0..200_000 {
            since_bytes += 1500;
            let before = cp.samples();
            cp.on_data_enqueue(30_000, 1500, NO_TAG, &mut r);
            if cp.samples() > before {
                // Spacing is a drawn interval in [5000, 15000] rounded up to whole frames.
                assert!(
                    (5_000..15_000 + 1500).contains(&since_bytes),
                    "{since_bytes}"
                );
                (lo, hi) = (lo.min(since_bytes), hi.max(since_bytes));
                since_bytes = 0;
            }
        }
        // The jitter is used across its band: 4 frames (X <= 6000) and 10 (X > 13500) occur.
        assert_eq!((lo, hi), (6_000, 15_000));
    }

    #[test]
    fn probability_sampling_rate_matches_p() {
        let p = BcnParams {
            sampling: BcnSampling::Probability { p: 0.02 },
            ..BcnParams::default()
        };
        let mut r = rng();
        let mut cp = BcnCp::new(&p, CPID, &mut r);
        let n = 100_000;
        for _ in 0..n {
            cp.on_data_enqueue(30_000, 1500, NO_TAG, &mut r);
        }
        // Binomial(n, 0.02): mean 2000, std sqrt(n p (1-p)) = 44.3; allow 5 sigma = 221.
        assert!(
            close(cp.samples() as f64, 2000.0, 221.0),
            "{}",
            cp.samples()
        );
    }

    #[test]
    fn oversampling_switches_probability_at_qsc() {
        let oversampled = |base_p: f64, over_p: f64, q: u64, n: u64| {
            let p = BcnParams {
                sampling: BcnSampling::Probability { p: base_p },
                qsc_bytes: Some(100_000.0),
                oversample_probability: Some(over_p),
                ..BcnParams::default()
            };
            let mut r = rng();
            let mut cp = BcnCp::new(&p, CPID, &mut r);
            for _ in 0..n {
                cp.on_data_enqueue(q, 1500, NO_TAG, &mut r);
            }
            cp.samples()
        };
        // Exact switch: p = 1e-12 below Qsc (never in 1000 frames), 1 at and above Qsc.
        assert_eq!(oversampled(1e-12, 1.0, 99_999, 1000), 0);
        assert_eq!(oversampled(1e-12, 1.0, 100_000, 1000), 1000);
        // Seed 001, 2% -> 30%: Binomial(20000, 0.3) mean 6000, std 64.8; allow 5 sigma = 324.
        let n = oversampled(0.02, 0.3, 150_000, 20_000) as f64;
        assert!(close(n, 6000.0, 324.0), "{n}");
        // Binomial(20000, 0.02): mean 400, std 19.8; allow 5 sigma = 99.
        let n = oversampled(0.02, 0.3, 50_000, 20_000) as f64;
        assert!(close(n, 400.0, 99.0), "{n}");
    }

    #[test]
    fn oversampling_freezes_byte_counter() {
        let sampling = BcnSampling::Bytes {
            interval_bytes: 15_000.0,
            jitter_bytes: 0.0,
        };
        let p = BcnParams {
            sampling,
            qsc_bytes: Some(100_000.0),
            oversample_probability: Some(1e-12),
            ..BcnParams::default()
        };
        let mut r = rng();
        let mut cp = BcnCp::new(&p, CPID, &mut r);
        for q in [1_000; 9].into_iter().chain([200_000; 100]) {
            cp.on_data_enqueue(q, 1500, NO_TAG, &mut r);
        }
        assert_eq!(cp.samples(), 0);
        cp.on_data_enqueue(1_000, 1500, NO_TAG, &mut r); // the 10th frame below Qsc
        assert_eq!(cp.samples(), 1);
    }
}
