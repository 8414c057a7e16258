//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015),
//! written only against the scheme hooks (`docs/hooks.md`):
//! - CP: RED-like ECN marking on a switch output queue, at enqueue or at dequeue (a parameter):
//!   p = 0 below Kmin, Pmax (q - Kmin) / (Kmax - Kmin) from Kmin to Kmax, 1 above Kmax. A marked
//!   frame carries `Frame::ecn_ce`; the CP sends nothing itself.
//! - NP: a marked data frame from a source makes the receiver send that source a CNP, at most
//!   one per source per `cnp_interval_s` (the paper's N = 50 us).
//! - RP: starts at line rate when the first CNP arrives (CR = line rate, alpha = `alpha_init`)
//!   and then, per the paper's figure of the RP algorithm:
//!   on a CNP: TR = CR, CR = CR (1 - alpha/2), alpha = (1 - g) alpha + g, and the rate timer,
//!   the byte counter and their stage counts restart; every `alpha_timer_s` (K = 55 us) without
//!   a CNP: alpha = (1 - g) alpha; each expiry of the rate timer T or of the byte counter B
//!   increments that counter's stage and then raises the rate: fast recovery (CR = (CR + TR)/2)
//!   while max(T, BC) <= F, hyper increase (TR += step, CR = (CR + TR)/2) when min(T, BC) > F,
//!   additive increase (TR += R_AI, CR = (CR + TR)/2) otherwise.
//!
//! Choices fixed here (our reading; each says why):
//! - "max(T, BC) <= F" gives F fast-recovery steps, the paper's "F = 5 iterations" (and what
//!   the single-counter Mellanox model in the public ns-3 code does with stage < F before its
//!   increment).
//! - Which counters raise the rate is named (`counters`): `timer_and_bytes` (the paper's two),
//!   `timer_only` (the same rule with the byte counter off: F fast-recovery steps, then additive
//!   increase, never hyper), `single_counter` (the Mellanox model of the public ns-3 code, which
//!   has no byte counter: F fast-recovery steps, one additive step, then hyper increase). A zero
//!   `byte_counter_bytes` with `timer_and_bytes` is an error, not a silent switch.
//! - The hyper-increase step is R_HAI (i - F) with i = min(T, BC) as QCN's pseudo code has it
//!   (`hai_step = "qcn"`), or a constant R_HAI (`"constant"`, the Mellanox model).
//! - The NP keys "per flow" by the data's source host: cnsim's RPs are per destination at the
//!   source (hooks.md, "Limits"), so one CNP budget per source-destination pair is one per RP.
//! - The RP is never released: back at line rate it keeps its state and its alpha keeps
//!   decaying every K, so the next CNP cuts by the decayed alpha/2 (the paper's RP has no
//!   release, unlike QCN's; a fresh RP would cut by `alpha_init`/2, half the rate). Its timers
//!   keep running at line rate (one event per K per pair that has had a CNP).
//! - Not modelled: the Mellanox model's batching of rate decreases and alpha updates into
//!   fixed intervals (`RATE_DECREASE_INTERVAL`, `ALPHA_RESUME_INTERVAL` with a CNP-arrived
//!   bit); here every CNP cuts at once and alpha decays on its own timer. PAUSE does not freeze
//!   a DCQCN RP.
//!
//! Parameters: [`DcqcnParams`] (`dcqcn/params.rs`, `[congestion.dcqcn]`) and its named sets.

mod params;

use std::collections::HashMap;

use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Carried, CcScheme, CongestionSpec, CpFrame, HostId, MessageKind, NO_TAG, Named, NoSender, NpFrame, Pacing, Registered, lay_named_set};
use crate::error::ConfigError;
use crate::rng::SimRng;
use crate::time::SimTime;

pub(crate) use params::*;


/// The CNP (it carries nothing: the frame's `flow` names the RP at the source).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cnp;

