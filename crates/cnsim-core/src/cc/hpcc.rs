//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, Algorithm 1),
//! written only against the sender hooks (`docs/hooks.md`, `docs/hpcc.md`): a window and a
//! pacing rate per transported flow from the in-band telemetry (INT) switches stamp on its
//! data frames (`cc/telemetry.rs`: per hop qLen, txBytes, ts, B) and its ACKs carry back. No
//! CP, RP or NP; it runs over `transport = "roce"` (or `irn`, `tcp`).
//!
//! Algorithm 1, per ACK carrying telemetry `ack.L` (L the previous ACK's):
//! - MeasureInflight (lines 1-10): per hop i, txRate = (ack.L[i].txBytes - L[i].txBytes) /
//!   (ack.L[i].ts - L[i].ts); u' = min(ack.L[i].qLen, L[i].qLen) / (ack.L[i].B T) +
//!   txRate / ack.L[i].B; u the largest u' (strictly larger replaces), tau its hop's ts
//!   difference, tau = min(tau, T); U = (1 - tau/T) U + (tau/T) u.
//! - ComputeWind (lines 11-20): if U >= eta or incStage >= maxStage, W = Wc / (U/eta) + W_AI
//!   (and with updateWc: incStage = 0, Wc = W); else W = Wc + W_AI (with updateWc: incStage++,
//!   Wc = W).
//! - NewAck (lines 21-28): updateWc when the ACK acknowledges past lastUpdateSeq (then
//!   lastUpdateSeq = snd_nxt): Wc moves once per RTT, W on every ACK; R = W / T; L = ack.L.
//!
//! Choices fixed here, as the HPCC ns-3 simulator (the authors' code) makes them, since the
//! paper leaves them open: the first ACK with telemetry only records L and lastUpdateSeq; U
//! starts at 1; a hop whose timestamps did not advance is skipped, and U moves only when some
//! hop was measured; W is clamped to [min_rate T, line rate T] before it becomes Wc. A NACK or
//! a timeout leaves W alone (Algorithm 1 reacts to telemetry only; roce's go-back-N resends
//! under the window). W_AI is given as a rate, W_AI = ai_rate T (the ns-3 code's RATE_AI).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    lay_named_set, AckEvent, CcScheme, CongestionSpec, FlowStart, MessageKind, Named, NoNp,
    Registered, Telemetry,
};
use crate::error::{Check, ConfigError};
use crate::rng::SimRng;

/// A named parameter set: the values a table's keys are laid over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HpccSet {
    /// The paper's (SIGCOMM 2019 section 3): eta 95 %, maxStage 5; W_AI and the rate floor as
    /// the ns-3 code has them at 100 Gb/s (the paper gives no number: a reconstruction).
    #[default]
    Sigcomm2019,
    /// The HPCC ns-3 simulator's `run.py --cc hp` at 100 Gb/s: U_TARGET 0.95, MI_THRESH 0
    /// (every update multiplicative), RATE_AI 10 bw/25 = 40 Mb/s, MIN_RATE 1000 Mb/s.
    HpccNs3,
}

/// `[congestion.hpcc]`: every constant, with its source (docs/hpcc.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct HpccParams {
    /// The named set the other keys are laid over ("sigcomm2019" or "hpcc_ns3").
    pub(crate) parameter_set: HpccSet,
    /// Target utilisation (eta; 0.95).
    pub(crate) eta: f64,
    /// Additive-increase stages before a multiplicative update is forced (maxStage; 5).
    pub(crate) max_stage: u32,
    /// The additive increase as a rate: W_AI = ai_rate_bps x T (40 Mb/s).
    pub(crate) ai_rate_bps: f64,
    /// T, the base RTT (s); 0: computed from the topology (the longest transported path's
    /// unloaded round trip), shown in the resolved scenario.
    pub(crate) base_rtt_s: f64,
    /// The rate's floor: W >= min_rate_bps x T (100 Mb/s, the ns-3 code's default).
    pub(crate) min_rate_bps: f64,
    /// The rate a flow starts at (0: the host's line rate, W_init = B_nic T).
    pub(crate) initial_rate_bps: f64,
}

impl Default for HpccParams {
    fn default() -> Self {
        HpccParams::of_set(HpccSet::Sigcomm2019)
    }
}

