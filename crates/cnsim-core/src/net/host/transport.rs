//! The host's transport room: per-flow (queue pair) state of the flows that use a transport,
//! kept only while a flow is active. RoCEv2 reliable connection with go-back-N, as the DCQCN
//! paper (section 3) and the IRN paper (section 2) model it (docs/transport.md):
//!
//! - **sender**: packet sequence numbers (PSN) from 0; frames are cut when the NIC serves the
//!   flow, at the rate the NIC and its limiter allow (no window); a cumulative ACK moves the
//!   first unacknowledged PSN; a NACK for PSN e goes back to e (every packet from e is sent
//!   again); a retransmission timeout (`rto_s` without ACK progress) goes back to the first
//!   unacknowledged packet; the sender completes when every packet is acknowledged.
//! - **receiver**: accepts only the expected PSN (the bytes go to the application, once, in
//!   order), ACKs every `ack_every` accepted packets and the flow's last, discards a packet
//!   beyond the expected one and sends one NACK per gap, and answers a duplicate with an ACK
//!   (so a sender whose ACKs were lost learns where the receiver is).
//!
//! Nothing here names a scheme; ACK and NACK are frames on the reverse path, queued in the
//! receiving host's VOQ towards the sender (unpaced, like a scheme's probe), then queued,
//! paused and dropped in the switches like data.

use rustc_hash::FxHashMap;

use super::Host;
use crate::engine::{EventKind, NodeIdx};
use crate::flows::FlowState;
use crate::net::frame::{FlowId, Frame, HostId, Payload};
use crate::net::Ctx;
use crate::scenario::{FlowService, RoceParams};
use crate::stats::ControlKind;
use crate::time::SimTime;

/// A host's transported flows: the sender's and the receiver's halves, and the parameters.
pub(crate) struct Transports {
    pub(crate) roce: RoceParams,
    rto: SimTime,
    sending: FxHashMap<FlowId, SenderQp>,
    receiving: FxHashMap<FlowId, ReceiverQp>,
}

/// The sender's half of a queue pair (go-back-N).
#[derive(Clone, Copy, Debug)]
struct SenderQp {
    /// The next PSN to send.
    next_psn: u32,
    /// Packets acknowledged (cumulatively): the first unacknowledged PSN.
    acked: u32,
    /// One past the highest PSN ever sent: a PSN below it is a retransmission.
    high_psn: u32,
    /// The retransmission timer expires at this time unless ACKs move it.
    deadline: SimTime,
    /// The time of the timer event in the queue (`SimTime::MAX`: none). The timer is lazy: an
    /// ACK moves `deadline` only, and the event, when it fires early, is set again.
    timer_at: SimTime,
    /// The flow's id is in its VOQ's list of flows with something to send.
    in_voq: bool,
}

/// The receiver's half of a queue pair.
#[derive(Clone, Copy, Debug, Default)]
struct ReceiverQp {
    /// The next PSN the receiver accepts (every packet before it is held, in order).
    expected: u32,
    /// Accepted packets since the last ACK.
    since_ack: u32,
    /// A NACK was sent for the current gap (one per gap).
    nacked: bool,
}

/// The packets a flow is cut into, and the bytes of packet `psn`.
fn packets(f: &FlowState) -> u32 {
    f.row.size_bytes.div_ceil(f.row.frame_bytes as u64) as u32
}

fn packet_bytes(f: &FlowState, psn: u32) -> u32 {
    let offset = psn as u64 * f.row.frame_bytes as u64;
    (f.row.size_bytes - offset).min(f.row.frame_bytes as u64) as u32
}

impl Transports {
    pub(crate) fn new(roce: RoceParams) -> Transports {
        Transports {
            roce,
            rto: SimTime::from_secs_f64(roce.rto_s),
            sending: FxHashMap::default(),
            receiving: FxHashMap::default(),
        }
    }

    /// Flows with sender or receiver state here (the memory the room holds).
    #[cfg(test)]
    pub(crate) fn active(&self) -> (usize, usize) {
        (self.sending.len(), self.receiving.len())
    }
}

/// The next frame of transported flow `id`: (bytes, PSN, nothing left to send after it).
/// Counts a retransmission against the flow, and arms the timer on the first send. Out of
/// line, so the NIC's frame cutting stays as small as without a transport.
#[inline(never)]
pub(super) fn next_frame(
    tp: &mut Transports,
    me: NodeIdx,
    id: FlowId,
    ctx: &mut Ctx,
) -> (u32, u32, bool) {
    let now = ctx.q.now();
    let f = &mut ctx.flows.flows[id as usize];
    let n = packets(f);
    let qp = tp.sending.entry(id).or_insert(SenderQp {
        next_psn: 0,
        acked: 0,
        high_psn: 0,
        deadline: SimTime::MAX,
        timer_at: SimTime::MAX,
        in_voq: true,
    });
    let psn = qp.next_psn;
    let bytes = packet_bytes(f, psn);
    if psn < qp.high_psn {
        f.retransmitted_bytes += bytes as u64;
        f.retransmitted_frames += 1;
    }
    qp.next_psn += 1;
    qp.high_psn = qp.high_psn.max(qp.next_psn);
    let finished = qp.next_psn >= n;
    qp.in_voq = !finished;
    if qp.timer_at == SimTime::MAX {
        qp.deadline = now + tp.rto;
        qp.timer_at = qp.deadline;
        let ev = EventKind::TransportTimer { node: me, flow: id };
        ctx.q.schedule(qp.deadline, ev);
    }
    (bytes, psn, finished)
}

