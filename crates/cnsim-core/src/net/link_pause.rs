//! A port's pause lanes wired to the network: the lanes (`flow_control/`) decide, this file
//! acts. It applies the PAUSE/PFC frames the peer sends to the right lane and schedules the
//! lane's expiry event; it turns a trigger's wish (the switch's or the host receiver's) into an
//! XOFF/XON frame on the port's control queue, counted by kind, with its refresh event. One
//! expiry and one refresh event kind serve every lane (`EventKind::PauseExpire`,
//! `EventKind::PauseRefresh`, naming the lane). The caller kicks the transmitter when a call
//! returns true.

use crate::engine::{EventKind, NodeIdx, PortIdx};
use crate::flow_control::lane::{Expiry, PauseFrame, PauseLane, Refresh};
use crate::flow_control::pfc::ClassLanes;
use crate::flow_control::Lane;
use crate::net::frame::{Frame, Payload};
use crate::net::port::Port;
use crate::net::Ctx;
use crate::stats::ControlKind;

impl Port {
    /// The port's PFC lanes, made on first use.
    fn class_lanes(&mut self) -> &mut ClassLanes {
        self.pfc.get_or_insert_with(Box::default)
    }

    /// The lane (the PFC lanes made on first use).
    fn lane_mut(&mut self, lane: Lane) -> &mut PauseLane {
        match lane.pfc_class() {
            None => &mut self.pause,
            Some(class) => self.class_lanes().lane_mut(class),
        }
    }

    /// This node holds the peer on `lane` (XOFF outstanding).
    pub(crate) fn holds_peer(&self, lane: Lane) -> bool {
        match lane.pfc_class() {
            None => self.pause.xoff_sent(),
            Some(class) => self.pfc.as_ref().is_some_and(|l| l.lane(class).xoff_sent()),
        }
    }

    /// A PAUSE (`Lane::LINK`) or PFC frame from the peer arrived on this port, port `at.1` of
    /// node `at.0`: the lane's new timer, and its expiry event when one is needed. Quanta are
    /// 512 bit times at the line rate, whatever rate a schedule has set.
    pub(crate) fn receive_pause_frame(
        &mut self,
        lane: Lane,
        quanta: u16,
        at: (NodeIdx, PortIdx),
        ctx: &mut Ctx,
    ) {
        let (rate, now) = (self.line_rate_bps, ctx.q.now());
        let expiry = match lane.pfc_class() {
            None => self.pause.receive(quanta, rate, now),
            Some(class) => {
                let expiry = self.class_lanes().receive(class, quanta, rate, now);
                self.note_pfc_pauses();
                expiry
            }
        };
        if let Some(until) = expiry {
            schedule_expire(until, lane, at, ctx);
        }
    }

    /// The lane's expiry event fired: re-arms it when the pause was renewed. Returns true when
    /// the lane's data may flow again.
    pub(crate) fn on_pause_expire(
        &mut self,
        lane: Lane,
        at: (NodeIdx, PortIdx),
        ctx: &mut Ctx,
    ) -> bool {
        let now = ctx.q.now();
        let expiry = match lane.pfc_class() {
            None => self.pause.on_expire(now),
            Some(class) => {
                let expiry = self.class_lanes().on_expire(class, now);
                self.note_pfc_pauses();
                expiry
            }
        };
        match expiry {
            Expiry::Stale => false,
            Expiry::Rearm(until) => {
                schedule_expire(until, lane, at, ctx);
                false
            }
            Expiry::Expired => true,
        }
    }

    /// The node's trigger wants the peer held on `lane` (`want`) or not. Returns true when an
    /// XOFF/XON frame was queued.
    pub(crate) fn hold_peer(
        &mut self,
        lane: Lane,
        want: bool,
        quanta: u16,
        at: (NodeIdx, PortIdx),
        ctx: &mut Ctx,
    ) -> bool {
        let rate = self.line_rate_bps;
        let Some(frame) = self
            .lane_mut(lane)
            .set_xoff(want, quanta, rate, ctx.q.now())
        else {
            return false;
        };
        self.queue_pause_frame(lane, frame, at, ctx);
        true
    }

