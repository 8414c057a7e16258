//! The NIC: round robin over the VOQs with work, control frames first, one wake-up event per
//! decision, and the frame it cuts next (paced by the VOQ's limiter).

use super::{count_made, transport, Host, Voq};

use crate::cc::Pacing;
use crate::engine::{EventKind, NodeIdx};
use crate::net::frame::{Frame, NO_SEQ};
use crate::net::Ctx;
use crate::scenario::FlowService;
use crate::time::{serialization_time, SimTime};

impl Host {
    /// The NIC scheduler: control frames first, then (unless paused) the next VOQ in round-robin
    /// order whose limiter allows a frame. One wake-up event per decision: at the end of the
    /// frame, or later when every queue with work is held by its limiter.
    pub(crate) fn try_transmit(&mut self, me: NodeIdx, ctx: &mut Ctx) {
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
            let frame = self.take_frame(me, slot, now, ctx);
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
        let (done, arrival) = self.port.send_whole(frame, now, &mut ctx.frames);
        if let Some(entry) = arrival {
            let arrive = self.port.arrival_event(me, 0, entry);
            ctx.q.schedule(entry.arrival, arrive);
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
    pub(super) fn earliest_ready(&self, now: SimTime) -> Option<SimTime> {
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

    /// The VOQ the NIC's next decision looks at first (the ring's head): what a prefetch hint
    /// loads (`sim/prefetch.rs`).
    pub(crate) fn next_voq(&self) -> Option<&Voq> {
        self.voqs.get(*self.ring.front()? as usize)
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

    pub(crate) fn on_wake(&mut self, me: NodeIdx, generation: u32, ctx: &mut Ctx) {
        if generation == self.wake_generation {
            self.wake_at = SimTime::MAX;
            self.try_transmit(me, ctx);
        }
    }

    pub(super) fn take_frame(
        &mut self,
        me: NodeIdx,
        slot: u32,
        now: SimTime,
        ctx: &mut Ctx,
    ) -> Frame {
        let voq = &mut self.voqs[slot as usize];
        if let Some(mut own) = voq.own_frames.pop_front() {
            // A message riding the data queue travels in its VOQ's class; a transport's ACK
            // in its flow's.
            if !own.payload.is_transport_ack() {
                own.priority = voq.priority;
            }
            return own;
        }
        let from_flow = match (voq.frames.front(), voq.flows.front()) {
            (Some(queued), Some(&id)) => ctx.flows.flows[id as usize].start < queued.born,
            (None, Some(_)) => true,
            _ => false,
        };
        let mut frame = if from_flow {
            let id = voq.flows.pop_front().expect("checked");
            let line_rate_bps = self.port.line_rate_bps;
            let (bytes, seq, finished) = match self.transports.as_deref_mut() {
                Some(tp) if !ctx.flows.flows[id as usize].row.transport.is_none() => {
                    let next = transport::next_frame(tp, me, id, line_rate_bps, ctx);
                    if let Some(at) = next.paced_until {
                        // The flow's controller paces its queue pair's VOQ.
                        voq.paced = true;
                        voq.next_allowed = at;
                    }
                    (next.bytes, next.psn, next.finished)
                }
                _ => {
                    let (bytes, finished) = ctx.flows.take_frame_bytes(id);
                    (bytes, NO_SEQ, finished)
                }
            };
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
            f.seq = seq;
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
}
