//! The VOQ table: per-destination queues of frames, flows and saturating sources, made only
//! for destinations with work or a limiter and recycled, and the messages the host queues.
//! A transported flow is a queue pair with a VOQ of its own (its own rate limiter, as on an
//! RDMA NIC); open-loop work shares its destination's VOQ.

use super::Host;
use std::collections::VecDeque;

use crate::cc::{CcMsg, Limiter};
use crate::engine::NodeIdx;
use crate::net::frame::{FlowId, Frame, HostId, Payload, NO_FLOW};
use crate::net::Ctx;
use crate::stats::DropPlace;
use crate::time::{SimTime, TxTimer};

/// Frames and flows waiting for one destination, and that destination's rate limiter. A host
/// keeps a VOQ only while it has work or a limiter (memory grows with active destinations, not
/// with the number of hosts).
#[derive(Default)]
pub(crate) struct Voq {
    pub(crate) dst: HostId,
    /// The queue pair (transported flow) this VOQ is, or `NO_FLOW`: the destination's VOQ.
    pub(crate) qp: FlowId,
    pub(crate) frames: VecDeque<Frame>,
    /// Flows waiting to send to `dst`, oldest first; the head one is being sent.
    pub(crate) flows: VecDeque<FlowId>,
    /// Scheme messages riding the data queue towards `dst` (probes): sent first, unpaced.
    pub(crate) own_frames: VecDeque<Frame>,
    pub(crate) bytes: u64,
    /// Boxed: a VOQ is made and recycled for every new destination, and most have no limiter;
    /// inline, the limiter tripled the VOQ and every recycle rewrote it (docs/performance.md).
    pub(crate) limiter: Option<Box<Limiter>>,
    /// The limiter lets the next frame go at this time (rate x size of the previous frame).
    pub(crate) next_allowed: SimTime,
    /// Pacing times at the limiter's rate: it changes once per byte-counter or timer cycle,
    /// not per frame, so most frames reuse the last one instead of dividing.
    pub(super) pace: TxTimer,
    /// The flow's congestion controller paces it: `next_allowed` holds its next frame
    /// (a queue pair's VOQ only).
    pub(crate) paced: bool,
    /// A saturating source is attached: frames of this size are made on demand.
    pub(crate) saturating_frame_bytes: Option<u32>,
    /// 802.1Q class of the VOQ's work (that of the latest frame, flow or source added): PFC
    /// holds the whole VOQ while its class is paused.
    pub(crate) priority: u8,
    pub(super) in_ring: bool,
    /// The ticket of the event that counts, and the limiter timer generation it was set for.
    pub(super) timer_pending: Option<(u32, u32)>,
    /// `Host::after_limiter_change` has acted on the limiter as it is (its release and timer);
    /// until the limiter changes again, sending a frame needs no new look. False in a new VOQ.
    pub(super) limiter_settled: bool,
    /// Probe entity id of the limiter ("host->dst"), interned on first use.
    pub(crate) probe_entity: Option<u32>,
}

impl Voq {
    pub(super) fn has_work(&self) -> bool {
        self.holds_data() || !self.own_frames.is_empty()
    }

    /// Data waits (frames, flows or a saturating source), which sets the VOQ's class.
    fn holds_data(&self) -> bool {
        !self.frames.is_empty() || !self.flows.is_empty() || self.saturating_frame_bytes.is_some()
    }

    fn is_idle(&self) -> bool {
        !self.in_ring && !self.has_work() && self.limiter.is_none()
    }

    /// Back to `Voq::default()` for reuse by another destination, keeping small queue buffers:
    /// with many destinations each busy for a frame or two (uniform traffic on a large
    /// topology), allocating and freeing three queues per frame was a tenth of the event loop.
    /// Buffers that grew past `KEEP_CAPACITY` are freed, so a burst's memory is not held.
    fn recycle(&mut self) {
        const KEEP_CAPACITY: usize = 16;
        fn emptied<T>(mut queue: VecDeque<T>) -> VecDeque<T> {
            queue.clear();
            if queue.capacity() > KEEP_CAPACITY {
                queue = VecDeque::new();
            }
            queue
        }
        *self = Voq {
            frames: emptied(std::mem::take(&mut self.frames)),
            flows: emptied(std::mem::take(&mut self.flows)),
            own_frames: emptied(std::mem::take(&mut self.own_frames)),
            ..Voq::default()
        };
    }

