//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020, Algorithm 1 and section 3), written only against the sender hooks
//! (`docs/hooks.md`, `docs/swift.md`): a congestion window per transported flow, in packets and
//! fractions of one, with pacing below one packet; no CP, RP or NP. It runs over
//! `transport = "tcp"` or `"roce"` (or `"irn"`).
//!
//! Algorithm 1, as written here (line by line):
//! - every event: cwnd_prev = cwnd; can_decrease = (now - t_last_decrease >= rtt);
//! - on an ACK: retransmit_cnt = 0; target = TargetDelay(); delay < target: additive increase,
//!   cwnd += ai num_acked / cwnd when cwnd >= 1, cwnd += ai num_acked below; otherwise, if
//!   can_decrease, multiplicative decrease cwnd *= max(1 - beta (delay - target) / delay,
//!   1 - max_mdf);
//! - on a retransmit timeout: retransmit_cnt += 1; at RETX_RESET_THRESHOLD cwnd = min_cwnd,
//!   else, if can_decrease, cwnd *= 1 - max_mdf;
//! - on fast recovery (TCP's fast retransmit; roce's and irn's NACK): retransmit_cnt = 0; if
//!   can_decrease, cwnd *= 1 - max_mdf;
//! - then cwnd = clamp(min_cwnd, cwnd, max_cwnd); t_last_decrease = now if the window went
//!   down; below one packet the flow is paced, one packet every rtt / cwnd (`pacing_bps` =
//!   cwnd x MSS / rtt).
//!
//! TargetDelay (section 3.5): base_target + hops x h + flow scaling, the flow-scaling term
//! clamp(alpha / sqrt(cwnd) + beta_fs, 0, fs_range), with alpha = fs_range divided by
//! (1 / sqrt(fs_min_cwnd) minus 1 / sqrt(fs_max_cwnd)) and beta_fs = -alpha / sqrt(fs_max_cwnd):
//! fs_range at fs_min_cwnd, 0 at fs_max_cwnd. `hops` is the switches on the flow's path
//! (`FlowStart::hops`, from the static routes; the paper reads it from the IP TTL of the data).
//!
//! Fabric and endpoint delay (section 3.2): Swift compares the fabric delay (RTT less the time
//! the remote host held the packet and its ACK) with the fabric target. cnsim's hosts have no
//! processing delay; the endpoint part of the RTT is the time the receiver held the ACK
//! (`AckEvent::endpoint_delay`: a tcp delayed ACK's hold from the arrival of the packet whose
//! send time it echoes; 0 for an ACK sent at once), subtracted in
//! [`SwiftSender::fabric_delay_s`]. The endpoint congestion window (ecwnd, against an endpoint
//! target) is not modelled: the hold is at most `delayed_ack_s`, which an endpoint target set
//! above it would never bind.
//!
//! A reconstruction: the paper's text was not at hand here (only its abstract), so Algorithm 1
//! is written from the algorithm as it is widely restated, and the constants' defaults (ai = 1,
//! beta = 0.8, max_mdf = 0.5, base_target = 20 us, h = base_target / 6.55, fs_range = 5
//! base_target, fs_min_cwnd = 0.1, fs_max_cwnd = 100, RETX_RESET_THRESHOLD = 5, max_cwnd 1000
//! packets) are those of the public csg-htsim simulator's Swift, which itself calls most of them
//! a guess; min_cwnd = 0.001 packets and an initial window of 10 packets are cnsim's choice.
//! Choices fixed here (each says why): `rtt` is the latest sample (Algorithm 1 names no
//! filter): in can_decrease the one before the event (an ACK's own sample is taken after the
//! check, as at the top of Algorithm 1), in the pacing the ACK's own; num_acked counts packets of MSS, fractions for a short last
//! packet; a flow's first ACK may decrease (t_last_decrease starts unset).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AckEvent, CcScheme, CongestionSpec, FlowStart, LossSignal, MessageKind, Named, NoNp};
use crate::error::{Check, ConfigError};
use crate::rng::SimRng;
use crate::time::SimTime;

