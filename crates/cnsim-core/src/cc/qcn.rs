//! QCN, IEEE 802.1Qau congestion notification: the congestion point (CP) and reaction point (RP)
//! state machines of the QCN pseudo code v2.3 (R. Pan, `au-rong-qcn-serial-hai-v23`, 2009, serial
//! hyper-active increase), the version seed 004's NEC 10G hardware follows.
//!
//! Pure state machines: no events, no frames. The engine calls [`QcnCp::on_data_enqueue`] when a
//! data frame joins an egress queue and sends a CNM when it returns a quantised feedback; it keeps
//! one [`QcnRp`] per rate-limited flow and feeds it CNMs, transmissions, timer events and PAUSE
//! changes. After any call that may touch the timer, the engine compares
//! [`QcnRp::timer_generation`] with the one it scheduled and, if it changed, schedules a timer
//! event at [`QcnRp::timer_deadline`]; events carrying an older generation are ignored.
//!
//! Implemented (numbering of `design/protocols.md` section 2):
//! - CP 1-4: byte-count sampling, Fb = -(Qoff + w*Qdelta), |Fb| saturated at Fbmax = Qeq(1+2w),
//!   quantised to `fb_bits`, sampling table base/(1 + floor(qFb/8)) times a jitter factor.
//! - RP 1-5: multiplicative decrease, byte counter (si_count) and timer (timer_scount) stages,
//!   fast recovery / active / hyper-active increase, caps at line rate, release.
//! - RP 6, seed 004 "Paused RPs": timer and timer_scount freeze while paused; CNMs fully obeyed.
//!
//! Choices that are parameters ([`QcnParams`], `qcn/params.rs`): `tr_update` (TR = CR at every CNM, or only after
//! an increase), `fast_recovery_cmp` (5 or 4 fast-recovery cycles), the three jitters.
//!
//! Choices fixed here (our reading of the pseudo code):
//! - An expired counter (bytes_to_sample, tx_bcount) is reloaded with a fresh length; the
//!   overshoot of the frame that expired it is dropped, and one frame expires it at most once.
//! - A stage counter reloads its full length (BC_LIMIT, T) while its next cycle still ends in
//!   fast recovery judged on that counter alone, half after. With the default "le" this is the
//!   pseudo code's `si_count < F` after the increment: cycles 1..=5 are full, later ones half.
//! - The comparator variant moves only the fast-recovery boundary; hyper-active increase always
//!   needs min(si, ts) > F and adds R_HAI * (min(si, ts) - F).
//! - "if_increased": an increase happened iff si_count or timer_scount is non-zero (every
//!   expiry self-increases and a CNM zeroes both); the first CNM always sets TR = CR.
//! - A CNM restarts both counters fresh (full BC_LIMIT and T, new jitter draws, in that order).
//! - CR = (CR + TR)/2 in f64: when the average no longer moves CR it snaps to TR, so a limiter
//!   whose TR is the line rate reaches it exactly and [`QcnRp::is_released`] becomes true.
//! - For `fb_bits` other than 6 the sampling table keeps its 8 bands: band = floor(8 qFb / 2^bits).
//! - qFb depends on |Fb|/Fbmax only, so QCN needs no `fb_unit_bytes`: everything is in bytes.

mod params;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Carried, CcScheme, CongestionSpec, CpFrame, MessageKind, NO_TAG, Named, NoNp, NoSender, Pacing, Registered};
use crate::error::ConfigError;
use crate::rng::{jitter_factor, SimRng};
use crate::time::SimTime;

pub(crate) use params::*;

/// Fb = -(Qoff + w * Qdelta), Qoff = q - Qeq, Qdelta = q - q_old (CP.2). Negative = congestion.
fn feedback_bytes(q_bytes: f64, q_old_bytes: f64, params: &QcnParams) -> f64 {
    let q_off = q_bytes - params.qeq_bytes;
    let q_delta = q_bytes - q_old_bytes;
    -(q_off + params.w * q_delta)
}

/// qFb = min(2^bits - 1, floor(2^bits * |Fb| / Fbmax)) with |Fb| <= Fbmax, for Fb < 0;
/// 0 when Fb >= 0 (CP.3).
fn qntz_fb(fb_bytes: f64, params: &QcnParams) -> u8 {
    if fb_bytes >= 0.0 {
        return 0;
    }
    let levels = 2f64.powi(i32::from(params.fb_bits));
    let fb_max = params.fb_max_bytes();
    let magnitude = (-fb_bytes).min(fb_max);
    (levels * magnitude / fb_max).floor().min(levels - 1.0) as u8
}

/// Sampling table (CP.4): base / (1 + floor(qFb/8)) for 6-bit qFb, i.e. 150, 75, 50, 37.5, 30,
/// 25, 21.43, 18.75 KB at base 150 KB; other widths are scaled onto the same 8 bands.
fn sample_interval_bytes(base_bytes: f64, qfb: u8, fb_bits: u8) -> f64 {
    let band = (u32::from(qfb) * 8)
        .checked_shr(u32::from(fb_bits))
        .unwrap_or(0);
    base_bytes / f64::from(1 + band)
}

