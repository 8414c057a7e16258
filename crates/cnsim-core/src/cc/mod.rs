//! Congestion management schemes, plugged into the network elements at fixed hooks. This file
//! is the scheme registry: each scheme lives in its own file and appears here once per enum.
//!
//! The hooks (every one has a no-op default: a scheme implements only what it needs):
//! - **CP**, a congestion point on each switch output queue ([`CongestionPoint`]): called when
//!   a frame is enqueued and when it is dequeued, with the queue length. It may mark the frame
//!   (it gets `&mut Frame`), stamp a probe riding the data queue, or return a message for the
//!   frame's source.
//! - **RP**, a reaction point in the sending host, one per destination ([`Limiter`]): created by
//!   the first message that installs it (or, for schemes that probe before any feedback, when
//!   the host first has work for a destination); it paces the destination's frames, stamps them
//!   on the way out, reacts to messages, timers and PAUSE, may send frames of its own, and is
//!   released when it no longer limits.
//! - **NP**, a notification point in the receiving host ([`NotificationPoint`]): sees every
//!   data frame and every message addressed to it, and may answer the frame's source.
//!
//! Messages ([`CcMsg`]) are the scheme's own payload: switches and hosts route, queue and count
//! them without knowing what they mean. Each says whether it rides the control priority (strict
//! priority over data, never paused or dropped) or the data queue (so that a probe measures the
//! queue the data sees), and whether it is for the RP or the NP at its destination.
//!
//! Dispatch is by enum (no trait objects on the per-frame path). Adding a scheme touches its own
//! file, one variant in each enum below (with its arms), the scenario's `scheme` names and
//! parameter table (`scenario/mod.rs`), and its message kinds in `stats::ControlKind`.

pub mod bcn;
pub mod dcqcn;
pub mod e2cm;
pub mod path_probe;
pub mod qcn;

use crate::net::frame::{Frame, Payload, NO_TAG};
use crate::rng::SimRng;
use crate::stats::ControlKind;
use crate::time::SimTime;
use bcn::{BcnCp, BcnMsg, BcnParams, BcnRp};
use dcqcn::{Cnp, DcqcnCp, DcqcnNp, DcqcnParams, DcqcnRp, MarkOn};
use e2cm::{E2cmConfig, E2cmCp, E2cmNp, E2cmProbe, E2cmRp};
use path_probe::{PathProbeCp, PathProbeNp, PathProbeParams, PathProbeRp, Probe};
use qcn::{Cnm, QcnCp, QcnParams, QcnRp};

/// The scheme configuration a simulation runs with (resolved from the scenario).
#[derive(Clone, Debug, Default)]
pub enum Scheme {
    #[default]
    None,
    Qcn(QcnParams),
    Bcn(BcnParams),
    PathProbe(PathProbeParams),
    Dcqcn(DcqcnParams),
    /// E2CM: ECM's coarse loop plus the per-flow probing fine loop.
    E2cm(E2cmConfig),
}

/// A scheme's message, carried by a control frame (`Payload::Cc`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcMsg {
    Cnm(Cnm),
    Bcn(BcnMsg),
    PathProbe(Probe),
    /// DCQCN's congestion notification packet, from the NP to the RP.
    Cnp(Cnp),
    /// E2CM's fine-loop probe, forward (riding the data queue) or returned.
    E2cmProbe(E2cmProbe),
}

impl CcMsg {
    /// What the control-frame counters call it.
    pub fn kind(&self) -> ControlKind {
        match self {
            CcMsg::Cnm(_) => ControlKind::Cnm,
            CcMsg::Bcn(m) => m.control_kind(),
            CcMsg::PathProbe(_) => ControlKind::PathProbe,
            CcMsg::Cnp(_) => ControlKind::Cnp,
            CcMsg::E2cmProbe(_) => ControlKind::E2cmProbe,
        }
    }

    /// True: it queues with the data (and is measured by CPs); false: control priority.
    pub fn rides_data_queue(&self) -> bool {
        match self {
            CcMsg::Cnm(_) | CcMsg::Bcn(_) | CcMsg::Cnp(_) => false,
            CcMsg::PathProbe(p) => p.rides_data_queue(),
            CcMsg::E2cmProbe(p) => p.rides_data_queue(),
        }
    }

    /// True: for the reaction point at its destination; false: for the notification point.
    pub fn for_reaction_point(&self) -> bool {
        match self {
            CcMsg::Cnm(_) | CcMsg::Bcn(_) | CcMsg::Cnp(_) => true,
            CcMsg::PathProbe(p) => p.returned,
            CcMsg::E2cmProbe(p) => p.returned,
        }
    }

