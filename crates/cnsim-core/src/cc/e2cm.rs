//! E2CM: Enhanced Ethernet Congestion Management (IBM Zurich, 2007), a reconstruction
//! (protocols.md section 4; seed 003). Two loops per source-destination pair:
//! - the **coarse loop** is ECM exactly (`cc/bcn.rs`: the CP samples 2% of the data frames of
//!   a switch egress queue and sends BCN messages; the source's [`BcnRp`] applies them, with
//!   drift), parameters `[congestion.bcn]` (ECM's defaults);
//! - the **fine loop** (parameters [`E2cmParams`] in `e2cm/params.rs`, `[congestion.e2cm]`): a source whose
//!   destination is rate limited sends a 64 B probe riding the data queue about every
//!   `probe_interval_bytes` of data to that destination; each switch egress CP stamps it with
//!   the flow's feedback, computed by ECM's rule ([`FeedbackRule`]) on what it measures for
//!   the flow (`probe_measures`: the flow's own bytes in the queue, or the whole queue) with the
//!   flow's Qeq, W, its own q_old and thresholds (BCN-MAX at M/5, BCN(0,0) at 4M/5 in seed
//!   003); stamps combine along the path (`stamp_combine`); the destination returns the probe
//!   at control priority; the source applies it to a second limiter with the per-flow gains
//!   Gd_flow = 0.5/((2W+1)Qeq_flow), Gi_flow = `gi_factor`*(R_link/R_unit)/((2W+1)Qeq_flow).
//!
//! A frame leaves when both limiters allow it: the pair is paced at min(coarse, fine) rate
//! (two pacers that each let a frame go size/rate after the last is the same as one at the
//! smaller rate). Reconstruction choices (docs/seed003.md):
//! - the pair becomes rate limited, and starts probing, when the coarse loop installs its
//!   limiter (the first negative BCN), as in ECM; the fine limiter starts at line rate;
//! - the fine limiter is ECM's reaction point ([`BcnRp`]) with the per-flow gains, no drift,
//!   and BCN(0,0) dropping it to Rmin; every returned probe applies to it (there is no tag);
//! - the coarse limiter at line rate stops limiting (it no longer tags frames and its drift
//!   timer stops) but stays ready for the next negative BCN, which acts as a fresh install;
//! - the pair is released (probing stops, both limiters go) when both are at line rate and the
//!   last returned probe showed no congestion (feedback >= 0, or no probe yet);
//! - "the flow's own bytes" are its data bytes in the egress queue when the probe is enqueued
//!   (not the probe itself); "the whole queue" includes the probe, as every CP counts it;
//! - a probe no switch stamped (CP detection off) changes nothing at the source.

mod params;

use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::bcn::{
    Bcn, BcnCp, BcnFeedback, BcnKind, BcnMsg, BcnParams, BcnRp, FeedbackRule, GiFormula,
};
use super::{Carried, CcScheme, CongestionSpec, CpFrame, HostId, MessageKind, NO_TAG, Named, NoSender, NpFrame, Pacing, Registered, lay_table_over};
use crate::error::ConfigError;
use crate::rng::SimRng;
use crate::time::SimTime;

pub(crate) use params::*;

/// The tag of the fine limiter's feedback: returned probes all come from "the path".
const FINE_LOOP_ID: u32 = 0;


/// A probe: forward (riding the data queue, stamped by CPs) or returned (to the RP).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct E2cmProbe {
    /// The combined stamp; None until a CP stamps it.
    pub(crate) feedback: Option<BcnFeedback>,
    pub(crate) returned: bool,
}

impl E2cmProbe {
    pub(crate) fn rides_data_queue(&self) -> bool {
        !self.returned
    }
}

/// BCN(0,0) is the most severe, then BCN-MAX, then the most negative value.
fn more_severe(a: &BcnFeedback, than: &BcnFeedback) -> bool {
    let rank = |f: &BcnFeedback| match f.kind {
        BcnKind::ZeroZero => 2,
        BcnKind::Max => 1,
        BcnKind::Normal => 0,
    };
    rank(a) > rank(than) || (rank(a) == rank(than) && a.fb < than.fb)
}

