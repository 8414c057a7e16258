//! Cache prefetching for the event loop. On a large topology every host and port is cold when
//! its event comes (thousands of other events ran since it was last touched), and the loop
//! waited on one cache miss after another. The next events are known (the event queue's
//! current slot is a sorted run), so the loop asks the CPU to start loading what they will
//! touch, in four stages one event apart, each reading only what the event names (and a
//! table of the ports' addresses) or what the stage before loaded for that event one event
//! earlier. While an event is handled:
//! - the fourth event after it gets its element loaded (its port, source or host; for an
//!   arrival the sending port's first 64 bytes, what the handler reads there, and the
//!   arriving frame, whose slot in the frame store the event names);
//! - the third, what that element points at: the pipe's first entries (the arriving frame's,
//!   and the next arrival the handler schedules), the node the frame arrives at (the event
//!   names it too); a freed switch port's next frame and the pipe entry it will be written
//!   to; a waking host's next VOQ and the slots its next frame will be written to;
//! - the second, the forwarding entry that switch reads for the frame and the first line of
//!   its PFC record; the flow record that VOQ sends from;
//! - the next one, the output port the frame will be queued on (the fields a leaving frame
//!   touches, not the names and pause state after them; its congestion point, if the switch
//!   has any), what PFC's admission reads (the ingress port's lanes and paused classes, the
//!   class's statistics; the switch's PFC record's first line the stage before, with the
//!   forwarding entry), or at a host the frame's flow record.
//!
//! The first two stages were there first (docs/performance.md); the last two took the
//! 6,144-host fabric's loop about 10% further (docs/performance.md, "Session 14").
//!
//! The prefetches cost instructions (14% more on the 1024-host tree), and on a small network
//! everything stays in the cache, so the loop prefetches only when the elements' state is
//! larger than `MIN_STATE_BYTES`.
//!
//! Prefetches are hints: they read no memory the simulation depends on and change no state,
//! so outputs are identical with or without them; only the wall time changes
//! (docs/performance.md).

use crate::engine::{EventKind, EventQueue, NodeIdx, PortIdx};
use crate::flows::FlowTable;
use crate::net::frame::Frame;
use crate::net::frame_store::FrameStore;
use crate::net::port::Port;
use crate::net::Node;
use crate::traffic::Source;

/// Below this much host, port and source state, a run prefetches nothing: the per-core L2
/// cache of this machine kind (1 MB), where the state stays between its events. The 128-host
/// tree (about 0.2 MB) runs within 6% of the 16-host one per hop without prefetching; the
/// 1024-host tree (1.4 MB) ran twice as slow per hop before it, and runs 10% faster with it
/// now; a 384-host Clos (0.65 MB) ran 25% slower with it (docs/performance.md, "Session 24").
const MIN_STATE_BYTES: usize = 1024 * 1024;

/// Whether prefetching pays on this network: its elements' state outgrows the cache.
pub(super) fn worthwhile(nodes: &[Node], sources: &[Source]) -> bool {
    let state_bytes: usize = nodes
        .iter()
        .map(|n| match n {
            Node::Host(_) => std::mem::size_of::<crate::net::host::Host>(),
            Node::Switch(s) => s.ports.len() * std::mem::size_of::<Port>(),
        })
        .sum::<usize>()
        + std::mem::size_of_val(sources);
    state_bytes > MIN_STATE_BYTES
}

/// What the prefetcher reads: the elements, the sources, the flows and the frames on links.
pub(super) struct State<'a> {
    pub(super) nodes: &'a [Node],
    pub(super) sources: &'a [Source],
    pub(super) flows: &'a FlowTable,
    pub(super) frames: &'a FrameStore,
    /// Where each node's ports start (`port_addresses`).
    pub(super) ports_at: &'a [usize],
}

/// The address of each node's first port, by node: the first stage finds an event's port from
/// its indices alone, without loading the node's record for the place of its ports (a
/// dependent load before every first-stage prefetch of a port; docs/performance.md, "Session
/// 25"). Addresses only, never read through: the ports do not move once built, and a stale
/// one would only make a useless hint.
pub(super) fn port_addresses(nodes: &[Node]) -> Vec<usize> {
    nodes.iter().map(|n| n.ports().as_ptr() as usize).collect()
}

/// The first byte of `port` of `node` (any address if out of range: a hint's target only).
fn port_address(state: &State, node: NodeIdx, port: PortIdx) -> Option<*const i8> {
    let base = *state.ports_at.get(node as usize)?;
    Some((base + port as usize * std::mem::size_of::<Port>()) as *const i8)
}