    /// Frame size, from the scheme's parameters.
    pub fn bytes(&self, scheme: &Scheme) -> u32 {
        match (self, scheme) {
            (CcMsg::Cnm(_), Scheme::Qcn(p)) => p.cnm_bytes,
            (CcMsg::Bcn(_), Scheme::Bcn(p)) => p.bcn_bytes,
            (CcMsg::PathProbe(_), Scheme::PathProbe(p)) => p.probe_bytes,
            (CcMsg::Cnp(_), Scheme::Dcqcn(p)) => p.cnp_bytes,
            (CcMsg::Bcn(_), Scheme::E2cm(c)) => c.coarse.bcn_bytes,
            (CcMsg::E2cmProbe(_), Scheme::E2cm(c)) => c.fine.probe_bytes,
            _ => 64,
        }
    }
}

/// A congestion point on one output queue.
pub struct CongestionPoint {
    pub cpid: u32,
    pub rng: SimRng,
    pub state: CpState,
    pub messages: u64,
}

/// `repr(u8)` for the reason given at [`Limiter`]: matched on every frame a CP's queue takes in
/// and lets out.
#[repr(u8)]
pub enum CpState {
    Qcn(QcnCp),
    Bcn(BcnCp),
    PathProbe(PathProbeCp),
    Dcqcn(DcqcnCp),
    E2cm(E2cmCp),
}

impl CongestionPoint {
    pub fn new(scheme: &Scheme, cpid: u32, mut rng: SimRng) -> Option<CongestionPoint> {
        let state = match scheme {
            Scheme::None => return None,
            Scheme::Qcn(p) => CpState::Qcn(QcnCp::new(p, &mut rng)),
            Scheme::Bcn(p) => CpState::Bcn(BcnCp::new(p, cpid, &mut rng)),
            Scheme::PathProbe(_) => CpState::PathProbe(PathProbeCp),
            Scheme::Dcqcn(p) => CpState::Dcqcn(DcqcnCp::new(p)),
            Scheme::E2cm(c) => CpState::E2cm(E2cmCp::new(c, cpid, &mut rng)),
        };
        Some(CongestionPoint {
            cpid,
            rng,
            state,
            messages: 0,
        })
    }

    /// Hook: `frame` was enqueued (`queue_bytes` includes it). Returns a message for the
    /// frame's source, if any.
    pub fn on_enqueue(&mut self, frame: &mut Frame, queue_bytes: u64) -> Option<CcMsg> {
        let cpid = self.cpid;
        let msg = match (&mut self.state, &mut frame.payload) {
            (CpState::Qcn(cp), Payload::Data) => cp
                .on_data_enqueue(queue_bytes, frame.bytes, &mut self.rng)
                .map(|qfb| CcMsg::Cnm(Cnm { qfb, cpid })),
            (CpState::Bcn(cp), Payload::Data) => cp
                .on_data_enqueue(queue_bytes, frame.bytes, frame.rl_tag, &mut self.rng)
                .map(|feedback| CcMsg::Bcn(BcnMsg { feedback, cpid })),
            (CpState::PathProbe(cp), Payload::Cc(CcMsg::PathProbe(probe))) => {
                cp.on_probe(probe, queue_bytes);
                None
            }
            (CpState::Dcqcn(cp), Payload::Data) => {
                frame.ecn_ce |= cp.should_mark(MarkOn::Enqueue, queue_bytes, &mut self.rng);
                None
            }
            (CpState::E2cm(cp), Payload::Data) => {
                cp.on_data_enqueue(frame.src, frame.flow, frame.bytes);
                cp.coarse
                    .on_data_enqueue(queue_bytes, frame.bytes, frame.rl_tag, &mut self.rng)
                    .map(|feedback| CcMsg::Bcn(BcnMsg { feedback, cpid }))
            }
            (CpState::E2cm(cp), Payload::Cc(CcMsg::E2cmProbe(probe))) => {
                cp.on_probe(probe, frame.src, frame.flow, queue_bytes);
                None
            }
            _ => None,
        };
        self.messages += msg.is_some() as u64;
        msg
    }

