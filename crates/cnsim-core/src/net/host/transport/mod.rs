//! The host's transport room: per-flow (queue pair) state of the flows that use a transport,
//! kept only while a flow is active (docs/transport.md). Each transport is a pair of pure state
//! machines in its own file, a sender and a receiver, that take what arrived and say what to
//! do; this file is the glue that makes their frames and timer events:
//!
//! - `roce.rs`: RoCEv2 reliable connection with go-back-N (the DCQCN and IRN papers' model).
//! - `irn.rs`: IRN's selective repeat, RTO_low / RTO_high and BDP cap (SIGCOMM 2018).
//! - `tcp.rs`: TCP's loss recovery (NewReno, optional SACK, RTO, delayed ACKs), with
//!   `newreno.rs` its default congestion window, which the glue holds and gates it on.
//!
//! The glue: a sender's frames are cut when the NIC serves the flow's VOQ, at the rate the NIC
//! and its limiter allow; an ACK or NACK goes to the sender's state machine; a lazy
//! retransmission timer per flow (`rto_s` without ACK progress); the receiver's answer is an
//! ACK or NACK frame on the reverse path, queued in the receiving host's VOQ towards the
//! sender (unpaced, like a scheme's probe), then queued, paused and dropped in the switches
//! like data. Nothing here names a scheme.

mod app;
mod irn;
mod newreno;
mod roce;
mod tcp;

use rustc_hash::FxHashMap;

use super::voq::voq_key;
use super::Host;
use crate::cc::{AckEvent, FlowStart, LossSignal, SenderCc};
use crate::engine::{EventKind, NodeIdx};
use crate::flows::FlowState;
use crate::net::frame::{AckFields, FlowId, Frame, HostId, Payload};
use crate::net::telemetry::TelemetrySlot;
use crate::net::Ctx;
use crate::scenario::{IrnParams, RoceParams, TcpParams, Transport};
use crate::stats::ControlKind;
use crate::time::{serialization_time, SimTime};

/// A host's transported flows: the sender's and the receiver's halves, and the parameters.
pub(crate) struct Transports {
    pub(crate) roce: RoceParams,
    rto: SimTime,
    tcp: TcpParams,
    tcp_rto: tcp::RtoBounds,
    delayed_ack: SimTime,
    pub(crate) irn: IrnParams,
    sending: FxHashMap<FlowId, Sending>,
    receiving: FxHashMap<FlowId, ReceiverQp>,
}

/// A flow's sender: its transport's state machine, its congestion controller, and the glue's
/// timer and VOQ bookkeeping.
struct Sending {
    tx: SenderQp,
    /// The flow's destination (probes name the controller `host->dst#flow`).
    dst: HostId,
    /// The scheme's controller of this flow (window, pacing), if the scheme has one.
    /// Boxed: the largest controller (HPCC's, with its last telemetry) is a few hundred bytes,
    /// which every transported flow would carry otherwise.
    cc: Option<Box<SenderCc>>,
    /// The flow's packet size (the window counts packets of it).
    mss_bytes: u32,
    /// The controller's pacing lets the next frame go at this time. Kept here, not only in
    /// the VOQ, which goes while the window holds the flow.
    paced_until: SimTime,
    /// The retransmission timer expires at this time unless ACKs move it (`SimTime::MAX`:
    /// off, before the first packet and while a long flow has everything acknowledged).
    deadline: SimTime,
    /// The time of the timer event in the queue (`SimTime::MAX`: none). The timer is lazy: an
    /// ACK moves `deadline` only, and the event, when it fires early, is set again.
    timer_at: SimTime,
    /// The flow's id is in its VOQ's list of flows with something to send.
    in_voq: bool,
}

/// The sender's state machine of each transport.
#[derive(Clone, Debug)]
enum SenderQp {
    GoBackN(roce::GoBackN),
    /// Boxed: IRN's scoreboard would make every flow's entry as large.
    Irn(Box<irn::SelectiveRepeat>),
    /// Boxed: a TCP sender (its SACK scoreboard, RTO and window) is larger than RoCE's.
    Tcp(Box<TcpQp>),
}

/// A TCP flow's sender and the congestion controller whose window gates it: NewReno, TCP's
/// default, unless the scheme has a sender controller of its own (`Sending::cc`).
#[derive(Clone, Debug)]
struct TcpQp {
    tx: tcp::TcpSender,
    cc: Option<newreno::NewReno>,
}

/// The receiver's state machine of each transport.
#[derive(Clone, Debug)]
enum ReceiverQp {
    InOrder(roce::InOrder),
    Irn(Box<irn::SackReceiver>),
    Tcp(Box<tcp::TcpReceiver>),
}