/// Congestion point: one per switch egress queue (protocols.md 2, CP).
#[derive(Clone, Debug)]
pub(crate) struct QcnCp {
    params: QcnParams,
    bytes_to_sample: f64,
    q_old_bytes: f64,
    last_fb_bytes: f64,
    samples: u64,
    cnms: u64,
}

impl QcnCp {
    /// A CP with an empty queue history; draws the first sampling interval (base * jitter).
    pub(crate) fn new(params: &QcnParams, rng: &mut SimRng) -> QcnCp {
        let mut cp = QcnCp {
            params: params.clone(),
            bytes_to_sample: 0.0,
            q_old_bytes: 0.0,
            last_fb_bytes: 0.0,
            samples: 0,
            cnms: 0,
        };
        cp.bytes_to_sample = cp.next_interval_bytes(0, rng);
        cp
    }

    /// A data frame of `frame_bytes` was just enqueued; `queue_bytes` is the queue length
    /// including it. Returns `Some(qfb)` (1..=2^bits - 1) when this frame is sampled and a CNM
    /// must be sent to its source (CP.1-3). CNMs themselves are never passed here.
    pub(crate) fn on_data_enqueue(
        &mut self,
        queue_bytes: u64,
        frame_bytes: u32,
        rng: &mut SimRng,
    ) -> Option<u8> {
        self.bytes_to_sample -= f64::from(frame_bytes);
        if self.bytes_to_sample > 0.0 {
            return None;
        }
        let qfb = self.sample(queue_bytes as f64);
        self.bytes_to_sample = self.next_interval_bytes(qfb, rng);
        if qfb == 0 {
            return None;
        }
        self.cnms += 1;
        Some(qfb)
    }

    /// Computes Fb and qFb for a sample; q_old follows q at every sample (CP.2).
    fn sample(&mut self, q_bytes: f64) -> u8 {
        let fb = feedback_bytes(q_bytes, self.q_old_bytes, &self.params);
        self.q_old_bytes = q_bytes;
        self.last_fb_bytes = fb;
        self.samples += 1;
        qntz_fb(fb, &self.params)
    }

    fn next_interval_bytes(&self, qfb: u8, rng: &mut SimRng) -> f64 {
        let p = &self.params;
        sample_interval_bytes(p.sample_base_bytes, qfb, p.fb_bits)
            * jitter_factor(rng, p.sample_jitter)
    }

    /// Fb computed at the last sample (bytes, signed, negative = congestion; 0 before any).
    pub(crate) fn last_fb(&self) -> f64 {
        self.last_fb_bytes
    }

    /// Frames sampled so far.
    #[cfg(test)]
    pub(crate) fn samples(&self) -> u64 {
        self.samples
    }

    /// CNMs requested so far (samples with qFb > 0).
    #[cfg(test)]
    pub(crate) fn cnms(&self) -> u64 {
        self.cnms
    }
}

/// The RP timer: a deadline while running, the remaining time while frozen by PAUSE (RP.6).
#[derive(Clone, Copy, Debug, Default)]
struct RpTimer {
    deadline: Option<SimTime>,
    remaining: SimTime,
    paused: bool,
    generation: u32,
}

impl RpTimer {
    /// (Re)starts a period of `period`; while paused it is stored, not run.
    fn start(&mut self, period: SimTime, now: SimTime) {
        if self.paused {
            self.remaining = period;
            self.deadline = None;
        } else {
            self.deadline = Some(now + period);
        }
        self.generation = self.generation.wrapping_add(1);
    }

    fn freeze(&mut self, now: SimTime) {
        let deadline = self.deadline.take().unwrap_or(now);
        self.remaining = deadline.saturating_sub(now);
        self.paused = true;
        self.generation = self.generation.wrapping_add(1);
    }

    fn thaw(&mut self, now: SimTime) {
        self.paused = false;
        self.deadline = Some(now + self.remaining);
        self.generation = self.generation.wrapping_add(1);
    }

    /// True if an event scheduled with `generation` is the live one.
    fn is_live(&self, generation: u32) -> bool {
        !self.paused && self.deadline.is_some() && generation == self.generation
    }
}

/// Reaction point: the rate limiter of one flow that received a CNM (protocols.md 2, RP).
#[derive(Clone, Debug)]
pub(crate) struct QcnRp {
    params: QcnParams,
    line_rate_bps: f64,
    current_rate_bps: f64,
    target_rate_bps: f64,
    tx_bcount_bytes: f64,
    /// si_count: completed byte-counter cycles since the last CNM.
    byte_stage: u32,
    /// timer_scount: completed timer cycles since the last CNM.
    timer_stage: u32,
    timer: RpTimer,
    cnms_received: u64,
}

impl QcnRp {
    /// Installed on the first CNM of a flow: CR = TR = line rate (RP.1), counters and timer
    /// started. The caller then calls [`QcnRp::on_cnm`] with that CNM.
    pub(crate) fn new(line_rate_bps: f64, params: &QcnParams, now: SimTime, rng: &mut SimRng) -> QcnRp {
        let mut rp = QcnRp {
            params: params.clone(),
            line_rate_bps,
            current_rate_bps: line_rate_bps,
            target_rate_bps: line_rate_bps,
            tx_bcount_bytes: 0.0,
            byte_stage: 0,
            timer_stage: 0,
            timer: RpTimer::default(),
            cnms_received: 0,
        };
        rp.restart_cycles(now, rng);
        rp
    }

