//! A switch's transmitters: one event per frame per hop. A port hands the frame it starts to
//! the link whole (as hosts do), so the frame's arrival at the next element is its only event
//! here; the port is busy until the frame's last bit leaves (`Port::free_at`), and a
//! `PortFree` event at that time is scheduled only when frames wait behind the one leaving.
//! PAUSE and PFC act where they did with a transmit-done event: a paused port or class starts
//! no frame, and the frame already handed to the link finishes (docs/protocols.md, pfc.md).

use crate::engine::{EventKind, NodeIdx, PortIdx};
use crate::net::scheduler::Queued;
use crate::net::switch::Switch;
use crate::net::Ctx;

impl Switch {
    /// Starts the next frame on port `p` if its transmitter is free; if it is busy and frames
    /// wait, makes sure a `PortFree` event comes when it is free. Inline: most calls (a frame
    /// queued behind one being sent, its `PortFree` already due) end at the first tests.
    #[inline(always)]
    pub(crate) fn try_transmit(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        let port = &self.ports[p as usize];
        if !port.is_busy(ctx.q.now()) {
            self.start_next(me, p, ctx);
        } else if port.free_event_at != port.free_at {
            self.ask_port_free_if_waiting(me, p, ctx);
        }
    }

    /// A busy port without a `PortFree` due: asks for one if frames wait. Out of line: rare (a
    /// frame queued at a port with nothing queued behind the one leaving).
    #[cold]
    #[inline(never)]
    fn ask_port_free_if_waiting(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        if self.ports[p as usize].has_waiting() {
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
            self.hand_to_link(me, p, &ctrl, ctx);
            return;
        }
        if port.is_paused(now) {
            return;
        }
        let paused_classes = port.paused_classes(now);
        let Some(queued) = port.data_q.pop(paused_classes) else {
            return;
        };
        let bytes = queued.bytes as u64;
        port.change_queue(now, false, bytes);
        let queue_bytes = port.data_bytes;
        let (ingress, class) = (queued.ingress as usize, queued.priority as usize);
        let (counted, arrival) =
            port.start_in_store(queued.slot, queued.bytes, queued.data, now, &mut ctx.frames);
        self.after_start(me, p, counted, arrival, ctx);
        let port = &mut self.ports[p as usize];
        if self.stamps_telemetry {
            port.stamp_telemetry(now, &mut ctx.telemetry, &mut ctx.frames);
        }
        // The CP sees (and may mark) the frame on its way out, on the link.
        debug_assert_eq!(port.just_started(), Some(ctx.frames.last_put()));
        let sent = ctx.frames.last_put_mut();
        let about = (self.cps.get_mut(p as usize))
            .and_then(|cp| cp.as_mut()?.on_dequeue(sent, queue_bytes))
            .map(|msg| (msg, *sent));
        self.memory_bytes -= bytes;
        if self.counts_ingress() {
            self.ingress_bytes[ingress] -= bytes;
        }
        if let Some(pfc) = self.pfc.as_mut() {
            pfc.release(ingress, class, bytes);
        }
        self.update_pause(me, ingress, p as usize, ctx);
        self.update_pfc(me, ingress, class, ctx);
        if let Some((msg, about)) = about {
            self.send_message(me, &about, msg, ctx);
        }
    }

    /// A frame admitted to the buffer (`frame`: the entry it would be queued with, naming its
    /// slot in the store) that finds its output port `out` idle with nothing queued, at a
    /// switch where nothing watches the queues (no congestion point, PAUSE or PFC triggers)
    /// and strict priority: it starts at once from its slot, as queuing it and starting the
    /// next frame would (the queue statistics see it pass: its bytes in the peak, no time in
    /// the integral), without writing it into the queue and reading it back, a cache miss per
    /// hop on a large fabric. The caller keeps the buffer accounting (the frame leaves it at
    /// once). False: the frame must be queued. The caller asks `queues_unwatched` first.
    #[inline(always)]
    pub(crate) fn pass_through(
        &mut self,
        me: NodeIdx,
        out: PortIdx,
        frame: &Queued,
        ctx: &mut Ctx,
    ) -> bool {
        let now = ctx.q.now();
        let port = &mut self.ports[out as usize];
        let idle = !port.is_busy(now) && port.ctrl_q.is_empty() && !port.is_paused(now);
        if !idle || port.paused_classes(now) != 0 || !port.data_q.pass_through(frame.priority) {
            return false;
        }
        port.pass_queue(now, frame.bytes as u64);
        let (counted, arrival) =
            port.start_in_store(frame.slot, frame.bytes, frame.data, now, &mut ctx.frames);
        self.after_start(me, out, counted, arrival, ctx);
        let port = &mut self.ports[out as usize];
        if self.stamps_telemetry {
            port.stamp_telemetry(now, &mut ctx.telemetry, &mut ctx.frames);
        }
        true
    }

