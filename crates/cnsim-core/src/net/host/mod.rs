//! An end node: traffic enters per-destination queues (VOQs) served round-robin onto the NIC
//! link, each behind the destination's rate limiter (the reaction point) when congestion
//! feedback has installed one; and a receiver (sink) that absorbs frames at its, possibly
//! scheduled, rate, with the scheme's notification point watching what arrives. The host names
//! no scheme: it calls the RP and NP hooks of `cc` and sends the messages they return.
//!
//! The host lives in rooms, one job each (as smoltcp's `iface/interface/*.rs`), each an
//! `impl Host` block:
//! - `voq.rs`: the VOQ table, where work waits per destination: frames, flows, saturating
//!   sources and the scheme messages the host sends;
//! - `nic.rs`: the NIC's round robin over the VOQs, its wake-ups, and the frame it cuts next;
//! - `limiter.rs`: the rate-limiter (RP) glue: pacing state, feedback, timers, PAUSE freezing;
//! - `receiver.rs`: the receiver (sink) with its PAUSE/PFC triggers, the link pause lanes the
//!   peer sets, and the NP hook.
//!
//! - `transport/`: per-flow transport state (RoCE go-back-N), the sender's half (PSNs,
//!   ACK/NACK handling, the retransmission timer) and the receiver's (in-order acceptance,
//!   ACK/NACK), keyed by flow id and only for active flows; boxed, made only when the
//!   scenario has transported flows.

mod limiter;
mod nic;
#[cfg(test)]
mod pause_tests;
mod receiver;
#[cfg(test)]
mod tests;
mod transport;
mod voq;

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::cc::NotificationPoint;
use crate::net::frame::HostId;
use crate::net::port::Port;
use crate::net::Ctx;
use crate::rng::SimRng;
use crate::scenario::FlowService;
use crate::stats::HostCounters;
use crate::time::SimTime;

pub(crate) use receiver::{Receiver, ReceiverPfc};
pub(crate) use transport::Transports;
pub(crate) use voq::Voq;

pub(crate) struct Host {
    pub(crate) id: HostId,
    pub(crate) name: String,
    pub(crate) port: Port,
    /// VOQ slots; `voq_slot` maps a destination or a queue pair (`voq::voq_key`) to its
    /// slot, freed slots are reused.
    pub(crate) voqs: Vec<Voq>,
    voq_slot: FxHashMap<u64, u32>,
    free_slots: Vec<u32>,
    /// Round-robin order of the slots with work.
    ring: VecDeque<u32>,
    /// Counts the RP timer events this host scheduled; an event carries its count, so one left
    /// over from a released limiter never fires on a later one.
    timer_ticket: u32,
    pub(crate) flow_service: FlowService,
    pub(crate) nic_bytes: u64,
    pub(crate) nic_limit_bytes: Option<u64>,
    wake_generation: u32,
    wake_at: SimTime,
    /// The NIC finishes its current frame at this time (frames are handed to the link whole).
    free_at: SimTime,
    pub(crate) rx: Receiver,
    pub(crate) counters: HostCounters,
    /// Randomness of this host's reaction points.
    pub(crate) rng: SimRng,
    rate_limiters_paused: bool,
    /// The scheme's notification point, if it has one.
    pub(crate) np: Option<NotificationPoint>,
    /// Per-flow transport state (`transport/`); None when no flow uses a transport.
    pub(crate) transports: Option<Box<Transports>>,
}

impl Host {
    pub(crate) fn new(id: HostId, name: String, port: Port, rng: SimRng) -> Host {
        Host {
            id,
            name,
            port,
            voqs: Vec::new(),
            voq_slot: FxHashMap::default(),
            free_slots: Vec::new(),
            ring: VecDeque::new(),
            timer_ticket: 0,
            flow_service: FlowService::Fifo,
            nic_bytes: 0,
            nic_limit_bytes: None,
            wake_generation: 0,
            wake_at: SimTime::MAX,
            free_at: SimTime::ZERO,
            rx: Receiver::default(),
            counters: HostCounters::default(),
            rng,
            rate_limiters_paused: false,
            np: None,
            transports: None,
        }
    }

    /// Data frames held by this host: queued to send, on its link, or in its receiver.
    pub(crate) fn data_frames_held(&self, frames: &crate::net::frame_store::FrameStore) -> u64 {
        let queued: u64 = self.voqs.iter().map(|v| v.frames.len() as u64).sum();
        queued + self.port.data_frames_held(frames) + self.rx.queue.len() as u64
    }
}

/// A frame made when it is sent (saturating sources, flows) is generated at that moment.
fn count_made(counters: &mut HostCounters, bytes: u32, ctx: &mut Ctx) {
    ctx.counters.generated += 1;
    counters.generated_frames += 1;
    counters.generated_bytes += bytes as u64;
}
