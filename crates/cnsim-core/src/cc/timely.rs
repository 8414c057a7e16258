//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
//! 2015, Algorithm 1) and patched TIMELY (Zhu et al., "ECN or Delay: Lessons Learnt from
//! Analysis of DCQCN and TIMELY", CoNEXT 2016), written only against the sender hooks
//! (`docs/hooks.md`, `docs/timely.md`): a rate per transported flow (`pacing_bps`, no window),
//! no CP, RP or NP. It runs over `transport = "roce"`.
//!
//! Per completion event (every `segment_bytes` bytes acknowledged; the RTT sample is the one of
//! the ACK that completes the segment), Algorithm 1:
//! - new_rtt_diff = new_rtt - prev_rtt; rtt_diff = (1 - alpha) rtt_diff + alpha new_rtt_diff;
//!   gradient = rtt_diff / min_rtt (min_rtt a constant, as in the paper, not a measurement);
//! - new_rtt < T_low: rate += delta;
//! - new_rtt > T_high: rate *= 1 - beta (1 - T_high / new_rtt);
//! - otherwise (sigcomm2015) gradient <= 0: rate += N delta, N = `hai_n` once the last
//!   `hai_after` gradients were all negative (hyper-active increase), else 1; gradient > 0:
//!   rate *= 1 - beta gradient.
//!
//! The patched variant (CoNEXT 2016) replaces the middle region's two rules with one that has a
//! unique fixed point: w(g) = 0 for g <= -1/4, 2g + 1/2 between, 1 for g >= 1/4;
//! e = (new_rtt - rtt_ref) / rtt_ref; rate = rate (1 - beta_patched w(g) e) + delta (1 - w(g)).
//! w(g) and the rule are the paper's as the public eRPC code base writes them (its Timely class
//! with `kPatched`); rtt_ref = T_low and beta_patched = 0.008 are that code's constants: a
//! reconstruction (the paper's text was not at hand; docs/timely.md).
//!
//! The rate is clamped to [min_rate, line rate] after every update. Choices fixed here: the
//! first completion only records prev_rtt (no gradient yet); a NACK or a timeout leaves the
//! rate as it is (Algorithm 1 reacts to RTT only; roce's go-back-N retransmits at the rate).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AckEvent, CcScheme, CongestionSpec, FlowStart, MessageKind, Named, NoNp};
use crate::error::{Check, ConfigError};
use crate::rng::SimRng;

/// Which rule runs between T_low and T_high.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TimelyVariant {
    /// Algorithm 1 of the SIGCOMM 2015 paper: the gradient's sign picks increase or decrease.
    #[default]
    Sigcomm2015,
    /// The CoNEXT 2016 patch: a weighted mix of both, scaled by the RTT's error from rtt_ref.
    Patched,
}

/// `[congestion.timely]`: every constant, with the paper's default (docs/timely.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct TimelyParams {
    pub(crate) variant: TimelyVariant,
    /// Bytes acknowledged per completion event (rate update): the paper's segment, 16-64 KB;
    /// 16 KB, the low end. 1: every ACK.
    pub(crate) segment_bytes: u64,
    /// EWMA gain of rtt_diff (alpha; 0.875).
    pub(crate) alpha: f64,
    /// Multiplicative decrease factor (beta; 0.8).
    pub(crate) beta: f64,
    /// Additive increase step (delta; 10 Mb/s).
    pub(crate) delta_bps: f64,
    /// Below this RTT: additive increase (T_low; 50 us).
    pub(crate) t_low_s: f64,
    /// Above this RTT: decrease by the RTT (T_high; 500 us).
    pub(crate) t_high_s: f64,
    /// The gradient's normaliser (minRTT; 20 us).
    pub(crate) min_rtt_s: f64,
    /// Consecutive negative gradients before hyper-active increase (5).
    pub(crate) hai_after: u32,
    /// Hyper-active increase: N delta (N = 5).
    pub(crate) hai_n: u32,
    /// The rate's floor (10 Mb/s; a reconstruction).
    pub(crate) min_rate_bps: f64,
    /// The rate a flow starts at (0: the host's line rate).
    pub(crate) initial_rate_bps: f64,
    /// Patched: the reference RTT of the error term (0: T_low; a reconstruction).
    pub(crate) rtt_ref_s: f64,
    /// Patched: the decrease factor of the error term (0.008; a reconstruction).
    pub(crate) beta_patched: f64,
}