    /// Nothing at this switch watches its queues (no congestion point, PAUSE or PFC triggers):
    /// a frame may `pass_through` an idle port. Tested before the call, so that switches with
    /// a scheme pay three field tests.
    #[inline(always)]
    pub(crate) fn queues_unwatched(&self) -> bool {
        self.cps.is_empty() && self.pause.is_none() && self.pfc.is_none()
    }

    /// Puts `frame` on port `p`'s link: its arrival event if the link was empty, the
    /// frame-hop of the frame before it (its last bit has left), and a `PortFree` event when
    /// frames wait behind it.
    #[inline(always)]
    fn hand_to_link(
        &mut self,
        me: NodeIdx,
        p: PortIdx,
        frame: &crate::net::frame::Frame,
        ctx: &mut Ctx,
    ) {
        let port = &mut self.ports[p as usize];
        let (counted, arrival) = port.start_whole(frame, ctx.q.now(), &mut ctx.frames);
        self.after_start(me, p, counted, arrival, ctx);
    }

    /// After a frame started on port `p`: its arrival event if the link was empty
    /// (`arrival`), the frame-hop of the frame before it if it was `counted` now, and a
    /// `PortFree` event when frames wait behind it.
    #[inline(always)]
    fn after_start(
        &mut self,
        me: NodeIdx,
        p: PortIdx,
        counted: bool,
        arrival: Option<crate::net::pipe::InFlight>,
        ctx: &mut Ctx,
    ) {
        let port = &mut self.ports[p as usize];
        if let Some(entry) = arrival {
            ctx.q
                .schedule(entry.arrival, port.arrival_event(me, p, entry));
        }
        ctx.counters.frame_hops += counted as u64;
        if port.has_waiting() {
            self.ask_port_free(me, p, ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::EventKind;
    use crate::net::frame::Frame;
    use crate::net::Node;
    use crate::sim::build::build;
    use crate::testkit::TestNet;
    use crate::time::SimTime;

    /// a, c -> s -> b, every link 10 Gb/s and 1 us; no traffic of its own (tests inject).
    fn star() -> TestNet {
        let sc = crate::resolve(crate::testkit::STAR, &[], None).expect("valid scenario");
        let built = build(&sc).expect("builds");
        TestNet::new(built.nodes, built.scheme)
    }

    /// Host `src` generates `n` frames of 1500 B for b at time zero.
    fn burst(t: &mut TestNet, src: u32, n: usize) {
        t.at(SimTime::ZERO, move |net| {
            let (nodes, ctx) = net.ctx();
            if let Node::Host(h) = &mut nodes[src as usize] {
                for _ in 0..n {
                    h.enqueue_generated(src, Frame::data(src, 1, 1500, SimTime::ZERO), ctx);
                }
            }
        });
    }

    const S: u32 = 3;

    /// Runs to 1 ms; returns the PortFree events and the times frames left s towards b.
    fn run(t: &mut TestNet) -> (usize, Vec<SimTime>) {
        let mut port_free = 0;
        let mut arrivals_at_b = Vec::new();
        t.run_until(SimTime::from_micros(1000), |net, ev| match *ev {
            EventKind::PortFree { node, .. } => {
                assert_eq!(node, S, "only switch ports have PortFree events");
                port_free += 1;
            }
            EventKind::Arrive {
                node: S,
                port,
                slot,
                peer,
            } => {
                let link = &net.nodes[S as usize].ports()[port as usize];
                assert_eq!((link.peer_node, peer), (1, 1), "s sends only to b");
                assert_eq!(
                    link.pipe_head(),
                    Some(slot),
                    "the event names the arriving frame"
                );
                arrivals_at_b.push(net.ctx.q.now());
            }
            _ => {}
        });
        (port_free, arrivals_at_b)
    }

    #[test]
    fn a_port_nothing_waits_at_costs_no_event_but_the_arrival() {
        let mut t = star();
        burst(&mut t, 0, 5);
        let (port_free, at_b) = run(&mut t);
        // Each frame reaches s as the one before it leaves: nothing waits, so no PortFree.
        assert_eq!(port_free, 0);
        // Back to back at the line rate: 1.2 us each, 2 hops of 1 us.
        let expected: Vec<SimTime> = (0..5)
            .map(|k| SimTime::from_nanos(2 * 1200 + 2000 + k * 1200))
            .collect();
        assert_eq!(at_b, expected);
        let port = &t.net.nodes[S as usize].ports()[2];
        assert_eq!((port.stats.tx_frames, port.stats.data_tx_bytes), (5, 7500));
        assert_eq!(t.net.ctx.counters.frame_hops, 10);
    }

    #[test]
    fn frames_that_wait_get_one_port_free_each_and_leave_back_to_back() {
        let mut t = star();
        burst(&mut t, 0, 3);
        burst(&mut t, 2, 3);
        let (port_free, at_b) = run(&mut t);
        // a's and c's first frames reach s together; from then on one frame waits behind
        // each one leaving until the last: five starts at a PortFree.
        assert_eq!(port_free, 5);
        let expected: Vec<SimTime> = (0..6)
            .map(|k| SimTime::from_nanos(2 * 1200 + 2000 + k * 1200))
            .collect();
        assert_eq!(at_b, expected);
        let port = &t.net.nodes[S as usize].ports()[2];
        assert_eq!(port.stats.tx_frames, 6);
        assert_eq!(t.net.ctx.counters.frame_hops, 12);
        assert_eq!(t.net.data_frames_in_flight(), 0);
        assert_eq!(
            t.net.ctx.frames.len(),
            0,
            "every delivered frame left the store"
        );
    }

    #[test]
    fn a_frame_the_switch_drops_leaves_the_store() {
        let mut t = star();
        // Room for two frames at s's port to b: of a's and c's six, the queue overflows.
        let Node::Switch(s) = &mut t.net.nodes[S as usize] else {
            panic!("s is a switch");
        };
        s.limits.output_bytes = Some(3000);
        burst(&mut t, 0, 3);
        burst(&mut t, 2, 3);
        let (_, at_b) = run(&mut t);
        let dropped = t.net.ctx.counters.dropped_total();
        assert!(dropped > 0, "the queue overflowed");
        assert_eq!(at_b.len() as u64 + dropped, 6);
        // A dropped frame's slot is freed as a delivered one's: nothing is left behind.
        assert_eq!(t.net.ctx.frames.len(), 0);
    }

    #[test]
    fn a_frame_that_finds_its_port_idle_leaves_with_a_queued_frames_statistics() {
        let mut t = star();
        burst(&mut t, 0, 1);
        // The frame reaches s at 2.2 us and starts towards b at once, never queued.
        t.run_until(SimTime::from_nanos(2300), |_, _| {});
        let Node::Switch(s) = &t.net.nodes[S as usize] else {
            panic!("s is a switch");
        };
        let port = &s.ports[2];
        // As if it had been queued and started at the same instant: its bytes in the peak, no
        // time in the queue's integral, its class among those used, the buffer empty again.
        assert_eq!(port.stats.peak_queue_bytes, 1500);
        assert_eq!((port.data_bytes, port.stats.queue_area), (0, 0.0));
        assert_eq!(port.stats.last_queue_change, SimTime::from_nanos(2200));
        assert_eq!(port.data_q.used(), 1);
        assert_eq!((s.memory_bytes, s.peak_memory_bytes), (0, 1500));
        assert!(s.ingress_bytes.iter().all(|&b| b == 0));
        // It is on the link to b, a's frame.
        let sent = port.pipe_head().map(|slot| t.net.ctx.frames.get(slot));
        assert_eq!(sent.map(|f| (f.src, f.dst)), Some((0, 1)));
    }

    #[test]
    fn a_frame_counts_when_its_last_bit_leaves() {
        let mut t = star();
        burst(&mut t, 0, 1);
        // The frame starts at s at 2.2 us and its last bit leaves at 3.4 us.
        t.run_until(SimTime::from_nanos(3399), |_, _| {});
        let port = &t.net.nodes[S as usize].ports()[2];
        assert_eq!(port.stats.tx_frames, 0, "still leaving");
        assert_eq!(t.net.ctx.counters.frame_hops, 1, "the host's hop only");
        t.run_until(SimTime::from_nanos(3400), |_, _| {});
        let port = &t.net.nodes[S as usize].ports()[2];
        assert_eq!(port.stats.tx_frames, 1);
        assert_eq!(t.net.ctx.counters.frame_hops, 2);
    }
}