    /// The lane's refresh event fired. Returns true when an XOFF frame was queued.
    pub(crate) fn on_pause_refresh(
        &mut self,
        lane: Lane,
        quanta: u16,
        at: (NodeIdx, PortIdx),
        ctx: &mut Ctx,
    ) -> bool {
        let rate = self.line_rate_bps;
        match self.lane_mut(lane).on_refresh(quanta, rate, ctx.q.now()) {
            Refresh::Idle => false,
            Refresh::Rearm(due) => {
                schedule_refresh(due, lane, at, ctx);
                false
            }
            Refresh::Send(frame) => {
                self.queue_pause_frame(lane, frame, at, ctx);
                true
            }
        }
    }

    /// Queues the lane's PAUSE/PFC frame at control priority (never paused), counts it, and
    /// schedules the refresh it asks for. PAUSE and PFC are MAC Control frames (802.3 clause 31,
    /// 802.1Qbb): the MAC sends them once the frame in progress ends, ahead of the frames its
    /// clients queued, so the frame goes behind the PAUSE/PFC frames already waiting and ahead
    /// of a scheme's control frames (a CNM, a CNP: client frames). The headroom bound counts
    /// on this (`scenario/pfc.rs`, `Headroom::auto_bytes`): before, a PFC frame waited behind
    /// the CNMs queued at its port.
    ///
    /// At most one frame per lane waits: the MAC sends a lane's pause time as it stands when
    /// the frame in progress ends, so a newer request (a refresh, an XON after an XOFF) takes
    /// the place of the lane's frame that has not left yet, and is counted as what it now is.
    /// Queued one after another, the frames of a lane refreshed faster than the link sends them
    /// (a pause of one quantum, 51.2 ns at 10 Gb/s, is refreshed every 25.6 ns) piled up
    /// without bound, and the peer read pause times long out of date.
    fn queue_pause_frame(
        &mut self,
        lane: Lane,
        frame: PauseFrame,
        at: (NodeIdx, PortIdx),
        ctx: &mut Ctx,
    ) {
        let PauseFrame { quanta, refresh_at } = frame;
        let (payload, kind) = pause_payload(lane, quanta);
        let bytes = ctx.control_bytes;
        let no_host = u32::MAX; // link-local: addressed to no host, never routed
        let pause = Frame::control(payload, no_host, no_host, no_host, bytes, ctx.q.now());
        // The queue holds its PAUSE/PFC frames first, so the lane's waiting frame is among them.
        let mac_control = self.ctrl_q.iter_mut();
        let mut mac_control = mac_control.take_while(|f| f.payload.is_mac_control());
        if let Some(waiting) = mac_control.find(|f| f.payload.pause_lane() == Some(lane)) {
            let was = pause_kind(&waiting.payload);
            *waiting = pause;
            ctx.counters.control_replaced(was, kind);
            let was_xoff = matches!(was, ControlKind::Xoff | ControlKind::PfcXoff);
            self.lane_mut(lane).frame_superseded(was_xoff);
        } else {
            // The frame goes before the scheme messages at the queue's tail, counted from the
            // back (a count from the front walks every frame the queue holds).
            let messages = self.ctrl_q.iter().rev();
            let messages = messages.take_while(|f| !f.payload.is_mac_control()).count();
            self.ctrl_q.insert(self.ctrl_q.len() - messages, pause);
            ctx.counters.control(kind, bytes);
        }
        if let Some(due) = refresh_at {
            schedule_refresh(due, lane, at, ctx);
        }
    }
}

/// The PAUSE or PFC payload that gives `lane` a pause of `quanta` (0: XON), and its kind.
fn pause_payload(lane: Lane, quanta: u16) -> (Payload, ControlKind) {
    let payload = match lane.pfc_class() {
        None => Payload::Pause { quanta },
        Some(class) => Payload::Pfc {
            class: class as u8,
            quanta,
        },
    };
    (payload, pause_kind(&payload))
}

/// How a PAUSE or PFC frame is counted: XOFF with a pause time, XON with none.
fn pause_kind(payload: &Payload) -> ControlKind {
    match *payload {
        Payload::Pause { quanta: 0 } => ControlKind::Xon,
        Payload::Pause { .. } => ControlKind::Xoff,
        Payload::Pfc { quanta: 0, .. } => ControlKind::PfcXon,
        Payload::Pfc { .. } => ControlKind::PfcXoff,
        _ => unreachable!("only PAUSE and PFC frames are counted as pause frames"),
    }
}