    /// When the VOQ may send on its round-robin turn: None if it has no work (it leaves the
    /// ring), `SimTime::MAX` while PFC holds its class in `paused`.
    pub(super) fn turn_ready_at(&self, paused: u8) -> Option<SimTime> {
        if !self.has_work() {
            None
        } else if paused & (1 << self.priority) != 0 {
            Some(SimTime::MAX)
        } else {
            Some(self.ready_at())
        }
    }

    pub(super) fn ready_at(&self) -> SimTime {
        match &self.limiter {
            Some(l) if self.own_frames.is_empty() => self.next_allowed.max(l.stopped_until()),
            _ if self.paced && self.own_frames.is_empty() => self.next_allowed,
            _ => SimTime::ZERO,
        }
    }
}

/// The VOQ table's key: a destination, or a queue pair (`qp`, a transported flow's id) in a
/// separate range.
pub(super) fn voq_key(dst: HostId, qp: FlowId) -> u64 {
    if qp == NO_FLOW {
        dst as u64
    } else {
        1 << 32 | qp as u64
    }
}

impl Host {
    /// The VOQ slot of `dst`, made if the host has none (with the scheme's RP, for schemes
    /// whose RP acts before any feedback).
    pub(super) fn slot_of(&mut self, dst: HostId, ctx: &Ctx) -> u32 {
        self.slot_for(dst, NO_FLOW, ctx)
    }

