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
    /// schedules the refresh it asks for.
    fn queue_pause_frame(
        &mut self,
        lane: Lane,
        frame: PauseFrame,
        at: (NodeIdx, PortIdx),
        ctx: &mut Ctx,
    ) {
        let PauseFrame { quanta, refresh_at } = frame;
        let (payload, kind) = match (lane.pfc_class(), quanta) {
            (None, 0) => (Payload::Pause { quanta }, ControlKind::Xon),
            (None, _) => (Payload::Pause { quanta }, ControlKind::Xoff),
            (Some(class), _) => {
                let class = class as u8;
                let kind = if quanta == 0 {
                    ControlKind::PfcXon
                } else {
                    ControlKind::PfcXoff
                };
                (Payload::Pfc { class, quanta }, kind)
            }
        };
        let bytes = ctx.control_bytes;
        let no_host = u32::MAX; // link-local: addressed to no host, never routed
        let pause = Frame::control(payload, no_host, no_host, no_host, bytes, ctx.q.now());
        self.ctrl_q.push_back(pause);
        ctx.counters.control(kind, bytes);
        if let Some(due) = refresh_at {
            schedule_refresh(due, lane, at, ctx);
        }
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