/// ECN marking on one output queue.
pub(crate) struct DcqcnCp {
    params: DcqcnParams,
    /// Frames marked (CE) here.
    pub(crate) marked: u64,
}

impl DcqcnCp {
    pub(crate) fn new(params: &DcqcnParams) -> DcqcnCp {
        DcqcnCp {
            params: params.clone(),
            marked: 0,
        }
    }

    /// Decides whether a data frame is marked at this point (`at`), with the queue length the
    /// hook reports. Draws a number only where 0 < p < 1, so the draws follow the queue.
    pub(crate) fn should_mark(&mut self, at: MarkOn, queue_bytes: u64, rng: &mut SimRng) -> bool {
        if at != self.params.mark_on {
            return false;
        }
        let p = self.params.mark_probability(queue_bytes as f64);
        let mark = if p <= 0.0 {
            false
        } else if p >= 1.0 {
            true
        } else {
            rng.random::<f64>() < p
        };
        self.marked += mark as u64;
        mark
    }
}

/// The receiver's CNP pacing: the last CNP sent to each reaction point (a source host for
/// open-loop data; a queue pair for a transported flow, as a RoCE NIC paces CNPs per QP).
pub(crate) struct DcqcnNp {
    interval: SimTime,
    last_cnp: HashMap<RpKey, SimTime>,
}

/// The reaction point a CNP goes to: a source host, or one queue pair (flow id) of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum RpKey {
    Host(HostId),
    Qp(u32),
}

impl DcqcnNp {
    pub(crate) fn new(params: &DcqcnParams) -> DcqcnNp {
        DcqcnNp {
            interval: SimTime::from_secs_f64(params.cnp_interval_s),
            last_cnp: HashMap::new(),
        }
    }

    /// A data frame from `src` (of queue pair `qp`, if transported) arrived, marked or not.
    /// True: send its reaction point a CNP now.
    pub(crate) fn on_data(
        &mut self,
        src: HostId,
        qp: Option<u32>,
        marked: bool,
        now: SimTime,
    ) -> bool {
        if !marked {
            return false;
        }
        let key = qp.map_or(RpKey::Host(src), RpKey::Qp);
        match self.last_cnp.get(&key) {
            Some(&last) if now.saturating_sub(last) < self.interval => false,
            _ => {
                self.last_cnp.insert(key, now);
                true
            }
        }
    }
}

/// The reaction point of one source-destination pair.
pub(crate) struct DcqcnRp {
    params: DcqcnParams,
    line_rate_bps: f64,
    /// Current rate CR.
    cr_bps: f64,
    /// Target rate TR.
    tr_bps: f64,
    alpha: f64,
    /// Stage counts T (timer expiries) and BC (byte-counter expiries) since the last CNP.
    timer_stage: u32,
    byte_stage: u32,
    bytes_left: f64,
    rate_deadline: SimTime,
    alpha_deadline: SimTime,
    /// Changes whenever either deadline is reset, so a stale timer event is ignored.
    generation: u32,
    pub(crate) cnps: u64,
}

impl DcqcnRp {
    /// A new RP at line rate (it gets its first CNP right after).
    pub(crate) fn new(line_rate_bps: f64, params: &DcqcnParams, now: SimTime) -> DcqcnRp {
        let mut rp = DcqcnRp {
            params: params.clone(),
            line_rate_bps,
            cr_bps: line_rate_bps,
            tr_bps: line_rate_bps,
            alpha: params.alpha_init,
            timer_stage: 0,
            byte_stage: 0,
            bytes_left: params.byte_counter_bytes,
            rate_deadline: SimTime::ZERO,
            alpha_deadline: SimTime::ZERO,
            generation: 0,
            cnps: 0,
        };
        rp.restart_rate_timer(now);
        rp.restart_alpha_timer(now);
        rp
    }

    fn restart_rate_timer(&mut self, now: SimTime) {
        self.rate_deadline = now + SimTime::from_secs_f64(self.params.rate_timer_s);
        self.generation = self.generation.wrapping_add(1);
    }

