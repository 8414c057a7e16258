//! An end node: traffic enters per-destination queues (VOQs) served round-robin onto the NIC
//! link, each behind the destination's rate limiter (the reaction point) when congestion
//! feedback has installed one; and a receiver (sink) that absorbs frames at its, possibly
//! scheduled, rate, with the scheme's notification point watching what arrives. The host names
//! no scheme: it calls the RP and NP hooks of `cc` and sends the messages they return.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use crate::cc::{CcMsg, Limiter, NotificationPoint, Pacing};
use crate::engine::{EventKind, NodeIdx};
use crate::flow_control::pause::{hysteresis, set_xoff};
use crate::flow_control::pfc::{self, set_class_xoff};
use crate::net::frame::{FlowId, Frame, HostId, Payload};
use crate::net::port::Port;
use crate::net::Ctx;
use crate::rng::SimRng;
use crate::scenario::{FlowService, Watermarks, N_CLASSES};
use crate::stats::{DropPlace, HostCounters};
use crate::time::{serialization_time, SimTime, TxTimer};

/// Frames and flows waiting for one destination, and that destination's rate limiter. A host
/// keeps a VOQ only while it has work or a limiter (memory grows with active destinations, not
/// with the number of hosts).
#[derive(Default)]
pub struct Voq {
    pub dst: HostId,
    pub frames: VecDeque<Frame>,
    /// Flows waiting to send to `dst`, oldest first; the head one is being sent.
    pub flows: VecDeque<FlowId>,
    /// Scheme messages riding the data queue towards `dst` (probes): sent first, unpaced.
    pub own_frames: VecDeque<Frame>,
    pub bytes: u64,
    /// Boxed: a VOQ is made and recycled for every new destination, and most have no limiter;
    /// inline, the limiter tripled the VOQ and every recycle rewrote it (docs/performance.md).
    pub limiter: Option<Box<Limiter>>,
    /// The limiter lets the next frame go at this time (rate x size of the previous frame).
    pub next_allowed: SimTime,
    /// Pacing times at the limiter's rate: it changes once per byte-counter or timer cycle,
    /// not per frame, so most frames reuse the last one instead of dividing.
    pace: TxTimer,
    /// A saturating source is attached: frames of this size are made on demand.
    pub saturating_frame_bytes: Option<u32>,
    /// 802.1Q class of the VOQ's work (that of the latest frame, flow or source added): PFC
    /// holds the whole VOQ while its class is paused.
    pub priority: u8,
    in_ring: bool,
    /// The ticket of the event that counts, and the limiter timer generation it was set for.
    timer_pending: Option<(u32, u32)>,
    /// `Host::after_limiter_change` has acted on the limiter as it is (its release and timer);
    /// until the limiter changes again, sending a frame needs no new look. False in a new VOQ.
    limiter_settled: bool,
    /// Probe entity id of the limiter ("host->dst"), interned on first use.
    pub probe_entity: Option<u32>,
}

impl Voq {
    fn has_work(&self) -> bool {
        !self.frames.is_empty()
            || !self.flows.is_empty()
            || !self.own_frames.is_empty()
            || self.saturating_frame_bytes.is_some()
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
    fn turn_ready_at(&self, paused: u8) -> Option<SimTime> {
        if !self.has_work() {
            None
        } else if paused & (1 << self.priority) != 0 {
            Some(SimTime::MAX)
        } else {
            Some(self.ready_at())
        }
    }

    fn ready_at(&self) -> SimTime {
        match &self.limiter {
            Some(l) if self.own_frames.is_empty() => self.next_allowed.max(l.stopped_until()),
            _ => SimTime::ZERO,
        }
    }
}

/// PFC sent by a host's receive side (`[pfc] host_rx`): bytes per class in the receive queue
/// against static thresholds.
#[derive(Clone, Debug, Default)]
pub struct ReceiverPfc {
    pub lossless_mask: u8,
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    pub quanta: u16,
    pub class_bytes: [u64; N_CLASSES],
}

/// The sink: a FIFO served at `rate_bps` (None = absorbs at arrival).
#[derive(Default)]
pub struct Receiver {
    pub rate_bps: Option<f64>,
    pub queue: VecDeque<Frame>,
    pub bytes: u64,
    pub peak_bytes: u64,
    pub busy: bool,
    pub limit_bytes: Option<u64>,
    pub pause: Option<Watermarks>,
    pub pfc: Option<Box<ReceiverPfc>>,
}

pub struct Host {
    pub id: HostId,
    pub name: String,
    pub port: Port,
    /// VOQ slots; `voq_slot` maps a destination to its slot, freed slots are reused.
    pub voqs: Vec<Voq>,
    voq_slot: FxHashMap<HostId, u32>,
    free_slots: Vec<u32>,
    /// Round-robin order of the slots with work.
    ring: VecDeque<u32>,
    /// Counts the RP timer events this host scheduled; an event carries its count, so one left
    /// over from a released limiter never fires on a later one.
    timer_ticket: u32,
    pub flow_service: FlowService,
    pub nic_bytes: u64,
    pub nic_limit_bytes: Option<u64>,
    wake_generation: u32,
    wake_at: SimTime,
    /// The NIC finishes its current frame at this time (frames are handed to the link whole).
    free_at: SimTime,
    pub rx: Receiver,
    pub counters: HostCounters,
    /// Randomness of this host's reaction points.
    pub rng: SimRng,
    rate_limiters_paused: bool,
    /// The scheme's notification point, if it has one.
    pub np: Option<NotificationPoint>,
}

impl Host {
    pub fn new(id: HostId, name: String, port: Port, rng: SimRng) -> Host {
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
        }
    }