/// Key of a flow at a CP: its source and destination hosts.
fn flow_key(src: HostId, dst: HostId) -> u64 {
    (u64::from(src) << 32) | u64::from(dst)
}

/// Congestion point on one switch egress queue: ECM's CP plus the per-flow state.
pub(crate) struct E2cmCp {
    pub(crate) coarse: BcnCp,
    rule: FeedbackRule,
    measures: ProbeMeasures,
    combine: StampCombine,
    /// Data bytes each flow has in the queue (entries leave at 0).
    flow_bytes: FxHashMap<u64, u64>,
    /// Each flow's q at its previous probe.
    q_old_bytes: FxHashMap<u64, f64>,
    pub(crate) probes_stamped: u64,
}

impl E2cmCp {
    pub(crate) fn new(config: &E2cmConfig, cpid: u32, rng: &mut SimRng) -> E2cmCp {
        E2cmCp {
            coarse: BcnCp::new(&config.coarse, cpid, rng),
            rule: FeedbackRule::of(&config.fine.fine_loop(&config.coarse)),
            measures: config.fine.probe_measures,
            combine: config.fine.stamp_combine,
            flow_bytes: FxHashMap::default(),
            q_old_bytes: FxHashMap::default(),
            probes_stamped: 0,
        }
    }

    /// A data frame of flow (src, dst) entered the queue. Per-flow bytes are kept only when a
    /// probe measures them (`probe_measures = "flow_bytes"`).
    pub(crate) fn on_data_enqueue(&mut self, src: HostId, dst: HostId, bytes: u32) {
        if self.measures != ProbeMeasures::FlowBytes {
            return;
        }
        *self.flow_bytes.entry(flow_key(src, dst)).or_insert(0) += u64::from(bytes);
    }

    /// A data frame of flow (src, dst) left the queue.
    pub(crate) fn on_data_dequeue(&mut self, src: HostId, dst: HostId, bytes: u32) {
        if self.measures != ProbeMeasures::FlowBytes {
            return;
        }
        let key = flow_key(src, dst);
        if let Some(held) = self.flow_bytes.get_mut(&key) {
            *held = held.saturating_sub(u64::from(bytes));
            if *held == 0 {
                self.flow_bytes.remove(&key);
            }
        }
    }

    /// Data bytes of flow (src, dst) in the queue.
    pub(crate) fn flow_bytes(&self, src: HostId, dst: HostId) -> u64 {
        self.flow_bytes
            .get(&flow_key(src, dst))
            .copied()
            .unwrap_or(0)
    }

    /// A forward probe of flow (src, dst) was enqueued (`queue_bytes` includes it): stamp it.
    pub(crate) fn on_probe(&mut self, probe: &mut E2cmProbe, src: HostId, dst: HostId, queue_bytes: u64) {
        if probe.returned {
            return;
        }
        let q_bytes = match self.measures {
            ProbeMeasures::FlowBytes => self.flow_bytes(src, dst),
            ProbeMeasures::QueueBytes => queue_bytes,
        } as f64;
        let q_old = self.q_old_bytes.entry(flow_key(src, dst)).or_insert(0.0);
        let stamp = self.rule.feedback(q_bytes, *q_old);
        *q_old = q_bytes;
        self.probes_stamped += 1;
        probe.feedback = match (self.combine, probe.feedback) {
            (StampCombine::MostNegative, Some(before)) if !more_severe(&stamp, &before) => {
                Some(before)
            }
            _ => Some(stamp),
        };
    }
}

/// The destination's notification point: returns every probe to its source.
pub(crate) struct E2cmNp;

impl E2cmNp {
    pub(crate) fn on_probe(&mut self, probe: &E2cmProbe) -> E2cmProbe {
        E2cmProbe {
            returned: true,
            ..*probe
        }
    }
}

