//! Long flows: a `saturate` or `cbr` source over a transport is one flow per
//! source-destination pair that its application writes as the run goes
//! (`traffic::flows::AppWrites`; docs/transport.md, "Long flows"). The flow's size is what
//! the application has written so far; the sender may send only that; the flow completes
//! when, the application having stopped, the receiver holds all of it.
//!
//! - `cbr`: one packet of `frame_bytes` is written every `interval`, the first at the start
//!   (the open-loop source's frame times), each an `EventKind::AppWrite` at the sender. A
//!   sender that has sent all that was written leaves its VOQ and the next write puts it back;
//!   one whose window held written packets back sends them as fast as the window and the NIC
//!   let it: it catches up (the writes are not a pacing rate). The packet written last before
//!   `stop_s` makes the size final.
//! - `saturate`: always backlogged: each packet the sender takes is written as it takes it
//!   (`FlowState::on_taken`); an `EventKind::AppWrite` at `stop_s` makes the size final (what
//!   was taken by then, at least the first packet).
//!
//! Until the size is final the state machines count `flows::OPEN_PACKETS` at the receiver
//! and what was written at the sender, so neither takes the flow for complete; the
//! retransmission timer is off while everything written is acknowledged (`mod.rs`).

use super::{Host, SenderQp};
use crate::engine::{EventKind, NodeIdx};
use crate::net::frame::FlowId;
use crate::net::Ctx;
use crate::time::SimTime;

impl SenderQp {
    /// The flow has `packets` packets now (its application wrote more, or stopped).
    fn set_packets(&mut self, packets: u32) {
        match self {
            SenderQp::GoBackN(s) => s.set_packets(packets),
            SenderQp::Irn(s) => s.set_packets(packets),
            SenderQp::Tcp(s) => s.tx.set_packets(packets),
        }
    }
}

impl Host {
    /// Long flow `id` starts now at this host, its sender: the application's next write
    /// (`cbr`) or its stop (`saturate` with `stop_s`) is scheduled. Its first packet is
    /// written already (`cbr`: at the start; `saturate`: when the sender takes it).
    pub(in crate::net::host) fn start_app_writes(
        &mut self,
        me: NodeIdx,
        id: FlowId,
        ctx: &mut Ctx,
    ) {
        let now = ctx.q.now();
        let Some(writes) = ctx.flows.flows[id as usize].row.writes.as_deref().copied() else {
            return;
        };
        let ev = EventKind::AppWrite { node: me, flow: id };
        match writes.interval {
            Some(interval) if now + interval < writes.stop => ctx.q.schedule(now + interval, ev),
            Some(_) => {
                // The first packet is the only one written before the stop.
                ctx.flows.on_stopped_writing(id, now);
            }
            None if writes.stop < SimTime::MAX => ctx.q.schedule(writes.stop, ev),
            None => {}
        }
    }

    /// `EventKind::AppWrite` of long flow `id`. At its sender: the application writes its
    /// next packet (`cbr`) or stops writing (`saturate`'s `stop_s`), and the sender hears of
    /// it. At its receiver (a flow that completed when its application stopped, every
    /// packet held already): the receiver's state goes.
    #[inline(never)]
    pub(crate) fn on_app_write(&mut self, me: NodeIdx, id: FlowId, ctx: &mut Ctx) {
        let now = ctx.q.now();
        let f = &ctx.flows.flows[id as usize];
        if f.row.src != self.id {
            if f.end.is_some() {
                if let Some(tp) = self.transports.as_deref_mut() {
                    tp.receiving.remove(&id);
                }
            }
            return;
        }
        let Some(writes) = f.row.writes.as_deref().copied() else {
            return;
        };
        let stopped = match writes.interval {
            Some(interval) => {
                ctx.flows.on_written(id);
                let next = now + interval;
                if next < writes.stop {
                    ctx.q
                        .schedule(next, EventKind::AppWrite { node: me, flow: id });
                }
                next >= writes.stop
            }
            None => true,
        };
        if stopped && ctx.flows.on_stopped_writing(id, now) {
            // Every packet was held already: the flow completed now; its receiver's state
            // goes at once (an event there, at this time).
            let dst = ctx.flows.flows[id as usize].row.dst;
            ctx.q.schedule(
                now,
                EventKind::AppWrite {
                    node: dst,
                    flow: id,
                },
            );
        }
        self.after_app_write(me, id, ctx);
    }

    /// The sender of long flow `id` learns what its application wrote: it sends again if it
    /// had sent everything, stops asking for new packets when the application stopped, and is
    /// done if everything was acknowledged by then.
    fn after_app_write(&mut self, me: NodeIdx, id: FlowId, ctx: &mut Ctx) {
        let Some(tp) = self.transports.as_deref_mut() else {
            return;
        };
        let Some(qp) = tp.sending.get_mut(&id) else {
            // Not served yet: still in its VOQ; its state machine will count what was
            // written by then.
            return;
        };
        let f = &mut ctx.flows.flows[id as usize];
        qp.tx.set_packets(f.sendable_packets());
        let dst = f.row.dst;
        if !f.writing && qp.tx.is_complete() {
            // Everything was acknowledged before the application stopped.
            tp.sending.remove(&id);
            f.sender_end = Some(ctx.q.now());
            self.close_queue_pair(id, dst);
            return;
        }
        let may_send = qp.may_send();
        if may_send && !qp.in_voq {
            qp.in_voq = true;
            self.requeue_flow(me, id, dst, ctx);
        } else if !may_send && qp.in_voq {
            qp.in_voq = false;
            self.hold_flow(id, dst);
        }
    }
}