fn schedule_expire(
    at_time: crate::time::SimTime,
    lane: Lane,
    (node, port): (NodeIdx, PortIdx),
    ctx: &mut Ctx,
) {
    ctx.q
        .schedule(at_time, EventKind::PauseExpire { node, port, lane });
}

fn schedule_refresh(
    at_time: crate::time::SimTime,
    lane: Lane,
    (node, port): (NodeIdx, PortIdx),
    ctx: &mut Ctx,
) {
    ctx.q
        .schedule(at_time, EventKind::PauseRefresh { node, port, lane });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{qcn::Cnm, CcMsg, Scheme};
    use crate::net::host::ReceiverPfc;
    use crate::net::Node;
    use crate::testkit::TestNet;
    use crate::time::SimTime;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// Host "a" with `data_frames` frames of 1,500 B queued at t = 0 (1.2 us each at 10 Gb/s);
    /// at 0.5 us, mid-frame, `act` gets its port. Returns what a put on its link, in order:
    /// "data", "cnm", or "pfc" and the class.
    fn sent_after(
        data_frames: usize,
        act: impl FnOnce(&mut Port, &mut Ctx) + 'static,
    ) -> Vec<String> {
        let mut kit = TestNet::two_hosts(Scheme::None);
        let (nodes, ctx) = kit.ctx();
        let Node::Host(a) = &mut nodes[0] else {
            unreachable!("node 0 is host a")
        };
        for _ in 0..data_frames {
            a.enqueue_generated(0, Frame::data(0, 1, 1500, SimTime::ZERO), ctx);
        }
        kit.at(SimTime::from_nanos(500), |net| {
            let (nodes, ctx) = net.ctx();
            act(nodes[0].port_mut(0), ctx);
            nodes[0].try_transmit(0, 0, ctx);
        });
        let sent = Rc::new(RefCell::new(Vec::new()));
        let log = Rc::clone(&sent);
        kit.run_until(SimTime::from_micros(10), move |net, ev| {
            if let EventKind::Arrive { node: 0, slot, .. } = *ev {
                log.borrow_mut()
                    .push(match net.ctx.frames.get(slot).payload {
                        Payload::Data { .. } => "data".to_string(),
                        Payload::Cc(_) => "cnm".to_string(),
                        Payload::Pfc { class, .. } => format!("pfc{class}"),
                        other => format!("{other:?}"),
                    });
            }
        });
        sent.take()
    }

    fn queue_cnm(port: &mut Port, ctx: &Ctx) {
        let msg = CcMsg::Cnm(Cnm { qfb: 1, cpid: 0 });
        (port.ctrl_q).push_back(Frame::control(Payload::Cc(msg), 0, 1, 1, 64, ctx.q.now()));
    }

    #[test]
    fn a_pfc_frame_is_sent_ahead_of_the_cnms_queued_before_it() {
        // Two CNMs are queued while a's first frame is on the wire, then its receiver asks for
        // XOFF on class 3: the PFC frame, a MAC Control frame, goes right after the frame in
        // progress, ahead of the CNMs (client frames of the MAC), and the second data frame
        // after them (control frames go before data); the XOFF's refresh follows at half its
        // 5.12 us pause.
        let sent = sent_after(2, |port, ctx| {
            queue_cnm(port, ctx);
            queue_cnm(port, ctx);
            assert!(port.hold_peer(Lane::class(3), true, 100, (0, 0), ctx));
        });
        assert_eq!(sent, ["data", "pfc3", "cnm", "cnm", "data", "pfc3"]);
    }

    #[test]
    fn pfc_frames_keep_their_order_among_themselves() {
        // XOFF for classes 3 and then 5 while a CNM waits: both ahead of it, in their order (and
        // their refreshes later).
        let sent = sent_after(1, |port, ctx| {
            queue_cnm(port, ctx);
            assert!(port.hold_peer(Lane::class(3), true, 100, (0, 0), ctx));
            assert!(port.hold_peer(Lane::class(5), true, 100, (0, 0), ctx));
        });
        assert_eq!(sent, ["data", "pfc3", "pfc5", "cnm", "pfc3", "pfc5"]);
    }

    #[test]
    fn a_newer_pause_time_takes_the_place_of_the_lanes_waiting_frame() {
        // XOFF on classes 3 and 5, then XON on class 3, before the link sends any of them: one
        // frame waits per lane, class 3's now the XON (in its XOFF's place, ahead of class 5's),
        // counted as one XON and one XOFF by the network and as one XON by class 3's lane.
        let mut kit = TestNet::two_hosts(Scheme::None);
        let (nodes, ctx) = kit.ctx();
        let port = nodes[0].port_mut(0);
        for (class, want) in [(3, true), (5, true), (3, false)] {
            assert!(port.hold_peer(Lane::class(class), want, 100, (0, 0), ctx));
        }
        let waiting: Vec<Payload> = port.ctrl_q.iter().map(|f| f.payload).collect();
        let pfc = |class, quanta| Payload::Pfc { class, quanta };
        assert_eq!(waiting, [pfc(3, 0), pfc(5, 100)]);
        let sent = |kind: ControlKind| ctx.counters.control_sent[kind.index()];
        assert_eq!(
            (sent(ControlKind::PfcXoff), sent(ControlKind::PfcXon)),
            (1, 1)
        );
        assert_eq!(ctx.counters.control_bytes, 2 * 64);
        let lanes = port.pfc.as_ref().expect("PFC touched the port");
        assert_eq!(lanes.lane(3).frames_sent(), (0, 1));
        assert_eq!(lanes.lane(5).frames_sent(), (1, 0));
    }

    #[test]
    fn a_lane_refreshed_faster_than_its_link_sends_keeps_one_frame_waiting() {
        // Host a's receiver holds b on class 3 for one quantum (51.2 ns at 10 Gb/s) from 0.5 us,
        // mid-frame, so the XOFF is refreshed every 25.6 ns, while a 64-byte PFC frame takes
        // 51.2 ns to send; at 5 us it lets b go. One frame waits at most, and every frame
        // counted reaches b: the XOFFs the link had time for from the data frame's end
        // (1.2 us) to 5 us, then the XON, not the 176 refreshes queued one after another.
        let mut kit = TestNet::two_hosts(Scheme::None);
        kit.host(0).rx.pfc = Some(Box::new(ReceiverPfc {
            quanta: 1,
            ..ReceiverPfc::default()
        }));
        let (nodes, ctx) = kit.ctx();
        let Node::Host(a) = &mut nodes[0] else {
            unreachable!("node 0 is host a")
        };
        a.enqueue_generated(0, Frame::data(0, 1, 1500, SimTime::ZERO), ctx);
        for (at_ns, want) in [(500, true), (5000, false)] {
            kit.at(SimTime::from_nanos(at_ns), move |net| {
                let (nodes, ctx) = net.ctx();
                assert!(nodes[0]
                    .port_mut(0)
                    .hold_peer(Lane::class(3), want, 1, (0, 0), ctx));
                nodes[0].try_transmit(0, 0, ctx);
            });
        }
        let (mut most_waiting, mut xoff_arrived, mut xon_arrived) = (0, 0, 0);
        kit.run_until(SimTime::from_micros(10), |net, ev| {
            most_waiting = most_waiting.max(net.nodes[0].port(0).ctrl_q.len());
            if let EventKind::Arrive { node: 0, slot, .. } = *ev {
                match net.ctx.frames.get(slot).payload {
                    Payload::Pfc { quanta: 0, .. } => xon_arrived += 1,
                    Payload::Pfc { .. } => xoff_arrived += 1,
                    _ => {}
                }
            }
        });
        assert_eq!(most_waiting, 1);
        let sent = |kind: ControlKind| kit.net.ctx.counters.control_sent[kind.index()];
        assert_eq!(sent(ControlKind::PfcXoff), xoff_arrived);
        assert_eq!((sent(ControlKind::PfcXon), xon_arrived), (1, 1));
        // The link is busy with PFC frames from 1.2 us until the XON leaves.
        assert_eq!(xoff_arrived, 75);
    }
}
