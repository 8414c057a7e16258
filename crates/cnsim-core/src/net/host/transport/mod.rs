//! The host's transport room: per-flow (queue pair) state of the flows that use a transport,
//! kept only while a flow is active (docs/transport.md). Each transport is a pair of pure state
//! machines in its own file, a sender and a receiver, that take what arrived and say what to
//! do; this file is the glue that makes their frames and timer events:
//!
//! - `roce.rs`: RoCEv2 reliable connection with go-back-N (the DCQCN and IRN papers' model).
//! - `irn.rs`: IRN's selective repeat, RTO_low / RTO_high and BDP cap (SIGCOMM 2018).
//!
//! The glue: a sender's frames are cut when the NIC serves the flow's VOQ, at the rate the NIC
//! and its limiter allow; an ACK or NACK goes to the sender's state machine; a lazy
//! retransmission timer per flow (`rto_s` without ACK progress); the receiver's answer is an
//! ACK or NACK frame on the reverse path, queued in the receiving host's VOQ towards the
//! sender (unpaced, like a scheme's probe), then queued, paused and dropped in the switches
//! like data. Nothing here names a scheme.

mod irn;
mod roce;

use rustc_hash::FxHashMap;

use super::Host;
use crate::engine::{EventKind, NodeIdx};
use crate::flows::FlowState;
use crate::net::frame::{AckFields, FlowId, Frame, HostId, Payload};
use crate::net::Ctx;
use crate::scenario::{FlowService, IrnParams, RoceParams, Transport};
use crate::stats::ControlKind;
use crate::time::SimTime;

/// A host's transported flows: the sender's and the receiver's halves, and the parameters.
pub(crate) struct Transports {
    pub(crate) roce: RoceParams,
    rto: SimTime,
    pub(crate) irn: IrnParams,
    sending: FxHashMap<FlowId, Sending>,
    receiving: FxHashMap<FlowId, ReceiverQp>,
}

/// A flow's sender: its transport's state machine and the glue's timer and VOQ bookkeeping.
#[derive(Clone, Debug)]
struct Sending {
    tx: SenderQp,
    /// The retransmission timer expires at this time unless ACKs move it.
    deadline: SimTime,
    /// The time of the timer event in the queue (`SimTime::MAX`: none). The timer is lazy: an
    /// ACK moves `deadline` only, and the event, when it fires early, is set again.
    timer_at: SimTime,
    /// The flow's id is in its VOQ's list of flows with something to send.
    in_voq: bool,
}

/// The sender's state machine of each transport (IRN's boxed: its scoreboard would make
/// every flow's entry as large).
#[derive(Clone, Debug)]
enum SenderQp {
    GoBackN(roce::GoBackN),
    Irn(Box<irn::SelectiveRepeat>),
}

/// The receiver's state machine of each transport.
#[derive(Clone, Debug)]
enum ReceiverQp {
    InOrder(roce::InOrder),
    Irn(Box<irn::SackReceiver>),
}

/// A packet the sender sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Sent {
    pub(crate) psn: u32,
    /// It was sent before.
    pub(crate) retransmission: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplyKind {
    Ack,
    Nack,
}

/// An ACK or NACK as the sender's state machine reads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckSeen {
    pub(crate) kind: ReplyKind,
    /// Every packet before this one is held in order at the receiver.
    pub(crate) cumulative: u32,
    /// The data packet that triggered it (`AckFields::sacked`): held out of order at the
    /// receiver if this is a NACK (IRN's selective ack).
    pub(crate) sacked: u32,
}

/// A loss the sender inferred (the congestion controller hears it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LossSignal {
    /// The receiver reported a gap (RoCE's and IRN's NACK).
    Nack,
}

/// What an ACK or NACK did at the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct AckOutcome {
    /// Packets newly acknowledged cumulatively (the timer restarts when > 0).
    pub(crate) newly_acked: u32,
    /// Packets newly known to have arrived out of order (selective acks).
    pub(crate) newly_sacked: u32,
    /// A loss this reply revealed.
    pub(crate) loss: Option<LossSignal>,
}

/// The receiver's answer to a data packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Reply {
    pub(crate) kind: ReplyKind,
    pub(crate) cumulative: u32,
    /// The packet that made it.
    pub(crate) sacked: u32,
}

impl Reply {
    pub(crate) fn ack(cumulative: u32, sacked: u32) -> Reply {
        Reply {
            kind: ReplyKind::Ack,
            cumulative,
            sacked,
        }
    }

    pub(crate) fn nack(cumulative: u32, sacked: u32) -> Reply {
        Reply {
            kind: ReplyKind::Nack,
            cumulative,
            sacked,
        }
    }
}