impl Host {
    // ---- the sender's half ----

    /// An ACK or NACK for one of this host's flows arrived. Out of line, as
    /// `receive_transported`: the host's `receive` stays as small as without a transport.
    #[inline(never)]
    pub(super) fn receive_transport_ack(&mut self, me: NodeIdx, frame: Frame, ctx: &mut Ctx) {
        let id = frame.flow_id;
        let Some(tp) = self.transports.as_deref_mut() else {
            return;
        };
        let Some(qp) = tp.sending.get_mut(&id) else {
            return; // the flow has completed: a late ACK
        };
        let now = ctx.q.now();
        let n = packets(&ctx.flows.flows[id as usize]);
        if frame.seq > qp.acked {
            qp.acked = frame.seq;
            qp.deadline = now + tp.rto;
        }
        if qp.acked >= n {
            tp.sending.remove(&id);
            ctx.flows.flows[id as usize].sender_end = Some(now);
            self.forget_flow_in_voq(id, frame.src);
            return;
        }
        // A NACK for the first unacknowledged packet goes back to it; a stale one (an ACK has
        // passed it) and an ACK only skip what is acknowledged.
        let go_back = frame.payload == Payload::Nack && frame.seq == qp.acked;
        qp.next_psn = if go_back {
            frame.seq
        } else {
            qp.next_psn.max(qp.acked)
        };
        if qp.next_psn < n && !qp.in_voq {
            qp.in_voq = true;
            self.requeue_flow(me, id, frame.src, ctx);
        }
    }

    /// The retransmission timer of flow `id` (`EventKind::TransportTimer`). Out of line, so
    /// the event dispatch stays as small as without a transport.
    #[inline(never)]
    pub(crate) fn on_transport_timer(&mut self, me: NodeIdx, id: FlowId, ctx: &mut Ctx) {
        let now = ctx.q.now();
        let Some(tp) = self.transports.as_deref_mut() else {
            return;
        };
        let rto = tp.rto;
        let Some(qp) = tp.sending.get_mut(&id) else {
            return; // completed since
        };
        if qp.timer_at != now {
            return;
        }
        let mut requeue = false;
        if now < qp.deadline {
            qp.timer_at = qp.deadline;
        } else {
            // Timeout: go back to the first unacknowledged packet.
            ctx.flows.flows[id as usize].timeouts += 1;
            qp.next_psn = qp.acked;
            qp.deadline = now + rto;
            qp.timer_at = qp.deadline;
            requeue = !qp.in_voq;
            qp.in_voq = true;
        }
        let at = qp.timer_at;
        ctx.q
            .schedule(at, EventKind::TransportTimer { node: me, flow: id });
        if requeue {
            let dst = ctx.flows.flows[id as usize].row.dst;
            self.requeue_flow(me, id, dst, ctx);
        }
    }

    /// Flow `id` has packets to send again: back into its VOQ (first with FIFO service).
    fn requeue_flow(&mut self, me: NodeIdx, id: FlowId, dst: HostId, ctx: &mut Ctx) {
        let slot = self.slot_of(dst, ctx);
        let voq = &mut self.voqs[slot as usize];
        voq.priority = ctx.flows.flows[id as usize].row.priority;
        match self.flow_service {
            FlowService::Fifo => voq.flows.push_front(id),
            FlowService::RoundRobin => voq.flows.push_back(id),
        }
        self.add_to_ring(slot);
        self.try_transmit(me, ctx);
    }

    /// The flow completed while its VOQ still listed it (an ACK overtook a go-back).
    fn forget_flow_in_voq(&mut self, id: FlowId, dst: HostId) {
        if let Some(&slot) = self.voq_slot.get(&dst) {
            self.voqs[slot as usize].flows.retain(|&f| f != id);
        }
    }

    // ---- the receiver's half ----

    /// A data frame of a transported flow reached the receiving application's NIC: accept it
    /// if it is the expected packet, else discard it; answer with an ACK or a NACK. Out of
    /// line, so the open-loop delivery it branches from stays small (`receiver.rs`).
    #[inline(never)]
    pub(super) fn receive_transported(&mut self, me: NodeIdx, frame: &Frame, ctx: &mut Ctx) {
        let id = frame.flow_id;
        let now = ctx.q.now();
        let Some(tp) = self.transports.as_deref_mut() else {
            return;
        };
        let ack_every = tp.roce.ack_every;
        let f = &ctx.flows.flows[id as usize];
        let n = packets(f);
        let reply = if f.end.is_some() {
            // Every byte is held already: tell the sender again (its last ACK was lost).
            Some((Payload::Ack, n))
        } else {
            let qp = tp.receiving.entry(id).or_default();
            if frame.seq == qp.expected {
                qp.expected += 1;
                qp.since_ack += 1;
                qp.nacked = false;
                let expected = qp.expected;
                let ack = qp.since_ack >= ack_every || expected == n;
                if ack {
                    qp.since_ack = 0;
                }
                if expected == n {
                    tp.receiving.remove(&id);
                }
                ctx.flows.on_delivered(id, frame.bytes, now);
                ack.then_some((Payload::Ack, expected))
            } else if frame.seq > qp.expected {
                let first_of_gap = !qp.nacked;
                qp.nacked = true;
                first_of_gap.then_some((Payload::Nack, qp.expected))
            } else {
                Some((Payload::Ack, qp.expected))
            }
        };
        if let Some((kind, seq)) = reply {
            self.send_transport_ack(me, frame, kind, seq, ctx);
        }
    }