impl Default for TimelyParams {
    fn default() -> Self {
        TimelyParams {
            variant: TimelyVariant::Sigcomm2015,
            segment_bytes: 16_384,
            alpha: 0.875,
            beta: 0.8,
            delta_bps: 10e6,
            t_low_s: 50e-6,
            t_high_s: 500e-6,
            min_rtt_s: 20e-6,
            hai_after: 5,
            hai_n: 5,
            min_rate_bps: 10e6,
            initial_rate_bps: 0.0,
            rtt_ref_s: 0.0,
            beta_patched: 0.008,
        }
    }
}

impl TimelyParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.in_closed("segment_bytes", self.segment_bytes as f64, 1.0, 1e12)?;
        c.in_open_closed("alpha", self.alpha, 0.0, 1.0)?;
        c.in_open_closed("beta", self.beta, 0.0, 1.0)?;
        c.in_open_closed("beta_patched", self.beta_patched, 0.0, 1.0)?;
        c.rate_non_negative("delta_bps", self.delta_bps)?;
        c.time_positive("t_low_s", self.t_low_s)?;
        c.time_positive("t_high_s", self.t_high_s)?;
        if self.t_high_s < self.t_low_s {
            return Err(c.fail(
                "t_high_s",
                format!("must be at least t_low_s ({} < {})", self.t_high_s, self.t_low_s),
            ));
        }
        c.time_positive("min_rtt_s", self.min_rtt_s)?;
        c.time_non_negative("rtt_ref_s", self.rtt_ref_s)?;
        c.in_closed("hai_after", self.hai_after as f64, 1.0, 1e6)?;
        c.in_closed("hai_n", self.hai_n as f64, 1.0, 1e6)?;
        c.rate("min_rate_bps", self.min_rate_bps)?;
        c.rate_non_negative("initial_rate_bps", self.initial_rate_bps)?;
        Ok(())
    }

    fn rtt_ref(&self) -> f64 {
        if self.rtt_ref_s > 0.0 {
            self.rtt_ref_s
        } else {
            self.t_low_s
        }
    }
}

/// The CoNEXT 2016 patch's weight of the gradient: 0 up to -1/4, 1 from 1/4, linear between.
pub(crate) fn patch_weight(gradient: f64) -> f64 {
    (2.0 * gradient + 0.5).clamp(0.0, 1.0)
}

/// No message of its own: the RTT rides the transport's ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum TimelyMsg {}

/// One flow's TIMELY rate computation (Algorithm 1's state).
#[derive(Clone, Debug)]
pub(crate) struct TimelySender {
    p: TimelyParams,
    line_rate_bps: f64,
    pub(crate) rate_bps: f64,
    /// The last completion's RTT (s); None before the first.
    prev_rtt_s: Option<f64>,
    /// The EWMA of RTT differences (s).
    pub(crate) rtt_diff_s: f64,
    /// Consecutive completions with a negative gradient.
    negative_gradients: u32,
    /// Bytes acknowledged since the last completion event.
    segment_acked: u64,
}

impl TimelySender {
    pub(crate) fn new(p: &TimelyParams, line_rate_bps: f64) -> TimelySender {
        let start = if p.initial_rate_bps > 0.0 {
            p.initial_rate_bps
        } else {
            line_rate_bps
        };
        TimelySender {
            p: p.clone(),
            line_rate_bps,
            rate_bps: start.clamp(p.min_rate_bps.min(line_rate_bps), line_rate_bps),
            prev_rtt_s: None,
            rtt_diff_s: 0.0,
            negative_gradients: 0,
            segment_acked: 0,
        }
    }

    /// Counts the ACK's bytes; a completed segment updates the rate with its RTT sample.
    pub(crate) fn on_ack(&mut self, ack: &AckEvent) {
        self.segment_acked += ack.newly_acked_bytes;
        if self.segment_acked >= self.p.segment_bytes {
            self.segment_acked %= self.p.segment_bytes;
            self.on_completion(ack.rtt.as_secs_f64());
        }
    }

