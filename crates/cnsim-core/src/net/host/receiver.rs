//! The receiving side: frames off the link (data, PAUSE/PFC from the peer, scheme messages),
//! the NP hook, the receiver (sink) served at its rate, and its PAUSE/PFC triggers.

use super::Host;
use std::collections::VecDeque;

use crate::cc::CcMsg;
use crate::engine::{EventKind, NodeIdx};
use crate::flow_control::{hysteresis, Lane};
use crate::net::frame::{Frame, Payload, NO_SEQ};
use crate::net::Ctx;
use crate::scenario::{Watermarks, N_CLASSES};
use crate::stats::DropPlace;
use crate::time::serialization_time;

/// PFC sent by a host's receive side (`[pfc] host_rx`): bytes per class in the receive queue
/// against static thresholds.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReceiverPfc {
    pub(crate) lossless_mask: u8,
    pub(crate) xoff_bytes: u64,
    pub(crate) xon_bytes: u64,
    pub(crate) quanta: u16,
    pub(crate) class_bytes: [u64; N_CLASSES],
    /// The most that can reach the receive queue after its XOFF is queued (the bound of
    /// `Headroom::auto_bytes` for the host's link): `rx_buffer_bytes` must exceed `xoff_bytes`
    /// by this for the class to be lossless. Reported, not enforced (`report/pfc.rs`).
    pub(crate) arriving_after_xoff_bytes: u64,
}

/// The sink: a FIFO served at `rate_bps` (None = absorbs at arrival).
#[derive(Default)]
pub(crate) struct Receiver {
    pub(crate) rate_bps: Option<f64>,
    pub(crate) queue: VecDeque<Frame>,
    pub(crate) bytes: u64,
    pub(crate) peak_bytes: u64,
    pub(crate) busy: bool,
    pub(crate) limit_bytes: Option<u64>,
    pub(crate) pause: Option<Watermarks>,
    pub(crate) pfc: Option<Box<ReceiverPfc>>,
    /// Frames dropped for want of room in the queue, per priority class (made at the first
    /// drop): the PFC summary reports a lossless class's (`report/pfc.rs`).
    pub(crate) dropped_by_class: Option<Box<[u64; N_CLASSES]>>,
}

impl Host {
    /// A frame off the link. Always inline (once per frame reaching a host; see `deliver`).
    #[inline(always)]
    pub(crate) fn receive(&mut self, me: NodeIdx, frame: Frame, ctx: &mut Ctx) {
        match frame.payload {
            Payload::Data { .. } => {
                self.notify(me, &frame, ctx);
                self.receive_data(me, frame, ctx)
            }
            Payload::Pause { quanta } => self.receive_pause(me, Lane::LINK, quanta, ctx),
            Payload::Pfc { class, quanta } => {
                self.receive_pause(me, Lane::class(class as usize), quanta, ctx)
            }
            Payload::Cc(msg) if msg.for_reaction_point() => {
                self.receive_feedback(me, &msg, frame.flow, frame.flow_id, ctx)
            }
            Payload::Cc(_) => self.notify(me, &frame, ctx),
            Payload::Ack(_) | Payload::Nack(_) => self.receive_transport_ack(me, frame, ctx),
        }
    }

    /// The NP hook: a data frame or a message for the NP arrived; send its answer, if any, to
    /// the frame's source. Inline, so that hosts without an NP (most schemes) pay one test per
    /// frame, not a call that saves and restores registers first.
    #[inline(always)]
    fn notify(&mut self, me: NodeIdx, frame: &Frame, ctx: &mut Ctx) {
        if self.np.is_some() {
            self.notify_np(me, frame, ctx);
        }
    }

    fn notify_np(&mut self, me: NodeIdx, frame: &Frame, ctx: &mut Ctx) {
        let np = self.np.as_mut().expect("checked by notify");
        if let Some(reply) = np.on_receive(frame, ctx.q.now()) {
            self.answer(me, reply, frame, ctx);
        }
    }

    /// Sends the NP's answer to the source of `about`, about its flow (the RP of a transported
    /// flow is per queue pair), in its class when messages ride the data queue.
    fn answer(&mut self, me: NodeIdx, reply: CcMsg, about: &Frame, ctx: &mut Ctx) {
        let (to, flow_id, class) = (about.src, about.flow_id, about.priority);
        self.queue_message(reply, to, self.id, flow_id, class, ctx);
        self.try_transmit(me, ctx);
    }