    /// Hook: `frame` left the queue (`queue_bytes` no longer includes it): DCQCN marking at
    /// dequeue.
    pub fn on_dequeue(&mut self, frame: &mut Frame, queue_bytes: u64) -> Option<CcMsg> {
        match (&mut self.state, &frame.payload) {
            (CpState::Dcqcn(cp), Payload::Data) => {
                frame.ecn_ce |= cp.should_mark(MarkOn::Dequeue, queue_bytes, &mut self.rng);
            }
            (CpState::E2cm(cp), Payload::Data) => {
                cp.on_data_dequeue(frame.src, frame.flow, frame.bytes);
            }
            _ => {}
        }
        None
    }

    /// Data frames this CP marked with ECN CE (DCQCN), if it marks.
    pub fn ecn_marked(&self) -> Option<u64> {
        match &self.state {
            CpState::Dcqcn(cp) => Some(cp.marked),
            _ => None,
        }
    }

    /// Last computed feedback (for probes).
    pub fn last_fb(&self) -> f64 {
        match &self.state {
            CpState::Qcn(cp) => cp.last_fb(),
            CpState::Bcn(cp) => cp.last_fb(),
            CpState::E2cm(cp) => cp.coarse.last_fb(),
            CpState::PathProbe(_) | CpState::Dcqcn(_) => 0.0,
        }
    }
}

/// A reaction point's rate limiter for one destination.
///
/// `repr(u8)`: an explicit tag byte. Without it the compiler hides the tag in a niche of a
/// variant's field, and each of the several matches per frame (stamp, rate, stop, byte counter)
/// decoded it with a subtract and a conditional move before branching.
#[repr(u8)]
pub enum Limiter {
    Qcn(QcnRp),
    Bcn(BcnRp),
    PathProbe(PathProbeRp),
    Dcqcn(DcqcnRp),
    E2cm(E2cmRp),
}

impl Limiter {
    /// Installs a limiter for a destination that just got its first message, if that message
    /// installs one (QCN: any CNM; BCN: negative feedback only).
    pub fn install(
        scheme: &Scheme,
        msg: &CcMsg,
        line_rate_bps: f64,
        now: SimTime,
        rng: &mut SimRng,
    ) -> Option<Limiter> {
        match (scheme, msg) {
            (Scheme::Qcn(p), CcMsg::Cnm(_)) => {
                Some(Limiter::Qcn(QcnRp::new(line_rate_bps, p, now, rng)))
            }
            (Scheme::Bcn(p), CcMsg::Bcn(m)) if m.feedback.is_negative() => {
                Some(Limiter::Bcn(BcnRp::new(line_rate_bps, p, m.cpid, now)))
            }
            (Scheme::Dcqcn(p), CcMsg::Cnp(_)) => {
                Some(Limiter::Dcqcn(DcqcnRp::new(line_rate_bps, p, now)))
            }
            (Scheme::E2cm(c), CcMsg::Bcn(m)) if m.feedback.is_negative() => {
                Some(Limiter::E2cm(E2cmRp::new(line_rate_bps, c, m.cpid, now)))
            }
            _ => None,
        }
    }

    /// The RP of a destination the host has just got work for, for schemes whose RP acts
    /// before any feedback (probing schemes); None for the others.
    pub fn for_new_destination(scheme: &Scheme, line_rate_bps: f64) -> Option<Limiter> {
        match scheme {
            Scheme::PathProbe(p) => Some(Limiter::PathProbe(PathProbeRp::new(p, line_rate_bps))),
            _ => None,
        }
    }

    /// Applies a message addressed to the RP.
    pub fn on_feedback(&mut self, msg: &CcMsg, now: SimTime, rng: &mut SimRng) {
        match (self, msg) {
            (Limiter::Qcn(rp), CcMsg::Cnm(m)) => rp.on_cnm(m.qfb, now, rng),
            (Limiter::Bcn(rp), CcMsg::Bcn(m)) => rp.on_bcn(&m.feedback, m.cpid, now, rng),
            (Limiter::PathProbe(rp), CcMsg::PathProbe(p)) => rp.on_returned(p),
            (Limiter::Dcqcn(rp), CcMsg::Cnp(_)) => rp.on_cnp(now),
            (Limiter::E2cm(rp), CcMsg::Bcn(m)) => rp.on_bcn(&m.feedback, m.cpid, now, rng),
            (Limiter::E2cm(rp), CcMsg::E2cmProbe(p)) => rp.on_probe(p, now, rng),
            _ => {}
        }
    }

