//! Counters kept while the simulation runs, and the periodic-probe recorder.

mod recorder;

pub(crate) use recorder::Recorder;
pub use recorder::TimeSeries;

use crate::cc::{self, MessageKind, Named};

/// Where a frame was dropped. Every drop is counted at its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DropPlace {
    /// Host transmit buffer of a flow without a rate limiter.
    Nic = 0,
    /// Rate-limiter queue (RLQ) of a flow with an active rate limiter (the seeds' "drops at RP").
    Rp = 1,
    /// A switch input partition was full (seed 003 without PAUSE).
    Ingress = 2,
    /// Switch shared memory was full.
    Shared = 3,
    /// A switch output queue limit (at a congestion point: the seeds' "drops at CP").
    Egress = 4,
    /// Host receive buffer.
    Rx = 5,
    /// Lost on a link (`links[*].loss_rate`, or the tests' `[transport] drop` list).
    Link = 6,
}

#[cfg(test)]
pub(crate) const DROP_PLACES: [(DropPlace, &str); 7] = [
    (DropPlace::Nic, "nic"),
    (DropPlace::Rp, "rp"),
    (DropPlace::Ingress, "ingress"),
    (DropPlace::Shared, "shared"),
    (DropPlace::Egress, "egress"),
    (DropPlace::Rx, "rx"),
    (DropPlace::Link, "link"),
];

/// A control frame's counter: one of the link's own kinds (PAUSE and PFC frames, below) or a
/// scheme message's kind (`cc::MessageKind`, named in the scheme's file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ControlKind(u8);

// Named like the enum variants they were, so the flow-control code reads the same.
#[allow(non_upper_case_globals)]
impl ControlKind {
    /// IEEE 802.3x PAUSE with a pause time.
    pub(crate) const Xoff: ControlKind = ControlKind(0);
    /// PAUSE with pause time 0.
    pub(crate) const Xon: ControlKind = ControlKind(1);
    /// IEEE 802.1Qbb PFC pausing one class.
    pub(crate) const PfcXoff: ControlKind = ControlKind(2);
    /// PFC resuming one class.
    pub(crate) const PfcXon: ControlKind = ControlKind(3);
    /// A transport's ACK (after every scheme's kinds, `TRANSPORT_KINDS`).
    pub(crate) const Ack: ControlKind = ControlKind((LINK_KINDS.len() + cc::N_MESSAGE_KINDS) as u8);
    /// A transport's NACK.
    pub(crate) const Nack: ControlKind =
        ControlKind((LINK_KINDS.len() + cc::N_MESSAGE_KINDS + 1) as u8);

    /// The counter's index.
    pub(crate) fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// The link's own control frames, in `ControlKind` order.
const LINK_KINDS: [Named; 4] = [
    Named {
        name: "pause_xoff",
        doc: "",
    },
    Named {
        name: "pause_xon",
        doc: "",
    },
    Named {
        name: "pfc_xoff",
        doc: "IEEE 802.1Qbb PFC frames that pause one class (`[pfc]`; one frame per class).",
    },
    Named {
        name: "pfc_xon",
        doc: "PFC frames with pause_time 0 that resume one class.",
    },
];

/// The transports' control frames, in `ControlKind` order (after the schemes').
const TRANSPORT_KINDS: [Named; 2] = [
    Named {
        name: "ack",
        doc: "Transport ACKs (roce: one per `ack_every` in-order packets, docs/transport.md).",
    },
    Named {
        name: "nack",
        doc: "Transport NACKs (roce: one per gap in the packet sequence).",
    },
];

/// Every control kind: the link's, the registered schemes' and the transports'.
pub(crate) const N_CONTROL_KINDS: usize =
    LINK_KINDS.len() + cc::N_MESSAGE_KINDS + TRANSPORT_KINDS.len();

/// summary.json lists PFC's counters after those of the schemes registered before PFC came
/// (QCN, BCN, the path probe, DCQCN); later schemes' follow them, so the file keeps its order.
const SCHEMES_BEFORE_PFC: usize = 4;

impl From<MessageKind> for ControlKind {
    fn from(kind: MessageKind) -> ControlKind {
        ControlKind(LINK_KINDS.len() as u8 + kind.0)
    }
}

/// Every control kind with its counter's name and description, in the summary's order:
/// PAUSE's, then the schemes' (registry order) with PFC's after the first
/// `SCHEMES_BEFORE_PFC` schemes' ([`SCHEMES_BEFORE_PFC`]).
pub(crate) fn control_kinds() -> Vec<(ControlKind, Named)> {
    let link = |i: u8| (ControlKind(i), LINK_KINDS[usize::from(i)]);
    let mut kinds = vec![link(0), link(1)];
    let mut next = 0u8;
    for (i, scheme) in cc::control_kinds_by_scheme().enumerate() {
        if i == SCHEMES_BEFORE_PFC {
            kinds.extend([link(2), link(3)]);
        }
        for named in scheme {
            kinds.push((MessageKind(next).into(), *named));
            next += 1;
        }
    }
    if cc::control_kinds_by_scheme().count() <= SCHEMES_BEFORE_PFC {
        kinds.extend([link(2), link(3)]);
    }
    kinds.extend([
        (ControlKind::Ack, TRANSPORT_KINDS[0]),
        (ControlKind::Nack, TRANSPORT_KINDS[1]),
    ]);
    kinds
}

/// Whole-network counters.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub(crate) generated: u64,
    pub(crate) delivered: u64,
    pub(crate) delivered_bytes: u64,
    pub(crate) dropped: [u64; 7],
    /// By [`ControlKind::index`].
    pub(crate) control_sent: [u64; N_CONTROL_KINDS],
    /// Control frames queued with the data (scheme messages riding the data queue, transport
    /// ACKs/NACKs) that a full buffer turned away or a lossy link lost.
    pub(crate) control_dropped: u64,
    pub(crate) control_bytes: u64,
    /// A frame crossing one link is one hop.
    pub(crate) frame_hops: u64,
    /// Sum of delivered frames' end-to-end latency, seconds.
    pub(crate) latency_sum_s: f64,
    pub(crate) latency_max_s: f64,
}