    /// CNM with quantised feedback `qfb` (RP.2): TR = CR (per `tr_update`), CR *= max(1 - Gd
    /// qFb, min_dec_factor) floored at MIN_RATE, stages zeroed, counter and timer restarted.
    /// Obeyed fully while paused; the timer then restarts frozen with a full period.
    pub(crate) fn on_cnm(&mut self, qfb: u8, now: SimTime, rng: &mut SimRng) {
        if self.tr_follows_cnm() {
            self.target_rate_bps = self.current_rate_bps;
        }
        let p = &self.params;
        let factor = (1.0 - p.gd * f64::from(qfb)).max(p.min_dec_factor);
        self.current_rate_bps = (self.current_rate_bps * factor).max(p.min_rate_bps);
        self.cnms_received += 1;
        self.restart_cycles(now, rng);
    }

    fn tr_follows_cnm(&self) -> bool {
        let increased = self.byte_stage > 0 || self.timer_stage > 0;
        self.params.tr_update == TrUpdate::Always || self.cnms_received == 0 || increased
    }

    /// Stages to 0, tx_bcount = BC_LIMIT, timer = T, each with a fresh jitter draw.
    fn restart_cycles(&mut self, now: SimTime, rng: &mut SimRng) {
        self.byte_stage = 0;
        self.timer_stage = 0;
        self.tx_bcount_bytes = self.byte_cycle_bytes(rng);
        let period = self.timer_period(rng);
        self.timer.start(period, now);
    }

    /// Called after every data frame this limiter sent (RP.3). `_now` is unused: the byte
    /// counter does not depend on time. Returns true when a byte-counter cycle ended (the rates
    /// changed); the timer is never touched here.
    pub(crate) fn on_transmit(&mut self, frame_bytes: u32, _now: SimTime, rng: &mut SimRng) -> bool {
        self.tx_bcount_bytes -= f64::from(frame_bytes);
        if self.tx_bcount_bytes > 0.0 {
            return false;
        }
        self.byte_stage = self.byte_stage.saturating_add(1);
        self.tx_bcount_bytes = self.byte_cycle_bytes(rng);
        self.self_increase();
        true
    }

    /// Timer event scheduled with `generation` (RP.4). Stale generations and events while
    /// paused are ignored.
    pub(crate) fn on_timer(&mut self, generation: u32, now: SimTime, rng: &mut SimRng) {
        if !self.timer.is_live(generation) {
            return;
        }
        self.timer_stage = self.timer_stage.saturating_add(1);
        let period = self.timer_period(rng);
        self.timer.start(period, now);
        self.self_increase();
    }

    /// The limiter's token-bucket depth (`rp_bucket_bytes`).
    pub(crate) fn bucket_bytes(&self) -> f64 {
        self.params.rp_bucket_bytes
    }

    /// When the pending timer event is due; `None` while paused (frozen).
    pub(crate) fn timer_deadline(&self) -> Option<SimTime> {
        self.timer.deadline
    }

    /// Changes every time the deadline is (re)set or frozen.
    pub(crate) fn timer_generation(&self) -> u32 {
        self.timer.generation
    }

    /// PAUSE on the RP's link (seed 004 "Paused RPs", RP.6): the timer and timer_scount freeze,
    /// keeping the remaining time, and resume on unpause. Repeating the current state is a no-op.
    pub(crate) fn set_paused(&mut self, paused: bool, now: SimTime) {
        match (self.timer.paused, paused) {
            (false, true) => self.timer.freeze(now),
            (true, false) => self.timer.thaw(now),
            _ => {}
        }
    }

    /// Length of the next byte-counter cycle: BC_LIMIT while the next cycle ends in fast
    /// recovery, BC_LIMIT/2 after (RP.3), times the jitter factor.
    fn byte_cycle_bytes(&self, rng: &mut SimRng) -> f64 {
        let p = &self.params;
        p.bc_limit_bytes * self.cycle_scale(self.byte_stage) * jitter_factor(rng, p.bc_jitter)
    }

    /// Length of the next timer period: T while the next cycle ends in fast recovery, T/2 after
    /// (RP.4), times the jitter factor.
    fn timer_period(&self, rng: &mut SimRng) -> SimTime {
        let p = &self.params;
        let seconds = p.timer_period_s
            * self.cycle_scale(self.timer_stage)
            * jitter_factor(rng, p.timer_jitter);
        SimTime::from_secs_f64(seconds)
    }

    /// 1 if a counter that has completed `stage` cycles is still in fast recovery for its next
    /// cycle, 1/2 otherwise.
    fn cycle_scale(&self, stage: u32) -> f64 {
        let p = &self.params;
        let next = stage.saturating_add(1);
        if p.fast_recovery_cmp
            .in_fast_recovery(next, p.fast_recovery_threshold)
        {
            1.0
        } else {
            0.5
        }
    }