    /// Queues an ACK or NACK for `about`'s flow towards its sender, in the flow's class.
    fn send_transport_ack(
        &mut self,
        me: NodeIdx,
        about: &Frame,
        kind: Payload,
        seq: u32,
        ctx: &mut Ctx,
    ) {
        let bytes = self.transports.as_ref().map_or(64, |t| t.roce.ack_bytes);
        let counter = if kind == Payload::Ack {
            ControlKind::Ack
        } else {
            ControlKind::Nack
        };
        ctx.counters.control(counter, bytes);
        let to = about.src;
        let mut ack = Frame::control(kind, self.id, to, to, bytes, ctx.q.now());
        ack.flow_id = about.flow_id;
        ack.seq = seq;
        ack.priority = about.priority;
        let slot = self.slot_of(to, ctx);
        let voq = &mut self.voqs[slot as usize];
        if !voq.has_work() {
            voq.priority = ack.priority;
        }
        voq.own_frames.push_back(ack);
        self.add_to_ring(slot);
        self.try_transmit(me, ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::Scheme;
    use crate::flows::FlowTable;
    use crate::net::link_loss::LinkLoss;
    use crate::net::Node;
    use crate::rng::{stream, StreamKind};
    use crate::scenario::Transport;
    use crate::testkit::TestNet;
    use crate::traffic::flows::FlowRow;

    /// What crossed the link from `node`: (payload, seq) of each frame, in arrival order.
    type Seen = Vec<(Payload, u32)>;

    /// Host a sends one roce flow of 5 full frames to b (10 Gb/s, 1 us); a's link loses the
    /// first transmission of packet 1. The test kit records every frame that reaches the far
    /// end of each link (lost ones too: they are lost on arrival).
    #[test]
    fn go_back_n_resends_from_the_nacked_packet_and_state_goes_with_the_flow() {
        let mut tn = TestNet::two_hosts(Scheme::None);
        tn.net.flows = FlowTable::new(vec![FlowRow {
            start_s: 0.0,
            src: 0,
            dst: 1,
            size_bytes: 5 * 1500,
            priority: 0,
            frame_bytes: 1500,
            transport: Transport::Roce,
        }]);
        for node in 0..2 {
            tn.host(node).transports = Some(Box::new(Transports::new(RoceParams::default())));
        }
        let mut loss = LinkLoss::new(0.0, stream(1, StreamKind::Misc, 0));
        loss.drop_once(0, 1);
        tn.host(0).port.loss = Some(Box::new(loss));
        tn.at(SimTime::ZERO, |net| {
            net.flows.started = 1;
            let (nodes, mut ctx) = net.ctx();
            if let Node::Host(h) = &mut nodes[0] {
                h.start_flow(0, 0, 1, &mut ctx);
            }
        });
        let (mut from_a, mut from_b): (Seen, Seen) = (Vec::new(), Vec::new());
        tn.run_until(SimTime::from_micros(100), |net, ev| {
            if let EventKind::Arrive { node, port } = *ev {
                let f = net.nodes[node as usize].ports()[port as usize]
                    .pipe_head()
                    .expect("an arrival has a frame");
                let seen = if node == 0 { &mut from_a } else { &mut from_b };
                seen.push((f.payload, f.seq));
            }
        });
        let psns: Vec<u32> = from_a.iter().map(|&(_, s)| s).collect();
        // Packet 2's arrival makes the NACK for 1; it is back at a (about 5.6 us) after a
        // started packet 4 (4.8 us): a goes back to 1 and sends 1..4 again.
        assert_eq!(psns, [0, 1, 2, 3, 4, 1, 2, 3, 4]);
        assert!(from_a.iter().all(|(p, _)| *p == Payload::Data));
        let ack = |s| (Payload::Ack, s);
        let want = [ack(1), (Payload::Nack, 1), ack(2), ack(3), ack(4), ack(5)];
        assert_eq!(from_b, want);
        let f = &tn.net.flows.flows[0];
        assert_eq!(f.delivered_bytes, 5 * 1500);
        assert_eq!(f.retransmitted_frames, 4);
        assert!(f.end.is_some() && f.sender_end > f.end);
        // Per-flow state lives only while the flow is active.
        for node in 0..2 {
            let tp = tn.host(node).transports.as_ref().expect("made above");
            assert_eq!(tp.active(), (0, 0));
        }
    }
}