/// Prefetches for the events after the one about to be dispatched.
pub(super) fn ahead(q: &EventQueue, state: &State) {
    let upcoming = q.upcoming();
    if let Some(ev) = upcoming.get(4) {
        element(ev, state);
    }
    if let Some(ev) = upcoming.get(3) {
        targets(ev, state);
    }
    if let Some(ev) = upcoming.get(2) {
        route(ev, state);
    }
    if let Some(ev) = upcoming.get(1) {
        output(ev, state);
    }
}

fn port_of(nodes: &[Node], node: NodeIdx, port: PortIdx) -> Option<&Port> {
    nodes.get(node as usize)?.ports().get(port as usize)
}

/// Stage one: the state the event's handler starts from.
fn element(ev: EventKind, state: &State) {
    let (nodes, sources) = (state.nodes, state.sources);
    match ev {
        EventKind::PortFree { node, port } => {
            if let Some(p) = port_address(state, node, port) {
                bytes_at(p, std::mem::size_of::<Port>());
            }
        }
        EventKind::Arrive {
            node, port, slot, ..
        } => {
            if let Some(p) = port_address(state, node, port) {
                bytes_at(p, crate::net::port::ARRIVAL_FIELDS_BYTES);
            }
            if let Some(frame) = state.frames.peek(slot) {
                lines(frame);
            }
        }
        EventKind::SourceArrival(s) => {
            if let Some(src) = sources.get(s as usize) {
                lines(src);
            }
        }
        EventKind::HostWake { node, .. } => {
            if let Some(Node::Host(h)) = nodes.get(node as usize) {
                lines(&**h);
            }
        }
        _ => {}
    }
}

/// Stage two: what the stage-one state points at.
fn targets(ev: EventKind, state: &State) {
    let (nodes, sources) = (state.nodes, state.sources);
    match ev {
        EventKind::Arrive {
            node, port, peer, ..
        } => {
            if let Some(entry) = port_of(nodes, node, port).and_then(Port::pipe_front) {
                first_bytes(entry, 2 * std::mem::size_of_val(entry));
            }
            match nodes.get(peer as usize) {
                Some(Node::Host(h)) => lines(&**h),
                Some(Node::Switch(s)) => lines(&**s),
                None => {}
            }
        }
        EventKind::PortFree { node, port } => {
            if let Some(p) = port_of(nodes, node, port) {
                if let Some(f) = p.data_q.front() {
                    lines(f);
                }
                if let Some(entry) = p.pipe_next_slot() {
                    first_line(entry);
                }
            }
        }
        EventKind::SourceArrival(s) => {
            let node = sources.get(s as usize).map(|src| src.node as usize);
            if let Some(Node::Host(h)) = node.and_then(|n| nodes.get(n)) {
                lines(&**h);
            }
        }
        EventKind::HostWake { node, .. } => {
            let h = host(nodes, node);
            if let Some(voq) = h.and_then(|h| h.next_voq()) {
                lines(voq);
            }
            if let Some(entry) = h.and_then(|h| h.port.pipe_next_slot()) {
                lines(entry);
            }
            if let Some(frame) = state.frames.next_slot() {
                lines(frame);
            }
        }
        _ => {}
    }
}

fn host(nodes: &[Node], node: NodeIdx) -> Option<&crate::net::host::Host> {
    match nodes.get(node as usize)? {
        Node::Host(h) => Some(h),
        Node::Switch(_) => None,
    }
}

/// The frame an `Arrive` event brings and the node it arrives at.
fn arriving<'a>(ev: EventKind, state: &State<'a>) -> Option<(&'a Frame, &'a Node)> {
    let EventKind::Arrive { slot, peer, .. } = ev else {
        return None;
    };
    Some((state.frames.peek(slot)?, state.nodes.get(peer as usize)?))
}

/// Stage three: the forwarding entry a switch reads for the arriving frame; the flow a waking
/// host's next VOQ sends from.
fn route(ev: EventKind, state: &State) {
    let (nodes, flows) = (state.nodes, state.flows);
    match ev {
        EventKind::Arrive { .. } => {
            if let Some((frame, Node::Switch(s))) = arriving(ev, state) {
                if let Some(entry) = s.route.entry_for(frame.dst) {
                    first_line(entry);
                }
                if let Some(pfc) = s.pfc.as_deref() {
                    first_line(pfc);
                }
            }
        }
        EventKind::HostWake { node, .. } => {
            let voq = host(nodes, node).and_then(|h| h.next_voq());
            if let Some(f) = voq.and_then(|v| flows.flows.get(*v.flows.front()? as usize)) {
                lines(f);
            }
        }
        _ => {}
    }
}