    /// self_increase (RP.5): fast recovery keeps TR; hyper-active adds R_HAI * (min - F) once
    /// both stages exceed F; active adds R_AI otherwise; then CR = (CR + TR)/2, both capped at
    /// line rate.
    fn self_increase(&mut self) {
        let p = &self.params;
        let f = p.fast_recovery_threshold;
        let (max_stage, min_stage) = (
            self.byte_stage.max(self.timer_stage),
            self.byte_stage.min(self.timer_stage),
        );
        if !p.fast_recovery_cmp.in_fast_recovery(max_stage, f) {
            self.target_rate_bps += if min_stage > f {
                p.r_hai_bps * f64::from(min_stage - f)
            } else {
                p.r_ai_bps
            };
        }
        self.target_rate_bps = self.target_rate_bps.min(self.line_rate_bps);
        let average = 0.5 * (self.current_rate_bps + self.target_rate_bps);
        // Averaging stalls one ulp short of TR; snapping lets CR reach line rate and release.
        let next = if average == self.current_rate_bps {
            self.target_rate_bps
        } else {
            average
        };
        self.current_rate_bps = next.min(self.line_rate_bps);
    }

    /// CR, the rate the limiter lets the flow send at.
    pub(crate) fn current_rate_bps(&self) -> f64 {
        self.current_rate_bps
    }

    /// TR, the rate CR recovers towards.
    pub(crate) fn target_rate_bps(&self) -> f64 {
        self.target_rate_bps
    }

    /// si_count: byte-counter cycles completed since the last CNM.
    #[cfg(test)]
    pub(crate) fn byte_stage(&self) -> u32 {
        self.byte_stage
    }

    /// timer_scount: timer cycles completed since the last CNM.
    #[cfg(test)]
    pub(crate) fn timer_stage(&self) -> u32 {
        self.timer_stage
    }

    /// True when CR has reached line rate (after an increase) and the limiter may be removed.
    /// A limiter is always created and cut in the same step, so a fresh one is never released.
    pub(crate) fn is_released(&self) -> bool {
        self.current_rate_bps >= self.line_rate_bps
    }
}

/// The congestion notification message (CNM) a CP sends to the sampled frame's source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cnm {
    /// Quantised feedback, 1..=2^fb_bits - 1.
    pub(crate) qfb: u8,
    /// The congestion point that sent it.
    pub(crate) cpid: u32,
}

// What the summary says ran: QCN's choices that are parameters (a comment: the summary's schema describes
// the variant by its fields).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct QcnVariant {
    pub(crate) tr_update: TrUpdate,
    pub(crate) fast_recovery_cmp: FastRecoveryCmp,
}

/// QCN as registered: `scheme = "qcn"`, `[congestion.qcn]`; CP and RP, no NP.
pub(crate) struct Qcn;

impl CcScheme for Qcn {
    type Params = QcnParams;
    type Config = QcnParams;
    type Msg = Cnm;
    type Cp = QcnCp;
    type Rp = QcnRp;
    type Np = NoNp;
    type Sender = NoSender;
    type Variant = QcnVariant;

