//! An output-queued Ethernet switch with a buffer model, static forwarding, PAUSE and PFC
//! triggers, per-class output queues and a congestion-point hook on each output port.
//!
//! Buffer model (all limits optional, checked in this order, each drop counted at its place):
//! memory partitioned per input port (`ingress`), shared memory (`shared`), per-output queue
//! limit (`egress`). A frame is buffered from its arrival (after the switch latency) until its
//! transmission starts. Control frames (PAUSE, and scheme messages at control priority) bypass
//! the buffer at strict priority; scheme messages that ride the data queue (probes) are
//! buffered like data. The switch names no scheme: it calls the congestion-point hooks at
//! enqueue and dequeue and forwards whatever message they return. With `[pfc]`, lossless
//! classes are admitted by `switch_pfc.rs` instead of the buffer limits, and a port stops a
//! class the peer has paused. The transmitters (one event per frame per hop) are in
//! `switch_tx.rs`.

use crate::cc::{CcMsg, CongestionPoint};
use crate::engine::{NodeIdx, PortIdx};
use crate::flow_control::Lane;
use crate::net::forwarding::Forwarding;
use crate::net::frame::{Frame, Payload};
use crate::net::frame_store::{FrameSlot, FrameStore};
use crate::net::port::Port;
use crate::net::scheduler::Queued;
use crate::net::switch_pause::{PauseTriggers, Reconsider};
use crate::net::switch_pfc::{Admission, SwitchPfc};
use crate::net::Ctx;
use crate::scenario::{PauseTrigger, SwitchPause, N_CLASSES};
use crate::stats::DropPlace;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BufferLimits {
    pub(crate) shared_bytes: Option<u64>,
    /// Dynamic threshold: an output queue takes a frame only while it holds less than this
    /// times the free shared buffer (`admission_drop`).
    pub(crate) shared_alpha: Option<f64>,
    pub(crate) output_bytes: Option<u64>,
    pub(crate) input_bytes: Option<u64>,
}

pub(crate) struct Switch {
    pub(crate) name: String,
    pub(crate) ports: Vec<Port>,
    /// Output port towards each host (indexed by host id).
    pub(crate) route: Forwarding,
    pub(crate) limits: BufferLimits,
    pub(crate) memory_bytes: u64,
    pub(crate) peak_memory_bytes: u64,
    /// Bytes each input port has in the buffer; kept only when something reads it
    /// (`counts_ingress`).
    pub(crate) ingress_bytes: Vec<u64>,
    /// 802.3x PAUSE triggers (`switch_pause.rs`); sized to the ports once they are attached.
    pub(crate) pause: Option<PauseTriggers>,
    /// Congestion point of each output queue (None: CP detection off or no scheme); empty when
    /// no port has one, so that the queue path reads no entry then (an entry read per frame
    /// was a cache miss per hop on a large fabric without any).
    pub(crate) cps: Vec<Option<CongestionPoint>>,
    pub(crate) dropped_frames: u64,
    /// PFC ingress accounting and triggers (`[pfc]`).
    pub(crate) pfc: Option<Box<SwitchPfc>>,
    /// Egress ports stamp in-band telemetry on transported data frames (the scheme asks:
    /// `net/telemetry.rs`). Here, not in the store, so the test reads a field already in cache.
    pub(crate) stamps_telemetry: bool,
}

impl Switch {
    pub(crate) fn new(name: String, limits: BufferLimits, pause: Option<SwitchPause>) -> Switch {
        Switch {
            name,
            ports: Vec::new(),
            route: Forwarding::default(),
            limits,
            memory_bytes: 0,
            peak_memory_bytes: 0,
            ingress_bytes: Vec::new(),
            pause: pause.map(|cfg| PauseTriggers::new(cfg, 0)),
            cps: Vec::new(),
            dropped_frames: 0,
            pfc: None,
            stamps_telemetry: false,
        }
    }

    /// Called once all ports are attached.
    pub(crate) fn finish_ports(&mut self) {
        let n = self.ports.len();
        self.ingress_bytes = vec![0; n];
        if let Some(triggers) = self.pause.as_mut() {
            *triggers = PauseTriggers::new(triggers.cfg, n);
        }
    }