    /// Algorithm 1 for one completion event with RTT `new_rtt` (s).
    pub(crate) fn on_completion(&mut self, new_rtt: f64) {
        let Some(prev_rtt) = self.prev_rtt_s.replace(new_rtt) else {
            return;
        };
        let p = &self.p;
        let new_rtt_diff = new_rtt - prev_rtt;
        self.rtt_diff_s = (1.0 - p.alpha) * self.rtt_diff_s + p.alpha * new_rtt_diff;
        let gradient = self.rtt_diff_s / p.min_rtt_s;
        self.negative_gradients = if gradient <= 0.0 {
            self.negative_gradients + 1
        } else {
            0
        };
        let rate = self.rate_bps;
        let next = if new_rtt < p.t_low_s {
            rate + p.delta_bps
        } else if new_rtt > p.t_high_s {
            rate * (1.0 - p.beta * (1.0 - p.t_high_s / new_rtt))
        } else if p.variant == TimelyVariant::Patched {
            let w = patch_weight(gradient);
            let error = (new_rtt - p.rtt_ref()) / p.rtt_ref();
            rate * (1.0 - p.beta_patched * w * error) + p.delta_bps * (1.0 - w)
        } else if gradient <= 0.0 {
            let n = if self.negative_gradients >= p.hai_after {
                p.hai_n
            } else {
                1
            };
            rate + n as f64 * p.delta_bps
        } else {
            rate * (1.0 - p.beta * gradient)
        };
        self.rate_bps = next.clamp(p.min_rate_bps.min(self.line_rate_bps), self.line_rate_bps);
    }
}

/// What the summary says ran.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TimelySummary {
    pub(crate) variant: TimelyVariant,
    /// Bytes per completion event.
    pub(crate) segment_bytes: u64,
    /// The patched rule's constants are a reconstruction (docs/timely.md).
    pub(crate) reconstructed: bool,
}

/// TIMELY as registered: `scheme = "timely"`, `[congestion.timely]`.
pub(crate) struct Timely;

impl CcScheme for Timely {
    type Params = TimelyParams;
    type Config = TimelyParams;
    type Msg = TimelyMsg;
    type Cp = ();
    type Rp = std::convert::Infallible;
    type Np = NoNp;
    type Sender = TimelySender;
    type Variant = TimelySummary;

    const NAMES: &'static [Named] = &[Named {
        name: "timely",
        doc: "TIMELY (SIGCOMM 2015) or patched TIMELY (CoNEXT 2016): a rate per transported \
              flow from the RTT and its gradient per completion event.",
    }];
    const TABLE_DOC: &'static str = "TIMELY's constants (docs/timely.md).";
    const CONTROL_KINDS: &'static [Named] = &[];

    fn fill_defaults(spec: &mut CongestionSpec, _: &str) {
        spec.timely.get_or_insert_with(TimelyParams::default);
    }
    fn validate(p: &TimelyParams, _: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        p.validate(path)
    }
    fn resolve(spec: &CongestionSpec, _: &str) -> TimelyParams {
        spec.timely.clone().unwrap_or_default()
    }
    fn variant(p: &TimelyParams) -> TimelySummary {
        TimelySummary {
            variant: p.variant,
            segment_bytes: p.segment_bytes,
            reconstructed: p.variant == TimelyVariant::Patched,
        }
    }
    fn kind(m: &TimelyMsg) -> MessageKind {
        match *m {}
    }
    fn msg_bytes(m: &TimelyMsg, _: &TimelyParams) -> u32 {
        match *m {}
    }
    fn new_cp(_: &TimelyParams, _: u32, _: f64, _: &mut SimRng) {}
    fn rate_bps(rp: &Self::Rp) -> f64 {
        match *rp {}
    }
    fn is_released(rp: &Self::Rp) -> bool {
        match *rp {}
    }

    fn new_sender(p: &TimelyParams, flow: &FlowStart) -> Option<TimelySender> {
        Some(TimelySender::new(p, flow.line_rate_bps))
    }
    fn on_ack(s: &mut TimelySender, ack: &AckEvent) {
        s.on_ack(ack);
    }
    fn pacing_bps(s: &TimelySender) -> Option<f64> {
        Some(s.rate_bps)
    }
}

#[cfg(test)]
mod tests;
