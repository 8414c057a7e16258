//! Congestion management schemes as plug-ins at two fixed hooks:
//! - a congestion point (CP) on each switch output queue, called when a data frame is enqueued;
//! - a reaction point (RP): a rate limiter per flow in the sending host, installed by the
//!   first feedback, consulted by the NIC scheduler, told of every frame it sends.
//!
//! Dispatch is by enum (no trait objects on the hot path). Each scheme lives in its own file
//! with its own parameters and unit tests.

pub mod bcn;
pub mod qcn;

use crate::net::frame::{Payload, NO_TAG};
use crate::rng::SimRng;
use crate::time::SimTime;
use bcn::{BcnCp, BcnFeedback, BcnParams, BcnRp};
use qcn::{QcnCp, QcnParams, QcnRp};

/// The scheme configuration a simulation runs with (resolved from the scenario).
#[derive(Clone, Debug, Default)]
pub enum Scheme {
    #[default]
    None,
    Qcn(QcnParams),
    Bcn(BcnParams),
}

/// A congestion point on one output queue.
pub struct CongestionPoint {
    pub cpid: u32,
    pub rng: SimRng,
    pub state: CpState,
    pub messages: u64,
}

pub enum CpState {
    Qcn(QcnCp),
    Bcn(BcnCp),
}

impl CongestionPoint {
    pub fn new(scheme: &Scheme, cpid: u32, mut rng: SimRng) -> Option<CongestionPoint> {
        let state = match scheme {
            Scheme::None => return None,
            Scheme::Qcn(p) => CpState::Qcn(QcnCp::new(p, &mut rng)),
            Scheme::Bcn(p) => CpState::Bcn(BcnCp::new(p, cpid, &mut rng)),
        };
        Some(CongestionPoint {
            cpid,
            rng,
            state,
            messages: 0,
        })
    }

    /// Hook: a data frame was enqueued (`queue_bytes` includes it). Returns the message to send
    /// back to the frame's source, if any.
    pub fn on_data_enqueue(
        &mut self,
        queue_bytes: u64,
        frame_bytes: u32,
        rl_tag: u32,
    ) -> Option<Payload> {
        let msg = match &mut self.state {
            CpState::Qcn(cp) => cp
                .on_data_enqueue(queue_bytes, frame_bytes, &mut self.rng)
                .map(|qfb| Payload::Cnm {
                    qfb,
                    cpid: self.cpid,
                }),
            CpState::Bcn(cp) => cp
                .on_data_enqueue(queue_bytes, frame_bytes, rl_tag, &mut self.rng)
                .map(|fb: BcnFeedback| Payload::Bcn {
                    fb: fb.fb,
                    cpid: self.cpid,
                    kind: fb.kind,
                }),
        };
        self.messages += msg.is_some() as u64;
        msg
    }

    /// Size of the messages this CP sends (`cnm_bytes` / `bcn_bytes` of the scheme).
    pub fn message_bytes(&self, scheme: &Scheme) -> u32 {
        match scheme {
            Scheme::Qcn(p) => p.cnm_bytes,
            Scheme::Bcn(p) => p.bcn_bytes,
            Scheme::None => 64,
        }
    }

    /// Last computed feedback (for probes).
    pub fn last_fb(&self) -> f64 {
        match &self.state {
            CpState::Qcn(cp) => cp.last_fb(),
            CpState::Bcn(cp) => cp.last_fb(),
        }
    }
}

/// A reaction point's rate limiter for one flow.
pub enum Limiter {
    Qcn(QcnRp),
    Bcn(BcnRp),
}

impl Limiter {
    /// Installs a limiter for a flow that just got its first feedback message, if that message
    /// installs one (QCN: any CNM; BCN: negative feedback only).
    pub fn install(
        scheme: &Scheme,
        msg: &Payload,
        line_rate_bps: f64,
        now: SimTime,
        rng: &mut SimRng,
    ) -> Option<Limiter> {
        match (scheme, msg) {
            (Scheme::Qcn(p), Payload::Cnm { .. }) => {
                Some(Limiter::Qcn(QcnRp::new(line_rate_bps, p, now, rng)))
            }
            (Scheme::Bcn(p), Payload::Bcn { fb, cpid, .. }) if *fb < 0.0 => {
                Some(Limiter::Bcn(BcnRp::new(line_rate_bps, p, *cpid, now)))
            }
            _ => None,
        }
    }

    /// Applies a feedback message.
    pub fn on_feedback(&mut self, msg: &Payload, now: SimTime, rng: &mut SimRng) {
        match (self, msg) {
            (Limiter::Qcn(rp), Payload::Cnm { qfb, .. }) => rp.on_cnm(*qfb, now, rng),
            (Limiter::Bcn(rp), Payload::Bcn { fb, cpid, kind }) => rp.on_bcn(
                &BcnFeedback {
                    fb: *fb,
                    kind: *kind,
                },
                *cpid,
                now,
                rng,
            ),
            _ => {}
        }
    }

    pub fn rate_bps(&self) -> f64 {
        match self {
            Limiter::Qcn(rp) => rp.current_rate_bps(),
            Limiter::Bcn(rp) => rp.rate_bps(),
        }
    }

    pub fn target_rate_bps(&self) -> Option<f64> {
        match self {
            Limiter::Qcn(rp) => Some(rp.target_rate_bps()),
            Limiter::Bcn(_) => None,
        }
    }

    /// Earliest time the limiter lets a frame go regardless of rate (BCN(0,0) stop).
    pub fn stopped_until(&self) -> SimTime {
        match self {
            Limiter::Qcn(_) => SimTime::ZERO,
            Limiter::Bcn(rp) => rp.stopped_until(),
        }
    }

    /// Tag carried by frames sent through the limiter (BCN: the CPID).
    pub fn tag(&self) -> u32 {
        match self {
            Limiter::Qcn(_) => NO_TAG,
            Limiter::Bcn(rp) => rp.cpid(),
        }
    }

    pub fn on_transmit(&mut self, frame_bytes: u32, now: SimTime, rng: &mut SimRng) {
        if let Limiter::Qcn(rp) = self {
            rp.on_transmit(frame_bytes, now, rng);
        }
    }

    /// The limiter's timer (QCN timer, BCN drift): when and with which generation to fire.
    pub fn timer(&self) -> Option<(SimTime, u32)> {
        match self {
            Limiter::Qcn(rp) => rp.timer_deadline().map(|t| (t, rp.timer_generation())),
            Limiter::Bcn(rp) => rp.drift_deadline().map(|t| (t, rp.drift_generation())),
        }
    }

    pub fn on_timer(&mut self, generation: u32, now: SimTime, rng: &mut SimRng) {
        match self {
            Limiter::Qcn(rp) => rp.on_timer(generation, now, rng),
            Limiter::Bcn(rp) => rp.on_drift(generation, now),
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
        }
    }
}
