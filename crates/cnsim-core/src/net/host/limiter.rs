//! The rate-limiter (reaction point) glue: a limiter's state after each frame, its feedback,
//! its timer events, and PAUSE freezing it.

use super::Host;

use crate::cc::{CcMsg, Limiter};
use crate::engine::{EventKind, NodeIdx};
use crate::net::frame::{FlowId, HostId};
use crate::net::Ctx;
use crate::time::SimTime;

impl Host {
    pub(super) fn after_transmit(
        &mut self,
        me: NodeIdx,
        slot: u32,
        bytes: u32,
        now: SimTime,
        ctx: &mut Ctx,
    ) {
        self.counters.tx_frames += 1;
        self.counters.tx_bytes += bytes as u64;
        let voq = &mut self.voqs[slot as usize];
        if let Some(limiter) = voq.limiter.as_mut() {
            let sent = limiter.on_transmit(bytes, now, &mut self.rng);
            let settled = voq.limiter_settled && !sent.changed;
            if let Some(msg) = sent.msg {
                let (dst, qp, class) = (voq.dst, voq.qp, voq.priority);
                self.queue_message(msg, self.id, dst, qp, class, ctx);
            }
            // A no-op when nothing changed since the last call (it is idempotent).
            if !settled {
                self.after_limiter_change(me, slot, ctx);
            }
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
        ctx.q.schedule(
            at.max(ctx.q.now()),
            EventKind::RpTimer {
                node: me,
                slot,
                ticket,
            },
        );
    }

    /// The timer of the limiter in VOQ `slot`. Tickets are never reused, so an event of a
    /// limiter that has gone (its slot recycled) matches no pending timer.
    pub(crate) fn on_rp_timer(&mut self, me: NodeIdx, slot: u32, ticket: u32, ctx: &mut Ctx) {
        let now = ctx.q.now();
        let Some(voq) = self.voqs.get_mut(slot as usize) else {
            return;
        };
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

    /// Seed 004's paused RP: limiters freeze their timers while the link is paused.
    pub(crate) fn set_rate_limiters_paused(&mut self, paused: bool, now: SimTime) {
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

    /// A message for the RP of the destination `flow_dst`, or of queue pair `flow_id` if that
    /// is a transported flow (whose RP is per flow). Feedback for a queue pair that has
    /// finished sending is dropped: its RP went with it.
    pub(super) fn receive_feedback(
        &mut self,
        me: NodeIdx,
        msg: &CcMsg,
        flow_dst: HostId,
        flow_id: FlowId,
        ctx: &mut Ctx,
    ) {
        let now = ctx.q.now();
        let line_rate = self.port.line_rate_bps;
        let slot = if self.is_queue_pair(flow_id, ctx) {
            if ctx.flows.flows[flow_id as usize].sender_end.is_some() {
                return; // its VOQ may linger until the round robin passes; its RP must not
            }
            // Made if the window holds the flow and its VOQ went meanwhile: the RP keeps it.
            self.slot_for(flow_dst, flow_id, ctx)
        } else {
            self.slot_of(flow_dst, ctx)
        };
        let voq = &mut self.voqs[slot as usize];
        if voq.limiter.is_none() {
            voq.limiter =
                Limiter::install(&ctx.scheme, msg, line_rate, now, &mut self.rng).map(Box::new);
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
}