    fn restart_alpha_timer(&mut self, now: SimTime) {
        self.alpha_deadline = now + SimTime::from_secs_f64(self.params.alpha_timer_s);
        self.generation = self.generation.wrapping_add(1);
    }

    /// A CNP: TR = CR, CR = CR (1 - alpha/2), then alpha = (1 - g) alpha + g; the increase
    /// stages, the rate timer, the byte counter and the alpha timer restart.
    pub(crate) fn on_cnp(&mut self, now: SimTime) {
        let p = &self.params;
        self.cnps += 1;
        self.tr_bps = self.cr_bps;
        self.cr_bps = (self.cr_bps * (1.0 - self.alpha / 2.0)).max(p.min_rate_bps);
        self.alpha = (1.0 - p.g) * self.alpha + p.g;
        self.timer_stage = 0;
        self.byte_stage = 0;
        self.bytes_left = p.byte_counter_bytes;
        self.restart_rate_timer(now);
        self.restart_alpha_timer(now);
    }

    /// A data frame of `bytes` left: the byte counter B. Returns true when a byte-counter cycle
    /// ended (the rates changed); the timers are never touched here.
    pub(crate) fn on_transmit(&mut self, bytes: u32) -> bool {
        if self.params.counters != RateCounters::TimerAndBytes {
            return false;
        }
        self.bytes_left -= bytes as f64;
        if self.bytes_left > 0.0 {
            return false;
        }
        // The overshoot is dropped, as in cnsim's QCN byte counter.
        self.bytes_left = self.params.byte_counter_bytes;
        self.byte_stage = self.byte_stage.saturating_add(1);
        self.increase();
        true
    }

    /// The earlier of the two timers, with the generation that must still be current.
    pub(crate) fn timer(&self) -> (SimTime, u32) {
        (self.rate_deadline.min(self.alpha_deadline), self.generation)
    }

    /// A timer event: whichever timers are due at `now` fire (alpha first, then the rate).
    pub(crate) fn on_timer(&mut self, generation: u32, now: SimTime) {
        if generation != self.generation {
            return;
        }
        if self.alpha_deadline <= now {
            self.alpha *= 1.0 - self.params.g;
            self.restart_alpha_timer(now);
        }
        if self.rate_deadline <= now {
            self.timer_stage = self.timer_stage.saturating_add(1);
            self.restart_rate_timer(now);
            self.increase();
        }
    }

    /// One rate-increase event (after its counter was incremented).
    fn increase(&mut self) {
        let p = &self.params;
        let f = p.fast_recovery_threshold;
        let t = self.timer_stage;
        let (most, least) = match p.counters {
            RateCounters::TimerAndBytes => (t.max(self.byte_stage), t.min(self.byte_stage)),
            // BC stays 0: max(T, 0) = T, min(T, 0) = 0, so never hyper increase.
            RateCounters::TimerOnly => (t, 0),
            // One counter: F fast-recovery steps, one additive step, then hyper increase.
            RateCounters::SingleCounter => (t, t.saturating_sub(1)),
        };
        if most <= f {
            // Fast recovery: TR unchanged.
        } else if least > f {
            let step = match p.hai_step {
                HaiStep::Qcn => p.r_hai_bps * f64::from(least - f),
                HaiStep::Constant => p.r_hai_bps,
            };
            self.tr_bps += step;
        } else {
            self.tr_bps += p.r_ai_bps;
        }
        self.tr_bps = self.tr_bps.min(self.line_rate_bps);
        let cr = (self.cr_bps + self.tr_bps) / 2.0;
        // When the average no longer moves CR it snaps to TR (so line rate is reached exactly).
        self.cr_bps = if cr == self.cr_bps { self.tr_bps } else { cr };
    }

    pub(crate) fn rate_bps(&self) -> f64 {
        self.cr_bps
    }

    pub(crate) fn target_rate_bps(&self) -> f64 {
        self.tr_bps
    }