    pub fn rate_bps(&self) -> f64 {
        match self {
            Limiter::Qcn(rp) => rp.current_rate_bps(),
            Limiter::Bcn(rp) => rp.rate_bps(),
            Limiter::PathProbe(rp) => rp.rate_bps(),
            Limiter::Dcqcn(rp) => rp.rate_bps(),
            Limiter::E2cm(rp) => rp.rate_bps(),
        }
    }

    pub fn target_rate_bps(&self) -> Option<f64> {
        match self {
            Limiter::Qcn(rp) => Some(rp.target_rate_bps()),
            Limiter::Dcqcn(rp) => Some(rp.target_rate_bps()),
            _ => None,
        }
    }

    /// The scheme's last feedback as the RP sees it (probes record it as `rp_feedback`).
    pub fn feedback(&self) -> Option<f64> {
        match self {
            Limiter::PathProbe(rp) => rp.path_queue_bytes(),
            // DCQCN's alpha: the RP's estimate of the fraction of marked frames.
            Limiter::Dcqcn(rp) => Some(rp.alpha()),
            // E2CM: the fine loop's last probe feedback (fb units).
            Limiter::E2cm(rp) => rp.last_probe_fb(),
            _ => None,
        }
    }

    /// Earliest time the limiter lets a frame go regardless of rate (BCN(0,0) stop).
    pub fn stopped_until(&self) -> SimTime {
        match self {
            Limiter::Bcn(rp) => rp.stopped_until(),
            Limiter::E2cm(rp) => rp.stopped_until(),
            _ => SimTime::ZERO,
        }
    }

    /// How the limiter lets the next data frame go (one match, not one per field: it is
    /// asked for every frame).
    pub fn pacing(&self) -> Pacing {
        let (rate_bps, tag, bucket_bytes) = match self {
            Limiter::Qcn(rp) => (rp.current_rate_bps(), NO_TAG, rp.bucket_bytes()),
            Limiter::Bcn(rp) => (rp.rate_bps(), rp.cpid(), 0.0),
            Limiter::PathProbe(rp) => (rp.rate_bps(), NO_TAG, 0.0),
            Limiter::Dcqcn(rp) => (rp.rate_bps(), NO_TAG, rp.bucket_bytes()),
            Limiter::E2cm(rp) => (rp.rate_bps(), rp.tag(), 0.0),
        };
        Pacing {
            rate_bps,
            tag,
            bucket_bytes,
        }
    }

    /// A data frame of `frame_bytes` left through the limiter: what that did to it.
    pub fn on_transmit(&mut self, frame_bytes: u32, now: SimTime, rng: &mut SimRng) -> Transmitted {
        let (msg, changed) = match self {
            Limiter::Qcn(rp) => (None, rp.on_transmit(frame_bytes, now, rng)),
            Limiter::Bcn(_) => (None, false),
            // Probing RPs count bytes to the next probe: neither rate, release nor timer moves.
            Limiter::PathProbe(rp) => (rp.on_transmit(frame_bytes).map(CcMsg::PathProbe), false),
            Limiter::Dcqcn(rp) => (None, rp.on_transmit(frame_bytes)),
            Limiter::E2cm(rp) => (rp.on_transmit(frame_bytes).map(CcMsg::E2cmProbe), false),
        };
        Transmitted { msg, changed }
    }

    /// The limiter's timer (QCN timer, BCN drift): when and with which generation to fire.
    pub fn timer(&self) -> Option<(SimTime, u32)> {
        match self {
            Limiter::Qcn(rp) => rp.timer_deadline().map(|t| (t, rp.timer_generation())),
            Limiter::Bcn(rp) => rp.drift_deadline().map(|t| (t, rp.drift_generation())),
            Limiter::PathProbe(_) => None,
            Limiter::Dcqcn(rp) => Some(rp.timer()),
            Limiter::E2cm(rp) => rp.timer(),
        }
    }

    pub fn on_timer(&mut self, generation: u32, now: SimTime, rng: &mut SimRng) {
        match self {
            Limiter::Qcn(rp) => rp.on_timer(generation, now, rng),
            Limiter::Bcn(rp) => rp.on_drift(generation, now),
            Limiter::PathProbe(_) => {}
            Limiter::Dcqcn(rp) => rp.on_timer(generation, now),
            Limiter::E2cm(rp) => rp.on_timer(generation, now),
        }
    }

    /// PAUSE on the host's link (QCN: timer frozen while paused, seed 004).
    pub fn set_paused(&mut self, paused: bool, now: SimTime) {
        if let Limiter::Qcn(rp) = self {
            rp.set_paused(paused, now);
        }
    }