impl HpccParams {
    pub(crate) fn of_set(set: HpccSet) -> HpccParams {
        let paper = HpccParams {
            parameter_set: HpccSet::Sigcomm2019,
            eta: 0.95,
            max_stage: 5,
            ai_rate_bps: 40e6,
            base_rtt_s: 0.0,
            min_rate_bps: 100e6,
            initial_rate_bps: 0.0,
        };
        match set {
            HpccSet::Sigcomm2019 => paper,
            HpccSet::HpccNs3 => HpccParams {
                parameter_set: HpccSet::HpccNs3,
                max_stage: 0,
                min_rate_bps: 1e9,
                ..paper
            },
        }
    }

    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.in_open_closed("eta", self.eta, 0.0, 1.0)?;
        c.in_closed("max_stage", self.max_stage as f64, 0.0, 1e6)?;
        c.rate_non_negative("ai_rate_bps", self.ai_rate_bps)?;
        c.time_non_negative("base_rtt_s", self.base_rtt_s)?;
        if self.base_rtt_s == 0.0 {
            // The scenario fills it from the topology; still 0: there was nothing to measure.
            return Err(c.fail(
                "base_rtt_s",
                "could not be computed from the topology (no host link): give T in seconds",
            ));
        }
        c.rate("min_rate_bps", self.min_rate_bps)?;
        c.rate_non_negative("initial_rate_bps", self.initial_rate_bps)?;
        Ok(())
    }
}

/// No message of its own: telemetry rides the data frames and the transport's ACKs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum HpccMsg {}

/// One flow's HPCC state (Algorithm 1's).
#[derive(Clone, Debug)]
pub(crate) struct HpccSender {
    eta: f64,
    max_stage: u32,
    /// T (s).
    t_s: f64,
    /// W_AI (bytes).
    w_ai_bytes: f64,
    /// W's bounds (bytes): min_rate T and line rate T.
    w_min_bytes: f64,
    w_max_bytes: f64,
    /// The window W and the reference window Wc (bytes).
    pub(crate) w_bytes: f64,
    pub(crate) wc_bytes: f64,
    /// The normalised inflight estimate U.
    pub(crate) u: f64,
    pub(crate) inc_stage: u32,
    /// snd_nxt (bytes) at the last reference update; None before the first telemetry.
    last_update_seq: Option<u64>,
    /// The previous ACK's telemetry (L).
    last: Telemetry,
    /// Bytes acknowledged so far (the cumulative ACK, in bytes).
    acked_bytes: u64,
}

impl HpccSender {
    pub(crate) fn new(p: &HpccParams, line_rate_bps: f64) -> HpccSender {
        let t_s = p.base_rtt_s;
        let start_bps = if p.initial_rate_bps > 0.0 {
            p.initial_rate_bps.min(line_rate_bps)
        } else {
            line_rate_bps
        };
        let w_max_bytes = line_rate_bps * t_s / 8.0;
        let w_min_bytes = (p.min_rate_bps * t_s / 8.0).min(w_max_bytes);
        let w = (start_bps * t_s / 8.0).clamp(w_min_bytes, w_max_bytes);
        HpccSender {
            eta: p.eta,
            max_stage: p.max_stage,
            t_s,
            w_ai_bytes: p.ai_rate_bps * t_s / 8.0,
            w_min_bytes,
            w_max_bytes,
            w_bytes: w,
            wc_bytes: w,
            u: 1.0,
            inc_stage: 0,
            last_update_seq: None,
            last: Telemetry::default(),
            acked_bytes: 0,
        }
    }

    /// NewAck (Algorithm 1 lines 21-28) for an ACK with the transport's bookkeeping.
    pub(crate) fn on_ack(&mut self, ack: &AckEvent) {
        self.acked_bytes += ack.newly_acked_bytes;
        let snd_nxt = self.acked_bytes + ack.in_flight_bytes;
        let Some(telemetry) = ack.telemetry else {
            return;
        };
        self.on_telemetry(&telemetry, self.acked_bytes, snd_nxt);
    }

    /// One ACK's telemetry, the cumulative bytes it acknowledges and snd_nxt (bytes).
    pub(crate) fn on_telemetry(&mut self, telemetry: &Telemetry, acked_bytes: u64, snd_nxt: u64) {
        let Some(last_update_seq) = self.last_update_seq else {
            // The first RTT: nothing to difference against yet.
            self.last_update_seq = Some(snd_nxt);
            self.last = *telemetry;
            return;
        };
        let measured = self.measure_inflight(telemetry);
        self.last = *telemetry;
        if !measured {
            return;
        }
        let update_wc = acked_bytes > last_update_seq;
        self.compute_wind(update_wc);
        if update_wc {
            self.last_update_seq = Some(snd_nxt);
        }
    }