    pub(crate) fn bucket_bytes(&self) -> f64 {
        self.params.rp_bucket_bytes
    }

    pub(crate) fn alpha(&self) -> f64 {
        self.alpha
    }

    #[cfg(test)]
    pub(crate) fn stages(&self) -> (u32, u32) {
        (self.timer_stage, self.byte_stage)
    }

    /// Never: a DCQCN RP outlives its return to line rate (SIGCOMM 2015's RP has no release;
    /// its alpha keeps decaying until the next CNP).
    pub(crate) fn is_released(&self) -> bool {
        false
    }
}

// What the summary says ran (a comment: the summary's schema describes
// the variant by its fields).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DcqcnVariant {
    pub(crate) parameter_set: ParameterSet,
    pub(crate) mark_on: MarkOn,
    pub(crate) counters: RateCounters,
    pub(crate) hai_step: HaiStep,
    /// Kmin and Kmax scaled per port from this rate (absent: the same on every port).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) k_reference_rate_bps: Option<f64>,
}

/// DCQCN as registered: `scheme = "dcqcn"`, `[congestion.dcqcn]` (over a named parameter set).
pub(crate) struct Dcqcn;

impl CcScheme for Dcqcn {
    type Params = DcqcnParams;
    type Config = DcqcnParams;
    type Msg = Cnp;
    type Cp = DcqcnCp;
    type Rp = DcqcnRp;
    type Np = DcqcnNp;
    type Sender = NoSender;
    type Variant = DcqcnVariant;