/// The reaction point of one destination: the coarse (ECM) and fine limiters and the probe
/// clock.
#[derive(Clone, Debug)]
pub(crate) struct E2cmRp {
    line_rate_bps: f64,
    coarse: BcnRp,
    fine: BcnRp,
    /// The last returned probe carried negative feedback.
    fine_congested: bool,
    last_probe_fb: Option<f64>,
    probe_interval_bytes: u64,
    bytes_to_probe: u64,
    pub(crate) probes_sent: u64,
}

impl E2cmRp {
    /// Installed by the coarse loop's first negative BCN (from CP `cpid`), both limiters at
    /// line rate; the caller then applies that BCN.
    pub(crate) fn new(line_rate_bps: f64, config: &E2cmConfig, cpid: u32, now: SimTime) -> E2cmRp {
        let fine_params = BcnParams {
            gi: Some(config.fine.gi_flow(&config.coarse, line_rate_bps)),
            ..config.fine.fine_loop(&config.coarse)
        };
        E2cmRp {
            line_rate_bps,
            coarse: BcnRp::new(line_rate_bps, &config.coarse, cpid, now),
            fine: BcnRp::new(line_rate_bps, &fine_params, FINE_LOOP_ID, now),
            fine_congested: false,
            last_probe_fb: None,
            probe_interval_bytes: config.fine.probe_interval_bytes,
            bytes_to_probe: config.fine.probe_interval_bytes,
            probes_sent: 0,
        }
    }

    /// A BCN message of the coarse loop.
    pub(crate) fn on_bcn(&mut self, fb: &BcnFeedback, cpid: u32, now: SimTime, rng: &mut SimRng) {
        self.coarse.on_bcn(fb, cpid, now, rng);
    }

    /// A returned probe: its stamp applies to the fine limiter.
    pub(crate) fn on_probe(&mut self, probe: &E2cmProbe, now: SimTime, rng: &mut SimRng) {
        let Some(fb) = probe.feedback else {
            return;
        };
        self.fine.on_bcn(&fb, FINE_LOOP_ID, now, rng);
        self.fine_congested = fb.is_negative();
        self.last_probe_fb = Some(fb.fb);
    }

    /// A data frame left: a probe follows every `probe_interval_bytes`.
    pub(crate) fn on_transmit(&mut self, frame_bytes: u32) -> Option<E2cmProbe> {
        match self.bytes_to_probe.checked_sub(u64::from(frame_bytes)) {
            Some(left) if left > 0 => {
                self.bytes_to_probe = left;
                None
            }
            _ => {
                self.bytes_to_probe = self.probe_interval_bytes;
                self.probes_sent += 1;
                Some(E2cmProbe {
                    feedback: None,
                    returned: false,
                })
            }
        }
    }

    fn coarse_limits(&self) -> bool {
        !self.coarse.is_released()
    }

    /// The pair's pace: a frame leaves only when both limiters allow it.
    pub(crate) fn rate_bps(&self) -> f64 {
        self.coarse.rate_bps().min(self.fine.rate_bps())
    }

    #[cfg(test)]
    pub(crate) fn coarse_rate_bps(&self) -> f64 {
        self.coarse.rate_bps()
    }

    #[cfg(test)]
    pub(crate) fn fine_rate_bps(&self) -> f64 {
        self.fine.rate_bps()
    }

    /// Feedback of the last returned probe, fb units.
    pub(crate) fn last_probe_fb(&self) -> Option<f64> {
        self.last_probe_fb
    }

    pub(crate) fn stopped_until(&self) -> SimTime {
        self.coarse.stopped_until()
    }

    /// Frames carry the coarse limiter's CPID while it limits (ECM's positive feedback).
    pub(crate) fn tag(&self) -> u32 {
        if self.coarse_limits() {
            self.coarse.cpid()
        } else {
            NO_TAG
        }
    }

