//! The frame: a small `Copy` value that moves from element to element along its route.
//!
//! Data frames and control frames (PAUSE, scheme messages) are the same struct; control frames
//! carry their message in `payload`. Frames are never heap-allocated.

use crate::cc::{Carried, CcMsg, CpFrame, HookFrame, NpFrame};
use crate::flow_control::Lane;
use crate::net::telemetry::TelemetrySlot;
use crate::time::SimTime;

pub(crate) use crate::ids::{FlowId, HostId, NO_FLOW};

/// "No rate-limiter tag" (BCN): the frame did not pass a limiter installed by a CP. Defined by
/// `cc`, which sits below `net` (the frame carries a scheme's message; `cc` names no `net` type).
pub(crate) use crate::cc::NO_TAG;

/// What a frame carries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Payload {
    /// Data, with the in-band telemetry switches stamped on it (`net/telemetry.rs`; none
    /// unless the scheme asks for it).
    Data { telemetry: TelemetrySlot },
    /// IEEE 802.3x PAUSE: pause_time in quanta of 512 bit times; 0 = XON.
    Pause { quanta: u16 },
    /// IEEE 802.1Qbb PFC for one priority class: pause_time in quanta; 0 = XON. A PFC frame
    /// carries a class-enable vector and eight times; cnsim sends one frame per class that
    /// changes, which the receiver treats the same way.
    Pfc { class: u8, quanta: u16 },
    /// A congestion-management scheme's message (CNM, BCN, probe...): elements route, queue
    /// and count it without knowing what it means.
    Cc(CcMsg),
    /// A transport's cumulative acknowledgement: `seq` is the next packet the receiver expects
    /// (every packet before it is held in order). Queued, paused and dropped like data.
    Ack(AckFields),
    /// A transport's negative acknowledgement: packet `seq` is missing (go back to it).
    Nack(AckFields),
}

/// What a transport's ACK or NACK carries beside its cumulative PSN (`Frame::seq`): what the
/// sender's congestion control and selective repeat read. It fits beside the largest scheme
/// message, so the frame stays 72 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AckFields {
    /// The send time (`born`) of the data frame that triggered it: an RTT sample at the sender.
    pub(crate) echo: SimTime,
    /// The PSN of the data frame that triggered it (IRN's selective acknowledgement).
    pub(crate) sacked: u32,
    /// ECN-Echo: the triggering data frame arrived with Congestion Experienced set.
    pub(crate) ece: bool,
    /// The triggering data frame's in-band telemetry, handed over by the receiver.
    pub(crate) telemetry: TelemetrySlot,
    /// How long the receiver held the ACK after the data it answers arrived (a delayed ACK;
    /// 0 for one sent at once), in nanoseconds: Swift's endpoint delay.
    pub(crate) held_ns: u32,
}

impl Payload {
    pub(crate) fn is_data(&self) -> bool {
        matches!(self, Payload::Data { .. })
    }

    /// An 802.3x PAUSE or 802.1Qbb PFC frame: a MAC Control frame, link-local, sent ahead of
    /// the frames the MAC's clients queued (`Port::queue_pause_frame`).
    pub(crate) fn is_mac_control(&self) -> bool {
        matches!(self, Payload::Pause { .. } | Payload::Pfc { .. })
    }

    /// The pause lane a PAUSE (the link's) or PFC frame (its class's) is for; None for any
    /// other frame.
    pub(crate) fn pause_lane(&self) -> Option<Lane> {
        match *self {
            Payload::Pause { .. } => Some(Lane::LINK),
            Payload::Pfc { class, .. } => Some(Lane::class(usize::from(class))),
            _ => None,
        }
    }

    /// A transport's ACK or NACK.
    pub(crate) fn is_transport_ack(&self) -> bool {
        matches!(self, Payload::Ack(_) | Payload::Nack(_))
    }

    /// The in-band telemetry the frame carries (a data frame's or an ACK's), if any.
    pub(crate) fn telemetry(&self) -> TelemetrySlot {
        match self {
            Payload::Data { telemetry } => *telemetry,
            Payload::Ack(a) | Payload::Nack(a) => a.telemetry,
            _ => TelemetrySlot::NONE,
        }
    }
}

