//! The event queue: a 4-ary heap (shallower than a binary heap, fewer cache misses per pop)
//! ordered by (time, insertion sequence), so events at the same picosecond run in the order
//! they were scheduled and every run is deterministic.

use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

use crate::time::SimTime;

/// Index of a node (host or switch) in the simulation.
pub type NodeIdx = u32;
/// Index of a port within its node.
pub type PortIdx = u16;

/// What happens. Payloads are element indices; the elements hold the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A port finished serialising its current frame.
    TxDone { node: NodeIdx, port: PortIdx },
    /// The head frame of a port's pipe reaches the far end of the link.
    Arrive { node: NodeIdx, port: PortIdx },
    /// A PAUSE timer on this (sending) port may have ended.
    PauseExpire { node: NodeIdx, port: PortIdx },
    /// Re-send XOFF out of this port while the pause condition holds.
    XoffRefresh { node: NodeIdx, port: PortIdx },
    /// A traffic source's next frame (or its start/stop for saturating sources).
    SourceArrival(u32),
    /// Flow `n` of the workload starts (flows start in id order, one event at a time).
    FlowStart(u32),
    /// A host whose queued frames were all held by rate limiters may send again.
    HostWake { node: NodeIdx, generation: u32 },
    /// A host's receive server finished a frame.
    RxDone(NodeIdx),
    /// A reaction point's timer (QCN timer, BCN drift/stop) for the flow towards `dst`.
    RpTimer {
        node: NodeIdx,
        dst: u32,
        ticket: u32,
    },
    /// A scheduled service-rate change; index into the simulation's rate-change table.
    RateChange(u32),
    /// Periodic probe.
    Probe,
    /// Start (0) or end (1) of the report window.
    WindowMark(u8),
}

/// A scheduled event. `key` packs (time, insertion sequence) into one integer, time in the
/// high 64 bits, so a single comparison orders by time and then FIFO.
#[derive(Clone, Copy, Debug)]
struct Scheduled {
    key: u128,
    kind: EventKind,
}

impl Scheduled {
    fn new(time: SimTime, seq: u64, kind: EventKind) -> Self {
        Scheduled {
            key: ((time.ps() as u128) << 64) | seq as u128,
            kind,
        }
    }

    fn time(&self) -> SimTime {
        SimTime((self.key >> 64) as u64)
    }
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Scheduled {}

impl Ord for Scheduled {
    // Reversed: the heap is a max-heap, we want the earliest (then first-scheduled) on top.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: QuaternaryHeap<Scheduled>,
    next_seq: u64,
    now: SimTime,
    processed: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// Schedules `kind` at absolute time `at` (never in the past).
    pub fn schedule(&mut self, at: SimTime, kind: EventKind) {
        debug_assert!(at >= self.now, "event scheduled in the past: {kind:?}");
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Scheduled::new(at, seq, kind));
    }

    pub fn schedule_in(&mut self, delay: SimTime, kind: EventKind) {
        self.schedule(self.now + delay, kind);
    }

    /// Pops the next event at or before `end`, advancing the clock to it.
    pub fn pop_until(&mut self, end: SimTime) -> Option<EventKind> {
        let top = self.heap.peek()?;
        if top.time() > end {
            return None;
        }
        let ev = self.heap.pop().expect("peeked");
        self.now = ev.time();
        self.processed += 1;
        Some(ev.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(20), EventKind::SourceArrival(2));
        q.schedule(SimTime(10), EventKind::SourceArrival(1));
        q.schedule(SimTime(20), EventKind::SourceArrival(3));
        q.schedule(SimTime(10), EventKind::SourceArrival(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(SimTime::MAX)).collect();
        assert_eq!(
            order,
            vec![
                EventKind::SourceArrival(1),
                EventKind::SourceArrival(4),
                EventKind::SourceArrival(2),
                EventKind::SourceArrival(3)
            ]
        );
        assert_eq!(q.now(), SimTime(20));
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn stops_at_end_time() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), EventKind::Probe);
        q.schedule(SimTime(15), EventKind::Probe);
        assert!(q.pop_until(SimTime(10)).is_some());
        assert!(q.pop_until(SimTime(10)).is_none());
        assert_eq!(q.pending(), 1);
    }
}