    /// The pause_time of this switch's XOFF frames on `lane`.
    pub(crate) fn pause_quanta(&self, lane: Lane) -> u16 {
        match lane.pfc_class() {
            None => self.pause.as_ref().map_or(u16::MAX, |t| t.cfg.quanta),
            Some(_) => self.pfc.as_ref().map_or(u16::MAX, |p| p.quanta),
        }
    }

    /// The frame in `slot` of the store, off the link on `in_port`. A frame that is buffered
    /// stays in its slot: queued, or passed to its output port at once, it is not copied out
    /// and back (`on_buffered`). Always inline: once per frame-hop, and with the transports'
    /// frame kinds the compiler stopped inlining it (2% of the event loop).
    #[inline(always)]
    pub(crate) fn receive(
        &mut self,
        me: NodeIdx,
        in_port: PortIdx,
        slot: FrameSlot,
        ctx: &mut Ctx,
    ) {
        match ctx.frames.get(slot).payload {
            Payload::Data { .. } => self.on_buffered(me, in_port, slot, ctx),
            Payload::Pause { quanta } => {
                ctx.frames.free(slot);
                self.on_pause_frame(me, in_port, Lane::LINK, quanta, ctx)
            }
            Payload::Pfc { class, quanta } => {
                ctx.frames.free(slot);
                let lane = Lane::class(class as usize);
                self.on_pause_frame(me, in_port, lane, quanta, ctx)
            }
            Payload::Cc(msg) if ctx.rides_data_queue(&msg) => {
                self.on_buffered(me, in_port, slot, ctx)
            }
            // A transport's ACK/NACK is queued, paused and dropped like data.
            Payload::Ack(_) | Payload::Nack(_) => self.on_buffered(me, in_port, slot, ctx),
            Payload::Cc(_) => {
                let frame = ctx.frames.take(slot);
                let out = self.route.port(&frame);
                self.ports[out as usize].ctrl_q.push_back(frame);
                self.try_transmit(me, out, ctx);
            }
        }
    }

    /// A PAUSE or PFC frame from the peer on port `p`. A class pause leaves the other classes
    /// sending, so the transmitter is asked; a link pause holds all data, so only its end is.
    fn on_pause_frame(&mut self, me: NodeIdx, p: PortIdx, lane: Lane, quanta: u16, ctx: &mut Ctx) {
        let port = &mut self.ports[p as usize];
        port.receive_pause_frame(lane, quanta, (me, p), ctx);
        if lane != Lane::LINK || !port.is_paused(ctx.q.now()) {
            self.try_transmit(me, p, ctx);
        }
    }

    /// The peer's pause on `lane` of port `p` may have ended.
    pub(crate) fn on_pause_expire(&mut self, me: NodeIdx, p: PortIdx, lane: Lane, ctx: &mut Ctx) {
        if self.ports[p as usize].on_pause_expire(lane, (me, p), ctx) {
            self.try_transmit(me, p, ctx);
        }
    }

    /// A frame of a lossless class is admitted by PFC alone (None = take it).
    fn pfc_admission(&mut self, in_port: usize, frame: &Frame) -> Option<DropPlace> {
        let pfc = self
            .pfc
            .as_mut()
            .expect("lossless classes exist with [pfc] only");
        let class = frame.priority as usize;
        // Admission asks the switch's record of the lanes it holds, not the input port's lane:
        // the same (`pfc_lanes_settled`), without two lines of a port the frame does not leave
        // by (the port's field, then its box of lanes: 17% of this path's samples on the
        // RoCE + DCTCP + PFC fabric, docs/performance.md "Session 22").
        debug_assert_eq!(
            pfc.holds(in_port, class),
            self.ports[in_port].holds_peer(Lane::class(class))
        );
        let bytes = frame.bytes as u64;
        match pfc.admit(in_port, class, bytes, self.memory_bytes) {
            Admission::Overflow => Some(DropPlace::Ingress),
            Admission::Counted | Admission::Headroom => None,
        }
    }

