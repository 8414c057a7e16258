//! DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; RFC 8257), written only
//! against the scheme hooks (`docs/hooks.md`, `docs/dctcp.md`):
//! - CP (paper section 3.1, RFC 8257 section 3.1): a data frame is marked CE when the
//!   instantaneous queue exceeds K (`k_bytes`). As the paper words it, on the queue "upon its
//!   arrival": at enqueue, against the queue the frame finds (without itself); at dequeue (a
//!   parameter), against the queue it leaves behind. The RED-style variant (`marking = "red"`)
//!   marks with probability 0 up to `kmin_bytes`, `pmax` (q - kmin) / (kmax - kmin) up to
//!   `kmax_bytes`, 1 above, on the same instantaneous queue (the paper's section 3.1: RED with
//!   both thresholds at K and the instantaneous queue is the step). With
//!   `k_reference_rate_bps`, each port's thresholds are scaled by its rate over that one: the
//!   paper's guideline K > C x RTT / 7 (section 3.4) is in proportion to the link rate C.
//! - Receiver (paper section 3.1, RFC 8257 section 3.2): with one ACK per data frame (roce's
//!   `ack_every = 1`, tcp without delayed ACKs) each ACK's ECE is exactly its data frame's mark,
//!   so the paper's two-state ECN-echo machine reduces to the transport's per-packet echo. The
//!   machine for delayed ACKs is not written here (it belongs to a transport that delays ACKs).
//! - Sender (paper section 3.1, RFC 8257 section 3.3), per ACK: bytes acked and bytes acked with
//!   ECE are counted; when the cumulative ACK passes `WindowEnd` (SND.NXT when the last
//!   observation window began), alpha = (1 - g) alpha + g F with F the marked fraction of the
//!   window's acked bytes, and a new window starts at SND.NXT. On an ECE, cwnd = cwnd (1 -
//!   alpha/2), ssthresh = cwnd, at most once per window of data (RFC 3168 section 6.1.2: no
//!   second reduction until an ACK covers data sent after the first). Otherwise slow
//!   start (cwnd += min(acked, MSS)) below ssthresh, congestion avoidance (cwnd += MSS acked /
//!   cwnd) above (RFC 5681 section 3.1), never past `max_cwnd_packets` when given (the
//!   receiver's window, RFC 5681 section 2).
//! - Loss (RFC 5681 section 3.1 and 3.2, RFC 8257 section 3.5: a loss is handled as standard
//!   TCP): a NACK (roce's go-back-N) halves the window (ssthresh = max(cwnd / 2, 2 MSS), cwnd =
//!   ssthresh), at most once per window; a timeout sets ssthresh the same way and cwnd to one
//!   MSS (the loss window).
//!
//! Choices fixed here (each says why): the window in flight at a reduction is SND.NXT, read as
//! the bytes acknowledged plus the bytes in flight after the ACK (`AckEvent`); the loss cut
//! halves cwnd, not FlightSize (a window-limited long flow has FlightSize = cwnd; RFC 5681 eq.
//! 4 with that reading); alpha is updated before the ECE reaction on the same ACK (as Linux's
//! DCTCP, whose ACK event hook runs before the CWR entry); the window never falls below
//! `min_cwnd_packets` MSS.

use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::dcqcn::MarkOn;
use super::{
    AckEvent, Carried, CcScheme, CongestionSpec, CpFrame, FlowStart, LossSignal, MessageKind,
    Named, NoNp,
};
use crate::error::{Check, ConfigError};
use crate::rng::SimRng;
use crate::time::SimTime;

/// How the CP marks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DctcpMarking {
    /// Mark every data frame while the instantaneous queue exceeds `k_bytes` (the paper).
    #[default]
    Step,
    /// RED's curve on the instantaneous queue: `kmin_bytes`, `kmax_bytes`, `pmax`.
    Red,
}