    /// The VOQ slot of queue pair `qp` to `dst` (`NO_FLOW`: the destination's VOQ), made if
    /// the host has none.
    pub(super) fn slot_for(&mut self, dst: HostId, qp: FlowId, ctx: &Ctx) -> u32 {
        let key = voq_key(dst, qp);
        if let Some(&slot) = self.voq_slot.get(&key) {
            return slot;
        }
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.voqs.push(Voq::default());
            (self.voqs.len() - 1) as u32
        });
        let voq = &mut self.voqs[slot as usize];
        voq.dst = dst;
        voq.qp = qp;
        voq.limiter =
            Limiter::for_new_destination(&ctx.scheme, self.port.line_rate_bps).map(Box::new);
        if let Some(l) = voq.limiter.as_mut() {
            l.set_paused(self.rate_limiters_paused, ctx.q.now());
        }
        self.voq_slot.insert(key, slot);
        slot
    }

    /// The VOQ of `dst`, if the host has one.
    pub(crate) fn voq(&self, dst: HostId) -> Option<&Voq> {
        (self.voq_slot.get(&voq_key(dst, NO_FLOW))).map(|&s| &self.voqs[s as usize])
    }

    /// Flow `id` is a queue pair: a transported flow, with a VOQ and a reaction point of its
    /// own.
    pub(super) fn is_queue_pair(&self, id: FlowId, ctx: &Ctx) -> bool {
        id != NO_FLOW && !ctx.flows.flows[id as usize].row.transport.is_none()
    }

    /// Frees a slot that has nothing left to do.
    pub(super) fn release_if_idle(&mut self, slot: u32) {
        let voq = &mut self.voqs[slot as usize];
        if voq.is_idle() {
            self.voq_slot.remove(&voq_key(voq.dst, voq.qp));
            voq.recycle();
            self.free_slots.push(slot);
        }
    }

    pub(super) fn add_to_ring(&mut self, slot: u32) {
        let voq = &mut self.voqs[slot as usize];
        if !voq.in_ring && voq.has_work() {
            voq.in_ring = true;
            self.ring.push_back(slot);
        }
    }

    /// A source made a frame for `frame.dst`: queue it, or drop it if the transmit buffer is
    /// full (at the RP if the flow is rate limited, else at the NIC).
    pub(crate) fn enqueue_generated(&mut self, me: NodeIdx, frame: Frame, ctx: &mut Ctx) {
        ctx.counters.generated += 1;
        self.counters.generated_frames += 1;
        self.counters.generated_bytes += frame.bytes as u64;
        let bytes = frame.bytes as u64;
        if self
            .nic_limit_bytes
            .is_some_and(|l| self.nic_bytes + bytes > l)
        {
            let limited = self.voq(frame.dst).is_some_and(|v| v.limiter.is_some());
            let place = if limited {
                DropPlace::Rp
            } else {
                DropPlace::Nic
            };
            ctx.drop_frame(place, &frame);
            self.counters.dropped_frames += 1;
            return;
        }
        let slot = self.slot_of(frame.dst, ctx);
        let voq = &mut self.voqs[slot as usize];
        voq.priority = frame.priority;
        voq.frames.push_back(frame);
        voq.bytes += bytes;
        self.nic_bytes += bytes;
        self.add_to_ring(slot);
        self.try_transmit(me, ctx);
    }

    /// Flow `id` to `dst` starts: it waits behind the VOQ's earlier flows (a transported flow
    /// has a VOQ of its own). Its frames are cut when the VOQ is served (flows live in the
    /// application, not in the NIC buffer).
    pub(crate) fn start_flow(&mut self, me: NodeIdx, id: FlowId, dst: HostId, ctx: &mut Ctx) {
        if ctx.flows.flows[id as usize].writing {
            // A long flow: its application writes as the run goes (`transport/app.rs`).
            self.start_app_writes(me, id, ctx);
        }
        let qp = if self.is_queue_pair(id, ctx) {
            id
        } else {
            NO_FLOW
        };
        let slot = self.slot_for(dst, qp, ctx);
        let voq = &mut self.voqs[slot as usize];
        voq.priority = ctx.flows.flows[id as usize].row.priority;
        voq.flows.push_back(id);
        self.add_to_ring(slot);
        self.try_transmit(me, ctx);
    }

    /// Switches a saturating (always backlogged) source towards `dst` on or off.
    pub(crate) fn set_saturating(
        &mut self,
        me: NodeIdx,
        dst: u32,
        frame_bytes: Option<u32>,
        priority: u8,
        ctx: &mut Ctx,
    ) {
        let slot = self.slot_of(dst, ctx);
        let voq = &mut self.voqs[slot as usize];
        voq.saturating_frame_bytes = frame_bytes;
        if frame_bytes.is_some() {
            voq.priority = priority;
        }
        self.add_to_ring(slot);
        self.release_if_idle(slot);
        self.try_transmit(me, ctx);
    }

    /// Queues a scheme message from this host to `to`, about the data flow that goes to
    /// `flow_dst` (its RP key at the source) and, for a queue pair, flow `flow_id` (its RP is
    /// per flow), whose data is of `class`: at control priority, or behind `to`'s VOQ when it
    /// rides the data queue (in that VOQ's class; `class` for a VOQ that holds no data). The
    /// caller lets the NIC decide what to send next.
    pub(super) fn queue_message(
        &mut self,
        msg: CcMsg,
        about_src: HostId,
        flow_dst: HostId,
        flow_id: FlowId,
        class: u8,
        ctx: &mut Ctx,
    ) {
        let bytes = msg.bytes(&ctx.scheme);
        ctx.counters.control(msg.kind(), bytes);
        let to = if msg.for_reaction_point() {
            about_src
        } else {
            flow_dst
        };
        let mut frame = Frame::control(
            Payload::Cc(msg),
            about_src,
            to,
            flow_dst,
            bytes,
            ctx.q.now(),
        );
        frame.flow_id = flow_id;
        if ctx.rides_data_queue(&msg) {
            let slot = self.slot_of(to, ctx);
            let voq = &mut self.voqs[slot as usize];
            if !voq.holds_data() {
                voq.priority = class;
            }
            voq.own_frames.push_back(frame);
            self.add_to_ring(slot);
        } else {
            self.port.ctrl_q.push_back(frame);
        }
    }
}