    const NAMES: &'static [Named] = &[Named {
        name: "qcn",
        doc: "",
    }];
    const CONTROL_KINDS: &'static [Named] = &[Named {
        name: "qcn_cnm",
        doc: "",
    }];

    fn fill_defaults(spec: &mut CongestionSpec, _selected: &str) {
        spec.qcn.get_or_insert_with(QcnParams::default);
    }

    fn validate(params: &QcnParams, _: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        params.validate(path)
    }

    fn resolve(spec: &CongestionSpec, _selected: &str) -> QcnParams {
        spec.qcn.clone().unwrap_or_default()
    }

    fn variant(p: &QcnParams) -> QcnVariant {
        QcnVariant {
            tr_update: p.tr_update,
            fast_recovery_cmp: p.fast_recovery_cmp,
        }
    }

    fn kind(_: &Cnm) -> MessageKind {
        Self::message_kind(0)
    }

    fn msg_bytes(_: &Cnm, p: &QcnParams) -> u32 {
        p.cnm_bytes
    }

    fn new_cp(p: &QcnParams, _cpid: u32, _: f64, rng: &mut SimRng) -> QcnCp {
        QcnCp::new(p, rng)
    }

    fn on_enqueue(
        cp: &mut QcnCp,
        frame: CpFrame<'_, Cnm>,
        queue_bytes: u64,
        cpid: u32,
        rng: &mut SimRng,
    ) -> Option<Cnm> {
        match frame.payload {
            Carried::Data => cp
                .on_data_enqueue(queue_bytes, frame.bytes, rng)
                .map(|qfb| Cnm { qfb, cpid }),
            _ => None,
        }
    }

    fn last_fb(cp: &QcnCp) -> f64 {
        cp.last_fb()
    }

    /// Any CNM installs a limiter.
    fn install(
        p: &QcnParams,
        _: &Cnm,
        line_rate_bps: f64,
        now: SimTime,
        rng: &mut SimRng,
    ) -> Option<QcnRp> {
        Some(QcnRp::new(line_rate_bps, p, now, rng))
    }

    fn on_feedback(rp: &mut QcnRp, m: &Cnm, now: SimTime, rng: &mut SimRng) {
        rp.on_cnm(m.qfb, now, rng);
    }

    fn rate_bps(rp: &QcnRp) -> f64 {
        rp.current_rate_bps()
    }

    fn target_rate_bps(rp: &QcnRp) -> Option<f64> {
        Some(rp.target_rate_bps())
    }

    fn pacing(rp: &QcnRp) -> Pacing {
        Pacing {
            rate_bps: rp.current_rate_bps(),
            tag: NO_TAG,
            bucket_bytes: rp.bucket_bytes(),
        }
    }

    fn on_transmit(
        rp: &mut QcnRp,
        frame_bytes: u32,
        now: SimTime,
        rng: &mut SimRng,
    ) -> (Option<Cnm>, bool) {
        (None, rp.on_transmit(frame_bytes, now, rng))
    }

    fn timer(rp: &QcnRp) -> Option<(SimTime, u32)> {
        rp.timer_deadline().map(|t| (t, rp.timer_generation()))
    }

    fn on_timer(rp: &mut QcnRp, generation: u32, now: SimTime, rng: &mut SimRng) {
        rp.on_timer(generation, now, rng);
    }

    /// Seed 004 "Paused RPs": the timer freezes while the host's link is paused.
    fn set_paused(rp: &mut QcnRp, paused: bool, now: SimTime) {
        rp.set_paused(paused, now);
    }

    fn is_released(rp: &QcnRp) -> bool {
        rp.is_released()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, StreamKind};

    const LINE_BPS: f64 = 10e9;
    const FRAME_BYTES: u32 = 1500;

    fn rng() -> SimRng {
        stream(4, StreamKind::Misc, 0)
    }

    fn ms(v: f64) -> SimTime {
        SimTime::from_secs_f64(v * 1e-3)
    }

    /// An RP at 10 Gb/s that got its first CNM at time 0.
    fn rp_after_cnm(params: &QcnParams, qfb: u8, r: &mut SimRng) -> QcnRp {
        let mut rp = QcnRp::new(LINE_BPS, params, SimTime::ZERO, r);
        rp.on_cnm(qfb, SimTime::ZERO, r);
        rp
    }

    /// Sends `bytes` as 1500 B frames. Each reports a change exactly when it ends a byte-counter
    /// cycle (the host skips looking at the limiter otherwise), and none moves the timer.
    fn send(rp: &mut QcnRp, bytes: u32, r: &mut SimRng) {
        for _ in 0..bytes / FRAME_BYTES {
            let (stage, rate, timer) = (rp.byte_stage(), rp.current_rate_bps(), rp.timer);
            let changed = rp.on_transmit(FRAME_BYTES, SimTime::ZERO, r);
            assert_eq!(changed, rp.byte_stage() != stage);
            if !changed {
                assert_eq!(rp.current_rate_bps(), rate);
            }
            assert_eq!(
                (rp.timer.deadline, rp.timer.generation),
                (timer.deadline, timer.generation)
            );
        }
    }

    fn fire_timer(rp: &mut QcnRp, r: &mut SimRng) {
        let due = rp.timer_deadline().expect("timer running");
        rp.on_timer(rp.timer_generation(), due, r);
    }

    fn assert_close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "got {got}, want {want}"
        );
    }

    #[test]
    fn qfb_63_cuts_10g_to_5_078g_and_five_byte_cycles_restore_9_85g() {
        let mut r = rng();
        let mut rp = rp_after_cnm(&QcnParams::default(), 63, &mut r);
        assert_close(rp.current_rate_bps(), 5.078125e9);
        assert_eq!(rp.target_rate_bps(), LINE_BPS);
        for cycle in 1..=5 {
            send(&mut rp, 150_000, &mut r);
            assert_eq!(rp.byte_stage(), cycle);
            assert_eq!(rp.target_rate_bps(), LINE_BPS, "fast recovery keeps TR");
        }
        let exact = 10e9 - (10e9 - 5.078125e9) / 32.0;
        let cr = rp.current_rate_bps();
        assert!((cr - exact).abs() <= 1e-6 * exact, "CR {cr}, exact {exact}");
        assert_eq!((cr / 1e7).round() / 100.0, 9.85);
        assert!(!rp.is_released());
    }

    /// Puts a CP in a state where the next 1-byte frame is sampled at a steady queue giving
    /// `qfb`, then returns the interval it reloaded and the bytes until the following sample.
    fn interval_after_sample(qfb: u8) -> (f64, u64) {
        let params = QcnParams::default();
        let mut r = rng();
        let mut cp = QcnCp::new(&params, &mut r);
        let q = params.qeq_bytes + (f64::from(qfb) + 0.5) * params.fb_max_bytes() / 64.0;
        let q = q.round() as u64;
        cp.q_old_bytes = q as f64;
        cp.bytes_to_sample = 1.0;
        let sent = cp.on_data_enqueue(q, 1, &mut r);
        assert_eq!(sent, (qfb > 0).then_some(qfb));
        let reloaded = cp.bytes_to_sample;
        let mut bytes = 0;
        while cp.samples() < 2 {
            cp.on_data_enqueue(q, 1, &mut r);
            bytes += 1;
        }
        (reloaded, bytes)
    }

    #[test]
    fn cp_sampling_interval_per_qfb_band() {
        let table_kb = [150.0, 75.0, 50.0, 37.5, 30.0, 25.0, 150.0 / 7.0, 18.75];
        for (band, want_kb) in table_kb.iter().enumerate() {
            for qfb in [8 * band as u8, 8 * band as u8 + 7] {
                let (reloaded, bytes) = interval_after_sample(qfb);
                assert_close(reloaded, want_kb * 1000.0);
                assert_eq!(bytes, (want_kb * 1000.0_f64).ceil() as u64, "qfb {qfb}");
            }
        }
        assert_eq!((150.0_f64 / 7.0 * 100.0).round() / 100.0, 21.43);
    }

    #[test]
    fn cp_sampling_jitter_stays_in_band() {
        let params = QcnParams {
            sample_jitter: 0.3,
            ..QcnParams::default()
        };
        let mut r = rng();
        let cp = QcnCp::new(&params, &mut r);
        for qfb in 0..64 {
            let base = sample_interval_bytes(150_000.0, qfb, 6);
            let got = cp.next_interval_bytes(qfb, &mut r);
            assert!(got >= 0.7 * base && got <= 1.3 * base, "qfb {qfb}: {got}");
        }
    }

    #[test]
    fn fb_saturates_and_quantises() {
        let seed004 = QcnParams {
            qeq_bytes: 33_000.0,
            ..QcnParams::default()
        };
        assert_eq!(seed004.fb_max_bytes(), 165_000.0);
        let mut r = rng();
        let mut cp = QcnCp::new(&seed004, &mut r);
        // q_old 33 KB, q 53 KB: Fb = -(20000 + 2*20000) = -60000; 64*60000/165000 = 23.27.
        cp.q_old_bytes = 33_000.0;
        cp.bytes_to_sample = 1.0;
        assert_eq!(cp.on_data_enqueue(53_000, 1500, &mut r), Some(23));
        assert_eq!(cp.last_fb(), -60_000.0);
        // Far above Qeq and rising: |Fb| = 417000 saturates at 165000 -> 64 -> clamp 63.
        cp.q_old_bytes = 0.0;
        cp.bytes_to_sample = 1.0;
        assert_eq!(cp.on_data_enqueue(150_000, 1500, &mut r), Some(63));
        assert_eq!(cp.last_fb(), -417_000.0);
        assert_eq!(qntz_fb(-165_000.0, &seed004), 63);
        assert_eq!(qntz_fb(-165_000.0 * 62.5 / 64.0, &seed004), 62);
        // Below one step (Fbmax/64 = 2578.1 B) the feedback quantises to 0: no CNM.
        assert_eq!(qntz_fb(-2_578.0, &seed004), 0);
        assert_eq!(qntz_fb(-2_579.0, &seed004), 1);
        let three_bits = QcnParams {
            fb_bits: 3,
            ..seed004
        };
        assert_eq!(qntz_fb(-60_000.0, &three_bits), 2);
        assert_eq!(qntz_fb(-1e9, &three_bits), 7);
    }

    #[test]
    fn no_cnm_when_fb_non_negative_and_q_old_updated_at_every_sample() {
        let params = QcnParams::default();
        let mut r = rng();
        let mut cp = QcnCp::new(&params, &mut r);
        // Below Qeq and draining: Fb = -(-16000 + 2*(-10000)) = +36000.
        cp.q_old_bytes = 20_000.0;
        cp.bytes_to_sample = 1.0;
        assert_eq!(cp.on_data_enqueue(10_000, 1500, &mut r), None);
        assert_eq!(cp.last_fb(), 36_000.0);
        assert_eq!(cp.q_old_bytes, 10_000.0);
        assert_eq!(cp.bytes_to_sample, 150_000.0);
        // q_old was taken at the sample above: Qdelta = 16000, Fb = -32000, qFb 15.
        cp.bytes_to_sample = 1.0;
        assert_eq!(cp.on_data_enqueue(26_000, 1500, &mut r), Some(15));
        // Exactly at Qeq and steady: Fb = 0, no CNM.
        cp.bytes_to_sample = 1.0;
        assert_eq!(cp.on_data_enqueue(26_000, 1500, &mut r), None);
        assert_eq!(cp.last_fb(), 0.0);
        // Negative Fb too small to quantise: no CNM, q_old still follows q.
        cp.bytes_to_sample = 1.0;
        assert_eq!(cp.on_data_enqueue(26_500, 1500, &mut r), None);
        assert_eq!(cp.last_fb(), -1_500.0);
        assert_eq!(cp.q_old_bytes, 26_500.0);
        assert_eq!((cp.samples(), cp.cnms()), (4, 1));
        // Frames between samples do not touch q_old.
        assert_eq!(cp.on_data_enqueue(90_000, 1500, &mut r), None);
        assert_eq!(cp.q_old_bytes, 26_500.0);
        assert_eq!(cp.samples(), 4);
    }

    #[test]
    fn paused_rp_freezes_timer_and_still_obeys_cnm() {
        let mut r = rng();
        let mut rp = rp_after_cnm(&QcnParams::default(), 63, &mut r);
        assert_eq!(rp.timer_deadline(), Some(ms(15.0)));
        let running = rp.timer_generation();
        rp.set_paused(true, ms(5.0));
        assert_eq!(rp.timer_deadline(), None);
        assert_ne!(rp.timer_generation(), running);
        rp.on_timer(running, ms(15.0), &mut r);
        rp.on_timer(rp.timer_generation(), ms(15.0), &mut r);
        assert_eq!(rp.timer_stage(), 0, "timer_scount frozen");
        rp.set_paused(false, ms(100.0));
        assert_eq!(rp.timer_deadline(), Some(ms(110.0)), "10 ms remained");
        fire_timer(&mut rp, &mut r);
        send(&mut rp, 150_000, &mut r);
        assert_eq!((rp.timer_stage(), rp.byte_stage()), (1, 1));
        rp.set_paused(true, ms(114.0));
        let cr = rp.current_rate_bps();
        rp.on_cnm(32, ms(115.0), &mut r);
        assert_close(rp.current_rate_bps(), cr * 0.75);
        assert_eq!(rp.target_rate_bps(), cr);
        assert_eq!((rp.timer_stage(), rp.byte_stage()), (0, 0));
        assert_eq!(rp.timer_deadline(), None, "still frozen");
        rp.set_paused(false, ms(200.0));
        assert_eq!(rp.timer_deadline(), Some(ms(215.0)), "a fresh full period");
    }

    #[test]
    fn repeated_pause_state_is_a_no_op() {
        let mut r = rng();
        let mut rp = rp_after_cnm(&QcnParams::default(), 10, &mut r);
        rp.set_paused(false, ms(1.0));
        assert_eq!(rp.timer_deadline(), Some(ms(15.0)));
        rp.set_paused(true, ms(2.0));
        let frozen = rp.timer_generation();
        rp.set_paused(true, ms(3.0));
        assert_eq!(rp.timer_generation(), frozen);
        rp.set_paused(false, ms(10.0));
        assert_eq!(rp.timer_deadline(), Some(ms(23.0)));
    }

    /// Two back-to-back CNMs leave TR below line rate, so increases are visible.
    fn rp_below_line_rate(params: &QcnParams, r: &mut SimRng) -> QcnRp {
        let mut rp = rp_after_cnm(params, 63, r);
        rp.on_cnm(63, SimTime::ZERO, r);
        assert_close(rp.target_rate_bps(), 5.078125e9);
        rp
    }

    /// Sends one byte-counter cycle of `bytes`, checks CR = (CR + TR)/2 and returns TR's step.
    fn byte_cycle(rp: &mut QcnRp, bytes: u32, r: &mut SimRng) -> f64 {
        let (cr, tr) = (rp.current_rate_bps(), rp.target_rate_bps());
        send(rp, bytes, r);
        assert_close(rp.current_rate_bps(), 0.5 * (cr + rp.target_rate_bps()));
        rp.target_rate_bps() - tr
    }

    #[test]
    fn active_increase_adds_r_ai_after_five_fast_recovery_cycles() {
        let mut r = rng();
        let mut rp = rp_below_line_rate(&QcnParams::default(), &mut r);
        for _ in 0..5 {
            assert_eq!(byte_cycle(&mut rp, 150_000, &mut r), 0.0);
        }
        assert_eq!(
            rp.tx_bcount_bytes, 75_000.0,
            "BC_LIMIT/2 after fast recovery"
        );
        for _ in 0..3 {
            assert_close(byte_cycle(&mut rp, 75_000, &mut r), 5e6);
        }
        assert_eq!(rp.byte_stage(), 8);
    }

    #[test]
    fn timer_cycles_increase_and_halve_after_fast_recovery() {
        let mut r = rng();
        let mut rp = rp_below_line_rate(&QcnParams::default(), &mut r);
        let mut now = SimTime::ZERO;
        for stage in 1..=7 {
            let period = if stage <= 5 { ms(15.0) } else { ms(7.5) };
            assert_eq!(rp.timer_deadline(), Some(now + period), "stage {stage}");
            now += period;
            let tr = rp.target_rate_bps();
            fire_timer(&mut rp, &mut r);
            let step = if stage <= 5 { 0.0 } else { 5e6 };
            assert_close(rp.target_rate_bps() - tr, step);
        }
    }

    #[test]
    fn hyper_active_increase_once_both_stages_pass_f() {
        let mut r = rng();
        let mut rp = rp_below_line_rate(&QcnParams::default(), &mut r);
        for _ in 0..5 {
            byte_cycle(&mut rp, 150_000, &mut r);
        }
        assert_close(byte_cycle(&mut rp, 75_000, &mut r), 5e6);
        assert_eq!(rp.byte_stage(), 6);
        // si = 6 > F: every timer step is at least active; hyper-active once ts > F too, by
        // R_HAI * (min(si, ts) - F) = R_HAI * 1 while si stays 6.
        for (ts, step) in [(1, 5e6), (5, 5e6), (6, 50e6), (7, 50e6), (8, 50e6)] {
            while rp.timer_stage() < ts - 1 {
                fire_timer(&mut rp, &mut r);
            }
            let tr = rp.target_rate_bps();
            fire_timer(&mut rp, &mut r);
            assert_close(rp.target_rate_bps() - tr, step);
        }
        // Further byte cycles raise min(si, ts) - F to 2, then 3 (ts = 8).
        assert_close(byte_cycle(&mut rp, 75_000, &mut r), 100e6);
        assert_close(byte_cycle(&mut rp, 75_000, &mut r), 150e6);
        assert_close(byte_cycle(&mut rp, 75_000, &mut r), 150e6);
    }

    #[test]
    fn rates_cap_at_line_rate_and_limiter_releases() {
        let mut r = rng();
        let mut rp = rp_after_cnm(&QcnParams::default(), 63, &mut r);
        let mut cycles = 0;
        while !rp.is_released() {
            send(&mut rp, 150_000, &mut r);
            fire_timer(&mut rp, &mut r);
            assert!(rp.target_rate_bps() <= LINE_BPS && rp.current_rate_bps() <= LINE_BPS);
            cycles += 1;
            assert!(cycles < 200, "never released: CR {}", rp.current_rate_bps());
        }
        assert_eq!(rp.current_rate_bps(), LINE_BPS);
        assert_eq!(rp.target_rate_bps(), LINE_BPS);
    }

    #[test]
    fn cnm_decrease_floors_at_min_dec_factor_and_min_rate() {
        let mut r = rng();
        let steep = QcnParams {
            gd: 1.0 / 64.0,
            ..QcnParams::default()
        };
        let mut rp = rp_after_cnm(&steep, 63, &mut r);
        assert_close(rp.current_rate_bps(), 5e9);
        for _ in 0..20 {
            rp.on_cnm(63, SimTime::ZERO, &mut r);
        }
        assert_eq!(rp.current_rate_bps(), 5e6);
        assert_eq!(rp.target_rate_bps(), 5e6);
    }

    #[test]
    fn fast_recovery_lt_takes_four_cycles() {
        let mut r = rng();
        let lt = QcnParams {
            fast_recovery_cmp: FastRecoveryCmp::Lt,
            ..QcnParams::default()
        };
        let mut rp = rp_below_line_rate(&lt, &mut r);
        for _ in 0..4 {
            assert_eq!(byte_cycle(&mut rp, 150_000, &mut r), 0.0);
        }
        // The fifth cycle is already half length and ends in active increase.
        assert_eq!(rp.tx_bcount_bytes, 75_000.0);
        assert_close(byte_cycle(&mut rp, 75_000, &mut r), 5e6);
        assert_eq!(rp.byte_stage(), 5);
        let mut le = rp_below_line_rate(&QcnParams::default(), &mut r);
        for _ in 0..5 {
            assert_eq!(byte_cycle(&mut le, 150_000, &mut r), 0.0);
        }
    }

    #[test]
    fn tr_update_if_increased_keeps_tr_on_back_to_back_cnms() {
        let mut r = rng();
        let params = QcnParams {
            tr_update: TrUpdate::IfIncreased,
            ..QcnParams::default()
        };
        let mut rp = rp_after_cnm(&params, 63, &mut r);
        assert_eq!(rp.target_rate_bps(), LINE_BPS, "first CNM sets TR = CR");
        rp.on_cnm(63, SimTime::ZERO, &mut r);
        assert_eq!(
            rp.target_rate_bps(),
            LINE_BPS,
            "no increase since the last CNM"
        );
        send(&mut rp, 150_000, &mut r);
        let cr = rp.current_rate_bps();
        rp.on_cnm(63, SimTime::ZERO, &mut r);
        assert_eq!(rp.target_rate_bps(), cr);
    }

    #[test]
    fn stale_timer_generations_are_ignored() {
        let mut r = rng();
        let mut rp = QcnRp::new(LINE_BPS, &QcnParams::default(), SimTime::ZERO, &mut r);
        let before_cnm = rp.timer_generation();
        rp.on_cnm(40, ms(1.0), &mut r);
        assert_ne!(rp.timer_generation(), before_cnm);
        let cr = rp.current_rate_bps();
        rp.on_timer(before_cnm, ms(15.0), &mut r);
        assert_eq!((rp.timer_stage(), rp.current_rate_bps()), (0, cr));
        assert_eq!(rp.timer_deadline(), Some(ms(16.0)));
        let live = rp.timer_generation();
        rp.on_timer(live, ms(16.0), &mut r);
        assert_eq!(rp.timer_stage(), 1);
        assert_ne!(rp.timer_generation(), live);
        assert_eq!(rp.timer_deadline(), Some(ms(31.0)));
        rp.on_timer(live, ms(31.0), &mut r);
        assert_eq!(
            rp.timer_stage(),
            1,
            "an event already consumed is stale too"
        );
    }

    #[test]
    fn rp_jittered_cycles_stay_in_band() {
        let seed004 = QcnParams {
            bc_jitter: 0.3,
            timer_jitter: 0.3,
            timer_period_s: 0.010,
            ..QcnParams::default()
        };
        let mut r = rng();
        for _ in 0..1000 {
            let rp = QcnRp::new(LINE_BPS, &seed004, SimTime::ZERO, &mut r);
            assert!((105_000.0..=195_000.0).contains(&rp.tx_bcount_bytes));
            let due = rp.timer_deadline().unwrap();
            assert!(due >= ms(7.0) && due <= ms(13.0), "{due}");
        }
    }
}