/// What a receiver did with a data packet, as the glue acts on it.
#[derive(Clone, Copy, Debug)]
struct Received {
    /// Packets `released_from..released_from + released` went to the application now, in
    /// order (an out-of-order buffer releases those the arriving packet unblocks).
    released_from: u32,
    released: u32,
    complete: bool,
    reply: Option<Reply>,
    /// Set the delayed-ACK timer for this time.
    arm_timer: Option<SimTime>,
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

impl RxOutcome {
    /// A packet that releases nothing to the application (held out of order, discarded, or
    /// a duplicate): the application still waits at `expected`.
    pub(crate) fn releasing_nothing(accepted: bool, expected: u32, reply: Option<Reply>) -> Self {
        RxOutcome {
            accepted,
            complete: false,
            reply,
            released_from: expected,
            released: 0,
        }
    }
}

impl SenderQp {
    fn for_flow(
        transport: Transport,
        packets: u32,
        tcp: &TcpParams,
        bounds: tcp::RtoBounds,
        irn: &IrnParams,
        own_window: bool,
    ) -> SenderQp {
        match transport {
            Transport::Tcp => SenderQp::Tcp(Box::new(TcpQp {
                tx: tcp::TcpSender::new(packets, tcp.sack, tcp.dupack_threshold, bounds),
                cc: own_window.then(|| newreno::NewReno::new(tcp.initial_cwnd_packets)),
            })),
            Transport::Irn => SenderQp::Irn(Box::new(irn::SelectiveRepeat::new(
                packets,
                irn::IrnConfig {
                    bdp_cap: irn.bdp_cap_packets.unwrap_or(u32::MAX),
                    rto_low_below: irn.rto_low_packets,
                    rto_low: SimTime::from_secs_f64(irn.rto_low_s),
                    rto_high: SimTime::from_secs_f64(irn.rto_high_s),
                },
            ))),
            _ => SenderQp::GoBackN(roce::GoBackN::new(packets)),
        }
    }

    fn next_packet(&mut self) -> Option<Sent> {
        match self {
            SenderQp::GoBackN(s) => s.next_packet(),
            SenderQp::Tcp(s) => s.tx.next_packet(),
            SenderQp::Irn(s) => s.next_packet(),
        }
    }

    /// `next_packet` would give a packet now. The transport's own window gate: TCP cuts a
    /// packet only while its packets in flight are fewer than NewReno's window (or a
    /// retransmission is due that no window gates).
    fn has_more(&self) -> bool {
        match self {
            SenderQp::GoBackN(s) => s.has_more(),
            SenderQp::Tcp(s) => {
                let window =
                    s.cc.as_ref()
                        .map_or(u32::MAX, newreno::NewReno::window_packets);
                s.tx.has_forced() || (s.tx.has_data() && s.tx.in_flight() < window)
            }
            SenderQp::Irn(s) => s.has_more(),
        }
    }

    /// A retransmission is due that no window gates: TCP's fast retransmit, IRN's selective
    /// retransmissions (a window over IRN gates its new packets only, as BDP-FC does:
    /// `irn.rs`, `has_retransmission`). Go-back-N rewinds instead, which empties its flight.
    fn has_forced(&self) -> bool {
        match self {
            SenderQp::GoBackN(_) => false,
            SenderQp::Irn(s) => s.has_retransmission(),
            SenderQp::Tcp(s) => s.tx.has_forced(),
        }
    }

    /// An ACK or NACK; `fields` and `now` give TCP its SACK block and RTT sample. The
    /// congestion controller hears what the sender found.
    fn on_ack(&mut self, ack: &AckSeen, fields: &AckFields, now: SimTime) -> AckOutcome {
        match self {
            SenderQp::GoBackN(s) => s.on_ack(ack),
            SenderQp::Tcp(s) => {
                let flight = s.tx.flight_size();
                let was_recovering = s.tx.in_recovery();
                let out = s.tx.on_ack(&tcp::TcpAck {
                    cumulative: ack.cumulative,
                    sacked: fields.sacked,
                    rtt: now.saturating_sub(fields.echo),
                });
                if let Some(cc) = s.cc.as_mut() {
                    if let Some(loss) = out.loss {
                        cc.on_loss(loss, flight);
                    } else if was_recovering && !s.tx.in_recovery() {
                        cc.on_recovery_end();
                    } else {
                        cc.on_ack(out.newly_acked);
                    }
                }
                out
            }
            SenderQp::Irn(s) => s.on_ack(ack),
        }
    }

    fn on_timeout(&mut self) {
        match self {
            SenderQp::GoBackN(s) => s.on_timeout(),
            SenderQp::Tcp(s) => {
                let flight = s.tx.flight_size();
                s.tx.on_timeout();
                if let Some(cc) = s.cc.as_mut() {
                    cc.on_loss(LossSignal::Timeout, flight);
                }
            }
            SenderQp::Irn(s) => s.on_timeout(),
        }
    }