    /// MeasureInflight (lines 1-10): the EWMA U of the most loaded hop's normalised inflight.
    /// False when no hop could be measured (U unchanged).
    fn measure_inflight(&mut self, now: &Telemetry) -> bool {
        let (mut u_max, mut tau_s, mut measured) = (0.0, 0.0, false);
        for (hop, before) in now.hops().iter().zip(self.last.hops()) {
            let dt_s = hop.at.saturating_sub(before.at).as_secs_f64();
            if dt_s <= 0.0 {
                continue;
            }
            measured = true;
            let tx_rate_bps = 8.0 * hop.tx_bytes.saturating_sub(before.tx_bytes) as f64 / dt_s;
            let queue_bits = 8.0 * hop.queue_bytes.min(before.queue_bytes) as f64;
            let u_hop = queue_bits / (hop.rate_bps * self.t_s) + tx_rate_bps / hop.rate_bps;
            if u_hop > u_max {
                u_max = u_hop;
                tau_s = dt_s;
            }
        }
        if measured {
            let weight = tau_s.min(self.t_s) / self.t_s;
            self.u = (1.0 - weight) * self.u + weight * u_max;
        }
        measured
    }

    /// ComputeWind (lines 11-20), W clamped to its bounds before it becomes Wc.
    fn compute_wind(&mut self, update_wc: bool) {
        let multiplicative = self.u >= self.eta || self.inc_stage >= self.max_stage;
        let w = if multiplicative {
            self.wc_bytes / (self.u / self.eta) + self.w_ai_bytes
        } else {
            self.wc_bytes + self.w_ai_bytes
        };
        self.w_bytes = w.clamp(self.w_min_bytes, self.w_max_bytes);
        if update_wc {
            self.inc_stage = if multiplicative { 0 } else { self.inc_stage + 1 };
            self.wc_bytes = self.w_bytes;
        }
    }

    /// The telemetry of the last ACK (L).
    #[cfg(test)]
    pub(crate) fn last_telemetry(&self) -> &Telemetry {
        &self.last
    }

    /// R = W / T.
    pub(crate) fn rate_bps(&self) -> f64 {
        8.0 * self.w_bytes / self.t_s
    }
}

/// What the summary says ran.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HpccSummary {
    pub(crate) parameter_set: HpccSet,
    /// T (s) as it ran.
    pub(crate) base_rtt_s: f64,
    /// W_AI and the rate floor of the default set are the ns-3 code's, not the paper's
    /// (docs/hpcc.md).
    pub(crate) reconstructed: bool,
}

/// HPCC as registered: `scheme = "hpcc"`, `[congestion.hpcc]` (over a named parameter set).
pub(crate) struct Hpcc;

impl CcScheme for Hpcc {
    type Params = HpccParams;
    type Config = HpccParams;
    type Msg = HpccMsg;
    type Cp = ();
    type Rp = std::convert::Infallible;
    type Np = NoNp;
    type Sender = HpccSender;
    type Variant = HpccSummary;

    const NAMES: &'static [Named] = &[Named {
        name: "hpcc",
        doc: "HPCC (SIGCOMM 2019): a window and rate per transported flow from in-band \
              telemetry that switches stamp on data frames and ACKs carry back.",
    }];
    const TABLE_DOC: &'static str = "HPCC's constants (docs/hpcc.md).";
    const CONTROL_KINDS: &'static [Named] = &[];

    /// `parameter_set = "..."`: the table's other keys are laid over the named set's values.
    fn prepare(congestion: &mut toml::Table, _selected: &str) -> Result<(), ConfigError> {
        lay_named_set(congestion, Self::TABLE, HpccParams::of_set)
    }
    fn fill_defaults(spec: &mut CongestionSpec, _: &str) {
        spec.hpcc.get_or_insert_with(HpccParams::default);
    }
    fn validate(p: &HpccParams, _: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        p.validate(path)
    }
    fn resolve(spec: &CongestionSpec, _: &str) -> HpccParams {
        spec.hpcc.clone().unwrap_or_default()
    }
    fn variant(p: &HpccParams) -> HpccSummary {
        HpccSummary {
            parameter_set: p.parameter_set,
            base_rtt_s: p.base_rtt_s,
            reconstructed: p.parameter_set == HpccSet::Sigcomm2019,
        }
    }
    fn kind(m: &HpccMsg) -> MessageKind {
        match *m {}
    }
    fn msg_bytes(m: &HpccMsg, _: &HpccParams) -> u32 {
        match *m {}
    }
    fn new_cp(_: &HpccParams, _: u32, _: f64, _: &mut SimRng) {}
    fn rate_bps(rp: &Self::Rp) -> f64 {
        match *rp {}
    }
    fn is_released(rp: &Self::Rp) -> bool {
        match *rp {}
    }

    fn new_sender(p: &HpccParams, flow: &FlowStart) -> Option<HpccSender> {
        Some(HpccSender::new(p, flow.line_rate_bps))
    }
    fn on_ack(s: &mut HpccSender, ack: &AckEvent) {
        s.on_ack(ack);
    }
    fn window_bytes(s: &HpccSender) -> Option<f64> {
        Some(s.w_bytes)
    }
    fn pacing_bps(s: &HpccSender) -> Option<f64> {
        Some(s.rate_bps())
    }
    fn stamps_telemetry(_: &HpccParams) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