/// `[congestion.dctcp]`: every constant of the scheme, with the paper's default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct DctcpParams {
    /// CP: the step (the paper) or RED's curve.
    pub(crate) marking: DctcpMarking,
    /// CP: where the queue is compared with the threshold.
    pub(crate) mark_on: MarkOn,
    /// CP, step: the marking threshold K. The paper's 10 Gb/s setting, 65 packets of 1500 B
    /// (section 3.4; its guideline is K > C x RTT / 7).
    pub(crate) k_bytes: f64,
    /// CP, red: no mark at or below this queue.
    pub(crate) kmin_bytes: f64,
    /// CP, red: every frame marked above this queue.
    pub(crate) kmax_bytes: f64,
    /// CP, red: the marking probability just below `kmax_bytes`.
    pub(crate) pmax: f64,
    /// CP: the link rate the thresholds (`k_bytes`, `kmin_bytes`, `kmax_bytes`) are for; a
    /// port of rate C marks at them x C / this. K proportional to C x RTT is the paper's
    /// guideline (section 3.4: K > C x RTT / 7), and how HPCC's ns-3 simulator sets K per
    /// link rate (its `KMAX_MAP`). None: every port at the thresholds as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) k_reference_rate_bps: Option<f64>,
    /// Sender: alpha's gain g (paper section 3.1: 1/16).
    pub(crate) g: f64,
    /// Sender: alpha when a flow starts (RFC 8257 section 3.3: 1, the conservative start).
    pub(crate) alpha_init: f64,
    /// Sender: the initial window in MSS (RFC 6928: 10).
    pub(crate) initial_cwnd_packets: u32,
    /// Sender: the smallest window a reduction leaves, in MSS (RFC 5681 eq. 4: 2 SMSS).
    pub(crate) min_cwnd_packets: u32,
    /// Sender: the largest window, in MSS (the receiver's window, RFC 5681 section 2: rwnd).
    /// None: unbounded, as the paper's long flows. HPCC's ns-3 simulator caps every flow at
    /// one BDP (its `has_win`; 18 packets of 1000 B in Parsimon's runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_cwnd_packets: Option<u32>,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            marking: DctcpMarking::Step,
            mark_on: MarkOn::Enqueue,
            k_bytes: 97_500.0,
            kmin_bytes: 97_500.0,
            kmax_bytes: 97_500.0,
            pmax: 1.0,
            g: 1.0 / 16.0,
            alpha_init: 1.0,
            initial_cwnd_packets: 10,
            min_cwnd_packets: 2,
            k_reference_rate_bps: None,
            max_cwnd_packets: None,
        }
    }
}