/// Stage four: the output port the arriving frame is queued on, or its flow at a host.
fn output(ev: EventKind, state: &State) {
    let flows = state.flows;
    if let EventKind::Arrive { node, port, .. } = ev {
        match arriving(ev, state) {
            Some((frame, Node::Switch(s))) => {
                let Some(out) = s.route.port_if_routed(frame) else {
                    return; // PAUSE, PFC: handled where they arrive
                };
                if let Some(pfc) = s.pfc.as_deref() {
                    // The port the frame comes in by: the sending port's peer port.
                    if let Some(sender) = port_of(state.nodes, node, port) {
                        let class = frame.priority as usize;
                        for (at, bytes) in pfc.admission_lines(sender.peer_port as usize, class) {
                            bytes_at(at.cast(), bytes);
                        }
                    }
                }
                let out = out as usize;
                if let Some(port) = s.ports.get(out) {
                    first_bytes(port, crate::net::port::OUTPUT_FIELDS_BYTES);
                }
                if let Some(cp) = s.cps.get(out) {
                    first_line(cp);
                }
            }
            Some((frame, Node::Host(_))) => {
                if let Some(f) = flows.flows.get(frame.flow_id as usize) {
                    lines(f);
                }
            }
            None => {}
        }
    }
}

/// Asks the CPU to bring the cache line `value` starts in.
#[inline]
fn first_line<T>(value: &T) {
    prefetch_at((value as *const T).cast::<i8>());
}

/// Asks the CPU to bring every cache line of `value` into the cache.
#[inline]
fn lines<T>(value: &T) {
    first_bytes(value, std::mem::size_of::<T>());
}

/// Asks the CPU to bring the lines of the first `bytes` bytes of `value` into the cache.
#[inline]
fn first_bytes<T>(value: &T, bytes: usize) {
    bytes_at((value as *const T).cast::<i8>(), bytes);
}

/// Asks the CPU to bring the lines of the `bytes` bytes from `start` into the cache.
#[inline]
fn bytes_at(start: *const i8, bytes: usize) {
    for offset in (0..bytes).step_by(64) {
        prefetch_at(start.wrapping_add(offset));
    }
    // The line of the last byte, when `start` is not at a line's start.
    prefetch_at(start.wrapping_add(bytes.saturating_sub(1)));
}

/// Asks the CPU to load the cache line at `address` (any address: a hint).
#[inline]
fn prefetch_at(address: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault, whatever the
    // address; the callers pass addresses of live values, or computed from where they were.
    unsafe {
        std::arch::x86_64::_mm_prefetch(address, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::frame::Payload;
    use crate::time::SimTime;

    #[test]
    fn a_pause_frame_arriving_at_a_switch_is_looked_ahead_at_without_routing_it() {
        let scenario = crate::resolve(crate::testkit::STAR, &[], None).expect("valid scenario");
        // PAUSE and PFC frames are link-local, addressed to no host: there is no route to
        // look up for them, and a hint must not try (the 6,144-host fabric's first PFC frame
        // between two switches stopped a run with an index out of bounds).
        let no_host = u32::MAX;
        for payload in [
            Payload::Pfc {
                class: 3,
                quanta: 100,
            },
            Payload::Pause { quanta: 100 },
        ] {
            let mut built = crate::sim::build::build(&scenario).expect("builds");
            let frame = Frame::control(payload, no_host, no_host, no_host, 64, SimTime::ZERO);
            let Node::Host(a) = &mut built.nodes[0] else {
                panic!("a is a host");
            };
            let mut frames = FrameStore::default();
            let (_, arrival) = a.port.send_whole(frame, SimTime::ZERO, &mut frames);
            let entry = arrival.expect("the link was empty");
            let mut q = EventQueue::new();
            // The frame's arrival at s (from a, node 0, by its port 0) is each of the four
            // events ahead of the current one.
            for _ in 0..5 {
                q.schedule(entry.arrival, a.port.arrival_event(0, 0, entry));
            }
            q.pop_until(SimTime::MAX).expect("five events");
            let state = State {
                nodes: &built.nodes,
                sources: &built.sources,
                flows: &FlowTable::default(),
                frames: &frames,
                ports_at: &port_addresses(&built.nodes),
            };
            ahead(&q, &state);
        }
    }
}