    /// The coarse limiter's drift timer, while it limits.
    pub(crate) fn timer(&self) -> Option<(SimTime, u32)> {
        if !self.coarse_limits() {
            return None;
        }
        self.coarse
            .drift_deadline()
            .map(|t| (t, self.coarse.drift_generation()))
    }

    pub(crate) fn on_timer(&mut self, generation: u32, now: SimTime) {
        self.coarse.on_drift(generation, now);
    }

    /// Both limiters at line rate and no congestion on the last probe: probing stops.
    pub(crate) fn is_released(&self) -> bool {
        self.coarse.is_released()
            && self.fine.rate_bps() >= self.line_rate_bps
            && !self.fine_congested
    }
}

/// E2CM's messages: the coarse loop's BCN messages (counted as BCN's) and the fine loop's
/// probes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum E2cmMsg {
    Bcn(BcnMsg),
    Probe(E2cmProbe),
}

// What the summary says ran (a comment: the summary's schema describes
// the variant by its fields).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct E2cmVariant {
    /// `e2cm(ecm+max)`, `e2cm(ecm+max+00)+stamp_last`...
    pub(crate) name: String,
    pub(crate) stamp_combine: StampCombine,
    pub(crate) probe_measures: ProbeMeasures,
    /// The coarse loop's Gi formula (divide by or multiply by (1+2W)Qeq).
    pub(crate) gi_formula: GiFormula,
}

/// The name that selects E2CM.
const NAME: &str = "e2cm";

/// E2CM as registered: `scheme = "e2cm"`; its coarse loop is `[congestion.bcn]` over ECM's
/// defaults, its fine loop `[congestion.e2cm]`.
pub(crate) struct E2cm;

impl CcScheme for E2cm {
    type Params = E2cmParams;
    type Config = E2cmConfig;
    type Msg = E2cmMsg;
    type Cp = E2cmCp;
    type Rp = E2cmRp;
    type Np = E2cmNp;
    type Sender = NoSender;
    type Variant = E2cmVariant;