/// What a receiver did with a data packet.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RxOutcome {
    /// The receiver took the packet (released it, or held it out of order); false: a
    /// duplicate or, for go-back-N, an out-of-order packet discarded.
    pub(crate) accepted: bool,
    /// The flow's every byte is now held: the receiver's state can go.
    pub(crate) complete: bool,
    pub(crate) reply: Option<Reply>,
    /// Packets `released_from..released_from + released` went to the application now (in
    /// order: an out-of-order buffer releases the packets a late one unblocks).
    pub(crate) released_from: u32,
    pub(crate) released: u32,
}

impl SenderQp {
    fn for_flow(transport: Transport, packets: u32, p: &IrnParams) -> SenderQp {
        match transport {
            Transport::Irn => SenderQp::Irn(Box::new(irn::SelectiveRepeat::new(
                packets,
                irn::IrnConfig {
                    bdp_cap: p.bdp_cap_packets.unwrap_or(u32::MAX),
                    rto_low_below: p.rto_low_packets,
                    rto_low: SimTime::from_secs_f64(p.rto_low_s),
                    rto_high: SimTime::from_secs_f64(p.rto_high_s),
                },
            ))),
            _ => SenderQp::GoBackN(roce::GoBackN::new(packets)),
        }
    }

    /// The retransmission timeout to arm now (`roce_rto`: roce's fixed one).
    fn rto(&self, roce_rto: SimTime) -> SimTime {
        match self {
            SenderQp::GoBackN(_) => roce_rto,
            SenderQp::Irn(s) => s.rto(),
        }
    }

    fn next_packet(&mut self) -> Option<Sent> {
        match self {
            SenderQp::GoBackN(s) => s.next_packet(),
            SenderQp::Irn(s) => s.next_packet(),
        }
    }

    fn has_more(&self) -> bool {
        match self {
            SenderQp::GoBackN(s) => s.has_more(),
            SenderQp::Irn(s) => s.has_more(),
        }
    }

    fn on_ack(&mut self, ack: &AckSeen) -> AckOutcome {
        match self {
            SenderQp::GoBackN(s) => s.on_ack(ack),
            SenderQp::Irn(s) => s.on_ack(ack),
        }
    }

    fn on_timeout(&mut self) {
        match self {
            SenderQp::GoBackN(s) => s.on_timeout(),
            SenderQp::Irn(s) => s.on_timeout(),
        }
    }

    fn is_complete(&self) -> bool {
        match self {
            SenderQp::GoBackN(s) => s.is_complete(),
            SenderQp::Irn(s) => s.is_complete(),
        }
    }
}

impl ReceiverQp {
    fn for_flow(transport: Transport) -> ReceiverQp {
        match transport {
            Transport::Irn => ReceiverQp::Irn(Box::default()),
            _ => ReceiverQp::InOrder(roce::InOrder::default()),
        }
    }