    fn admission_drop(&self, in_port: usize, out: usize, bytes: u64) -> Option<DropPlace> {
        let over = |limit: Option<u64>, level: u64| limit.is_some_and(|l| level + bytes > l);
        // The input's count is read only under a per-input limit, one of the cases where it is
        // kept (`counts_ingress`); without one it stays 0 and means nothing.
        let input = self.limits.input_bytes;
        if input.is_some_and(|l| self.ingress_bytes[in_port] + bytes > l) {
            Some(DropPlace::Ingress)
        } else if over(self.limits.shared_bytes, self.memory_bytes)
            || self.over_dynamic_threshold(self.ports[out].data_bytes)
        {
            Some(DropPlace::Shared)
        } else if over(self.limits.output_bytes, self.ports[out].data_bytes) {
            Some(DropPlace::Egress)
        } else {
            None
        }
    }

    /// Whether anything reads the bytes per input port: a per-input buffer limit, or 802.3x
    /// PAUSE triggered per input. Without either they are not kept (on a large fabric the
    /// count's line was a cache miss per queued frame: docs/performance.md, "Session 18").
    #[inline]
    pub(crate) fn counts_ingress(&self) -> bool {
        self.limits.input_bytes.is_some()
            || (self.pause.as_ref()).is_some_and(|t| t.cfg.trigger == PauseTrigger::Ingress)
    }

    /// Choudhury and Hahne, "Dynamic Queue Length Thresholds for Shared-Memory Packet
    /// Switches" (IEEE/ACM ToN 1998), eq. (1): a queue of `queue_bytes` takes an arriving
    /// frame only while `queue_bytes < alpha x (B - Q)`, B the shared buffer and Q all it
    /// holds. Alone, a queue settles at alpha / (1 + alpha) of B; n congested queues at
    /// alpha / (1 + n alpha) each, leaving B / (1 + n alpha) free for the others.
    fn over_dynamic_threshold(&self, queue_bytes: u64) -> bool {
        let (Some(alpha), Some(buffer)) = (self.limits.shared_alpha, self.limits.shared_bytes)
        else {
            return false;
        };
        let free = buffer.saturating_sub(self.memory_bytes) as f64;
        queue_bytes as f64 >= alpha * free
    }

    /// A data frame, or a message riding the data queue, enters the buffer from `slot` of the
    /// store, where it stays if it is taken.
    fn on_buffered(&mut self, me: NodeIdx, in_port: PortIdx, slot: FrameSlot, ctx: &mut Ctx) {
        let now = ctx.q.now();
        let frame = ctx.frames.get(slot);
        let out = self.route.port(frame) as usize;
        let (size, priority, is_data) = (frame.bytes, frame.priority, frame.is_data());
        let bytes = size as u64;
        let lossless = self
            .pfc
            .as_ref()
            .is_some_and(|p| p.is_lossless(priority as usize));
        let refused = if lossless {
            self.pfc_admission(in_port as usize, frame)
        } else {
            self.admission_drop(in_port as usize, out, bytes)
        };
        if let Some(place) = refused {
            let frame = ctx.frames.take(slot);
            if let Some(pfc) = self.pfc.as_mut().filter(|_| !lossless) {
                pfc.count_lossy_drop(priority as usize);
            }
            if !is_data {
                ctx.drop_control(&frame);
                return;
            }
            ctx.drop_frame(place, &frame);
            self.ports[out].stats.dropped_frames += 1;
            self.dropped_frames += 1;
            return;
        }
        if let Some(pfc) = self.pfc.as_mut().filter(|_| !lossless) {
            pfc.admit(
                in_port as usize,
                priority as usize,
                bytes,
                self.memory_bytes,
            );
        }
        if (self.pause.as_mut()).is_some_and(|t| t.note_input(in_port as usize)) {
            self.reconcile(me, in_port as usize, ctx);
        }
        self.memory_bytes += bytes;
        self.peak_memory_bytes = self.peak_memory_bytes.max(self.memory_bytes);
        let waiting = Queued {
            slot,
            bytes: size,
            ingress: in_port,
            priority,
            data: is_data,
        };
        if self.queues_unwatched() && self.pass_through(me, out as PortIdx, &waiting, ctx) {
            self.memory_bytes -= bytes;
            return;
        }
        if self.counts_ingress() {
            self.ingress_bytes[in_port as usize] += bytes;
        }
        // The frame waits where it is stored, in the slot it arrived in; the queue holds its
        // slot and its input port.
        let stored = ctx.frames.get_mut(slot);
        let port = &mut self.ports[out];
        port.change_queue(now, true, bytes);
        let queue_bytes = port.data_bytes;
        port.data_q.push_back(waiting);
        // The CP sees (and may mark) the frame where it is queued.
        let about = (self.cps.get_mut(out))
            .and_then(|cp| cp.as_mut()?.on_enqueue(stored, queue_bytes))
            .map(|msg| (msg, *stored));
        if let Some((msg, about)) = about {
            self.send_message(me, &about, msg, ctx);
        }
        self.update_pause(me, in_port as usize, out, ctx);
        self.update_pfc(me, in_port as usize, priority as usize, ctx);
        self.try_transmit(me, out as PortIdx, ctx);
    }