    const NAMES: &'static [Named] = &[Named {
        name: NAME,
        doc: "E2CM (seed 003): ECM's loop (`[congestion.bcn]` over ECM's defaults) plus per-flow\n\
              probes (`[congestion.e2cm]`).",
    }];
    const TABLE_DOC: &'static str = "E2CM's fine loop (its coarse loop is `bcn`).";
    const CONTROL_KINDS: &'static [Named] = &[Named {
        name: "e2cm_probe",
        doc: "E2CM fine-loop probes, forward and returned (scheme `e2cm`).",
    }];

    /// The coarse loop is ECM: the user's `[congestion.bcn]` keys are laid over ECM's defaults.
    fn prepare(congestion: &mut toml::Table, selected: &str) -> Result<(), ConfigError> {
        if selected == NAME {
            lay_table_over(congestion, Bcn::TABLE, &BcnParams::ecm());
        }
        Ok(())
    }

    fn fill_defaults(spec: &mut CongestionSpec, _selected: &str) {
        spec.bcn.get_or_insert_with(BcnParams::ecm);
        spec.e2cm.get_or_insert_with(E2cmParams::default);
    }

    /// Checked against the coarse loop it would run with (its BCN(0,0) by default).
    fn validate(params: &E2cmParams, spec: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        match &spec.bcn {
            Some(coarse) => params.validate(path, coarse),
            None => params.validate(path, &BcnParams::ecm()),
        }
    }

    fn resolve(spec: &CongestionSpec, _selected: &str) -> E2cmConfig {
        E2cmConfig {
            coarse: spec.bcn.clone().unwrap_or_else(BcnParams::ecm),
            fine: spec.e2cm.clone().unwrap_or_default(),
        }
    }

    fn variant(c: &E2cmConfig) -> E2cmVariant {
        E2cmVariant {
            name: c.variant_name(),
            stamp_combine: c.fine.stamp_combine,
            probe_measures: c.fine.probe_measures,
            gi_formula: c.coarse.gi_formula,
        }
    }

    fn kind(m: &E2cmMsg) -> MessageKind {
        match m {
            E2cmMsg::Bcn(m) => Bcn::kind(m),
            E2cmMsg::Probe(_) => Self::message_kind(0),
        }
    }

    fn msg_bytes(m: &E2cmMsg, c: &E2cmConfig) -> u32 {
        match m {
            E2cmMsg::Bcn(_) => c.coarse.bcn_bytes,
            E2cmMsg::Probe(_) => c.fine.probe_bytes,
        }
    }

    fn rides_data_queue(m: &E2cmMsg) -> bool {
        match m {
            E2cmMsg::Bcn(_) => false,
            E2cmMsg::Probe(p) => p.rides_data_queue(),
        }
    }

    fn for_reaction_point(m: &E2cmMsg) -> bool {
        match m {
            E2cmMsg::Bcn(_) => true,
            E2cmMsg::Probe(p) => p.returned,
        }
    }

    fn new_cp(c: &E2cmConfig, cpid: u32, _: f64, rng: &mut SimRng) -> E2cmCp {
        E2cmCp::new(c, cpid, rng)
    }

    /// Data: the flow's bytes and ECM's sampling; a forward probe: the flow's stamp.
    fn on_enqueue(
        cp: &mut E2cmCp,
        frame: CpFrame<'_, E2cmMsg>,
        queue_bytes: u64,
        cpid: u32,
        rng: &mut SimRng,
    ) -> Option<E2cmMsg> {
        match frame.payload {
            Carried::Data => {
                cp.on_data_enqueue(frame.src, frame.flow, frame.bytes);
                cp.coarse
                    .on_data_enqueue(queue_bytes, frame.bytes, frame.rl_tag, rng)
                    .map(|feedback| E2cmMsg::Bcn(BcnMsg { feedback, cpid }))
            }
            Carried::Msg(E2cmMsg::Probe(probe)) => {
                cp.on_probe(probe, frame.src, frame.flow, queue_bytes);
                None
            }
            _ => None,
        }
    }

    fn on_dequeue(cp: &mut E2cmCp, frame: CpFrame<'_, E2cmMsg>, _: u64, _: &mut SimRng) {
        if let Carried::Data = frame.payload {
            cp.on_data_dequeue(frame.src, frame.flow, frame.bytes);
        }
    }

    fn last_fb(cp: &E2cmCp) -> f64 {
        cp.coarse.last_fb()
    }

    /// The coarse loop's first negative BCN installs the pair's limiters.
    fn install(
        c: &E2cmConfig,
        m: &E2cmMsg,
        line_rate_bps: f64,
        now: SimTime,
        _: &mut SimRng,
    ) -> Option<E2cmRp> {
        match m {
            E2cmMsg::Bcn(m) if m.feedback.is_negative() => {
                Some(E2cmRp::new(line_rate_bps, c, m.cpid, now))
            }
            _ => None,
        }
    }

    fn on_feedback(rp: &mut E2cmRp, m: &E2cmMsg, now: SimTime, rng: &mut SimRng) {
        match m {
            E2cmMsg::Bcn(m) => rp.on_bcn(&m.feedback, m.cpid, now, rng),
            E2cmMsg::Probe(p) => rp.on_probe(p, now, rng),
        }
    }

    fn rate_bps(rp: &E2cmRp) -> f64 {
        rp.rate_bps()
    }

    /// The fine loop's last probe feedback (fb units).
    fn feedback(rp: &E2cmRp) -> Option<f64> {
        rp.last_probe_fb()
    }

    fn stopped_until(rp: &E2cmRp) -> SimTime {
        rp.stopped_until()
    }

    fn pacing(rp: &E2cmRp) -> Pacing {
        Pacing {
            rate_bps: rp.rate_bps(),
            tag: rp.tag(),
            bucket_bytes: 0.0,
        }
    }

    /// Counts bytes to the next probe: neither rate, release nor timer moves.
    fn on_transmit(
        rp: &mut E2cmRp,
        frame_bytes: u32,
        _: SimTime,
        _: &mut SimRng,
    ) -> (Option<E2cmMsg>, bool) {
        (rp.on_transmit(frame_bytes).map(E2cmMsg::Probe), false)
    }

    fn timer(rp: &E2cmRp) -> Option<(SimTime, u32)> {
        rp.timer()
    }

    fn on_timer(rp: &mut E2cmRp, generation: u32, now: SimTime, _: &mut SimRng) {
        rp.on_timer(generation, now);
    }

    fn is_released(rp: &E2cmRp) -> bool {
        rp.is_released()
    }

    fn new_np(_: &E2cmConfig) -> Option<E2cmNp> {
        Some(E2cmNp)
    }

    /// Returns every forward probe to its source.
    fn on_receive(np: &mut E2cmNp, frame: NpFrame<'_, E2cmMsg>, _: SimTime) -> Option<E2cmMsg> {
        match frame.payload {
            Carried::Msg(E2cmMsg::Probe(p)) => Some(E2cmMsg::Probe(np.on_probe(p))),
            _ => None,
        }
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

    /// Seed 003 at M = 150 KB: ECM (Qeq = M/4, BCN-MAX at M, BCN(0,0) at 4M) and the fine
    /// loop's defaults (Qeq_flow = M/20 = 7500 B, BCN-MAX at M/5, BCN(0,0) at 4M/5).
    fn seed003(bcn00: bool) -> E2cmConfig {
        E2cmConfig {
            coarse: BcnParams {
                bcn00,
                ..BcnParams::ecm()
            },
            fine: E2cmParams::default(),
        }
    }

    fn probe() -> E2cmProbe {
        E2cmProbe {
            feedback: None,
            returned: false,
        }
    }

    fn normal(fb: f64) -> BcnFeedback {
        BcnFeedback {
            fb,
            kind: BcnKind::Normal,
        }
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn per_flow_gains_follow_the_seed_formulas() {
        let c = seed003(false);
        // Qeq_flow = 7500 B = 117.1875 pages; (2W+1)*Qeq_flow = 585.9375 pages.
        let fine = c.fine.fine_loop(&c.coarse);
        assert_eq!(fine.fb_max_units(), 585.9375);
        // Gd_flow = 0.5/585.9375; Gi_flow = 0.005 * 1e4 / 585.9375.
        assert_eq!(fine.gd_value(), 0.5 / 585.9375);
        assert!(close(
            c.fine.gi_flow(&c.coarse, LINE_BPS),
            50.0 / 585.9375,
            1e-15
        ));
        // The coarse loop: Qeq = M/4 = 37.5 KB = 585.9375 pages * 5 = 2929.6875 pages Fbmax;
        // Gi = 0.1 * Gi0, Gi0 = (R_link/R_unit)/((2W+1)Qeq) (divide, the default).
        assert!(close(c.coarse.gi_for(LINE_BPS), 1000.0 / 2929.6875, 1e-15));
        let printed = BcnParams {
            gi_formula: crate::cc::bcn::GiFormula::Multiply,
            ..c.coarse.clone()
        };
        assert!(close(printed.gi_for(LINE_BPS), 1000.0 * 2929.6875, 1e-15));
    }

    #[test]
    fn cp_stamps_the_flows_own_bytes_with_the_flow_rule() {
        let c = seed003(true);
        let mut r = rng();
        let mut cp = E2cmCp::new(&c, CPID, &mut r);
        for _ in 0..10 {
            cp.on_data_enqueue(1, 0, 1500);
        }
        for _ in 0..20 {
            cp.on_data_enqueue(2, 0, 1500);
        }
        cp.on_data_dequeue(1, 0, 1500);
        assert_eq!(cp.flow_bytes(1, 0), 13_500);
        // Flow 1->0 holds 13,500 B: Qoff = 13500 - 7500 = 6000 (clamp +-7500), Qdelta = 13500
        // (q_old 0; clamp +-15000); Fb = -(6000 + 2*13500)/64 = -515.625.
        let mut p = probe();
        cp.on_probe(&mut p, 1, 0, 45_064);
        assert_eq!(p.feedback, Some(normal(-515.625)));
        // Second probe: 9,000 B. Qoff = 1500, Qdelta = -4500: Fb = -(1500 - 9000)/64 = 117.1875.
        for _ in 0..3 {
            cp.on_data_dequeue(1, 0, 1500);
        }
        let mut p = probe();
        cp.on_probe(&mut p, 1, 0, 40_564);
        assert_eq!(p.feedback, Some(normal(117.1875)));
        // Flow 2->0 holds 30,000 B = M/5: BCN-MAX, -Fbmax_flow.
        let mut p = probe();
        cp.on_probe(&mut p, 2, 0, 40_564);
        assert_eq!(
            p.feedback,
            Some(BcnFeedback {
                fb: -585.9375,
                kind: BcnKind::Max
            })
        );
        // 120,000 B = 4M/5: BCN(0,0).
        for _ in 0..60 {
            cp.on_data_enqueue(2, 0, 1500);
        }
        let mut p = probe();
        cp.on_probe(&mut p, 2, 0, 0);
        assert_eq!(p.feedback.unwrap().kind, BcnKind::ZeroZero);
        // A flow with nothing queued: Qoff = -7500, Qdelta = 0 -> +117.1875 (positive).
        let mut p = probe();
        cp.on_probe(&mut p, 3, 0, 200_000);
        assert_eq!(p.feedback, Some(normal(117.1875)));
        assert_eq!(cp.probes_stamped, 5);
        // Entries leave when a flow empties.
        for _ in 0..9 {
            cp.on_data_dequeue(1, 0, 1500);
        }
        assert_eq!(cp.flow_bytes(1, 0), 0);
        assert!(!cp.flow_bytes.contains_key(&flow_key(1, 0)));
    }

    #[test]
    fn whole_queue_measure_and_stamp_combination() {
        let mut c = seed003(false);
        c.fine.probe_measures = ProbeMeasures::QueueBytes;
        let mut r = rng();
        let mut cp1 = E2cmCp::new(&c, 1, &mut r);
        let mut cp2 = E2cmCp::new(&c, 2, &mut r);
        // Measuring the whole queue, a CP keeps no per-flow bytes.
        cp1.on_data_enqueue(1, 0, 1_500);
        assert_eq!(cp1.flow_bytes(1, 0), 0);
        // Whole queue 9,000 B at the first switch: Fb = -(1500 + 2*9000)/64 = -304.6875; the
        // second switch's empty queue gives +117.1875. Most negative keeps the first.
        let mut p = probe();
        cp1.on_probe(&mut p, 1, 0, 9_000);
        cp2.on_probe(&mut p, 1, 0, 0);
        assert_eq!(p.feedback, Some(normal(-304.6875)));
        // "last" keeps the second switch's.
        c.fine.stamp_combine = StampCombine::Last;
        let mut cp1 = E2cmCp::new(&c, 1, &mut r);
        let mut cp2 = E2cmCp::new(&c, 2, &mut r);
        let mut p = probe();
        cp1.on_probe(&mut p, 1, 0, 9_000);
        cp2.on_probe(&mut p, 1, 0, 0);
        assert_eq!(p.feedback, Some(normal(117.1875)));
        // BCN-MAX outranks a more negative normal value; a returned probe is never restamped.
        let max = BcnFeedback {
            fb: -585.9375,
            kind: BcnKind::Max,
        };
        assert!(more_severe(&max, &normal(-600.0)));
        assert!(more_severe(&normal(-2.0), &normal(-1.0)));
        let mut back = E2cmNp.on_probe(&p);
        assert!(back.returned && !back.rides_data_queue());
        cp1.on_probe(&mut back, 1, 0, 100_000);
        assert_eq!(back.feedback, Some(normal(117.1875)));
    }

    #[test]
    fn fine_limiter_applies_per_flow_gains_and_both_limiters_pace() {
        let c = seed003(true);
        let now = SimTime::ZERO;
        let mut r = rng();
        let mut rp = E2cmRp::new(LINE_BPS, &c, CPID, now);
        assert_eq!(rp.rate_bps(), LINE_BPS);
        // Coarse: a negative BCN of -2929.6875/4 pages: R *= 1 - 0.5/4 -> 8.75 Gb/s.
        rp.on_bcn(&normal(-2929.6875 / 4.0), CPID, now, &mut r);
        assert!(close(rp.coarse_rate_bps(), 8.75e9, 1e-12));
        assert_eq!(rp.tag(), CPID);
        // Fine: -Fbmax_flow halves it (Gd_flow * Fbmax_flow = 0.5): 5 Gb/s; the pair runs at
        // the smaller of the two.
        let back = |feedback| E2cmProbe {
            feedback: Some(feedback),
            returned: true,
        };
        rp.on_probe(
            &back(BcnFeedback {
                fb: -585.9375,
                kind: BcnKind::Max,
            }),
            now,
            &mut r,
        );
        assert!(close(rp.fine_rate_bps(), 5e9, 1e-12));
        assert!(close(rp.rate_bps(), 5e9, 1e-12));
        // Positive: + Gi_flow * Fb * Ru = (50/585.9375) * 117.1875 * 1 Mb/s = +10 Mb/s.
        rp.on_probe(&back(normal(117.1875)), now, &mut r);
        assert!(close(rp.fine_rate_bps(), 5.01e9, 1e-12));
        // BCN(0,0) drops the fine limiter to Rmin (1 Mb/s).
        rp.on_probe(
            &back(BcnFeedback {
                fb: -585.9375,
                kind: BcnKind::ZeroZero,
            }),
            now,
            &mut r,
        );
        assert_eq!(rp.rate_bps(), 1e6);
        // An unstamped probe changes nothing.
        rp.on_probe(&back_unstamped(), now, &mut r);
        assert_eq!(rp.last_probe_fb(), Some(-585.9375));
    }

    fn back_unstamped() -> E2cmProbe {
        E2cmProbe {
            feedback: None,
            returned: true,
        }
    }

    #[test]
    fn probes_every_interval_and_release_only_without_congestion() {
        let c = E2cmConfig {
            fine: E2cmParams {
                probe_interval_bytes: 3000,
                ..E2cmParams::default()
            },
            ..seed003(false)
        };
        let now = SimTime::ZERO;
        let mut r = rng();
        let mut rp = E2cmRp::new(LINE_BPS, &c, CPID, now);
        assert_eq!(rp.on_transmit(1500), None);
        assert!(rp.on_transmit(1500).is_some());
        assert_eq!(rp.on_transmit(1000), None);
        assert_eq!(rp.probes_sent, 1);
        // Coarse at line rate and no probe back yet: nothing limits, the pair is released.
        assert!(rp.is_released());
        assert_eq!(rp.tag(), NO_TAG);
        assert_eq!(rp.timer(), None);
        // A congested probe holds it even once the fine rate is back at line rate.
        let congested = E2cmProbe {
            feedback: Some(normal(-1.0)),
            returned: true,
        };
        rp.on_probe(&congested, now, &mut r);
        assert!(!rp.is_released());
        let large_positive = E2cmProbe {
            feedback: Some(normal(1e6)),
            returned: true,
        };
        let mut rp2 = rp.clone();
        rp2.on_probe(&large_positive, now, &mut r);
        assert_eq!(rp2.fine_rate_bps(), LINE_BPS);
        assert!(rp2.is_released());
        // Coarse limiting (drift on): its timer runs and frames carry its tag.
        rp.on_bcn(&normal(-100.0), CPID, now, &mut r);
        assert!(rp.timer().is_some());
        assert_eq!(rp.tag(), CPID);
    }
}