    fn on_data(&mut self, psn: u32, packets: u32, ack_every: u32) -> RxOutcome {
        match self {
            ReceiverQp::InOrder(r) => r.on_data(psn, packets, ack_every),
            ReceiverQp::Irn(r) => r.on_data(psn, packets, ack_every),
        }
    }
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
            irn: IrnParams::default(),
            sending: FxHashMap::default(),
            receiving: FxHashMap::default(),
        }
    }

    /// With IRN's parameters (its BDP cap resolved).
    pub(crate) fn with_irn(mut self, irn: IrnParams) -> Transports {
        self.irn = irn;
        self
    }

    /// The receiver's ACK policy and ACK/NACK size of a flow of `transport`.
    fn acks(&self, transport: Transport) -> (u32, u32) {
        match transport {
            Transport::Irn => (self.irn.ack_every, self.irn.ack_bytes),
            _ => (self.roce.ack_every, self.roce.ack_bytes),
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
    let transport = f.row.transport;
    let irn = &tp.irn;
    let qp = tp.sending.entry(id).or_insert_with(|| Sending {
        tx: SenderQp::for_flow(transport, n, irn),
        deadline: SimTime::MAX,
        timer_at: SimTime::MAX,
        in_voq: true,
    });
    let sent = qp
        .tx
        .next_packet()
        .expect("a flow is in its VOQ only while it has a packet to send");
    let bytes = packet_bytes(f, sent.psn);
    if sent.retransmission {
        f.retransmitted_bytes += bytes as u64;
        f.retransmitted_frames += 1;
    }
    let finished = !qp.tx.has_more();
    qp.in_voq = !finished;
    if qp.timer_at == SimTime::MAX {
        qp.deadline = now + qp.tx.rto(tp.rto);
        qp.timer_at = qp.deadline;
        let ev = EventKind::TransportTimer { node: me, flow: id };
        ctx.q.schedule(qp.deadline, ev);
    }
    (bytes, sent.psn, finished)
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
        let (kind, fields) = match frame.payload {
            Payload::Ack(a) => (ReplyKind::Ack, a),
            Payload::Nack(a) => (ReplyKind::Nack, a),
            _ => return,
        };
        let seen = AckSeen {
            kind,
            cumulative: frame.seq,
            sacked: fields.sacked,
        };
        let now = ctx.q.now();
        if qp.tx.on_ack(&seen).newly_acked > 0 {
            qp.deadline = now + qp.tx.rto(tp.rto);
        }
        if qp.tx.is_complete() {
            tp.sending.remove(&id);
            ctx.flows.flows[id as usize].sender_end = Some(now);
            self.forget_flow_in_voq(id, frame.src);
            return;
        }
        if qp.tx.has_more() && !qp.in_voq {
            qp.in_voq = true;
            self.requeue_flow(me, id, frame.src, ctx);
        } else if !qp.tx.has_more() && qp.in_voq {
            // An ACK made a pending retransmission needless and the window is full (IRN;
            // go-back-N never gets here): out of the VOQ until an ACK or timeout.
            qp.in_voq = false;
            self.forget_flow_in_voq(id, frame.src);
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
            qp.tx.on_timeout();
            qp.deadline = now + qp.tx.rto(rto);
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
        let f = &ctx.flows.flows[id as usize];
        let (ack_every, _) = tp.acks(f.row.transport);
        let n = packets(f);
        let reply = if f.end.is_some() {
            // Every byte is held already: tell the sender again (its last ACK was lost).
            Some(Reply::ack(n, frame.seq))
        } else {
            let transport = f.row.transport;
            let rx = tp
                .receiving
                .entry(id)
                .or_insert_with(|| ReceiverQp::for_flow(transport));
            let outcome = rx.on_data(frame.seq, n, ack_every);
            if outcome.complete {
                tp.receiving.remove(&id);
            }
            debug_assert!(outcome.accepted || outcome.released == 0);
            let from = outcome.released_from;
            for psn in from..from + outcome.released {
                let bytes = packet_bytes(&ctx.flows.flows[id as usize], psn);
                ctx.flows.on_delivered(id, bytes, now);
            }
            outcome.reply
        };
        if let Some(reply) = reply {
            self.send_transport_ack(me, frame, reply, ctx);
        }
    }

    /// Queues an ACK or NACK for `about`'s flow towards its sender, in the flow's class: it
    /// echoes the data frame's send time (an RTT sample) and its ECN mark.
    fn send_transport_ack(&mut self, me: NodeIdx, about: &Frame, reply: Reply, ctx: &mut Ctx) {
        let transport = ctx.flows.flows[about.flow_id as usize].row.transport;
        let bytes = self.transports.as_ref().map_or(64, |t| t.acks(transport).1);
        let fields = AckFields {
            echo: about.born,
            sacked: reply.sacked,
            ece: about.ecn_ce,
        };
        let (payload, counter) = match reply.kind {
            ReplyKind::Ack => (Payload::Ack(fields), ControlKind::Ack),
            ReplyKind::Nack => (Payload::Nack(fields), ControlKind::Nack),
        };
        ctx.counters.control(counter, bytes);
        let to = about.src;
        let mut ack = Frame::control(payload, self.id, to, to, bytes, ctx.q.now());
        ack.flow_id = about.flow_id;
        ack.seq = reply.cumulative;
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

    /// What crossed the link from `node`: (reply kind, seq) of each frame, in arrival order
    /// (None for data), so ACKs compare by kind and PSN alone.
    type Seen = Vec<(Option<ReplyKind>, u32)>;

    fn kind(p: &Payload) -> Option<ReplyKind> {
        match p {
            Payload::Ack(_) => Some(ReplyKind::Ack),
            Payload::Nack(_) => Some(ReplyKind::Nack),
            _ => None,
        }
    }

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
                seen.push((kind(&f.payload), f.seq));
            }
        });
        let psns: Vec<u32> = from_a.iter().map(|&(_, s)| s).collect();
        // Packet 2's arrival makes the NACK for 1; it is back at a (about 5.6 us) after a
        // started packet 4 (4.8 us): a goes back to 1 and sends 1..4 again.
        assert_eq!(psns, [0, 1, 2, 3, 4, 1, 2, 3, 4]);
        assert!(from_a.iter().all(|(k, _)| k.is_none()));
        let ack = |s| (Some(ReplyKind::Ack), s);
        let nack = |s| (Some(ReplyKind::Nack), s);
        let want = [ack(1), nack(1), ack(2), ack(3), ack(4), ack(5)];
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