    /// Sends a scheme's message about `about` back to that frame's source.
    pub(super) fn send_message(&mut self, me: NodeIdx, about: &Frame, msg: CcMsg, ctx: &mut Ctx) {
        let bytes = msg.bytes(&ctx.scheme);
        ctx.counters.control(msg.kind(), bytes);
        let mut reply = Frame::control(
            Payload::Cc(msg),
            about.src,
            about.src,
            about.flow,
            bytes,
            ctx.q.now(),
        );
        reply.flow_id = about.flow_id;
        reply.priority = about.priority;
        let back = self.route.port(&reply);
        if ctx.rides_data_queue(&msg) {
            let slot = ctx.frames.put(&reply);
            self.on_buffered(me, back, slot, ctx);
            return;
        }
        self.ports[back as usize].ctrl_q.push_back(reply);
        self.try_transmit(me, back, ctx);
    }

    /// Re-evaluates the 802.3x triggers that a change at (input, output) may have flipped, and
    /// sends XOFF/XON where a port's wish changed. Inline up to the trigger's answer: without
    /// PAUSE it is one test, and with it most changes flip nothing, so only a flip pays a call.
    #[inline]
    pub(super) fn update_pause(&mut self, me: NodeIdx, input: usize, output: usize, ctx: &mut Ctx) {
        let Some(triggers) = self.pause.as_mut() else {
            return;
        };
        let level_bytes = match triggers.cfg.trigger {
            PauseTrigger::Global => self.memory_bytes,
            PauseTrigger::Ingress => self.ingress_bytes[input],
            PauseTrigger::Egress => self.ports[output].data_bytes,
        };
        match triggers.update(input, output, level_bytes) {
            Reconsider::None => {}
            flipped => self.reconsider_pause(me, flipped, ctx),
        }
    }

    fn reconsider_pause(&mut self, me: NodeIdx, flipped: Reconsider, ctx: &mut Ctx) {
        match flipped {
            Reconsider::None => {}
            Reconsider::Port(p) => self.reconcile(me, p, ctx),
            Reconsider::All => {
                for p in 0..self.ports.len() {
                    self.reconcile(me, p, ctx);
                }
            }
        }
    }

    /// Re-evaluates the PFC trigger of (input, class) after a change there. Inline up to
    /// whether PFC is on (one test without it, as `update_pause`).
    #[inline]
    pub(super) fn update_pfc(&mut self, me: NodeIdx, input: usize, class: usize, ctx: &mut Ctx) {
        if self.pfc.is_some() {
            self.update_pfc_lanes(me, input, class, ctx);
        }
    }