/// `[congestion.swift]`: every constant of Algorithm 1 and the target, with its default
/// (docs/swift.md says where each comes from).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct SwiftParams {
    /// The fabric target's base: the target of a one-hop path at a large window (20 us).
    pub(crate) base_target_s: f64,
    /// Per-hop scaling h: added to the target per switch on the path (base_target / 6.55).
    pub(crate) hop_scale_s: f64,
    /// Flow scaling's range: the most it adds to the target, at fs_min_cwnd (5 x base_target).
    pub(crate) fs_range_s: f64,
    /// Flow scaling adds fs_range at or below this window, in packets (0.1).
    pub(crate) fs_min_cwnd_packets: f64,
    /// Flow scaling adds nothing at or above this window, in packets (100).
    pub(crate) fs_max_cwnd_packets: f64,
    /// Additive increase per round trip, in packets (ai; 1).
    pub(crate) ai_packets: f64,
    /// Multiplicative decrease's gain on the delay's excess over the target (beta; 0.8).
    pub(crate) beta: f64,
    /// The largest fraction one decrease takes off the window (max_mdf; 0.5).
    pub(crate) max_mdf: f64,
    /// Retransmit timeouts in a row that reset the window to min_cwnd (RETX_RESET_THRESHOLD; 5).
    pub(crate) retx_reset_threshold: u32,
    /// The smallest window, in packets: below 1 the flow is paced (0.001).
    pub(crate) min_cwnd_packets: f64,
    /// The largest window, in packets (1000).
    pub(crate) max_cwnd_packets: f64,
    /// The window a flow starts with, in packets (10).
    pub(crate) initial_cwnd_packets: f64,
}

impl Default for SwiftParams {
    fn default() -> Self {
        SwiftParams {
            base_target_s: 20e-6,
            hop_scale_s: 20e-6 / 6.55,
            fs_range_s: 100e-6,
            fs_min_cwnd_packets: 0.1,
            fs_max_cwnd_packets: 100.0,
            ai_packets: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            retx_reset_threshold: 5,
            min_cwnd_packets: 0.001,
            max_cwnd_packets: 1000.0,
            initial_cwnd_packets: 10.0,
        }
    }
}

impl SwiftParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.time_positive("base_target_s", self.base_target_s)?;
        c.time_non_negative("hop_scale_s", self.hop_scale_s)?;
        c.time_non_negative("fs_range_s", self.fs_range_s)?;
        c.positive("fs_min_cwnd_packets", self.fs_min_cwnd_packets)?;
        c.positive("fs_max_cwnd_packets", self.fs_max_cwnd_packets)?;
        if self.fs_max_cwnd_packets <= self.fs_min_cwnd_packets {
            return Err(c.fail(
                "fs_max_cwnd_packets",
                format!(
                    "must be above fs_min_cwnd_packets ({} <= {})",
                    self.fs_max_cwnd_packets, self.fs_min_cwnd_packets
                ),
            ));
        }
        c.in_closed("ai_packets", self.ai_packets, 0.0, 1e6)?;
        c.in_open_closed("beta", self.beta, 0.0, 1.0)?;
        c.in_open_closed("max_mdf", self.max_mdf, 0.0, 1.0)?;
        c.in_closed("retx_reset_threshold", self.retx_reset_threshold as f64, 1.0, 1e6)?;
        c.in_closed("min_cwnd_packets", self.min_cwnd_packets, 1e-6, 1e6)?;
        c.in_closed("max_cwnd_packets", self.max_cwnd_packets, 1e-6, 1e9)?;
        if self.max_cwnd_packets < self.min_cwnd_packets {
            return Err(c.fail(
                "max_cwnd_packets",
                format!(
                    "must be at least min_cwnd_packets ({} < {})",
                    self.max_cwnd_packets, self.min_cwnd_packets
                ),
            ));
        }
        let (lo, hi) = (self.min_cwnd_packets, self.max_cwnd_packets);
        if !(lo..=hi).contains(&self.initial_cwnd_packets) {
            return Err(c.fail(
                "initial_cwnd_packets",
                format!(
                    "must be in [min_cwnd_packets, max_cwnd_packets] = [{lo}, {hi}] (got {})",
                    self.initial_cwnd_packets
                ),
            ));
        }
        Ok(())
    }

    /// Flow scaling's alpha and beta (section 3.5): fs_range at fs_min_cwnd, 0 at fs_max_cwnd.
    fn flow_scaling(&self) -> (f64, f64) {
        let (lo, hi) = (self.fs_min_cwnd_packets.sqrt(), self.fs_max_cwnd_packets.sqrt());
        let alpha = self.fs_range_s / (1.0 / lo - 1.0 / hi);
        (alpha, -alpha / hi)
    }
}