    /// The VOQ slot of `dst`, made if the host has none (with the scheme's RP, for schemes
    /// whose RP acts before any feedback).
    fn slot_of(&mut self, dst: HostId, ctx: &Ctx) -> u32 {
        if let Some(&slot) = self.voq_slot.get(&dst) {
            return slot;
        }
        let slot = self.free_slots.pop().unwrap_or_else(|| {
            self.voqs.push(Voq::default());
            (self.voqs.len() - 1) as u32
        });
        let voq = &mut self.voqs[slot as usize];
        voq.dst = dst;
        voq.limiter =
            Limiter::for_new_destination(ctx.scheme, self.port.line_rate_bps).map(Box::new);
        if let Some(l) = voq.limiter.as_mut() {
            l.set_paused(self.rate_limiters_paused, ctx.q.now());
        }
        self.voq_slot.insert(dst, slot);
        slot
    }

    /// The VOQ of `dst`, if the host has one.
    pub fn voq(&self, dst: HostId) -> Option<&Voq> {
        self.voq_slot.get(&dst).map(|&s| &self.voqs[s as usize])
    }

    /// Frees a slot that has nothing left to do.
    fn release_if_idle(&mut self, slot: u32) {
        let voq = &mut self.voqs[slot as usize];
        if voq.is_idle() {
            self.voq_slot.remove(&voq.dst);
            voq.recycle();
            self.free_slots.push(slot);
        }
    }

    fn add_to_ring(&mut self, slot: u32) {
        let voq = &mut self.voqs[slot as usize];
        if !voq.in_ring && voq.has_work() {
            voq.in_ring = true;
            self.ring.push_back(slot);
        }
    }