    fn is_complete(&self) -> bool {
        match self {
            SenderQp::GoBackN(s) => s.is_complete(),
            SenderQp::Tcp(s) => s.tx.is_complete(),
            SenderQp::Irn(s) => s.is_complete(),
        }
    }

    /// The retransmission timeout now: RoCE's fixed one, TCP's from its RTT samples.
    fn rto(&self, fixed: SimTime) -> SimTime {
        match self {
            SenderQp::GoBackN(_) => fixed,
            SenderQp::Irn(s) => s.rto(),
            SenderQp::Tcp(s) => s.tx.rto(),
        }
    }

    /// Packets in flight as the window counts them.
    fn in_flight(&self) -> u32 {
        match self {
            SenderQp::GoBackN(s) => s.in_flight(),
            SenderQp::Irn(s) => s.in_flight(),
            SenderQp::Tcp(s) => s.tx.in_flight(),
        }
    }
}

impl Sending {
    /// The transport has a packet to send and the congestion window lets it go (a forced
    /// retransmission goes whatever the window).
    fn may_send(&self) -> bool {
        self.tx.has_forced() || (self.tx.has_more() && self.window_open())
    }

    fn window_open(&self) -> bool {
        let window = self.cc.as_deref().and_then(SenderCc::window_bytes);
        window.is_none_or(|w| (self.in_flight_bytes() as f64) < w)
    }

    fn in_flight_bytes(&self) -> u64 {
        self.tx.in_flight() as u64 * self.mss_bytes as u64
    }
}

impl From<RxOutcome> for Received {
    fn from(o: RxOutcome) -> Received {
        debug_assert!(
            o.accepted || o.released == 0,
            "a discarded packet releases nothing"
        );
        Received {
            released_from: o.released_from,
            released: o.released,
            complete: o.complete,
            reply: o.reply,
            arm_timer: None,
        }
    }
}

impl ReceiverQp {
    fn for_flow(transport: Transport) -> ReceiverQp {
        match transport {
            Transport::Tcp => ReceiverQp::Tcp(Box::new(tcp::TcpReceiver::new())),
            Transport::Irn => ReceiverQp::Irn(Box::default()),
            _ => ReceiverQp::InOrder(roce::InOrder::default()),
        }
    }

    /// Data packet `psn` (sent at `echo`) arrived at `now`; `acking` is RoCE's `ack_every`
    /// and TCP's delayed-ACK time.
    fn on_data(
        &mut self,
        psn: u32,
        packets: u32,
        acking: (u32, SimTime),
        echo: SimTime,
        now: SimTime,
    ) -> Received {
        match self {
            ReceiverQp::InOrder(r) => Received::from(r.on_data(psn, packets, acking.0)),
            ReceiverQp::Tcp(r) => {
                let o = r.on_data(psn, packets, echo, now, acking.1);
                Received {
                    released_from: psn,
                    released: o.released,
                    complete: o.complete,
                    reply: o.reply,
                    arm_timer: o.arm_timer,
                }
            }
            ReceiverQp::Irn(r) => Received::from(r.on_data(psn, packets, acking.0)),
        }
    }
}

/// A receiver's hold time as an ACK carries it, in whole nanoseconds (saturating at 4.3 s,
/// beyond any delayed-ACK time).
fn held_ns(held: SimTime) -> u32 {
    u32::try_from(held.0 / 1_000).unwrap_or(u32::MAX)
}

/// The packets a flow is cut into (a long flow's application still writing: more than it
/// can send), and the bytes of packet `psn`, and of packets `psn..psn + count`.
fn packets(f: &FlowState) -> u32 {
    f.packets()
}

fn packet_bytes(f: &FlowState, psn: u32) -> u32 {
    let offset = psn as u64 * f.row.frame_bytes as u64;
    (f.row.size_bytes - offset).min(f.row.frame_bytes as u64) as u32
}

fn packets_bytes(f: &FlowState, psn: u32, count: u32) -> u32 {
    let mss = f.row.frame_bytes as u64;
    let end = ((psn + count) as u64 * mss).min(f.row.size_bytes);
    (end - psn as u64 * mss) as u32
}

impl Transports {
    pub(crate) fn new(roce: RoceParams) -> Transports {
        Transports {
            roce,
            rto: SimTime::from_secs_f64(roce.rto_s),
            tcp: TcpParams::default(),
            tcp_rto: tcp_rto(&TcpParams::default()),
            delayed_ack: SimTime::ZERO,
            irn: IrnParams::default(),
            sending: FxHashMap::default(),
            receiving: FxHashMap::default(),
        }
    }