/// No message of its own: the delay rides the transport's ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum SwiftMsg {}

/// One flow's Swift window (Algorithm 1's state; the window in packets of MSS).
#[derive(Clone, Debug)]
pub(crate) struct SwiftSender {
    p: SwiftParams,
    /// Flow scaling's alpha (s x sqrt(packets)) and beta (s).
    fs_alpha: f64,
    fs_beta: f64,
    /// The target without flow scaling: base_target + hops x h (s).
    path_target_s: f64,
    mss_bytes: f64,
    pub(crate) cwnd: f64,
    /// The latest RTT sample (s); 0 before the first.
    pub(crate) rtt_s: f64,
    /// When the window last went down; None: never (a decrease may come at once).
    t_last_decrease: Option<SimTime>,
    pub(crate) retransmit_cnt: u32,
}

impl SwiftSender {
    pub(crate) fn new(p: &SwiftParams, mss_bytes: u32, hops: u32) -> SwiftSender {
        let (fs_alpha, fs_beta) = p.flow_scaling();
        SwiftSender {
            fs_alpha,
            fs_beta,
            path_target_s: p.base_target_s + hops as f64 * p.hop_scale_s,
            mss_bytes: mss_bytes as f64,
            cwnd: p.initial_cwnd_packets,
            rtt_s: 0.0,
            t_last_decrease: None,
            retransmit_cnt: 0,
            p: p.clone(),
        }
    }

    /// TargetDelay() (section 3.5) at window `cwnd` (packets).
    pub(crate) fn target_delay_s(&self, cwnd: f64) -> f64 {
        let fs = (self.fs_alpha / cwnd.sqrt() + self.fs_beta).clamp(0.0, self.p.fs_range_s);
        self.path_target_s + fs
    }

    /// The fabric delay of an ACK: its RTT less the endpoint delay (the time the receiver held
    /// the ACK, `AckEvent::endpoint_delay`; 0 with an ACK per packet).
    fn fabric_delay_s(ack: &AckEvent) -> f64 {
        ack.rtt.saturating_sub(ack.endpoint_delay).as_secs_f64()
    }

    fn can_decrease(&self, now: SimTime) -> bool {
        self.t_last_decrease
            .is_none_or(|t| now.saturating_sub(t).as_secs_f64() >= self.rtt_s)
    }

    /// Algorithm 1, on receiving an ACK.
    pub(crate) fn on_ack(&mut self, ack: &AckEvent) {
        let prev = self.cwnd;
        let can_decrease = self.can_decrease(ack.now);
        self.rtt_s = ack.rtt.as_secs_f64();
        self.retransmit_cnt = 0;
        let delay = Self::fabric_delay_s(ack);
        let target = self.target_delay_s(self.cwnd);
        if delay < target {
            let acked = ack.newly_acked_bytes as f64 / self.mss_bytes;
            self.cwnd += if self.cwnd >= 1.0 {
                self.p.ai_packets * acked / self.cwnd
            } else {
                self.p.ai_packets * acked
            };
        } else if can_decrease {
            let md = 1.0 - self.p.beta * (delay - target) / delay;
            self.cwnd *= md.max(1.0 - self.p.max_mdf);
        }
        self.settle(prev, ack.now);
    }

