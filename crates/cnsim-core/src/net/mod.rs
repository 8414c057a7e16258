//! The network elements. A frame's path through the code is its path through the network:
//! source -> host VOQ -> host port -> pipe -> switch (buffer, output queue) -> port -> pipe ->
//! ... -> host receiver (sink).

pub(crate) mod forwarding;
pub(crate) mod frame;
pub(crate) mod frame_store;
pub(crate) mod host;
pub(crate) mod link_loss;
pub(crate) mod link_pause;
pub(crate) mod path;
pub(crate) mod pipe;
pub(crate) mod port;
pub(crate) mod scheduler;
pub(crate) mod switch;
pub(crate) mod switch_pause;
pub(crate) mod switch_pfc;
pub(crate) mod switch_tx;
pub(crate) mod telemetry;

use crate::cc::{CcMsg, Scheme};
use crate::engine::{EventQueue, NodeIdx, PortIdx};
use crate::flow_control::Lane;
use crate::flows::FlowTable;
use crate::stats::{Counters, DropPlace};
use frame::Frame;
use frame_store::{FrameSlot, FrameStore};
use host::Host;
use port::Port;
use switch::Switch;
use telemetry::TelemetryStore;

/// What an element may touch besides itself: the clock/event queue, global counters and the
/// flow records. The network owns it beside its nodes (`Network::ctx`), so an event hands the
/// element one pointer: a struct of six references built for every event cost about 12
/// instructions an event on the 6,144-host fabric, and each use one more load.
pub(crate) struct Ctx {
    pub(crate) q: EventQueue,
    pub(crate) counters: Counters,
    pub(crate) flows: FlowTable,
    pub(crate) scheme: Scheme,
    /// Size of PAUSE/PFC frames on the wire.
    pub(crate) control_bytes: u32,
    /// In-band telemetry of the stamped frames in flight.
    pub(crate) telemetry: TelemetryStore,
    /// The frames on the links (`frame_store.rs`).
    pub(crate) frames: FrameStore,
    /// A scheme's messages queue with the data (`model.message_queue = "data"`), not in the
    /// control queue.
    pub(crate) messages_ride_data: bool,
}

impl Ctx {
    /// Counts a data frame lost at `place`, against its flow too.
    pub(crate) fn drop_frame(&mut self, place: DropPlace, frame: &Frame) {
        self.counters.drop(place);
        self.flows.on_dropped(frame.flow_id);
        self.telemetry.release(frame.payload.telemetry());
    }

    /// Whether the scheme's message `msg` waits with the data at a port: by its scheme's
    /// design (E2CM's forward probes) or by `model.message_queue`.
    #[inline]
    pub(crate) fn rides_data_queue(&self, msg: &CcMsg) -> bool {
        self.messages_ride_data || msg.rides_data_queue()
    }

    /// Counts a control frame lost (a full buffer, a lossy link).
    pub(crate) fn drop_control(&mut self, frame: &Frame) {
        self.counters.control_dropped += 1;
        self.telemetry.release(frame.payload.telemetry());
    }
}

pub(crate) enum Node {
    Host(Box<Host>),
    Switch(Box<Switch>),
}

impl Node {
    pub(crate) fn name(&self) -> &str {
        match self {
            Node::Host(h) => &h.name,
            Node::Switch(s) => &s.name,
        }
    }

    pub(crate) fn ports(&self) -> &[Port] {
        match self {
            Node::Host(h) => std::slice::from_ref(&h.port),
            Node::Switch(s) => &s.ports,
        }
    }

    #[cfg(test)]
    pub(crate) fn port(&self, p: PortIdx) -> &Port {
        match self {
            Node::Host(h) => &h.port,
            Node::Switch(s) => &s.ports[p as usize],
        }
    }

    pub(crate) fn port_mut(&mut self, p: PortIdx) -> &mut Port {
        match self {
            Node::Host(h) => &mut h.port,
            Node::Switch(s) => &mut s.ports[p as usize],
        }
    }

    /// Starts the next frame on port `p` if it is idle and has something it may send.
    pub(crate) fn try_transmit(&mut self, me: NodeIdx, p: PortIdx, ctx: &mut Ctx) {
        match self {
            Node::Host(h) => h.try_transmit(me, ctx),
            Node::Switch(s) => s.try_transmit(me, p, ctx),
        }
    }

    /// The frame in `slot` of the store arrived on port `p` from the link: a host takes it
    /// out of the store, a switch keeps it there if it buffers it (`Switch::receive`). Always
    /// inline: once per frame-hop, and the compiler's choice flipped with small changes
    /// elsewhere (docs/performance.md).
    #[inline(always)]
    pub(crate) fn receive(&mut self, me: NodeIdx, p: PortIdx, slot: FrameSlot, ctx: &mut Ctx) {
        match self {
            Node::Host(h) => h.receive(me, ctx.frames.take(slot), ctx),
            Node::Switch(s) => s.receive(me, p, slot, ctx),
        }
    }

    /// The peer's pause on `lane` of port `p` may have ended (`EventKind::PauseExpire`).
    pub(crate) fn on_pause_expire(&mut self, me: NodeIdx, p: PortIdx, lane: Lane, ctx: &mut Ctx) {
        match self {
            Node::Host(h) => h.on_pause_expire(me, lane, ctx),
            Node::Switch(s) => s.on_pause_expire(me, p, lane, ctx),
        }
    }

    /// Re-send XOFF on `lane` of port `p` while this node still holds the peer
    /// (`EventKind::PauseRefresh`).
    pub(crate) fn on_pause_refresh(&mut self, me: NodeIdx, p: PortIdx, lane: Lane, ctx: &mut Ctx) {
        let quanta = match self {
            Node::Host(h) => h.pause_quanta(lane),
            Node::Switch(s) => s.pause_quanta(lane),
        };
        if self
            .port_mut(p)
            .on_pause_refresh(lane, quanta, (me, p), ctx)
        {
            self.try_transmit(me, p, ctx);
        }
    }
}