impl Counters {
    pub(crate) fn drop(&mut self, place: DropPlace) {
        self.dropped[place as usize] += 1;
    }

    pub(crate) fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }

    pub(crate) fn control(&mut self, kind: impl Into<ControlKind>, bytes: u32) {
        self.control_sent[kind.into().index()] += 1;
        self.control_bytes += bytes as u64;
    }

    /// A queued control frame of kind `was`, not yet sent, now goes as `now` instead (a waiting
    /// PAUSE/PFC frame given its lane's newer pause time: `Port::queue_pause_frame`).
    pub(crate) fn control_replaced(&mut self, was: ControlKind, now: ControlKind) {
        self.control_sent[was.index()] -= 1;
        self.control_sent[now.index()] += 1;
    }
}

/// Per-host traffic counters (as a source and as a sink).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct HostCounters {
    pub(crate) generated_frames: u64,
    pub(crate) generated_bytes: u64,
    pub(crate) tx_frames: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) dropped_frames: u64,
    pub(crate) rx_frames: u64,
    pub(crate) rx_bytes: u64,
}

impl HostCounters {
    pub(crate) fn minus(&self, earlier: &HostCounters) -> HostCounters {
        HostCounters {
            generated_frames: self.generated_frames - earlier.generated_frames,
            generated_bytes: self.generated_bytes - earlier.generated_bytes,
            tx_frames: self.tx_frames - earlier.tx_frames,
            tx_bytes: self.tx_bytes - earlier.tx_bytes,
            dropped_frames: self.dropped_frames - earlier.dropped_frames,
            rx_frames: self.rx_frames - earlier.rx_frames,
            rx_bytes: self.rx_bytes - earlier.rx_bytes,
        }
    }
}

/// Jain's fairness index (sum x)^2 / (n * sum x^2); 1 when all equal. None for no values.
pub(crate) fn jain_fairness(values: &[f64]) -> Option<f64> {
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    let sum_sq: f64 = values.iter().map(|x| x * x).sum();
    if values.is_empty() || sum_sq == 0.0 {
        return None;
    }
    Some(sum * sum / (n * sum_sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain_fairness(&[1.0, 1.0, 1.0, 1.0]), Some(1.0));
        assert!((jain_fairness(&[1.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        // seed 002's table: 2.44, 3.54, 1.44, 2.58 Gb/s
        let j = jain_fairness(&[2.44, 3.54, 1.44, 2.58]).unwrap();
        // 10^2 / (4 x 27.2152) = 0.91860
        assert!((j - 0.91860).abs() < 1e-4, "{j}");
        assert_eq!(jain_fairness(&[]), None);
    }
}