    /// A source made a frame for `frame.dst`: queue it, or drop it if the transmit buffer is
    /// full (at the RP if the flow is rate limited, else at the NIC).
    pub fn enqueue_generated(&mut self, me: NodeIdx, frame: Frame, ctx: &mut Ctx) {
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

    /// Flow `id` to `dst` starts: it waits behind the VOQ's earlier flows. Its frames are cut
    /// when the VOQ is served (flows live in the application, not in the NIC buffer).
    pub fn start_flow(&mut self, me: NodeIdx, id: FlowId, dst: HostId, ctx: &mut Ctx) {
        let slot = self.slot_of(dst, ctx);
        let voq = &mut self.voqs[slot as usize];
        voq.priority = ctx.flows.flows[id as usize].row.priority;
        voq.flows.push_back(id);
        self.add_to_ring(slot);
        self.try_transmit(me, ctx);
    }

    /// Switches a saturating (always backlogged) source towards `dst` on or off.
    pub fn set_saturating(
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

    /// The NIC scheduler: control frames first, then (unless paused) the next VOQ in round-robin
    /// order whose limiter allows a frame. One wake-up event per decision: at the end of the
    /// frame, or later when every queue with work is held by its limiter.
    pub fn try_transmit(&mut self, me: NodeIdx, ctx: &mut Ctx) {
        let now = ctx.q.now();
        if now < self.free_at {
            self.wake(me, self.free_at, ctx);
            return;
        }
        let sent = if let Some(ctrl) = self.port.ctrl_q.pop_front() {
            self.send(me, ctrl, now, ctx);
            true
        } else if self.port.is_paused(now) {
            false
        } else if let Some(slot) = self.pick_voq(me, now, ctx) {
            let frame = self.take_frame(slot, now, ctx);
            self.send(me, frame, now, ctx);
            if frame.is_data() {
                self.after_transmit(me, slot, frame.bytes, now, ctx);
            }
            true
        } else {
            false
        };
        if sent {
            self.plan_next_decision(me, now, ctx);
        }
    }

    fn send(&mut self, me: NodeIdx, frame: Frame, now: SimTime, ctx: &mut Ctx) {
        let (done, arrival) = self.port.send_whole(frame, now);
        if let Some(at) = arrival {
            ctx.q.schedule(at, EventKind::Arrive { node: me, port: 0 });
        }
        ctx.counters.frame_hops += 1;
        self.free_at = done;
    }

    /// After a frame: wake when the NIC is free, or when the first limiter releases if that is
    /// later; no event at all when nothing waits (new work wakes the host itself).
    fn plan_next_decision(&mut self, me: NodeIdx, now: SimTime, ctx: &mut Ctx) {
        let next = if !self.port.ctrl_q.is_empty() {
            Some(self.free_at)
        } else if self.port.is_paused(now) {
            None // the pause timer or XON wakes the host
        } else {
            self.earliest_ready(now)
                .map(|ready| ready.max(self.free_at))
        };
        if let Some(at) = next {
            self.wake(me, at, ctx);
        }
    }

    /// When the first VOQ with work may send, leaving out classes PFC has paused (their
    /// timer or XON wakes the host).
    fn earliest_ready(&self, now: SimTime) -> Option<SimTime> {
        let paused = self.port.paused_classes(now);
        let waiting = |v: &&Voq| v.has_work() && paused & (1 << v.priority) == 0;
        if self.ring.len() == 1 {
            // One destination (a saturating source): no walk over the ring's two slices.
            let voq = &self.voqs[self.ring[0] as usize];
            return Some(voq).filter(waiting).map(Voq::ready_at);
        }
        self.ring
            .iter()
            .map(|&slot| &self.voqs[slot as usize])
            .filter(waiting)
            .map(Voq::ready_at)
            .min()
    }

    /// Arranges a HostWake at `at` unless one is already due by then.
    fn wake(&mut self, me: NodeIdx, at: SimTime, ctx: &mut Ctx) {
        if at < self.wake_at {
            self.wake_at = at;
            self.wake_generation = self.wake_generation.wrapping_add(1);
            let generation = self.wake_generation;
            ctx.q.schedule(
                at,
                EventKind::HostWake {
                    node: me,
                    generation,
                },
            );
        }
    }

    /// Round-robin over VOQs with work whose limiter allows a frame now. If all are held by
    /// their limiters, arranges a wake-up at the earliest release.
    fn pick_voq(&mut self, me: NodeIdx, now: SimTime, ctx: &mut Ctx) -> Option<u32> {
        let paused = self.port.paused_classes(now);
        if self.ring.len() == 1 {
            // One VOQ in the ring (one destination): a turn would put it back where it was.
            let slot = self.ring[0];
            return match self.voqs[slot as usize].turn_ready_at(paused) {
                None => {
                    self.ring.clear();
                    self.leave_ring(slot);
                    None
                }
                Some(ready) if ready <= now => Some(slot),
                Some(ready) => {
                    self.wake_unless_never(me, ready, ctx);
                    None
                }
            };
        }
        let mut earliest = SimTime::MAX;
        for _ in 0..self.ring.len() {
            let slot = self.ring.pop_front().expect("ring length checked");
            let Some(ready) = self.voqs[slot as usize].turn_ready_at(paused) else {
                self.leave_ring(slot);
                continue;
            };
            self.ring.push_back(slot);
            if ready <= now {
                return Some(slot);
            }
            earliest = earliest.min(ready);
        }
        self.wake_unless_never(me, earliest, ctx);
        None
    }

    /// A VOQ found without work is out of the ring (its slot is freed if nothing else holds it).
    fn leave_ring(&mut self, slot: u32) {
        self.voqs[slot as usize].in_ring = false;
        self.release_if_idle(slot);
    }

    /// Arranges a HostWake at `at`, if it is a time at all (a VOQ PFC holds has none).
    fn wake_unless_never(&mut self, me: NodeIdx, at: SimTime, ctx: &mut Ctx) {
        if at < SimTime::MAX {
            self.wake(me, at, ctx);
        }
    }

    pub fn on_wake(&mut self, me: NodeIdx, generation: u32, ctx: &mut Ctx) {
        if generation == self.wake_generation {
            self.wake_at = SimTime::MAX;
            self.try_transmit(me, ctx);
        }
    }

    fn take_frame(&mut self, slot: u32, now: SimTime, ctx: &mut Ctx) -> Frame {
        let voq = &mut self.voqs[slot as usize];
        if let Some(mut own) = voq.own_frames.pop_front() {
            // A message riding the data queue travels in its VOQ's class.
            own.priority = voq.priority;
            return own;
        }
        let from_flow = match (voq.frames.front(), voq.flows.front()) {
            (Some(queued), Some(&id)) => ctx.flows.flows[id as usize].start < queued.born,
            (None, Some(_)) => true,
            _ => false,
        };
        let mut frame = if from_flow {
            let id = voq.flows.pop_front().expect("checked");
            let (bytes, finished) = ctx.flows.take_frame_bytes(id);
            if !finished {
                match self.flow_service {
                    FlowService::Fifo => voq.flows.push_front(id),
                    FlowService::RoundRobin => voq.flows.push_back(id),
                }
            }
            count_made(&mut self.counters, bytes, ctx);
            let mut f = Frame::data(self.id, voq.dst, bytes, now);
            f.flow_id = id;
            f.priority = voq.priority;
            f
        } else if let Some(f) = voq.frames.pop_front() {
            voq.bytes -= f.bytes as u64;
            self.nic_bytes -= f.bytes as u64;
            f
        } else {
            let bytes = voq.saturating_frame_bytes.expect("picked VOQ has work");
            count_made(&mut self.counters, bytes, ctx);
            let mut f = Frame::data(self.id, voq.dst, bytes, now);
            f.priority = voq.priority;
            f
        };
        let voq = &mut self.voqs[slot as usize];
        if let Some(limiter) = &voq.limiter {
            let Pacing {
                rate_bps: rate,
                tag,
                bucket_bytes: bucket,
            } = limiter.pacing();
            frame.rl_tag = tag;
            let pace = voq.pace.time(frame.bytes as u64, rate);
            voq.next_allowed = if bucket > 0.0 {
                // Tokens accrued at the current rate while the limiter waited, up to the
                // bucket: the pacing clock may lag `now` by at most bucket / rate.
                let credit = serialization_time(bucket.round() as u64, rate);
                voq.next_allowed.max(now.saturating_sub(credit)) + pace
            } else {
                now + pace
            };
        }
        frame
    }

    fn after_transmit(&mut self, me: NodeIdx, slot: u32, bytes: u32, now: SimTime, ctx: &mut Ctx) {
        self.counters.tx_frames += 1;
        self.counters.tx_bytes += bytes as u64;
        let voq = &mut self.voqs[slot as usize];
        if let Some(limiter) = voq.limiter.as_mut() {
            let sent = limiter.on_transmit(bytes, now, &mut self.rng);
            let settled = voq.limiter_settled && !sent.changed;
            if let Some(msg) = sent.msg {
                let dst = voq.dst;
                self.queue_message(msg, self.id, dst, ctx);
            }
            // A no-op when nothing changed since the last call (it is idempotent).
            if !settled {
                self.after_limiter_change(me, slot, ctx);
            }
        }
    }

    /// Queues a scheme message from this host to `to`, about the data flow that goes to
    /// `flow_dst` (its RP key at the source): at control priority, or behind `to`'s VOQ when
    /// it rides the data queue. The caller lets the NIC decide what to send next.
    fn queue_message(&mut self, msg: CcMsg, about_src: HostId, flow_dst: HostId, ctx: &mut Ctx) {
        let bytes = msg.bytes(ctx.scheme);
        ctx.counters.control(msg.kind(), bytes);
        let to = if msg.for_reaction_point() {
            about_src
        } else {
            flow_dst
        };
        let frame = Frame::control(
            Payload::Cc(msg),
            about_src,
            to,
            flow_dst,
            bytes,
            ctx.q.now(),
        );
        if msg.rides_data_queue() {
            let slot = self.slot_of(to, ctx);
            self.voqs[slot as usize].own_frames.push_back(frame);
            self.add_to_ring(slot);
        } else {
            self.port.ctrl_q.push_back(frame);
        }
    }

    /// After any limiter state change: release it at line rate, (re)arm its timer. Calling it
    /// again before the limiter changes does nothing.
    fn after_limiter_change(&mut self, me: NodeIdx, slot: u32, ctx: &mut Ctx) {
        let voq = &mut self.voqs[slot as usize];
        voq.limiter_settled = voq.limiter.is_some();
        let Some(limiter) = voq.limiter.as_ref() else {
            self.release_if_idle(slot);
            return;
        };
        if limiter.is_released() {
            voq.limiter = None;
            voq.limiter_settled = false;
            voq.timer_pending = None;
            self.release_if_idle(slot);
            return;
        }
        let Some((at, generation)) = limiter.timer() else {
            voq.timer_pending = None;
            return;
        };
        if voq.timer_pending.is_some_and(|(_, g)| g == generation) {
            return;
        }
        self.timer_ticket = self.timer_ticket.wrapping_add(1);
        let ticket = self.timer_ticket;
        voq.timer_pending = Some((ticket, generation));
        let dst = voq.dst;
        ctx.q.schedule(
            at.max(ctx.q.now()),
            EventKind::RpTimer {
                node: me,
                dst,
                ticket,
            },
        );
    }

    pub fn on_rp_timer(&mut self, me: NodeIdx, dst: u32, ticket: u32, ctx: &mut Ctx) {
        let now = ctx.q.now();
        let Some(&slot) = self.voq_slot.get(&dst) else {
            return;
        };
        let voq = &mut self.voqs[slot as usize];
        let Some(limiter) = voq.limiter.as_mut() else {
            return;
        };
        let Some((current, generation)) = voq.timer_pending else {
            return;
        };
        if current != ticket {
            return;
        }
        voq.timer_pending = None;
        limiter.on_timer(generation, now, &mut self.rng);
        self.after_limiter_change(me, slot, ctx);
        self.try_transmit(me, ctx);
    }

    pub fn receive(&mut self, me: NodeIdx, frame: Frame, ctx: &mut Ctx) {
        match frame.payload {
            Payload::Data => {
                self.notify(me, &frame, ctx);
                self.receive_data(me, frame, ctx)
            }
            Payload::Pause { quanta } => self.receive_pause(me, quanta, ctx),
            Payload::Pfc { class, quanta } => self.receive_pfc(me, class as usize, quanta, ctx),
            Payload::Cc(msg) if msg.for_reaction_point() => {
                self.receive_feedback(me, &msg, frame.flow, ctx)
            }
            Payload::Cc(_) => self.notify(me, &frame, ctx),
        }
    }

    /// The NP hook: a data frame or a message for the NP arrived; send its answer, if any, to
    /// the frame's source. Inline, so that hosts without an NP (most schemes) pay one test per
    /// frame, not a call that saves and restores registers first.
    #[inline]
    fn notify(&mut self, me: NodeIdx, frame: &Frame, ctx: &mut Ctx) {
        let Some(np) = self.np.as_mut() else {
            return;
        };
        if let Some(reply) = np.on_receive(frame, ctx.q.now()) {
            self.answer(me, reply, frame.src, ctx);
        }
    }

    /// Sends the NP's answer to `to`.
    fn answer(&mut self, me: NodeIdx, reply: CcMsg, to: HostId, ctx: &mut Ctx) {
        self.queue_message(reply, to, self.id, ctx);
        self.try_transmit(me, ctx);
    }

    fn receive_pause(&mut self, me: NodeIdx, quanta: u16, ctx: &mut Ctx) {
        let now = ctx.q.now();
        if let Some(until) = self.port.receive_pause(quanta, now) {
            ctx.q
                .schedule(until, EventKind::PauseExpire { node: me, port: 0 });
        }
        let paused = self.port.is_paused(now);
        self.set_rate_limiters_paused(paused, now);
        if !paused {
            self.try_transmit(me, ctx);
        }
    }

    /// A PFC frame: pause or resume one class of this host's VOQs. Rate limiters keep running
    /// (only 802.3x PAUSE freezes them).
    fn receive_pfc(&mut self, me: NodeIdx, class: usize, quanta: u16, ctx: &mut Ctx) {
        pfc::receive_pfc(&mut self.port, class, quanta, (me, 0), ctx);
        self.try_transmit(me, ctx);
    }

    /// Seed 004's paused RP: limiters freeze their timers while the link is paused.
    pub fn set_rate_limiters_paused(&mut self, paused: bool, now: SimTime) {
        if paused == self.rate_limiters_paused {
            return;
        }
        self.rate_limiters_paused = paused;
        for voq in self.voqs.iter_mut() {
            if let Some(l) = voq.limiter.as_mut() {
                // The timer froze or resumed: the next frame sent re-arms it.
                l.set_paused(paused, now);
                voq.limiter_settled = false;
            }
        }
    }

    /// A message for the RP of the destination `flow_dst`.
    fn receive_feedback(&mut self, me: NodeIdx, msg: &CcMsg, flow_dst: HostId, ctx: &mut Ctx) {
        let now = ctx.q.now();
        let line_rate = self.port.line_rate_bps;
        let slot = self.slot_of(flow_dst, ctx);
        let voq = &mut self.voqs[slot as usize];
        if voq.limiter.is_none() {
            voq.limiter =
                Limiter::install(ctx.scheme, msg, line_rate, now, &mut self.rng).map(Box::new);
            if let Some(l) = voq.limiter.as_mut() {
                l.set_paused(self.rate_limiters_paused, now);
            }
        }
        if let Some(l) = voq.limiter.as_mut() {
            l.on_feedback(msg, now, &mut self.rng);
        }
        self.after_limiter_change(me, slot, ctx);
        self.try_transmit(me, ctx);
    }

    fn receive_data(&mut self, me: NodeIdx, frame: Frame, ctx: &mut Ctx) {
        let rx = &mut self.rx;
        if rx.rate_bps.is_none() && !rx.busy {
            self.deliver(frame, ctx);
            return;
        }
        let bytes = frame.bytes as u64;
        if rx.limit_bytes.is_some_and(|l| rx.bytes + bytes > l) {
            ctx.drop_frame(DropPlace::Rx, &frame);
            return;
        }
        rx.queue.push_back(frame);
        rx.bytes += bytes;
        rx.peak_bytes = rx.peak_bytes.max(rx.bytes);
        self.update_rx_pause(me, ctx);
        self.update_rx_pfc(me, frame.priority as usize, true, bytes, ctx);
        if !self.rx.busy {
            self.start_rx_service(me, ctx);
        }
    }

    fn start_rx_service(&mut self, me: NodeIdx, ctx: &mut Ctx) {
        let Some(front) = self.rx.queue.front() else {
            return;
        };
        let rate = self.rx.rate_bps.unwrap_or(self.port.line_rate_bps);
        self.rx.busy = true;
        ctx.q.schedule_in(
            serialization_time(front.bytes as u64, rate),
            EventKind::RxDone(me),
        );
    }

    pub fn on_rx_done(&mut self, me: NodeIdx, ctx: &mut Ctx) {
        let frame = self
            .rx
            .queue
            .pop_front()
            .expect("RxDone with an empty receiver");
        self.rx.bytes -= frame.bytes as u64;
        self.rx.busy = false;
        self.deliver(frame, ctx);
        self.update_rx_pause(me, ctx);
        let bytes = frame.bytes as u64;
        self.update_rx_pfc(me, frame.priority as usize, false, bytes, ctx);
        self.start_rx_service(me, ctx);
    }

    /// Inline: a frame absorbed at arrival (no receiver rate) ends here, once per frame.
    #[inline]
    fn deliver(&mut self, frame: Frame, ctx: &mut Ctx) {
        ctx.flows.on_delivered(&frame, ctx.q.now());
        let latency_s = (ctx.q.now() - frame.born).as_secs_f64();
        ctx.counters.delivered += 1;
        ctx.counters.delivered_bytes += frame.bytes as u64;
        ctx.counters.latency_sum_s += latency_s;
        ctx.counters.latency_max_s = ctx.counters.latency_max_s.max(latency_s);
        self.counters.rx_frames += 1;
        self.counters.rx_bytes += frame.bytes as u64;
    }

    pub fn rx_pause_quanta(&self) -> u16 {
        self.rx.pause.as_ref().map_or(u16::MAX, |w| w.quanta)
    }

    /// Receive-buffer watermarks (seed 003 adapters): PAUSE the upstream port.
    fn update_rx_pause(&mut self, me: NodeIdx, ctx: &mut Ctx) {
        let Some(w) = self.rx.pause.clone() else {
            return;
        };
        let want = hysteresis(
            self.port.xoff_sent,
            self.rx.bytes,
            w.xoff_bytes as u64,
            w.xon_bytes as u64,
        );
        if set_xoff(&mut self.port, want, w.quanta, (me, 0), ctx) {
            self.try_transmit(me, ctx);
        }
    }

    /// `[pfc] host_rx`: a frame of `class` entered (`added`) or left the receive queue; send
    /// PFC for the class to the switch above when its bytes cross the thresholds.
    fn update_rx_pfc(&mut self, me: NodeIdx, class: usize, added: bool, bytes: u64, ctx: &mut Ctx) {
        let Some(pfc) = self.rx.pfc.as_mut() else {
            return;
        };
        if added {
            pfc.class_bytes[class] += bytes;
        } else {
            pfc.class_bytes[class] -= bytes;
        }
        if pfc.lossless_mask & (1 << class) == 0 {
            return;
        }
        let on = (self.port.pfc.as_ref()).is_some_and(|s| s.xoff_sent & (1 << class) != 0);
        let want = hysteresis(on, pfc.class_bytes[class], pfc.xoff_bytes, pfc.xon_bytes);
        let quanta = pfc.quanta;
        if set_class_xoff(&mut self.port, class, want, quanta, (me, 0), ctx) {
            self.try_transmit(me, ctx);
        }
    }

    pub fn rx_pfc_quanta(&self) -> u16 {
        self.rx.pfc.as_ref().map_or(u16::MAX, |p| p.quanta)
    }

    /// Data frames held by this host: queued to send, on its link, or in its receiver.
    pub fn data_frames_held(&self) -> u64 {
        let queued: u64 = self.voqs.iter().map(|v| v.frames.len() as u64).sum();
        queued + self.port.data_frames_held() + self.rx.queue.len() as u64
    }
}

/// A frame made when it is sent (saturating sources, flows) is generated at that moment.
fn count_made(counters: &mut HostCounters, bytes: u32, ctx: &mut Ctx) {
    ctx.counters.generated += 1;
    counters.generated_frames += 1;
    counters.generated_bytes += bytes as u64;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::qcn::QcnParams;
    use crate::cc::Scheme;
    use crate::engine::EventQueue;
    use crate::rng::{stream, StreamKind};
    use crate::stats::Counters;

    /// A host on a 10 Gb/s link.
    fn plain_host() -> Host {
        let port = Port::new("h->sw".into(), 1, 0, 10e9, SimTime::ZERO);
        Host::new(0, "h".into(), port, stream(1, StreamKind::ReactionPoint, 0))
    }

    /// What a host's calls need besides the host: the clock, counters, flows and the scheme.
    struct World {
        q: EventQueue,
        counters: Counters,
        flows: crate::flows::FlowTable,
        scheme: Scheme,
    }

    impl World {
        fn new(scheme: Scheme) -> World {
            World {
                q: EventQueue::new(),
                counters: Counters::default(),
                flows: crate::flows::FlowTable::default(),
                scheme,
            }
        }

        fn ctx(&mut self) -> Ctx<'_> {
            Ctx {
                q: &mut self.q,
                counters: &mut self.counters,
                flows: &mut self.flows,
                scheme: &self.scheme,
                control_bytes: 64,
            }
        }
    }

    fn cnm(qfb: u8) -> Frame {
        let msg = CcMsg::Cnm(crate::cc::qcn::Cnm { qfb, cpid: 0 });
        Frame::control(Payload::Cc(msg), 0, 0, 1, 64, SimTime::ZERO)
    }

    /// The newest RP timer ticket among the pending events (the clock moves to the last one).
    fn newest_ticket(q: &mut EventQueue) -> u32 {
        std::iter::from_fn(|| q.pop_until(SimTime::MAX))
            .filter_map(|ev| match ev {
                EventKind::RpTimer { ticket, .. } => Some(ticket),
                _ => None,
            })
            .max()
            .expect("an RP timer event was scheduled")
    }

    /// A timer event left over from a released limiter must not fire on the flow's next one.
    #[test]
    fn stale_timer_of_a_released_limiter_is_ignored() {
        let mut host = plain_host();
        let mut world = World::new(Scheme::Qcn(QcnParams::default()));
        let mut ctx = world.ctx();
        host.receive(0, cnm(63), &mut ctx);
        // Release the first limiter as reaching line rate would, then install a second one.
        let slot = host.voq_slot[&1] as usize;
        host.voqs[slot].limiter = None;
        host.voqs[slot].timer_pending = None;
        host.receive(0, cnm(63), &mut ctx);
        let stale = 1;
        host.on_rp_timer(0, 1, stale, &mut ctx);
        let Some(Limiter::Qcn(rp)) = host.voq(1).unwrap().limiter.as_deref() else {
            panic!("QCN limiter")
        };
        assert_eq!(
            rp.timer_stage(),
            0,
            "the stale event fired on the new limiter"
        );
        // The new limiter's own event does fire.
        let current = newest_ticket(ctx.q);
        assert_ne!(current, stale);
        host.on_rp_timer(0, 1, current, &mut ctx);
        let Some(Limiter::Qcn(rp)) = host.voq(1).unwrap().limiter.as_deref() else {
            panic!("QCN limiter")
        };
        assert_eq!(rp.timer_stage(), 1);
    }

    /// A frame sent after PAUSE froze and resumed a limiter's timer re-arms it, though the frame
    /// ends no byte-counter cycle: the host may skip `after_limiter_change` only while the
    /// limiter is as it last looked at it.
    #[test]
    fn a_frame_after_a_pause_rearms_the_limiter_timer() {
        let mut host = plain_host();
        let mut world = World::new(Scheme::Qcn(QcnParams::default()));
        let mut ctx = world.ctx();
        host.receive(0, cnm(63), &mut ctx);
        host.set_saturating(0, 1, Some(1500), 0, &mut ctx);
        let timer_generation = |host: &Host| {
            let voq = host.voq(1).unwrap();
            let armed = voq.timer_pending.map(|(_, generation)| generation);
            (armed, voq.limiter.as_ref().unwrap().timer().map(|(_, g)| g))
        };
        let (armed, live) = timer_generation(&host);
        assert_eq!(armed, live, "the first frame leaves the timer armed");
        host.set_rate_limiters_paused(true, ctx.q.now());
        host.set_rate_limiters_paused(false, ctx.q.now());
        let (armed, live) = timer_generation(&host);
        assert_ne!(
            armed, live,
            "thawing restarts the timer under a new generation"
        );
        let sent_before = host.counters.tx_frames;
        while let Some(event) = ctx.q.pop_until(SimTime::MAX) {
            if let EventKind::HostWake { generation, .. } = event {
                host.on_wake(0, generation, &mut ctx);
                break;
            }
        }
        assert_eq!(host.counters.tx_frames, sent_before + 1);
        let (armed, live) = timer_generation(&host);
        assert_eq!(armed, live, "the next frame re-arms the thawed timer");
    }

    /// Runs the host's own wake-ups until none is left (the clock ends at the last event).
    fn run_wakes(host: &mut Host, ctx: &mut Ctx) {
        while let Some(event) = ctx.q.pop_until(SimTime::MAX) {
            if let EventKind::HostWake { generation, .. } = event {
                host.on_wake(0, generation, ctx);
            }
        }
    }

    /// The lone-VOQ fast paths: a drained VOQ alone in the ring is not waited for, leaves the
    /// ring on the next decision and is released, and a new frame for its destination goes
    /// into a ring holding it once.
    #[test]
    fn a_lone_voq_is_served_and_leaves_the_ring() {
        let mut host = plain_host();
        let mut world = World::new(Scheme::None);
        let mut ctx = world.ctx();
        let frame = |ctx: &Ctx| Frame::data(0, 1, 1500, ctx.q.now());
        host.enqueue_generated(0, frame(&ctx), &mut ctx);
        host.enqueue_generated(0, frame(&ctx), &mut ctx);
        assert_eq!(host.earliest_ready(ctx.q.now()), Some(SimTime::ZERO));
        run_wakes(&mut host, &mut ctx);
        assert_eq!(host.counters.tx_frames, 2);
        // No wake-up was arranged just to find the VOQ drained: it is still in the ring.
        assert_eq!(host.ring.len(), 1);
        assert_eq!(
            host.earliest_ready(ctx.q.now()),
            None,
            "nothing left to wait for"
        );
        // The next decision, once the NIC is free, finds the VOQ empty: out of the ring, slot
        // freed. (A wake-up of a stale generation only moves the clock.)
        let stale = EventKind::HostWake {
            node: 0,
            generation: u32::MAX,
        };
        ctx.q.schedule(SimTime::from_micros(10), stale);
        run_wakes(&mut host, &mut ctx);
        host.try_transmit(0, &mut ctx);
        assert!(host.ring.is_empty());
        assert!(host.voq(1).is_none());
        host.enqueue_generated(0, frame(&ctx), &mut ctx);
        assert_eq!(host.ring.len(), 1, "the reused slot is in the ring once");
        run_wakes(&mut host, &mut ctx);
        assert_eq!(host.counters.tx_frames, 3);
    }

    /// The VOQ's pacing timer answers exactly what `serialization_time` does through rate
    /// changes (down to one ulp), frame-size changes, a stopped limiter and back.
    #[test]
    fn pacing_timer_equals_serialization_time() {
        let mut memo = TxTimer::default();
        let cut: f64 = 5.078125e9;
        let rates = [
            10e9,
            cut,
            cut,
            f64::from_bits(cut.to_bits() + 1),
            cut,
            7e9,
            0.0,
            1e3,
            0.0,
            9.999_999e9,
        ];
        for (i, rate) in rates.into_iter().enumerate() {
            for bytes in [1500, 1500, 64, 0, 9216, 1500] {
                assert_eq!(
                    memo.time(bytes, rate),
                    serialization_time(bytes, rate),
                    "step {i}: {bytes} B at {rate} b/s"
                );
            }
        }
        // The first lookup, at the rate it starts with, is right too.
        assert_eq!(TxTimer::default().time(0, 0.0), serialization_time(0, 0.0));
    }

    /// Frames a saturating VOQ behind a QCN limiter lets go at `now` after a long wait, with a
    /// token bucket of `bucket_bytes` (seed 004: a paused RP keeps adding tokens at CR).
    fn burst_after_wait(bucket_bytes: f64) -> usize {
        let mut host = plain_host();
        let mut world = World::new(Scheme::Qcn(QcnParams {
            rp_bucket_bytes: bucket_bytes,
            ..QcnParams::default()
        }));
        let mut ctx = world.ctx();
        host.receive(0, cnm(63), &mut ctx);
        let slot = host.voq_slot[&1];
        host.voqs[slot as usize].saturating_frame_bytes = Some(1500);
        // Long after the limiter last sent (as after a PAUSE): the bucket is full.
        let now = SimTime::from_secs_f64(0.01);
        let mut sent = 0;
        while host.voqs[slot as usize].ready_at() <= now {
            host.take_frame(slot, now, &mut ctx);
            sent += 1;
            assert!(sent < 1000, "the bucket never ran dry");
        }
        sent
    }

    #[test]
    fn a_waiting_limiter_accrues_up_to_its_bucket() {
        // Without a bucket, one frame, then the next is paced at CR.
        assert_eq!(burst_after_wait(0.0), 1);
        // 20.5 frames of credit: the frame taken plus 20 more leave at once (the half frame
        // keeps picosecond rounding of the pacing times out of the count).
        assert_eq!(burst_after_wait(30_750.0), 21);
    }
}