    /// With TCP's parameters (the defaults otherwise).
    pub(crate) fn with_tcp(mut self, tcp: TcpParams) -> Transports {
        self.tcp = tcp;
        self.tcp_rto = tcp_rto(&tcp);
        self.delayed_ack = SimTime::from_secs_f64(tcp.delayed_ack_s);
        self
    }

    /// With IRN's parameters (its BDP cap resolved).
    pub(crate) fn with_irn(mut self, irn: IrnParams) -> Transports {
        self.irn = irn;
        self
    }

    /// The receiver's ACK policy (ACK every this many in-order packets; TCP's delayed ACKs
    /// are its own) and the ACK/NACK size of a flow of `transport`.
    fn acks(&self, transport: Transport) -> (u32, u32) {
        match transport {
            Transport::Tcp => (1, self.tcp.ack_bytes),
            Transport::Irn => (self.irn.ack_every, self.irn.ack_bytes),
            _ => (self.roce.ack_every, self.roce.ack_bytes),
        }
    }

    /// Flows with sender or receiver state here (the memory the room holds).
    /// Each sending flow's congestion controller, in flow order: (flow, destination, window
    /// in bytes, pacing rate), for the probes (`cc_window_bytes`, `cc_rate_bps`).
    pub(crate) fn controllers(&self) -> Vec<(FlowId, HostId, Option<f64>, Option<f64>)> {
        let mut out: Vec<_> = (self.sending.iter())
            .filter_map(|(&id, qp)| {
                let cc = qp.cc.as_deref()?;
                Some((id, qp.dst, cc.window_bytes(), cc.pacing_bps()))
            })
            .collect();
        out.sort_unstable_by_key(|c| c.0);
        out
    }

    /// Flow `id`'s congestion controller while it sends.
    #[cfg(test)]
    pub(crate) fn controller(&self, id: FlowId) -> Option<&SenderCc> {
        self.sending.get(&id)?.cc.as_deref()
    }

    #[cfg(test)]
    pub(crate) fn active(&self) -> (usize, usize) {
        (self.sending.len(), self.receiving.len())
    }
}

fn tcp_rto(p: &TcpParams) -> tcp::RtoBounds {
    tcp::RtoBounds {
        initial: SimTime::from_secs_f64(p.initial_rto_s),
        min: SimTime::from_secs_f64(p.min_rto_s),
        max: SimTime::from_secs_f64(p.max_rto_s),
    }
}

/// The next frame of transported flow `id`.
pub(super) struct NextFrame {
    pub(super) bytes: u32,
    pub(super) psn: u32,
    /// Nothing may be sent after it now (all sent, or the window is full).
    pub(super) finished: bool,
    /// The flow's congestion controller paces it: its next frame may go at this time.
    pub(super) paced_until: Option<SimTime>,
}

/// The next frame of transported flow `id`, sent by a host of link rate `line_rate_bps`.
/// Counts a retransmission against the flow, and arms the timer on the first send. Out of
/// line, so the NIC's frame cutting stays as small as without a transport.
#[inline(never)]
pub(super) fn next_frame(
    tp: &mut Transports,
    me: NodeIdx,
    id: FlowId,
    line_rate_bps: f64,
    ctx: &mut Ctx,
) -> NextFrame {
    let now = ctx.q.now();
    let f = &mut ctx.flows.flows[id as usize];
    let n = f.sendable_packets();
    let transport = f.row.transport;
    let (tcp, bounds, irn) = (&tp.tcp, tp.tcp_rto, &tp.irn);
    let qp = tp.sending.entry(id).or_insert_with(|| {
        let start = FlowStart {
            line_rate_bps,
            mss_bytes: f.row.frame_bytes,
            size_bytes: f.row.size_bytes,
            now,
            hops: f.path_switches.into(),
        };
        // The scheme's controller, if it has one, replaces the transport's own window.
        let cc = SenderCc::new(&ctx.scheme, &start).map(Box::new);
        Sending {
            tx: SenderQp::for_flow(transport, n, tcp, bounds, irn, cc.is_none()),
            dst: f.row.dst,
            cc,
            mss_bytes: f.row.frame_bytes,
            paced_until: SimTime::ZERO,
            deadline: SimTime::MAX,
            timer_at: SimTime::MAX,
            in_voq: true,
        }
    });
    let sent = qp
        .tx
        .next_packet()
        .expect("a flow is in its VOQ only while it has a packet to send");
    f.on_taken(sent.psn);
    let bytes = packet_bytes(f, sent.psn);
    if sent.retransmission {
        f.retransmitted_bytes += bytes as u64;
        f.retransmitted_frames += 1;
    }
    let finished = !qp.may_send();
    qp.in_voq = !finished;
    if qp.deadline == SimTime::MAX {
        // The timer is off (the flow's first packet, or a long flow's after all it had
        // written was acknowledged): start it (RFC 6298 5.1); an event already queued for an
        // earlier time finds the deadline later and waits for it.
        qp.deadline = now + qp.tx.rto(tp.rto);
        if qp.deadline < qp.timer_at {
            qp.timer_at = qp.deadline;
            let ev = EventKind::TransportTimer { node: me, flow: id };
            ctx.q.schedule(qp.deadline, ev);
        }
    }
    let pacing = qp.cc.as_deref().and_then(SenderCc::pacing_bps);
    if let Some(rate) = pacing {
        qp.paced_until = now + serialization_time(bytes as u64, rate);
    }
    NextFrame {
        bytes,
        psn: sent.psn,
        finished,
        paced_until: pacing.map(|_| qp.paced_until),
    }
}

impl Host {
    // ---- the sender's half ----