impl DctcpParams {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.non_negative("k_bytes", self.k_bytes)?;
        c.non_negative("kmin_bytes", self.kmin_bytes)?;
        c.non_negative("kmax_bytes", self.kmax_bytes)?;
        if self.kmax_bytes < self.kmin_bytes {
            return Err(c.fail(
                "kmax_bytes",
                format!(
                    "must be at least kmin_bytes ({} < {})",
                    self.kmax_bytes, self.kmin_bytes
                ),
            ));
        }
        c.in_closed("pmax", self.pmax, 0.0, 1.0)?;
        c.in_open_closed("g", self.g, 0.0, 1.0)?;
        c.in_closed("alpha_init", self.alpha_init, 0.0, 1.0)?;
        c.in_closed("initial_cwnd_packets", self.initial_cwnd_packets as f64, 1.0, 1e6)?;
        c.in_closed("min_cwnd_packets", self.min_cwnd_packets as f64, 1.0, 1e6)?;
        if let Some(rate) = self.k_reference_rate_bps {
            c.in_closed("k_reference_rate_bps", rate, 1e3, 1e15)?;
        }
        if let Some(max) = self.max_cwnd_packets {
            let (min, initial) = (self.min_cwnd_packets, self.initial_cwnd_packets);
            if max < min.max(initial) {
                return Err(c.fail(
                    "max_cwnd_packets",
                    format!(
                        "must be at least min_cwnd_packets and initial_cwnd_packets ({max} < \
                         {})",
                        min.max(initial)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The parameters of a CP on a port of `port_rate_bps`: the thresholds scaled to it when
    /// `k_reference_rate_bps` is given.
    fn at_rate(&self, port_rate_bps: f64) -> DctcpParams {
        let scale = super::rate_scale(self.k_reference_rate_bps, port_rate_bps);
        DctcpParams {
            k_bytes: self.k_bytes * scale,
            kmin_bytes: self.kmin_bytes * scale,
            kmax_bytes: self.kmax_bytes * scale,
            ..self.clone()
        }
    }

    /// The probability that a data frame is marked with `queue_bytes` as the CP compares it.
    pub(crate) fn mark_probability(&self, queue_bytes: f64) -> f64 {
        match self.marking {
            DctcpMarking::Step => (queue_bytes > self.k_bytes) as u8 as f64,
            DctcpMarking::Red if queue_bytes <= self.kmin_bytes => 0.0,
            DctcpMarking::Red if queue_bytes > self.kmax_bytes => 1.0,
            DctcpMarking::Red => {
                self.pmax * (queue_bytes - self.kmin_bytes) / (self.kmax_bytes - self.kmin_bytes)
            }
        }
    }
}

/// No message of its own: the mark rides the data frame, the echo the transport's ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum DctcpMsg {}

/// ECN marking on one output queue.
pub(crate) struct DctcpCp {
    params: DctcpParams,
    /// Frames marked (CE) here.
    marked: u64,
}

impl DctcpCp {
    /// Marks a data frame seen at `at` with the queue as the CP compares it (module doc). Draws
    /// a number only where 0 < p < 1.
    fn mark(&mut self, at: MarkOn, queue_bytes: u64, rng: &mut SimRng) -> bool {
        if at != self.params.mark_on {
            return false;
        }
        let p = self.params.mark_probability(queue_bytes as f64);
        let mark = p >= 1.0 || (p > 0.0 && rng.random::<f64>() < p);
        self.marked += mark as u64;
        mark
    }
}

/// One flow's DCTCP sender (RFC 8257 section 3.3's variables, in bytes).
#[derive(Clone, Debug)]
pub(crate) struct DctcpSender {
    g: f64,
    mss_bytes: f64,
    min_cwnd_bytes: f64,
    /// The receiver's window (`max_cwnd_packets`); infinite without one.
    max_cwnd_bytes: f64,
    pub(crate) cwnd_bytes: f64,
    pub(crate) ssthresh_bytes: f64,
    pub(crate) alpha: f64,
    /// SND.UNA: bytes acknowledged since the flow started.
    acked_total: u64,
    /// Bytes in flight after the last ACK (SND.NXT = SND.UNA + this).
    in_flight_bytes: u64,
    /// DCTCP.WindowEnd: alpha is updated when SND.UNA passes it.
    window_end: u64,
    /// DCTCP.BytesAcked and DCTCP.BytesMarked of the current observation window.
    window_acked: u64,
    window_marked: u64,
    /// SND.NXT at the last reduction (none yet: `None`): no other until SND.UNA passes it.
    reduced_until: Option<u64>,
}

impl DctcpSender {
    pub(crate) fn new(p: &DctcpParams, mss_bytes: u32) -> DctcpSender {
        let mss = mss_bytes as f64;
        DctcpSender {
            g: p.g,
            mss_bytes: mss,
            min_cwnd_bytes: p.min_cwnd_packets as f64 * mss,
            max_cwnd_bytes: p.max_cwnd_packets.map_or(f64::INFINITY, |n| n as f64 * mss),
            cwnd_bytes: p.initial_cwnd_packets as f64 * mss,
            ssthresh_bytes: f64::INFINITY, // RFC 5681 section 3.1: arbitrarily high
            alpha: p.alpha_init,
            acked_total: 0,
            in_flight_bytes: 0,
            window_end: 0,
            window_acked: 0,
            window_marked: 0,
            reduced_until: None,
        }
    }

    fn snd_nxt(&self) -> u64 {
        self.acked_total + self.in_flight_bytes
    }

    /// RFC 8257 section 3.3, steps 1-8: count, and at the end of a window update alpha.
    fn observe(&mut self, acked: u64, ece: bool) {
        self.window_acked += acked;
        self.window_marked += if ece { acked } else { 0 };
        if self.acked_total <= self.window_end {
            return;
        }
        let f = if self.window_acked > 0 {
            self.window_marked as f64 / self.window_acked as f64
        } else {
            0.0
        };
        self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
        self.window_end = self.snd_nxt();
        self.window_acked = 0;
        self.window_marked = 0;
    }

    /// May the window be reduced now (once per window of data)? Only once an ACK covers data
    /// sent after the last reduction: SND.UNA strictly past the SND.NXT of that reduction (the
    /// ACK of the window's last packet still belongs to it). As ns-2's TCP (`seqno > recover_`)
    /// and Linux (CWR held until "something *above* high_seq is ACKed"); the same boundary as
    /// alpha's window (RFC 8257 section 3.3: SND.UNA > WindowEnd).
    fn may_reduce(&self) -> bool {
        self.reduced_until.is_none_or(|end| self.acked_total > end)
    }

    fn reduce_to(&mut self, cwnd_bytes: f64) {
        self.cwnd_bytes = cwnd_bytes.max(self.min_cwnd_bytes);
        self.ssthresh_bytes = self.cwnd_bytes;
        self.reduced_until = Some(self.snd_nxt());
    }

    pub(crate) fn on_ack(&mut self, ack: &AckEvent) {
        let acked = ack.newly_acked_bytes;
        self.acked_total += acked;
        self.in_flight_bytes = ack.in_flight_bytes;
        self.observe(acked, ack.ece);
        if ack.ece && self.may_reduce() {
            self.reduce_to(self.cwnd_bytes * (1.0 - self.alpha / 2.0));
            return;
        }
        let acked = acked as f64;
        let grown = if self.cwnd_bytes < self.ssthresh_bytes {
            self.cwnd_bytes + acked.min(self.mss_bytes)
        } else {
            self.cwnd_bytes + self.mss_bytes * acked / self.cwnd_bytes
        };
        self.cwnd_bytes = grown.min(self.max_cwnd_bytes);
    }

    pub(crate) fn on_loss(&mut self, loss: LossSignal) {
        match loss {
            // A NACK (roce, irn) or TCP's fast retransmit: halve once per window (RFC 8257
            // 3.5: a loss is treated as in standard TCP).
            LossSignal::Nack | LossSignal::FastRetransmit if self.may_reduce() => {
                self.reduce_to(self.cwnd_bytes / 2.0)
            }
            LossSignal::Nack | LossSignal::FastRetransmit => {}
            LossSignal::Timeout => {
                self.reduce_to(self.cwnd_bytes / 2.0);
                self.cwnd_bytes = self.mss_bytes; // the loss window
            }
        }
    }
}

/// What the summary says ran.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DctcpVariant {
    pub(crate) marking: DctcpMarking,
    pub(crate) mark_on: MarkOn,
    /// K scaled per port from this rate (absent: the same K on every port).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) k_reference_rate_bps: Option<f64>,
    /// The window cap, in MSS (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_cwnd_packets: Option<u32>,
}

/// DCTCP as registered: `scheme = "dctcp"`, `[congestion.dctcp]`.
pub(crate) struct Dctcp;

impl CcScheme for Dctcp {
    type Params = DctcpParams;
    type Config = DctcpParams;
    type Msg = DctcpMsg;
    type Cp = DctcpCp;
    type Rp = std::convert::Infallible;
    type Np = NoNp;
    type Sender = DctcpSender;
    type Variant = DctcpVariant;

    const NAMES: &'static [Named] = &[Named {
        name: "dctcp",
        doc: "DCTCP (SIGCOMM 2010, RFC 8257): ECN marking against K at switches, a window per \
              transported flow cut by alpha/2 with alpha the EWMA of the marked fraction.",
    }];
    const TABLE_DOC: &'static str = "DCTCP's constants (docs/dctcp.md).";
    const CONTROL_KINDS: &'static [Named] = &[];

    fn fill_defaults(spec: &mut CongestionSpec, _: &str) {
        spec.dctcp.get_or_insert_with(DctcpParams::default);
    }
    fn validate(p: &DctcpParams, _: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        p.validate(path)
    }
    fn resolve(spec: &CongestionSpec, _: &str) -> DctcpParams {
        spec.dctcp.clone().unwrap_or_default()
    }
    fn variant(p: &DctcpParams) -> DctcpVariant {
        DctcpVariant {
            marking: p.marking,
            mark_on: p.mark_on,
            k_reference_rate_bps: p.k_reference_rate_bps,
            max_cwnd_packets: p.max_cwnd_packets,
        }
    }
    fn kind(m: &DctcpMsg) -> MessageKind {
        match *m {}
    }
    fn msg_bytes(m: &DctcpMsg, _: &DctcpParams) -> u32 {
        match *m {}
    }

    fn new_cp(p: &DctcpParams, _: u32, port_rate_bps: f64, _: &mut SimRng) -> DctcpCp {
        DctcpCp {
            params: p.at_rate(port_rate_bps),
            marked: 0,
        }
    }
    fn on_enqueue(
        cp: &mut DctcpCp,
        frame: CpFrame<'_, DctcpMsg>,
        queue_bytes: u64,
        _: u32,
        rng: &mut SimRng,
    ) -> Option<DctcpMsg> {
        if let Carried::Data = frame.payload {
            // The queue the frame finds on arrival (paper section 3.1).
            let found = queue_bytes.saturating_sub(frame.bytes as u64);
            *frame.ecn_ce |= cp.mark(MarkOn::Enqueue, found, rng);
        }
        None
    }
    fn on_dequeue(cp: &mut DctcpCp, frame: CpFrame<'_, DctcpMsg>, queue: u64, rng: &mut SimRng) {
        if let Carried::Data = frame.payload {
            *frame.ecn_ce |= cp.mark(MarkOn::Dequeue, queue, rng);
        }
    }
    fn ecn_marked(cp: &DctcpCp) -> Option<u64> {
        Some(cp.marked)
    }
    fn rate_bps(rp: &Self::Rp) -> f64 {
        match *rp {}
    }
    fn is_released(rp: &Self::Rp) -> bool {
        match *rp {}
    }

    fn new_sender(p: &DctcpParams, flow: &FlowStart) -> Option<DctcpSender> {
        Some(DctcpSender::new(p, flow.mss_bytes))
    }
    fn on_ack(s: &mut DctcpSender, ack: &AckEvent) {
        s.on_ack(ack);
    }
    fn on_loss(s: &mut DctcpSender, loss: LossSignal, _: SimTime) {
        s.on_loss(loss);
    }
    fn window_bytes(s: &DctcpSender) -> Option<f64> {
        Some(s.cwnd_bytes)
    }
}

#[cfg(test)]
mod tests;
