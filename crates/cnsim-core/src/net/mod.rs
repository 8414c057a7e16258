//! The network elements. A frame's path through the code is its path through the network:
//! source -> host VOQ -> host port -> pipe -> switch (buffer, output queue) -> port -> pipe ->
//! ... -> host receiver (sink).

pub mod forwarding;
pub mod frame;
pub mod host;
pub mod port;
pub mod scheduler;
pub mod switch;
pub mod switch_pfc;

use crate::cc::Scheme;
use crate::engine::{EventKind, EventQueue, NodeIdx, PortIdx};
use crate::flows::FlowTable;
use crate::stats::{Counters, DropPlace};
use frame::Frame;
use host::Host;
use port::{PauseTimer, Port};
use switch::Switch;

/// What an element may touch besides itself: the clock/event queue, global counters and the
/// flow records.
pub struct Ctx<'a> {
    pub q: &'a mut EventQueue,
    pub counters: &'a mut Counters,
    pub flows: &'a mut FlowTable,
    pub scheme: &'a Scheme,
    pub control_bytes: u32,
}

impl Ctx<'_> {
    /// Counts a data frame lost at `place`, against its flow too.
    pub fn drop_frame(&mut self, place: DropPlace, frame: &Frame) {
        self.counters.drop(place);
        self.flows.on_dropped(frame);
    }
}

pub enum Node {
    Host(Box<Host>),
    Switch(Box<Switch>),
}

impl Node {
    pub fn name(&self) -> &str {
        match self {
            Node::Host(h) => &h.name,
            Node::Switch(s) => &s.name,
        }
    }

    pub fn ports(&self) -> &[Port] {
        match self {
            Node::Host(h) => std::slice::from_ref(&h.port),
            Node::Switch(s) => &s.ports,
        }
    }

    pub fn port_mut(&mut self, p: PortIdx) -> &mut Port {
        match self {
            Node::Host(h) => &mut h.port,
            Node::Switch(s) => &mut s.ports[p as usize],
        }
    }

    /// Starts the next frame on port `p` if it is idle and has something it may send.
    pub fn try_transmit(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        match self {
            Node::Host(h) => h.try_transmit(me, ctx),
            Node::Switch(s) => s.try_transmit(me, p, ctx),
        }
    }

    /// A frame arrived on port `p` from the link.
    pub fn receive(&mut self, me: NodeIdx, p: PortIdx, frame: Frame, ctx: &mut Ctx) {
        match self {
            Node::Host(h) => h.receive(me, frame, ctx),
            Node::Switch(s) => s.receive(me, p, frame, ctx),
        }
    }

    /// The pause timer of port `p` fired: re-arm it if the pause was renewed, else resume.
    pub fn on_pause_expire(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        let now = ctx.q.now();
        match self.port_mut(p).on_pause_timer(now) {
            PauseTimer::Stale => return,
            PauseTimer::Rearm(at) => {
                ctx.q
                    .schedule(at, EventKind::PauseExpire { node: me, port: p });
                return;
            }
            PauseTimer::Expired => {}
        }
        if let Node::Host(h) = self {
            h.set_rate_limiters_paused(false, now);
        }
        self.try_transmit(me, p, ctx);
    }

    /// Class `class`'s PFC timer on port `p` fired: re-arm it if renewed, else resume.
    pub fn on_pfc_expire(&mut self, me: NodeIdx, p: PortIdx, class: usize, ctx: &mut Ctx) {
        if crate::flow_control::pfc::on_pfc_expire(self.port_mut(p), class, (me, p), ctx) {
            self.try_transmit(me, p, ctx);
        }
    }

    pub fn on_pfc_refresh(&mut self, me: NodeIdx, p: PortIdx, class: usize, ctx: &mut Ctx) {
        let quanta = match self {
            Node::Host(h) => h.rx_pfc_quanta(),
            Node::Switch(s) => s.pfc_quanta(),
        };
        let port = self.port_mut(p);
        if crate::flow_control::pfc::refresh_class_xoff(port, class, quanta, (me, p), ctx) {
            self.try_transmit(me, p, ctx);
        }
    }

    pub fn on_xoff_refresh(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        let quanta = match self {
            Node::Host(h) => h.rx_pause_quanta(),
            Node::Switch(s) => s.pause_quanta(),
        };
        if crate::flow_control::pause::refresh_xoff(self.port_mut(p), quanta, (me, p), ctx) {
            self.try_transmit(me, p, ctx);
        }
    }
}

/// Schedules the transmit-done event of a frame that just started.
pub(crate) fn schedule_tx_done(
    ctx: &mut Ctx,
    done: crate::time::SimTime,
    node: NodeIdx,
    port: PortIdx,
) {
    ctx.q.schedule(done, EventKind::TxDone { node, port });
}