    /// A PAUSE or PFC frame from the switch above. 802.3x PAUSE holds every VOQ and freezes
    /// the rate limiters' timers (seed 004); PFC holds one class's VOQs and limiters keep
    /// running. Only the end of a link pause lets the NIC decide again (it has nothing to send
    /// while the link is held); after a class pause the other classes may send.
    fn receive_pause(&mut self, me: NodeIdx, lane: Lane, quanta: u16, ctx: &mut Ctx) {
        self.port.receive_pause_frame(lane, quanta, (me, 0), ctx);
        if lane != Lane::LINK {
            self.try_transmit(me, ctx);
            return;
        }
        let now = ctx.q.now();
        let paused = self.port.is_paused(now);
        self.set_rate_limiters_paused(paused, now);
        if !paused {
            self.try_transmit(me, ctx);
        }
    }

    /// The pause on `lane` may have ended (`EventKind::PauseExpire`).
    pub(crate) fn on_pause_expire(&mut self, me: NodeIdx, lane: Lane, ctx: &mut Ctx) {
        if !self.port.on_pause_expire(lane, (me, 0), ctx) {
            return;
        }
        if lane == Lane::LINK {
            self.set_rate_limiters_paused(false, ctx.q.now());
        }
        self.try_transmit(me, ctx);
    }

    /// Always inline, as `receive` and `deliver`: the path of every frame reaching a host.
    #[inline(always)]
    fn receive_data(&mut self, me: NodeIdx, frame: Frame, ctx: &mut Ctx) {
        let rx = &mut self.rx;
        if rx.rate_bps.is_none() && !rx.busy {
            self.deliver(me, frame, ctx);
            return;
        }
        let bytes = frame.bytes as u64;
        if rx.limit_bytes.is_some_and(|l| rx.bytes + bytes > l) {
            let by_class = rx.dropped_by_class.get_or_insert_with(Box::default);
            by_class[usize::from(frame.priority)] += 1;
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

    pub(crate) fn on_rx_done(&mut self, me: NodeIdx, ctx: &mut Ctx) {
        let frame = self
            .rx
            .queue
            .pop_front()
            .expect("RxDone with an empty receiver");
        self.rx.bytes -= frame.bytes as u64;
        self.rx.busy = false;
        self.deliver(me, frame, ctx);
        self.update_rx_pause(me, ctx);
        let bytes = frame.bytes as u64;
        self.update_rx_pfc(me, frame.priority as usize, false, bytes, ctx);
        self.start_rx_service(me, ctx);
    }

    /// Inline: a frame absorbed at arrival (no receiver rate) ends here, once per frame. A
    /// transported flow's frame goes to the transport (`transport/`), which hands the flow
    /// table only the bytes it accepts; it counts as delivered here either way (it reached
    /// its destination: docs/transport.md, conservation). The transport is out of line: inlined
    /// here, it stopped this from being inlined, a call per delivered frame that cost 3% of
    /// the event loop without any transport (callgrind, seed004-qcn).
    #[inline(always)]
    fn deliver(&mut self, me: NodeIdx, frame: Frame, ctx: &mut Ctx) {
        if frame.seq == NO_SEQ {
            ctx.flows
                .on_delivered(frame.flow_id, frame.bytes, ctx.q.now());
        } else {
            self.receive_transported(me, &frame, ctx);
        }
        let latency_s = (ctx.q.now() - frame.born).as_secs_f64();
        ctx.counters.delivered += 1;
        ctx.counters.delivered_bytes += frame.bytes as u64;
        ctx.counters.latency_sum_s += latency_s;
        ctx.counters.latency_max_s = ctx.counters.latency_max_s.max(latency_s);
        self.counters.rx_frames += 1;
        self.counters.rx_bytes += frame.bytes as u64;
    }

    /// The pause_time of this host's XOFF frames on `lane`.
    pub(crate) fn pause_quanta(&self, lane: Lane) -> u16 {
        match lane.pfc_class() {
            None => self.rx.pause.as_ref().map_or(u16::MAX, |w| w.quanta),
            Some(_) => self.rx.pfc.as_ref().map_or(u16::MAX, |p| p.quanta),
        }
    }

    /// Receive-buffer watermarks (seed 003 adapters): PAUSE the upstream port.
    fn update_rx_pause(&mut self, me: NodeIdx, ctx: &mut Ctx) {
        let Some(w) = self.rx.pause.clone() else {
            return;
        };
        let want = hysteresis(
            self.port.holds_peer(Lane::LINK),
            self.rx.bytes,
            w.xoff_bytes as u64,
            w.xon_bytes as u64,
        );
        if (self.port).hold_peer(Lane::LINK, want, w.quanta, (me, 0), ctx) {
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
        let lane = Lane::class(class);
        let on = self.port.holds_peer(lane);
        let want = hysteresis(on, pfc.class_bytes[class], pfc.xoff_bytes, pfc.xon_bytes);
        let quanta = pfc.quanta;
        if self.port.hold_peer(lane, want, quanta, (me, 0), ctx) {
            self.try_transmit(me, ctx);
        }
    }
}
