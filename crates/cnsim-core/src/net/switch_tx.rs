//! A switch's transmitters: one event per frame per hop. A port hands the frame it starts to
//! the link whole (as hosts do), so the frame's arrival at the next element is its only event
//! here; the port is busy until the frame's last bit leaves (`Port::free_at`), and a
//! `PortFree` event at that time is scheduled only when frames wait behind the one leaving.
//! PAUSE and PFC act where they did with a transmit-done event: a paused port or class starts
//! no frame, and the frame already handed to the link finishes (docs/protocols.md, pfc.md).

use crate::engine::{EventKind, NodeIdx, PortIdx};
use crate::net::switch::Switch;
use crate::net::Ctx;

impl Switch {
    /// Starts the next frame on port `p` if its transmitter is free; if it is busy and frames
    /// wait, makes sure a `PortFree` event comes when it is free. Inline: most calls (a frame
    /// queued behind one being sent, its `PortFree` already due) end at the first tests.
    #[inline]
    pub(crate) fn try_transmit(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        let port = &self.ports[p as usize];
        if !port.is_busy(ctx.q.now()) {
            self.start_next(me, p, ctx);
        } else if port.free_event_at != port.free_at && port.has_waiting() {
            self.ask_port_free(me, p, ctx);
        }
    }

    /// The `PortFree` event of port `p`: its transmitter is free (unless a frame started at
    /// this same time before the event, which then asks for its own).
    pub(crate) fn on_port_free(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        let port = &mut self.ports[p as usize];
        if port.free_event_at == ctx.q.now() {
            port.free_event_at = crate::time::SimTime::MAX;
        }
        self.try_transmit(me, p, ctx);
    }

    /// Schedules port `p`'s `PortFree` event at the end of its current frame.
    fn ask_port_free(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        let port = &mut self.ports[p as usize];
        port.free_event_at = port.free_at;
        let port_free = EventKind::PortFree { node: me, port: p };
        ctx.q.schedule(port.free_at, port_free);
    }

    /// `try_transmit` on a free transmitter: control first, then data the peer has not paused.
    /// Out of line: inlined into `try_transmit`'s callers it made the compiler move
    /// `update_pfc` out of line instead, 5% more instructions (callgrind, seed004-qcn).
    #[inline(never)]
    fn start_next(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        let now = ctx.q.now();
        let port = &mut self.ports[p as usize];
        if let Some(ctrl) = port.ctrl_q.pop_front() {
            self.hand_to_link(me, p, ctrl, ctx);
            return;
        }
        if port.is_paused(now) {
            return;
        }
        let paused_classes = port.paused_classes(now);
        let Some(frame) = port.data_q.pop(paused_classes) else {
            return;
        };
        let bytes = frame.bytes as u64;
        port.change_queue(now, false, bytes);
        let queue_bytes = port.data_bytes;
        let (ingress, class) = (frame.ingress as usize, frame.priority as usize);
        self.hand_to_link(me, p, frame, ctx);
        let port = &mut self.ports[p as usize];
        if self.stamps_telemetry {
            port.stamp_telemetry(now, ctx.telemetry);
        }
        // The CP sees (and may mark) the frame on its way out, in the pipe.
        let sent = port.just_started().expect("just started");
        let about = self.cps[p as usize]
            .as_mut()
            .and_then(|cp| cp.on_dequeue(sent, queue_bytes))
            .map(|msg| (msg, *sent));
        self.memory_bytes -= bytes;
        self.ingress_bytes[ingress] -= bytes;
        if let Some(pfc) = self.pfc.as_mut() {
            pfc.release(ingress, class, bytes);
        }
        self.update_pause(me, ingress, p as usize, ctx);
        self.update_pfc(me, ingress, class, ctx);
        if let Some((msg, about)) = about {
            self.send_message(me, &about, msg, ctx);
        }
    }

    /// Puts `frame` on port `p`'s link: its arrival event if the link was empty, the
    /// frame-hop of the frame before it (its last bit has left), and a `PortFree` event when
    /// frames wait behind it.
    #[inline]
    fn hand_to_link(
        &mut self,
        me: NodeIdx,
        p: PortIdx,
        frame: crate::net::frame::Frame,
        ctx: &mut Ctx,
    ) {
        let port = &mut self.ports[p as usize];
        let (counted, arrival) = port.start_whole(frame, ctx.q.now());
        if let Some(at) = arrival {
            ctx.q.schedule(at, EventKind::Arrive { node: me, port: p });
        }
        ctx.counters.frame_hops += counted as u64;
        if port.has_waiting() {
            self.ask_port_free(me, p, ctx);
        }
    }
}
