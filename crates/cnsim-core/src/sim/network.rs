//! The network a run simulates: its elements, the clock and event queue, the global counters,
//! the flow table and the scheme, with the dispatch of every element event (a frame's
//! transmission and arrival, pause lanes, host wake-ups, receivers, RP timers). `Simulation`
//! owns one and adds what a run has around it (sources, flow starts, rate changes, probes, the
//! report window); the test kit (`testkit.rs`) owns one and adds scheduled test actions. So the
//! tests drive the elements through the same dispatch as a run.

use crate::cc::Scheme;
use crate::engine::{self, EventKind, EventQueue, NodeIdx, PortIdx};
use crate::flows::{FlowRecords, FlowTable};
use crate::net::frame_store::{FrameSlot, FrameStore};
use crate::net::path;
use crate::net::port::Port;
use crate::net::telemetry::TelemetryStore;
use crate::net::{Ctx, Node};
use crate::stats::{Counters, DropPlace, HostCounters};
use crate::time::SimTime;

pub(crate) struct Network {
    pub(crate) nodes: Vec<Node>,
    /// The clock and event queue, counters, flows, scheme and telemetry the elements share:
    /// owned here beside the nodes, so an event hands an element one pointer to it.
    pub(crate) ctx: Ctx,
}

impl Network {
    pub(crate) fn new(
        mut nodes: Vec<Node>,
        flows: FlowTable,
        scheme: Scheme,
        control_bytes: u32,
    ) -> Network {
        let stamps = scheme.stamps_telemetry();
        for node in &mut nodes {
            if let Node::Switch(s) = node {
                s.stamps_telemetry = stamps;
            }
        }
        let slot_shift = event_slot_shift_for(&nodes);
        Network {
            nodes,
            ctx: Ctx {
                q: EventQueue::with_slot_shift(slot_shift),
                counters: Counters::default(),
                flows,
                telemetry: TelemetryStore::default(),
                frames: FrameStore::default(),
                scheme,
                control_bytes,
                messages_ride_data: false,
            },
        }
    }

    /// The event queue's slot width, as a power of two of ps (`engine::slot_shift_for`).
    #[cfg(test)]
    pub(crate) fn event_slot_shift(&self) -> u32 {
        self.ctx.q.slot_shift()
    }

    /// The elements, and what they may touch besides themselves.
    #[inline(always)]
    pub(crate) fn ctx(&mut self) -> (&mut Vec<Node>, &mut Ctx) {
        (&mut self.nodes, &mut self.ctx)
    }