    /// The limiter has returned to line rate and can be removed.
    pub fn is_released(&self) -> bool {
        match self {
            Limiter::Qcn(rp) => rp.is_released(),
            Limiter::Bcn(rp) => rp.is_released(),
            Limiter::PathProbe(_) => false,
            Limiter::Dcqcn(rp) => rp.is_released(),
            Limiter::E2cm(rp) => rp.is_released(),
        }
    }
}

/// How a limiter lets its next data frame go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pacing {
    /// The rate the frame is paced at (`Limiter::rate_bps`).
    pub rate_bps: f64,
    /// The frame's rate-limiter tag (BCN: the CPID of the limiter's tag; else `NO_TAG`).
    pub tag: u32,
    /// Token-bucket depth: bytes the limiter may accrue at its rate while it waits (seed 004's
    /// paused RP keeps adding tokens); 0 = none beyond the frame being paced.
    pub bucket_bytes: f64,
}

/// What a data frame leaving through a limiter did to it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transmitted {
    /// A frame of the RP's own to send (a probe), if any.
    pub msg: Option<CcMsg>,
    /// The rate, and so whether the limiter is released, or its timer may have changed: the
    /// host must look at them again. False lets it skip that look on most frames (the byte
    /// counters end a cycle every many frames).
    pub changed: bool,
}

/// A receiving host's notification point.
pub enum NotificationPoint {
    PathProbe(PathProbeNp),
    Dcqcn(DcqcnNp),
    E2cm(E2cmNp),
}

impl NotificationPoint {
    pub fn new(scheme: &Scheme) -> Option<NotificationPoint> {
        match scheme {
            Scheme::PathProbe(_) => Some(NotificationPoint::PathProbe(PathProbeNp)),
            Scheme::Dcqcn(p) => Some(NotificationPoint::Dcqcn(DcqcnNp::new(p))),
            Scheme::E2cm(_) => Some(NotificationPoint::E2cm(E2cmNp)),
            _ => None,
        }
    }

    /// Hook: a data frame, or a message for the NP, reached this host. Returns the answer to
    /// send to the frame's source, if any.
    pub fn on_receive(&mut self, frame: &Frame, now: SimTime) -> Option<CcMsg> {
        match (self, &frame.payload) {
            (NotificationPoint::PathProbe(np), Payload::Cc(CcMsg::PathProbe(p))) => {
                Some(CcMsg::PathProbe(np.on_probe(p)))
            }
            (NotificationPoint::Dcqcn(np), Payload::Data) => np
                .on_data(frame.src, frame.ecn_ce, now)
                .then_some(CcMsg::Cnp(Cnp)),
            (NotificationPoint::E2cm(np), Payload::Cc(CcMsg::E2cmProbe(p))) => {
                Some(CcMsg::E2cmProbe(np.on_probe(p)))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, StreamKind};

    /// `pacing` gives each limiter's own rate, tag and bucket (one match for three questions:
    /// an arm mixed up between schemes would pace or tag a frame wrongly).
    #[test]
    fn pacing_is_each_limiters_rate_tag_and_bucket() {
        let mut rng = stream(1, StreamKind::ReactionPoint, 0);
        let t0 = SimTime::ZERO;
        let qcn = QcnParams {
            rp_bucket_bytes: 3000.0,
            ..QcnParams::default()
        };
        let mut cut_qcn = QcnRp::new(10e9, &qcn, t0, &mut rng);
        cut_qcn.on_cnm(63, t0, &mut rng);
        let dcqcn = DcqcnParams {
            rp_bucket_bytes: 1500.0,
            ..DcqcnParams::default()
        };
        let limiters = [
            (Limiter::Qcn(cut_qcn), NO_TAG, 3000.0),
            (
                Limiter::Bcn(BcnRp::new(10e9, &BcnParams::default(), 7, t0)),
                7,
                0.0,
            ),
            (
                Limiter::PathProbe(PathProbeRp::new(&PathProbeParams::default(), 10e9)),
                NO_TAG,
                0.0,
            ),
            (
                Limiter::Dcqcn(DcqcnRp::new(40e9, &dcqcn, t0)),
                NO_TAG,
                1500.0,
            ),
        ];
        for (limiter, tag, bucket_bytes) in limiters {
            let want = Pacing {
                rate_bps: limiter.rate_bps(),
                tag,
                bucket_bytes,
            };
            assert_eq!(limiter.pacing(), want);
        }
    }
}