    /// An ACK or NACK for one of this host's flows arrived. Out of line, as
    /// `receive_transported`: the host's `receive` stays as small as without a transport.
    #[inline(never)]
    pub(super) fn receive_transport_ack(&mut self, me: NodeIdx, frame: Frame, ctx: &mut Ctx) {
        let id = frame.flow_id;
        let telemetry = ctx.telemetry.take(frame.payload.telemetry());
        let Some(tp) = self.transports.as_deref_mut() else {
            return;
        };
        let Some(qp) = tp.sending.get_mut(&id) else {
            return; // the flow has completed: a late ACK
        };
        let (kind, fields) = match frame.payload {
            Payload::Ack(fields) => (ReplyKind::Ack, fields),
            Payload::Nack(fields) => (ReplyKind::Nack, fields),
            _ => return,
        };
        let seen = AckSeen {
            kind,
            cumulative: frame.seq,
            sacked: fields.sacked,
        };
        let now = ctx.q.now();
        let outcome = qp.tx.on_ack(&seen, &fields, now);
        if outcome.newly_acked > 0 {
            qp.deadline = now + qp.tx.rto(tp.rto);
            if qp.deadline < qp.timer_at {
                // The RTO shrank (TCP's first RTT sample replaces its initial RTO): a new
                // event for the earlier deadline; the later one finds itself stale.
                qp.timer_at = qp.deadline;
                let ev = EventKind::TransportTimer { node: me, flow: id };
                ctx.q.schedule(qp.deadline, ev);
            }
        }
        let in_flight_bytes = qp.in_flight_bytes();
        if let Some(cc) = qp.cc.as_deref_mut() {
            let size = ctx.flows.flows[id as usize].row.size_bytes;
            cc.on_ack(&AckEvent {
                now,
                newly_acked_bytes: (outcome.newly_acked as u64 * qp.mss_bytes as u64).min(size),
                rtt: now.saturating_sub(fields.echo),
                endpoint_delay: SimTime(u64::from(fields.held_ns) * 1_000),
                ece: fields.ece,
                in_flight_bytes,
                telemetry,
            });
            if let Some(loss) = outcome.loss {
                cc.on_loss(loss, now);
            }
        }
        if qp.tx.in_flight() == 0 {
            // Nothing outstanding: what is left waits for the window, the pacing or a rate
            // limiter, not for an ACK, so the timer is off (RFC 6298 5.2; the IB spec's
            // transport timer runs while responses are expected) until the next packet goes.
            qp.deadline = SimTime::MAX;
        }
        // Complete, unless a long flow's application writes more (`app.rs`): its timer is
        // off meanwhile, as nothing is outstanding.
        if qp.tx.is_complete() && !ctx.flows.flows[id as usize].writing {
            tp.sending.remove(&id);
            ctx.flows.flows[id as usize].sender_end = Some(now);
            self.close_queue_pair(id, frame.src);
            return;
        }
        let may_send = qp.may_send();
        if may_send && !qp.in_voq {
            qp.in_voq = true;
            self.requeue_flow(me, id, frame.src, ctx);
        } else if !may_send && qp.in_voq {
            // A window that closed (a loss halved it): out of the VOQ until ACKs open it.
            qp.in_voq = false;
            self.hold_flow(id, frame.src);
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
        if qp.deadline == SimTime::MAX {
            // The timer is off (a long flow waiting for its application, `app.rs`): its next
            // packet starts it again.
            qp.timer_at = SimTime::MAX;
            return;
        }
        let mut requeue = false;
        if now < qp.deadline {
            qp.timer_at = qp.deadline;
        } else {
            // Timeout: go back to the first unacknowledged packet.
            ctx.flows.flows[id as usize].timeouts += 1;
            qp.tx.on_timeout();
            if let Some(cc) = qp.cc.as_deref_mut() {
                cc.on_loss(LossSignal::Timeout, now);
            }
            qp.deadline = now + qp.tx.rto(rto);
            qp.timer_at = qp.deadline;
            requeue = !qp.in_voq && qp.may_send();
            qp.in_voq |= requeue;
        }
        let at = qp.timer_at;
        ctx.q
            .schedule(at, EventKind::TransportTimer { node: me, flow: id });
        if requeue {
            let dst = ctx.flows.flows[id as usize].row.dst;
            self.requeue_flow(me, id, dst, ctx);
        }
    }

    /// Flow `id` has packets to send again: back into its queue pair's VOQ (made again if it
    /// went while the window held the flow, with the pacing where it was).
    fn requeue_flow(&mut self, me: NodeIdx, id: FlowId, dst: HostId, ctx: &mut Ctx) {
        let paced_until = self.transports.as_ref().and_then(|tp| {
            let qp = tp.sending.get(&id)?;
            qp.cc.as_deref()?.pacing_bps()?;
            Some(qp.paced_until)
        });
        let slot = self.slot_for(dst, id, ctx);
        let voq = &mut self.voqs[slot as usize];
        match paced_until {
            Some(at) => {
                voq.paced = true;
                voq.next_allowed = voq.next_allowed.max(at);
            }
            // The controller paces no more (Swift's window is back above a packet): the time
            // its last paced frame set no longer holds the flow.
            None => voq.paced = false,
        }
        voq.priority = ctx.flows.flows[id as usize].row.priority;
        voq.flows.push_back(id);
        self.add_to_ring(slot);
        self.try_transmit(me, ctx);
    }

    /// The window holds flow `id` (to `dst`): out of its queue pair's VOQ until an ACK opens
    /// the window.
    fn hold_flow(&mut self, id: FlowId, dst: HostId) {
        if let Some(&slot) = self.voq_slot.get(&voq_key(dst, id)) {
            self.voqs[slot as usize].flows.retain(|&f| f != id);
        }
    }

    /// The flow's sender completed: its queue pair's VOQ goes, with its rate limiter (the RP
    /// of a queue pair lives as long as the queue pair), at once or when the NIC's round
    /// robin next finds it without work. It may still list the flow (an ACK overtook a
    /// go-back).
    fn close_queue_pair(&mut self, id: FlowId, dst: HostId) {
        if let Some(&slot) = self.voq_slot.get(&voq_key(dst, id)) {
            let voq = &mut self.voqs[slot as usize];
            voq.flows.clear();
            voq.limiter = None;
            voq.limiter_settled = false;
            voq.timer_pending = None;
            self.release_if_idle(slot);
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
        let n = packets(f);
        // A delayed ACK flushed by a change of CE mark (TCP: DCTCP's echo state machine).
        let mut flush = None;
        let reply = if f.end.is_some() {
            // Every byte is held already: tell the sender again (its last ACK was lost).
            Some(Reply::ack(n, frame.seq))
        } else {
            let transport = f.row.transport;
            let (ack_every, delay) = (tp.acks(transport).0, tp.delayed_ack);
            let rx = tp
                .receiving
                .entry(id)
                .or_insert_with(|| ReceiverQp::for_flow(transport));
            if let ReceiverQp::Tcp(r) = rx {
                flush = r.on_ce(frame.ecn_ce, now);
            }
            let outcome = rx.on_data(frame.seq, n, (ack_every, delay), frame.born, now);
            if outcome.complete {
                tp.receiving.remove(&id);
            }
            if let Some(at) = outcome.arm_timer {
                ctx.q
                    .schedule(at, EventKind::TransportAckTimer { node: me, flow: id });
            }
            if outcome.released > 0 {
                let bytes = packets_bytes(f, outcome.released_from, outcome.released);
                ctx.flows.on_delivered(id, bytes, now);
            }
            outcome.reply
        };
        if let Some(pending) = flush {
            let fields = AckFields {
                echo: pending.echo,
                sacked: pending.reply.sacked,
                ece: !frame.ecn_ce,
                telemetry: TelemetrySlot::NONE,
                held_ns: held_ns(pending.held),
            };
            let (to, priority) = (frame.src, frame.priority);
            self.queue_transport_ack(me, id, to, priority, fields, pending.reply, ctx);
        }
        match reply {
            Some(reply) => self.send_transport_ack(me, frame, reply, ctx),
            // Unanswered (an ACK for several packets, a delayed ACK): its telemetry goes.
            None => ctx.telemetry.release(frame.payload.telemetry()),
        }
    }

    /// The delayed-ACK timer of TCP flow `id` at its receiver
    /// (`EventKind::TransportAckTimer`): the pending ACK if it is due, or the timer again.
    #[inline(never)]
    pub(crate) fn on_transport_ack_timer(&mut self, me: NodeIdx, id: FlowId, ctx: &mut Ctx) {
        let now = ctx.q.now();
        let Some(tp) = self.transports.as_deref_mut() else {
            return;
        };
        let Some(ReceiverQp::Tcp(rx)) = tp.receiving.get_mut(&id) else {
            return; // completed since (its last packet was ACKed at once)
        };
        let ece = rx.ce_state();
        let (due, again) = rx.on_ack_timer(now);
        if let Some(at) = again {
            ctx.q
                .schedule(at, EventKind::TransportAckTimer { node: me, flow: id });
        }
        if let Some(pending) = due {
            let row = &ctx.flows.flows[id as usize].row;
            let (to, priority) = (row.src, row.priority);
            let fields = AckFields {
                echo: pending.echo,
                sacked: pending.reply.sacked,
                ece,
                telemetry: TelemetrySlot::NONE,
                held_ns: held_ns(pending.held),
            };
            self.queue_transport_ack(me, id, to, priority, fields, pending.reply, ctx);
        }
    }

    /// Queues an ACK or NACK for `about`'s flow towards its sender, in the flow's class: it
    /// echoes the data frame's send time (an RTT sample) and its ECN mark.
    fn send_transport_ack(&mut self, me: NodeIdx, about: &Frame, reply: Reply, ctx: &mut Ctx) {
        let fields = AckFields {
            echo: about.born,
            sacked: reply.sacked,
            ece: about.ecn_ce,
            // The ACK takes the data frame's telemetry over.
            telemetry: about.payload.telemetry(),
            held_ns: 0,
        };
        let (id, to, priority) = (about.flow_id, about.src, about.priority);
        self.queue_transport_ack(me, id, to, priority, fields, reply, ctx);
    }

    /// Queues an ACK or NACK of flow `id` towards its sender `to`, in class `priority`.
    #[allow(clippy::too_many_arguments)]
    fn queue_transport_ack(
        &mut self,
        me: NodeIdx,
        id: FlowId,
        to: HostId,
        priority: u8,
        fields: AckFields,
        reply: Reply,
        ctx: &mut Ctx,
    ) {
        let transport = ctx.flows.flows[id as usize].row.transport;
        let bytes = self.transports.as_ref().map_or(64, |t| t.acks(transport).1);
        let (payload, counter) = match reply.kind {
            ReplyKind::Ack => (Payload::Ack(fields), ControlKind::Ack),
            ReplyKind::Nack => (Payload::Nack(fields), ControlKind::Nack),
        };
        ctx.counters.control(counter, bytes);
        let mut ack = Frame::control(payload, self.id, to, to, bytes, ctx.q.now());
        ack.flow_id = id;
        ack.seq = reply.cumulative;
        ack.priority = priority;
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
pub(super) mod tests {
    use super::*;
    use crate::cc::Scheme;
    use crate::flows::FlowTable;
    use crate::net::link_loss::LinkLoss;
    use crate::net::Node;
    use crate::rng::{stream, StreamKind};
    use crate::scenario::{TcpParams, Transport};
    use crate::testkit::TestNet;
    use crate::traffic::flows::FlowRow;

    /// What crossed a link, in arrival order: (reply kind, or None for data; seq; the ACK's
    /// `sacked`, 0 for data).
    pub(in crate::net::host::transport) type Seen = Vec<(Option<ReplyKind>, u32, u32)>;

    /// Host a sends one flow of `packets` full 1500 B frames over `transport` to b (10 Gb/s,
    /// 1 us), both hosts with the room `room` makes; a's link loses the first transmission of
    /// packet `lost`. The test kit records every frame that reaches the far end of each link
    /// (lost ones too: they are lost on arrival) until `until_us`: (the net, from a, from b).
    pub(in crate::net::host::transport) fn single_drop(
        transport: Transport,
        packets: u64,
        lost: u32,
        room: impl Fn() -> Transports,
        until_us: u64,
    ) -> (TestNet, Seen, Seen) {
        let mut tn = TestNet::two_hosts(Scheme::None);
        tn.net.ctx.flows = FlowTable::new(vec![FlowRow {
            start_s: 0.0,
            src: 0,
            dst: 1,
            size_bytes: packets * 1500,
            priority: 0,
            frame_bytes: 1500,
            transport,
            writes: None,
        }]);
        for node in 0..2 {
            tn.host(node).transports = Some(Box::new(room()));
        }
        let mut loss = LinkLoss::new(0.0, stream(1, StreamKind::Misc, 0));
        loss.drop_once(0, lost);
        tn.host(0).port.loss = Some(Box::new(loss));
        tn.at(SimTime::ZERO, |net| {
            net.ctx.flows.started = 1;
            let (nodes, ctx) = net.ctx();
            if let Node::Host(h) = &mut nodes[0] {
                h.start_flow(0, 0, 1, ctx);
            }
        });
        let (mut from_a, mut from_b): (Seen, Seen) = (Vec::new(), Vec::new());
        tn.run_until(SimTime::from_micros(until_us), |net, ev| {
            if let EventKind::Arrive {
                node, port, slot, ..
            } = *ev
            {
                let head = net.nodes[node as usize].ports()[port as usize].pipe_head();
                assert_eq!(head, Some(slot), "an arrival has a frame");
                let f = net.ctx.frames.get(slot);
                let (kind, sacked) = match f.payload {
                    Payload::Ack(a) => (Some(ReplyKind::Ack), a.sacked),
                    Payload::Nack(a) => (Some(ReplyKind::Nack), a.sacked),
                    _ => (None, 0),
                };
                let seen = if node == 0 { &mut from_a } else { &mut from_b };
                seen.push((kind, f.seq, sacked));
            }
        });
        (tn, from_a, from_b)
    }

    /// (kind, seq) of what crossed a link: ACKs compared by kind and PSN alone.
    fn kinds(seen: &Seen) -> Vec<(Option<ReplyKind>, u32)> {
        seen.iter().map(|&(k, s, _)| (k, s)).collect()
    }

    /// Host a sends one roce flow of 5 full frames to b; a's link loses packet 1's first
    /// transmission (`single_drop`).
    #[test]
    fn go_back_n_resends_from_the_nacked_packet_and_state_goes_with_the_flow() {
        let roce = || Transports::new(RoceParams::default());
        let (mut tn, from_a, from_b) = single_drop(Transport::Roce, 5, 1, roce, 100);
        let (from_a, from_b) = (kinds(&from_a), kinds(&from_b));
        let psns: Vec<u32> = from_a.iter().map(|&(_, s)| s).collect();
        // Packet 2's arrival makes the NACK for 1; it is back at a (about 5.6 us) after a
        // started packet 4 (4.8 us): a goes back to 1 and sends 1..4 again.
        assert_eq!(psns, [0, 1, 2, 3, 4, 1, 2, 3, 4]);
        assert!(from_a.iter().all(|(k, _)| k.is_none()));
        let ack = |s| (Some(ReplyKind::Ack), s);
        let nack = |s| (Some(ReplyKind::Nack), s);
        let want = [ack(1), nack(1), ack(2), ack(3), ack(4), ack(5)];
        assert_eq!(from_b, want);
        let f = &tn.net.ctx.flows.flows[0];
        assert_eq!(f.delivered_bytes, 5 * 1500);
        assert_eq!(f.retransmitted_frames, 4);
        assert!(f.end.is_some() && f.sender_end > f.end);
        // Per-flow state lives only while the flow is active.
        for node in 0..2 {
            let tp = tn.host(node).transports.as_ref().expect("made above");
            assert_eq!(tp.active(), (0, 0));
        }
    }

    /// Host a sends one tcp flow of 20 full frames to b (10 Gb/s, 1 us: an RTT of 3.25 us,
    /// under 3 frame times, so the initial window of 10 never stalls it); no SACK: NewReno
    /// from duplicate ACKs alone; a's link loses the first transmission of packet 5.
    /// Packets 6..10 each bring a duplicate ACK 5. The third (from 8) arrives at 12.85 us
    /// while a sends 10 (12.0-13.2 us): fast retransmit, ssthresh = cwnd = FlightSize / 2 =
    /// (11 - 5) / 2 = 3; packet 5 goes at once after 10 (forced). When it has left (14.4
    /// us), four duplicates are counted out of the pipe: 6 - 4 = 2 < 3, so 11 follows. ACK 11
    /// (5's) covers the recover point 11: recovery ends, cwnd = 3, above the 3-frame RTT.
    #[test]
    fn newreno_fast_recovery_on_a_single_drop() {
        let tcp = TcpParams {
            sack: false,
            ..TcpParams::default()
        };
        let room = || Transports::new(RoceParams::default()).with_tcp(tcp);
        let (mut tn, from_a, from_b) = single_drop(Transport::Tcp, 20, 5, room, 200);
        let (from_a, from_b) = (kinds(&from_a), kinds(&from_b));
        let psns: Vec<u32> = from_a.iter().map(|&(_, s)| s).collect();
        let mut want: Vec<u32> = (0..=10).collect();
        want.push(5);
        want.extend(11..20);
        assert_eq!(psns, want);
        let acks: Vec<u32> = from_b.iter().map(|&(_, s)| s).collect();
        let mut want = vec![1, 2, 3, 4, 5, 5, 5, 5, 5, 5];
        want.extend(11..=20);
        assert_eq!(acks, want);
        let f = &tn.net.ctx.flows.flows[0];
        assert_eq!((f.retransmitted_frames, f.timeouts), (1, 0));
        assert_eq!(f.delivered_bytes, 20 * 1500);
        for node in 0..2 {
            let tp = tn.host(node).transports.as_ref().expect("made above");
            assert_eq!(tp.active(), (0, 0));
        }
    }
}