/// "No sequence number": the frame belongs to no transported flow.
pub(crate) const NO_SEQ: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub(crate) payload: Payload,
    /// Originating host of a data frame; for a control frame made in a switch, the host the
    /// message is about (the source of the sampled frame).
    pub(crate) src: HostId,
    /// Host the frame is routed to.
    pub(crate) dst: HostId,
    /// Flow key at the source: the destination host of the data flow. A CNM/BCN carries the
    /// flow it is about (the sampled frame's destination).
    pub(crate) flow: HostId,
    /// The flow record a data frame belongs to (`NO_FLOW` for frame-level sources).
    pub(crate) flow_id: FlowId,
    pub(crate) bytes: u32,
    /// When the source generated it (data) or the switch made it (control).
    pub(crate) born: SimTime,
    /// BCN: CPID of the rate limiter the frame went through, or `NO_TAG`.
    pub(crate) rl_tag: u32,
    /// ECN Congestion Experienced: a CP marked the frame (DCQCN); the receiver's NP reads it.
    pub(crate) ecn_ce: bool,
    /// 802.1Q priority class (0-7): the switch output queue and the class PFC pauses.
    pub(crate) priority: u8,
    /// Transport sequence number: a data frame's packet sequence number (PSN), an ACK's or
    /// NACK's acknowledged PSN; `NO_SEQ` without a transport. It fills what was padding, so
    /// the frame stays 72 bytes.
    pub(crate) seq: u32,
}

impl Frame {
    pub(crate) fn data(src: HostId, dst: HostId, bytes: u32, born: SimTime) -> Frame {
        Frame {
            payload: Payload::Data {
                telemetry: TelemetrySlot::NONE,
            },
            src,
            dst,
            flow: dst,
            flow_id: NO_FLOW,
            bytes,
            born,
            rl_tag: NO_TAG,
            ecn_ce: false,
            priority: 0,
            seq: NO_SEQ,
        }
    }

    /// A control frame (PAUSE, CNM, BCN) of `bytes` bytes.
    pub(crate) fn control(
        payload: Payload,
        src: HostId,
        dst: HostId,
        flow: HostId,
        bytes: u32,
        born: SimTime,
    ) -> Frame {
        Frame {
            payload,
            src,
            dst,
            flow,
            flow_id: NO_FLOW,
            bytes,
            born,
            rl_tag: NO_TAG,
            ecn_ce: false,
            priority: 0,
            seq: NO_SEQ,
        }
    }

    pub(crate) fn is_data(&self) -> bool {
        self.payload.is_data()
    }
}

/// What the scheme hooks see of a frame: its payload matched once, against data and the
/// running scheme's message (`own`).
impl HookFrame for Frame {
    #[inline(always)]
    fn at_cp<M>(&mut self, own: impl FnOnce(&mut CcMsg) -> Option<&mut M>) -> CpFrame<'_, M> {
        CpFrame {
            src: self.src,
            flow: self.flow,
            bytes: self.bytes,
            rl_tag: self.rl_tag,
            ecn_ce: &mut self.ecn_ce,
            payload: match &mut self.payload {
                Payload::Data { .. } => Carried::Data,
                Payload::Cc(msg) => own(msg).map_or(Carried::Other, Carried::Msg),
                Payload::Pause { .. }
                | Payload::Pfc { .. }
                | Payload::Ack(_)
                | Payload::Nack(_) => Carried::Other,
            },
        }
    }

    #[inline(always)]
    fn at_np<M>(&self, own: impl FnOnce(&CcMsg) -> Option<&M>) -> NpFrame<'_, M> {
        NpFrame {
            src: self.src,
            qp: (self.seq != NO_SEQ && self.is_data()).then_some(self.flow_id),
            ecn_ce: self.ecn_ce,
            payload: match &self.payload {
                Payload::Data { .. } => Carried::Data,
                Payload::Cc(msg) => own(msg).map_or(Carried::Other, Carried::Msg),
                Payload::Pause { .. }
                | Payload::Pfc { .. }
                | Payload::Ack(_)
                | Payload::Nack(_) => Carried::Other,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frame is copied once per hop: a new field must fit in what was padding.
    #[test]
    fn a_frame_stays_72_bytes() {
        assert_eq!(std::mem::size_of::<Frame>(), 72);
    }
}