    /// Hands an element event to the element it concerns. The run's own events (sources, flow
    /// starts, rate changes, probes, window marks) belong to its owner.
    #[inline(always)]
    pub(crate) fn dispatch(&mut self, ev: EventKind) {
        match ev {
            EventKind::PortFree { node, port } => {
                let (nodes, ctx) = self.ctx();
                if let Node::Switch(s) = &mut nodes[node as usize] {
                    s.on_port_free(node, port, ctx);
                }
            }
            EventKind::Arrive { node, port, .. } => self.on_arrive(node, port),
            EventKind::PauseExpire { node, port, lane } => {
                let (nodes, ctx) = self.ctx();
                nodes[node as usize].on_pause_expire(node, port, lane, ctx);
            }
            EventKind::PauseRefresh { node, port, lane } => {
                let (nodes, ctx) = self.ctx();
                nodes[node as usize].on_pause_refresh(node, port, lane, ctx);
            }
            EventKind::HostWake { node, generation } => {
                let (nodes, ctx) = self.ctx();
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.on_wake(node, generation, ctx);
                }
            }
            EventKind::RxDone(node) => {
                let (nodes, ctx) = self.ctx();
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.on_rx_done(node, ctx);
                }
            }
            EventKind::RpTimer { node, slot, ticket } => {
                let (nodes, ctx) = self.ctx();
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.on_rp_timer(node, slot, ticket, ctx);
                }
            }
            EventKind::TransportTimer { node, flow } => {
                let (nodes, ctx) = self.ctx();
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.on_transport_timer(node, flow, ctx);
                }
            }
            EventKind::TransportAckTimer { node, flow } => {
                let (nodes, ctx) = self.ctx();
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.on_transport_ack_timer(node, flow, ctx);
                }
            }
            EventKind::AppWrite { node, flow } => {
                let (nodes, ctx) = self.ctx();
                if let Node::Host(h) = &mut nodes[node as usize] {
                    h.on_app_write(node, flow, ctx);
                }
            }
            other => unreachable!("{other:?} is not an element event"),
        }
    }

    /// Counts in the switch ports' statistics (and frame-hops) every frame whose last bit has
    /// left by `by`: before the counters are read, since a switch port counts a frame lazily
    /// (`Port::settle`).
    pub(crate) fn settle_ports(&mut self, by: SimTime) {
        for node in &mut self.nodes {
            if let Node::Switch(s) = node {
                for port in &mut s.ports {
                    self.ctx.counters.frame_hops += port.settle(by) as u64;
                }
            }
        }
    }

    /// The head of `node`'s pipe on `port` reaches the peer.
    fn on_arrive(&mut self, node: NodeIdx, port: PortIdx) {
        let (nodes, ctx) = self.ctx();
        let p = nodes[node as usize].port_mut(port);
        if p.loss.is_some() {
            // Out of line: a check between popping the frame and handing it over made every
            // arrival copy the frame twice (2% of the event loop on a lossless network).
            return self.on_arrive_lossy(node, port);
        }
        let (slot, peer, peer_port) = pop_pipe_head(p, node, port, ctx);
        nodes[peer as usize].receive(peer, peer_port, slot, ctx);
    }

    /// As `on_arrive`, on a link direction that may lose the frame (`net/link_loss.rs`).
    #[inline(never)]
    fn on_arrive_lossy(&mut self, node: NodeIdx, port: PortIdx) {
        let (nodes, ctx) = self.ctx();
        let p = nodes[node as usize].port_mut(port);
        let (slot, peer, peer_port) = pop_pipe_head(p, node, port, ctx);
        if p.loss
            .as_deref_mut()
            .is_some_and(|l| l.loses(ctx.frames.get(slot)))
        {
            let frame = ctx.frames.take(slot);
            if frame.is_data() {
                ctx.drop_frame(DropPlace::Link, &frame);
            } else {
                ctx.drop_control(&frame);
            }
            return;
        }
        nodes[peer as usize].receive(peer, peer_port, slot, ctx);
    }

    /// The records of flows `ids`, each with its idle-network FCT along its path.
    pub(crate) fn flow_records(&self, ids: std::ops::Range<usize>) -> FlowRecords {
        let per_flow = path::paths_per_flow(&self.nodes);
        (self.ctx.flows).records(ids, per_flow, |src, dst, flow| {
            path::path_stages(&self.nodes, src, dst, flow)
        })
    }

    pub(crate) fn host_counters(&self) -> Vec<HostCounters> {
        self.nodes
            .iter()
            .filter_map(|n| match n {
                Node::Host(h) => Some(h.counters),
                Node::Switch(_) => None,
            })
            .collect()
    }

    /// Data frames inside the network (queues, transmitters, links, receivers) right now.
    pub(crate) fn data_frames_in_flight(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| match n {
                Node::Host(h) => h.data_frames_held(&self.ctx.frames),
                Node::Switch(s) => s.data_frames_held(&self.ctx.frames),
            })
            .sum()
    }
}

/// The head of port `p`'s pipe (`port` of `node`) reaches the peer: schedules the next
/// frame's arrival. Returns the arriving frame's slot in the store, the peer and its port.
#[inline(always)]
fn pop_pipe_head(
    p: &mut Port,
    node: NodeIdx,
    port: PortIdx,
    ctx: &mut Ctx,
) -> (FrameSlot, NodeIdx, PortIdx) {
    let (slot, next) = p.pop_arrival();
    if let Some(next) = next {
        ctx.q
            .schedule(next.arrival, p.arrival_event(node, port, next));
    }
    (slot, p.peer_node, p.peer_port)
}

/// The event queue's slot width for these nodes (`engine::slot_shift_for`): from the fastest
/// line rate of any port and the longest one-way delay (0 and 0 with no port). A rate
/// schedule's changes are not counted: the width changes the speed of a run, never its order
/// of events.
fn event_slot_shift_for(nodes: &[Node]) -> u32 {
    let ports = nodes.iter().flat_map(Node::ports);
    let (fastest_bps, longest_delay) = ports.fold((0.0, SimTime::ZERO), |(rate, delay), p| {
        (f64::max(rate, p.line_rate_bps), delay.max(p.delay))
    });
    engine::slot_shift_for(fastest_bps, longest_delay)
}