    /// `update_pfc` with PFC on. With dynamic thresholds XOFF moves with the free buffer, so
    /// any lossless (port, class) may flip; in port and class order, as a look at every lane
    /// would, it visits those that can: all of them when a lane not paused may be past XOFF,
    /// else the paused ones and (`input`, `class`), whose count or headroom just changed. The
    /// others hold at most the bound, at or below XOFF, and no headroom (a lane that takes
    /// headroom is (`input`, `class`) and is paused here), so they stay as they are
    /// (`switch_pfc.rs`).
    #[inline(never)]
    fn update_pfc_lanes(&mut self, me: NodeIdx, input: usize, class: usize, ctx: &mut Ctx) {
        let Some(pfc) = self.pfc.as_ref() else {
            return;
        };
        let lossless = pfc.lossless_mask();
        let xoff = pfc.xoff_now(self.memory_bytes);
        if !pfc.is_dynamic() {
            if pfc.is_lossless(class) {
                self.reconcile_class(me, input, class, ctx);
            }
        } else if pfc.may_pass(xoff) {
            for p in 0..self.ports.len() {
                self.reconcile_lossless(me, p, lossless, ctx);
            }
            self.pfc.as_mut().expect("PFC is on").tighten_bound();
        } else if pfc.holds_none() {
            // Nothing paused: (`input`, `class`) flips only if it now wants a pause, which the
            // counts alone say (the common case, no, reads no port).
            if pfc.is_lossless(class) && pfc.wants_pause_under(input, class, false, xoff) {
                self.reconcile_class(me, input, class, ctx);
            }
        } else {
            for p in 0..self.ports.len() {
                let pfc = self.pfc.as_ref().expect("PFC is on");
                if p == input || pfc.holds_any(p) {
                    self.reconcile_lossless(me, p, lossless, ctx);
                }
            }
        }
        debug_assert!(
            self.pfc_lanes_settled(),
            "a PFC lane left as it was wants to flip"
        );
    }

    /// Every lossless lane is paused exactly when its trigger wants it (what looking at every
    /// lane would leave), and the switch's record of the paused lanes agrees (checked after
    /// `update_pfc_lanes` in debug builds).
    fn pfc_lanes_settled(&self) -> bool {
        let Some(pfc) = self.pfc.as_ref() else {
            return true;
        };
        let lossless = pfc.lossless_mask();
        self.ports.iter().enumerate().all(|(p, port)| {
            (0..N_CLASSES)
                .filter(|c| lossless & (1 << c) != 0)
                .all(|c| {
                    let on = port.holds_peer(Lane::class(c));
                    let want = pfc.wants_pause(p, c, on, self.memory_bytes);
                    on == want && pfc.holds(p, c) == on
                })
        })
    }

    /// Every lossless class of port `p` (`lossless`: the class-enable vector), in class order.
    fn reconcile_lossless(&mut self, me: NodeIdx, p: usize, lossless: u8, ctx: &mut Ctx) {
        let mut classes = lossless;
        while classes != 0 {
            let c = classes.trailing_zeros() as usize;
            classes &= classes - 1;
            self.reconcile_class(me, p, c, ctx);
        }
    }

    fn reconcile_class(&mut self, me: NodeIdx, p: usize, class: usize, ctx: &mut Ctx) {
        let pfc = self.pfc.as_ref().expect("PFC is on");
        let lane = Lane::class(class);
        // The switch's record of paused lanes, not the port's lane: the port (another cache
        // line, its lanes a box away) is read only when the lane flips, not for every frame.
        let on = pfc.holds(p, class);
        debug_assert_eq!(
            on,
            self.ports[p].holds_peer(lane),
            "PFC's record of port {p}"
        );
        let want = pfc.wants_pause(p, class, on, self.memory_bytes);
        let quanta = pfc.quanta;
        if want == on {
            return;
        }
        self.pfc
            .as_mut()
            .expect("PFC is on")
            .note_lane(p, class, want);
        let port = &mut self.ports[p];
        if port.hold_peer(lane, want, quanta, (me, p as PortIdx), ctx) {
            self.try_transmit(me, p as PortIdx, ctx);
        }
    }

    /// Asks port `p`'s 802.3x lane to hold or release its peer as the triggers now wish.
    fn reconcile(&mut self, me: NodeIdx, p: usize, ctx: &mut Ctx) {
        let triggers = self.pause.as_ref().expect("PAUSE is on");
        let (want, quanta) = (triggers.wants_pause(p), triggers.cfg.quanta);
        if (self.ports[p]).hold_peer(Lane::LINK, want, quanta, (me, p as PortIdx), ctx) {
            self.try_transmit(me, p as PortIdx, ctx);
        }
    }