    const NAMES: &'static [Named] = &[Named {
        name: "dcqcn",
        doc: "DCQCN (SIGCOMM 2015): ECN marking at switches, CNPs from receivers, per-pair RPs.",
    }];
    const CONTROL_KINDS: &'static [Named] = &[Named {
        name: "dcqcn_cnp",
        doc: "DCQCN congestion notification packets, receiver to sender (scheme `dcqcn`).",
    }];

    /// `parameter_set = "..."`: the table's other keys are laid over the named set's values
    /// (whichever scheme runs), so a partial table keeps the set's values for what it leaves
    /// out.
    fn prepare(congestion: &mut toml::Table, _selected: &str) -> Result<(), ConfigError> {
        lay_named_set(congestion, Self::TABLE, DcqcnParams::of_set)
    }

    fn fill_defaults(spec: &mut CongestionSpec, _selected: &str) {
        spec.dcqcn.get_or_insert_with(DcqcnParams::default);
    }

    fn validate(params: &DcqcnParams, _: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        params.validate(path)
    }

    fn resolve(spec: &CongestionSpec, _selected: &str) -> DcqcnParams {
        spec.dcqcn.clone().unwrap_or_default()
    }

    fn variant(p: &DcqcnParams) -> DcqcnVariant {
        DcqcnVariant {
            parameter_set: p.parameter_set,
            mark_on: p.mark_on,
            counters: p.counters,
            hai_step: p.hai_step,
            k_reference_rate_bps: p.k_reference_rate_bps,
        }
    }

    fn kind(_: &Cnp) -> MessageKind {
        Self::message_kind(0)
    }

    fn msg_bytes(_: &Cnp, p: &DcqcnParams) -> u32 {
        p.cnp_bytes
    }

    fn new_cp(p: &DcqcnParams, _cpid: u32, port_rate_bps: f64, _: &mut SimRng) -> DcqcnCp {
        DcqcnCp::new(&p.at_rate(port_rate_bps))
    }

    fn on_enqueue(
        cp: &mut DcqcnCp,
        frame: CpFrame<'_, Cnp>,
        queue_bytes: u64,
        _cpid: u32,
        rng: &mut SimRng,
    ) -> Option<Cnp> {
        if let Carried::Data = frame.payload {
            *frame.ecn_ce |= cp.should_mark(MarkOn::Enqueue, queue_bytes, rng);
        }
        None
    }

    fn on_dequeue(cp: &mut DcqcnCp, frame: CpFrame<'_, Cnp>, queue_bytes: u64, rng: &mut SimRng) {
        if let Carried::Data = frame.payload {
            *frame.ecn_ce |= cp.should_mark(MarkOn::Dequeue, queue_bytes, rng);
        }
    }

    fn ecn_marked(cp: &DcqcnCp) -> Option<u64> {
        Some(cp.marked)
    }

    /// Any CNP installs a limiter.
    fn install(
        p: &DcqcnParams,
        _: &Cnp,
        line_rate_bps: f64,
        now: SimTime,
        _: &mut SimRng,
    ) -> Option<DcqcnRp> {
        Some(DcqcnRp::new(line_rate_bps, p, now))
    }

    fn on_feedback(rp: &mut DcqcnRp, _: &Cnp, now: SimTime, _: &mut SimRng) {
        rp.on_cnp(now);
    }

    fn rate_bps(rp: &DcqcnRp) -> f64 {
        rp.rate_bps()
    }

    fn target_rate_bps(rp: &DcqcnRp) -> Option<f64> {
        Some(rp.target_rate_bps())
    }

    /// Alpha: the RP's estimate of the fraction of marked frames.
    fn feedback(rp: &DcqcnRp) -> Option<f64> {
        Some(rp.alpha())
    }

    fn pacing(rp: &DcqcnRp) -> Pacing {
        Pacing {
            rate_bps: rp.rate_bps(),
            tag: NO_TAG,
            bucket_bytes: rp.bucket_bytes(),
        }
    }

    fn on_transmit(
        rp: &mut DcqcnRp,
        frame_bytes: u32,
        _: SimTime,
        _: &mut SimRng,
    ) -> (Option<Cnp>, bool) {
        (None, rp.on_transmit(frame_bytes))
    }

    fn timer(rp: &DcqcnRp) -> Option<(SimTime, u32)> {
        Some(rp.timer())
    }

    fn on_timer(rp: &mut DcqcnRp, generation: u32, now: SimTime, _: &mut SimRng) {
        rp.on_timer(generation, now);
    }

    fn is_released(rp: &DcqcnRp) -> bool {
        rp.is_released()
    }

    fn new_np(p: &DcqcnParams) -> Option<DcqcnNp> {
        Some(DcqcnNp::new(p))
    }

    /// A marked data frame gets its source a CNP (at most one per interval).
    fn on_receive(np: &mut DcqcnNp, frame: NpFrame<'_, Cnp>, now: SimTime) -> Option<Cnp> {
        match frame.payload {
            Carried::Data => np
                .on_data(frame.src, frame.qp, frame.ecn_ce, now)
                .then_some(Cnp),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, StreamKind};

    fn us(v: f64) -> SimTime {
        SimTime::from_secs_f64(v * 1e-6)
    }

    fn close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "got {got}, want {want}"
        );
    }

    fn fire(rp: &mut DcqcnRp) -> SimTime {
        let (at, generation) = rp.timer();
        rp.on_timer(generation, at);
        at
    }

    #[test]
    fn marking_curve_is_red_between_kmin_and_kmax() {
        let p = DcqcnParams::default();
        assert_eq!(p.mark_probability(0.0), 0.0);
        assert_eq!(p.mark_probability(4_999.0), 0.0);
        assert_eq!(p.mark_probability(5_000.0), 0.0);
        // Halfway between 5 KB and 200 KB: Pmax / 2.
        close(p.mark_probability(102_500.0), 0.005);
        close(p.mark_probability(200_000.0), 0.01);
        assert_eq!(p.mark_probability(200_001.0), 1.0);
    }

    #[test]
    fn marking_frequency_follows_the_curve_and_only_at_the_chosen_point() {
        let p = DcqcnParams {
            pmax: 0.5,
            ..DcqcnParams::default()
        };
        let mut cp = DcqcnCp::new(&p);
        let mut rng = stream(7, StreamKind::CongestionPoint, 0);
        // q = 102.5 KB: p = 0.25.
        let n = 200_000;
        let marked = (0..n)
            .filter(|_| cp.should_mark(MarkOn::Enqueue, 102_500, &mut rng))
            .count();
        let freq = marked as f64 / n as f64;
        // 4 standard deviations of a binomial(200000, 0.25) proportion: 0.0039.
        assert!((freq - 0.25).abs() < 0.0039, "marked {freq}");
        assert!(!cp.should_mark(MarkOn::Dequeue, 1_000_000, &mut rng));
        assert!(cp.should_mark(MarkOn::Enqueue, 1_000_000, &mut rng));
        assert!(!cp.should_mark(MarkOn::Enqueue, 5_000, &mut rng));
    }

    #[test]
    fn np_sends_at_most_one_cnp_per_source_per_interval() {
        let mut np = DcqcnNp::new(&DcqcnParams::default());
        assert!(!np.on_data(1, None, false, us(0.0)), "unmarked: no CNP");
        assert!(np.on_data(1, None, true, us(1.0)));
        assert!(!np.on_data(1, None, true, us(50.9)), "within 50 us of the last");
        assert!(
            np.on_data(2, None, true, us(2.0)),
            "another source has its own budget"
        );
        assert!(np.on_data(1, None, true, us(51.0)), "50 us after the last");
        // Queue pairs are paced apart, and apart from their host's open-loop data.
        assert!(np.on_data(1, Some(7), true, us(52.0)), "QP 7's first CNP");
        assert!(!np.on_data(1, Some(7), true, us(60.0)), "QP 7 within 50 us");
        assert!(np.on_data(1, Some(8), true, us(60.0)), "QP 8 is its own RP");
        assert!(!np.on_data(1, None, true, us(100.0)));
    }

    #[test]
    fn a_cnp_cuts_by_alpha_over_two_and_raises_alpha_by_g() {
        let p = DcqcnParams::default();
        let mut rp = DcqcnRp::new(40e9, &p, SimTime::ZERO);
        rp.on_cnp(SimTime::ZERO);
        // alpha = 1: CR halves; TR keeps the old CR; alpha = (1 - g) + g = 1.
        close(rp.rate_bps(), 20e9);
        close(rp.target_rate_bps(), 40e9);
        close(rp.alpha(), 1.0);
        rp.on_cnp(us(1.0));
        close(rp.target_rate_bps(), 20e9);
        close(rp.rate_bps(), 10e9);
        // With alpha = 0.5: the cut is 25 %, alpha -> 0.5 (1 - 1/256) + 1/256.
        let mut rp = DcqcnRp::new(
            40e9,
            &DcqcnParams {
                alpha_init: 0.5,
                ..p.clone()
            },
            SimTime::ZERO,
        );
        rp.on_cnp(SimTime::ZERO);
        close(rp.rate_bps(), 30e9);
        close(rp.alpha(), 0.5 * (255.0 / 256.0) + 1.0 / 256.0);
        // The minimum rate is a floor.
        let mut rp = DcqcnRp::new(40e9, &p, SimTime::ZERO);
        for i in 0..20 {
            rp.on_cnp(us(i as f64));
        }
        close(rp.rate_bps(), 10e6);
    }

    #[test]
    fn alpha_decays_by_one_minus_g_per_timer_without_cnp() {
        let p = DcqcnParams {
            // Keep the rate timer out of the way.
            rate_timer_s: 1.0,
            ..DcqcnParams::default()
        };
        let mut rp = DcqcnRp::new(40e9, &p, SimTime::ZERO);
        rp.on_cnp(SimTime::ZERO);
        let mut last = SimTime::ZERO;
        for _ in 0..10 {
            last = fire(&mut rp);
        }
        assert_eq!(last, us(550.0), "ten 55 us periods");
        close(rp.alpha(), (255.0f64 / 256.0).powi(10));
        // A CNP restarts the alpha timer: the next decay is 55 us after it.
        rp.on_cnp(us(560.0));
        assert_eq!(rp.timer().0, us(615.0));
        // A stale generation does nothing.
        let a = rp.alpha();
        rp.on_timer(rp.timer().1.wrapping_sub(1), us(615.0));
        close(rp.alpha(), a);
    }

    #[test]
    fn recovery_five_fast_steps_then_additive() {
        let p = DcqcnParams {
            // Only the rate timer: alpha's timer out of the way, byte counter never expires.
            alpha_timer_s: 10.0,
            byte_counter_bytes: 1e12,
            ..DcqcnParams::default()
        };
        let mut rp = DcqcnRp::new(40e9, &p, SimTime::ZERO);
        rp.on_cnp(SimTime::ZERO); // CR 20, TR 40
        rp.on_cnp(SimTime::ZERO); // CR 10, TR 20 (Gb/s)
        let mut cr = 10e9;
        for step in 1..=5 {
            let at = fire(&mut rp);
            assert_eq!(at, us(55.0 * step as f64));
            cr = (cr + 20e9) / 2.0;
            close(rp.rate_bps(), cr);
            close(rp.target_rate_bps(), 20e9);
        }
        close(rp.rate_bps(), 20e9 - 10e9 / 32.0);
        // T = 6 > F but BC = 0 <= F: additive increase by R_AI = 40 Mb/s.
        fire(&mut rp);
        close(rp.target_rate_bps(), 20.04e9);
        close(rp.rate_bps(), (cr + 20.04e9) / 2.0);
        assert_eq!(rp.stages(), (6, 0));
    }

    #[test]
    fn hyper_increase_when_both_counters_pass_f() {
        let p = DcqcnParams {
            alpha_timer_s: 10.0,
            rate_timer_s: 10.0,
            byte_counter_bytes: 3_000.0,
            fast_recovery_threshold: 1,
            ..DcqcnParams::default()
        };
        let mut rp = DcqcnRp::new(40e9, &p, SimTime::ZERO);
        rp.on_cnp(SimTime::ZERO); // CR 20, TR 40
        rp.on_cnp(SimTime::ZERO); // CR 10, TR 20

        // A frame reports a change only when it ends a byte-counter cycle (the host skips
        // looking at the limiter otherwise), and never moves the timers.
        let timer = rp.timer();
        assert!(!rp.on_transmit(1500));
        close(rp.rate_bps(), 10e9);
        assert!(rp.on_transmit(1500)); // BC = 1 <= F: fast recovery
        close(rp.rate_bps(), 15e9);
        assert_eq!(rp.timer(), timer);
        fire(&mut rp); // T = 1, BC = 1: fast recovery
        close(rp.rate_bps(), 17.5e9);
        assert!(rp.on_transmit(3000)); // BC = 2, T = 1: additive
        close(rp.target_rate_bps(), 20.04e9);
        fire(&mut rp); // T = 2, BC = 2: hyper, R_HAI (2 - 1)
        close(rp.target_rate_bps(), 20.44e9);
        rp.on_transmit(3000); // BC = 3, T = 2: hyper, R_HAI (2 - 1)
        close(rp.target_rate_bps(), 20.84e9);
        fire(&mut rp); // T = 3, BC = 3: R_HAI (3 - 1)
        close(rp.target_rate_bps(), 21.64e9);
    }

    #[test]
    fn hpcc_set_one_counter_one_fast_step_one_additive_then_constant_hyper() {
        let p = DcqcnParams::of_set(ParameterSet::HpccNs3);
        assert_eq!(p.mark_on, MarkOn::Dequeue);
        let mut rp = DcqcnRp::new(25e9, &p, SimTime::ZERO);
        rp.on_cnp(SimTime::ZERO); // CR 12.5, TR 25
                                  // Let alpha's 1 us timer run until the first rate timer (900 us).
        let mut fired_rate = false;
        while !fired_rate {
            let before = rp.stages().0;
            fire(&mut rp);
            fired_rate = rp.stages().0 > before;
        }
        close(rp.rate_bps(), 18.75e9); // fast recovery
        close(rp.target_rate_bps(), 25e9);
        rp.on_cnp(us(1000.0));
        let (cr, tr) = (rp.rate_bps(), rp.target_rate_bps());
        let mut steps = Vec::new();
        while steps.len() < 4 {
            let before = rp.stages().0;
            fire(&mut rp);
            if rp.stages().0 > before {
                steps.push(rp.target_rate_bps());
            }
        }
        close(steps[0], tr); // fast recovery
        close(steps[1], tr + 50e6); // additive
        close(steps[2], tr + 150e6); // hyper, constant 100 Mb/s
        close(steps[3], tr + 250e6);
        assert!(rp.rate_bps() > cr);
    }

    /// `timer_only`: F fast-recovery steps, then additive increase, never hyper (the same rule
    /// as the SIGCOMM set's, with BC staying 0), whatever the byte counter's size.
    #[test]
    fn timer_only_recovers_f_steps_then_only_adds() {
        let p = DcqcnParams {
            counters: RateCounters::TimerOnly,
            byte_counter_bytes: 1.0, // ignored: no byte counter runs
            alpha_timer_s: 1.0,      // only the rate timer fires
            ..DcqcnParams::default()
        };
        let mut rp = DcqcnRp::new(40e9, &p, SimTime::ZERO);
        // Two CNPs: the second sets TR = CR = 20 Gb/s, below the line rate that caps TR.
        rp.on_cnp(SimTime::ZERO);
        rp.on_cnp(us(1.0));
        assert!(!rp.on_transmit(1500), "no byte counter");
        let tr = rp.target_rate_bps();
        let mut targets = Vec::new();
        for _ in 0..9 {
            fire(&mut rp);
            targets.push(rp.target_rate_bps());
        }
        // T = 1..5 (F = 5): fast recovery, TR unchanged; T = 6..9: + R_AI each (40 Mb/s).
        for (i, &target) in targets.iter().enumerate() {
            let additive_steps = (i + 1).saturating_sub(5) as f64;
            close(target, tr + additive_steps * 40e6);
        }
        assert_eq!(rp.stages(), (9, 0));
    }

    #[test]
    fn kept_at_line_rate_with_alpha_decaying_until_the_next_cnp() {
        let p = DcqcnParams::default();
        let mut rp = DcqcnRp::new(10e9, &p, SimTime::ZERO);
        rp.on_cnp(SimTime::ZERO);
        let mut now = SimTime::ZERO;
        while rp.rate_bps() < 10e9 {
            now = fire(&mut rp);
            assert!(now < us(1e5), "never back at line rate");
        }
        // Back at line rate the RP stays (QCN's would be released and the next CNP would
        // install a new one with alpha = 1, halving the rate).
        assert!(!rp.is_released());
        let back = now;
        let alpha_back = rp.alpha();
        // Its timers keep running and alpha keeps decaying, (1 - g) per K = 55 us.
        while now < back + us(55.0 * 100.0) {
            now = fire(&mut rp);
            assert!(!rp.is_released());
            assert_eq!(rp.rate_bps(), 10e9);
        }
        let decays = (rp.alpha() / alpha_back).ln() / (1.0 - p.g).ln();
        assert!(
            (decays - 100.0).abs() <= 1.0 + 1e-6,
            "{decays} decays in 5.5 ms"
        );
        let alpha = rp.alpha();
        assert!(alpha < 0.7 * alpha_back);
        // The next CNP cuts by the decayed alpha / 2, not by half.
        rp.on_cnp(now);
        close(rp.rate_bps(), 10e9 * (1.0 - alpha / 2.0));
        close(rp.target_rate_bps(), 10e9);
        close(rp.alpha(), (1.0 - p.g) * alpha + p.g);
    }
}