    /// Algorithm 1, on a retransmit timeout and on fast recovery.
    pub(crate) fn on_loss(&mut self, loss: LossSignal, now: SimTime) {
        let prev = self.cwnd;
        let can_decrease = self.can_decrease(now);
        match loss {
            LossSignal::Timeout => {
                self.retransmit_cnt += 1;
                if self.retransmit_cnt >= self.p.retx_reset_threshold {
                    self.cwnd = self.p.min_cwnd_packets;
                } else if can_decrease {
                    self.cwnd *= 1.0 - self.p.max_mdf;
                }
            }
            LossSignal::Nack | LossSignal::FastRetransmit => {
                self.retransmit_cnt = 0;
                if can_decrease {
                    self.cwnd *= 1.0 - self.p.max_mdf;
                }
            }
        }
        self.settle(prev, now);
    }

    /// The end of Algorithm 1: the clamp, and the time of a decrease.
    fn settle(&mut self, prev: f64, now: SimTime) {
        self.cwnd = self
            .cwnd
            .clamp(self.p.min_cwnd_packets, self.p.max_cwnd_packets);
        if self.cwnd < prev {
            self.t_last_decrease = Some(now);
        }
    }

    pub(crate) fn window_bytes(&self) -> f64 {
        self.cwnd * self.mss_bytes
    }

    /// Below one packet: one packet every rtt / cwnd, i.e. cwnd x MSS / rtt.
    pub(crate) fn pacing_bps(&self) -> Option<f64> {
        (self.cwnd < 1.0 && self.rtt_s > 0.0)
            .then(|| self.cwnd * self.mss_bytes * 8.0 / self.rtt_s)
    }
}

/// What the summary says ran.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SwiftSummary {
    /// The fabric target's base (s).
    pub(crate) base_target_s: f64,
    /// The constants' defaults are a reconstruction (docs/swift.md).
    pub(crate) reconstructed: bool,
}

/// Swift as registered: `scheme = "swift"`, `[congestion.swift]`.
pub(crate) struct Swift;

impl CcScheme for Swift {
    type Params = SwiftParams;
    type Config = SwiftParams;
    type Msg = SwiftMsg;
    type Cp = ();
    type Rp = std::convert::Infallible;
    type Np = NoNp;
    type Sender = SwiftSender;
    type Variant = SwiftSummary;

    const NAMES: &'static [Named] = &[Named {
        name: "swift",
        doc: "Swift (SIGCOMM 2020): a window per transported flow, AIMD on the delay against a \
              target scaled by hops and by the window, paced below one packet.",
    }];
    const TABLE_DOC: &'static str = "Swift's constants (docs/swift.md).";
    const CONTROL_KINDS: &'static [Named] = &[];

    fn fill_defaults(spec: &mut CongestionSpec, _: &str) {
        spec.swift.get_or_insert_with(SwiftParams::default);
    }
    fn validate(p: &SwiftParams, _: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        p.validate(path)
    }
    fn resolve(spec: &CongestionSpec, _: &str) -> SwiftParams {
        spec.swift.clone().unwrap_or_default()
    }
    fn variant(p: &SwiftParams) -> SwiftSummary {
        SwiftSummary {
            base_target_s: p.base_target_s,
            reconstructed: true,
        }
    }
    fn kind(m: &SwiftMsg) -> MessageKind {
        match *m {}
    }
    fn msg_bytes(m: &SwiftMsg, _: &SwiftParams) -> u32 {
        match *m {}
    }
    fn new_cp(_: &SwiftParams, _: u32, _: f64, _: &mut SimRng) {}
    fn rate_bps(rp: &Self::Rp) -> f64 {
        match *rp {}
    }
    fn is_released(rp: &Self::Rp) -> bool {
        match *rp {}
    }

    fn new_sender(p: &SwiftParams, flow: &FlowStart) -> Option<SwiftSender> {
        Some(SwiftSender::new(p, flow.mss_bytes, flow.hops))
    }
    fn on_ack(s: &mut SwiftSender, ack: &AckEvent) {
        s.on_ack(ack);
    }
    fn on_loss(s: &mut SwiftSender, loss: LossSignal, now: SimTime) {
        s.on_loss(loss, now);
    }
    fn window_bytes(s: &SwiftSender) -> Option<f64> {
        Some(s.window_bytes())
    }
    fn pacing_bps(s: &SwiftSender) -> Option<f64> {
        s.pacing_bps()
    }
}

#[cfg(test)]
mod tests;