    pub(crate) fn data_frames_held(&self, frames: &FrameStore) -> u64 {
        self.ports.iter().map(|p| p.data_frames_held(frames)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::qcn::{Cnm, QcnParams};
    use crate::cc::Scheme;
    use crate::engine::EventKind;
    use crate::net::Node;
    use crate::sim::build::build;
    use crate::testkit::TestNet;
    use crate::time::SimTime;
    use std::cell::RefCell;
    use std::rc::Rc;

    const S: u32 = 3;

    /// The star (a, c -> s -> b, 10 Gb/s, 1 us links) with b and c each sending three 1,500 B
    /// frames to a from t = 0, so that s's port to a holds a queue; at 5 us s sends a CNM to a
    /// (about a frame a sent, of class 0), with s's shared buffer `shared_bytes`. Returns what
    /// reaches a, in order, and the control frames lost.
    fn reaching_a(messages_ride_data: bool, shared_bytes: Option<u64>) -> (Vec<&'static str>, u64) {
        let sc = crate::resolve(crate::testkit::STAR, &[], None).expect("valid scenario");
        let mut built = build(&sc).expect("builds");
        let Node::Switch(s) = &mut built.nodes[S as usize] else {
            unreachable!("s is a switch")
        };
        s.limits.shared_bytes = shared_bytes;
        let mut t = TestNet::new(built.nodes, Scheme::Qcn(QcnParams::default()));
        t.net.ctx.messages_ride_data = messages_ride_data;
        t.at(SimTime::ZERO, |net| {
            let (nodes, ctx) = net.ctx();
            for src in [1, 2] {
                let Node::Host(h) = &mut nodes[src as usize] else {
                    unreachable!("b and c are hosts")
                };
                for _ in 0..3 {
                    h.enqueue_generated(src, Frame::data(src, 0, 1500, SimTime::ZERO), ctx);
                }
            }
        });
        t.at(SimTime::from_micros(5), |net| {
            let (nodes, ctx) = net.ctx();
            let Node::Switch(s) = &mut nodes[S as usize] else {
                unreachable!("s is a switch")
            };
            let about = Frame::data(0, 1, 1500, SimTime::ZERO);
            s.send_message(S, &about, CcMsg::Cnm(Cnm { qfb: 1, cpid: 0 }), ctx);
        });
        let seen = Rc::new(RefCell::new(Vec::new()));
        let log = Rc::clone(&seen);
        t.run_until(SimTime::from_micros(30), move |net, ev| {
            if let EventKind::Arrive { peer: 0, slot, .. } = *ev {
                let data = net.ctx.frames.get(slot).is_data();
                log.borrow_mut().push(if data { "data" } else { "cnm" });
            }
        });
        let lost = t.net.ctx.counters.control_dropped;
        (seen.take(), lost)
    }

    #[test]
    fn a_message_overtakes_the_queued_data_in_the_control_queue() {
        // s's port to a sends b's and c's frames back to back from 2.2 us, 1.2 us each; at 5 us
        // the third is on the wire and three wait. The CNM goes next (strict priority), and a
        // full buffer does not stop it.
        let order = ["data", "data", "data", "cnm", "data", "data", "data"];
        assert_eq!(reaching_a(false, None), (order.to_vec(), 0));
        assert_eq!(reaching_a(false, Some(4_500)), (order.to_vec(), 0));
    }

    #[test]
    fn a_message_riding_the_data_queue_waits_behind_the_queued_data() {
        // model.message_queue = "data": the CNM joins class 0's queue behind the three frames.
        let order = ["data", "data", "data", "data", "data", "data", "cnm"];
        assert_eq!(reaching_a(true, None), (order.to_vec(), 0));
    }

    #[test]
    fn a_message_riding_the_data_queue_is_dropped_by_a_full_buffer() {
        // The three waiting frames fill a 4,500 B buffer exactly (the one on the wire has
        // left it): the 64 B CNM does not fit and is lost, counted with the control frames.
        let order = ["data"; 6];
        assert_eq!(reaching_a(true, Some(4_500)), (order.to_vec(), 1));
    }
}
