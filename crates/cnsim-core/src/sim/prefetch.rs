//! Cache prefetching for the event loop. On a large topology every host and port is cold when
//! its event comes (thousands of other events ran since it was last touched), and the loop
//! waited on one cache miss after another. The next events are known (the event queue's
//! current slot is a sorted run), so the loop asks the CPU to start loading what they will
//! touch, in two stages one event apart. While an event is handled, the third event after it
//! gets its element loaded (its port, source or host), and the second event after it what
//! that element points at (loaded by the previous round): the frame at the head of a pipe, the
//! receiving or sending host. A third stage (the switch output port a frame will be queued on,
//! through the forwarding table) and looking one event nearer or further did not help
//! (docs/performance.md).
//!
//! The prefetches cost instructions (14% more on the 1024-host tree), and on a small network
//! everything stays in the cache, so the loop prefetches only when the elements' state is
//! larger than `MIN_STATE_BYTES`.
//!
//! Prefetches are hints: they read no memory the simulation depends on and change no state,
//! so outputs are identical with or without them; only the wall time changes
//! (docs/performance.md).

use crate::engine::{EventKind, EventQueue, NodeIdx, PortIdx};
use crate::net::port::Port;
use crate::net::Node;
use crate::traffic::Source;

/// Below this much host, port and source state, a run prefetches nothing: a quarter of a
/// typical per-core L2 cache, leaving room for queues, pipes and the event queue. The 128-host
/// tree (about 0.2 MB) runs within 6% of the 16-host one per hop without prefetching; the
/// 1024-host tree (1.4 MB) ran twice as slow per hop before it.
const MIN_STATE_BYTES: usize = 512 * 1024;

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

/// Prefetches for the events after the one about to be dispatched.
pub(super) fn ahead(q: &EventQueue, nodes: &[Node], sources: &[Source]) {
    if let Some(ev) = q.peek_ahead(2) {
        element(ev, nodes, sources);
    }
    if let Some(ev) = q.peek_ahead(1) {
        targets(ev, nodes, sources);
    }
}

fn port_of(nodes: &[Node], node: NodeIdx, port: PortIdx) -> Option<&Port> {
    nodes.get(node as usize)?.ports().get(port as usize)
}

/// Stage one: the state the event's handler starts from.
fn element(ev: EventKind, nodes: &[Node], sources: &[Source]) {
    match ev {
        EventKind::PortFree { node, port } | EventKind::Arrive { node, port } => {
            if let Some(p) = port_of(nodes, node, port) {
                lines(p);
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
fn targets(ev: EventKind, nodes: &[Node], sources: &[Source]) {
    match ev {
        EventKind::Arrive { node, port } => {
            let Some(p) = port_of(nodes, node, port) else {
                return;
            };
            if let Some(head) = p.pipe_head() {
                lines(head);
            }
            if let Some(Node::Host(h)) = nodes.get(p.peer_node as usize) {
                lines(&**h);
            }
        }
        EventKind::SourceArrival(s) => {
            let node = sources.get(s as usize).map(|src| src.node as usize);
            if let Some(Node::Host(h)) = node.and_then(|n| nodes.get(n)) {
                lines(&**h);
            }
        }
        _ => {}
    }
}

/// Asks the CPU to bring every cache line of `value` into the cache.
#[inline]
fn lines<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = (value as *const T).cast::<i8>();
        let mut offset = 0;
        while offset < std::mem::size_of::<T>() {
            // SAFETY: `start + offset` lies inside `value`, a live reference, so the pointer
            // arithmetic stays in one allocation; a prefetch reads nothing and cannot fault.
            unsafe { _mm_prefetch(start.add(offset), _MM_HINT_T0) };
            offset += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
