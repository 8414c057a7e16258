//! The event queue, ordered by (time, insertion sequence), so events at the same picosecond run
//! in the order they were scheduled and every run is deterministic.
//!
//! It is a timing wheel in front of a heap (a two-level calendar queue). Time is cut into slots
//! of 2^16 ps (65.5 ns); the events of the current slot sit in a short sorted run (`front`), the
//! events of the next `WHEEL_SLOTS - 1` slots (268 us) in unsorted per-slot buckets, and
//! anything later (PAUSE and scheme timers, the probe) in a 4-ary heap (`far`). Scheduling into
//! a bucket is O(1); a bucket is sorted only when the clock reaches its slot (it holds one to a
//! few events), and a pop takes the head of the run. The pop order is exactly the single heap's
//! (same keys, same comparison): `front` holds every event of slot <= `cur_slot`, everything
//! else lies in later slots.

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
    /// A PFC timer of one class on this (sending) port may have ended.
    PfcExpire {
        node: NodeIdx,
        port: PortIdx,
        class: u8,
    },
    /// Re-send a class's PFC XOFF out of this port while its condition holds.
    PfcRefresh {
        node: NodeIdx,
        port: PortIdx,
        class: u8,
    },
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

/// Slot width of the wheel: 2^16 ps = 65.536 ns, shorter than a minimum frame at 10 Gb/s
/// (67.2 ns), so the current slot holds few events even on large topologies.
const SLOT_SHIFT: u32 = 16;
/// Slots in the wheel (a power of two): 4096 x 65.5 ns = 268 us ahead, past every serialisation
/// and link delay of the presets; PAUSE and scheme timers go to the far heap.
const WHEEL_SLOTS: usize = 4096;
const WHEEL_MASK: u64 = WHEEL_SLOTS as u64 - 1;
const BITMAP_WORDS: usize = WHEEL_SLOTS / 64;

pub struct EventQueue {
    /// Events of slot <= `cur_slot`, in ascending key order from `head` on (`..head` popped).
    front: Vec<Scheduled>,
    head: usize,
    /// Events of slots `cur_slot + 1 ..= cur_slot + WHEEL_SLOTS - 1`, bucket `slot & WHEEL_MASK`.
    /// An empty bucket holds no buffer: it takes one from `spare` on its first event.
    wheel: Vec<Vec<Scheduled>>,
    /// Emptied bucket buffers, most recently used last. On a large topology a slot holds
    /// hundreds of events; if each bucket kept its own buffer, the wheel would cycle through
    /// megabytes of them every turn and every push would miss the cache. Reusing the last
    /// freed buffer keeps the working set to the few buckets occupied at once.
    spare: Vec<Vec<Scheduled>>,
    /// Bit `i` set when bucket `i` is not empty.
    occupied: [u64; BITMAP_WORDS],
    in_wheel: usize,
    /// Events beyond the wheel when they were scheduled (they stay here until their slot comes).
    far: QuaternaryHeap<Scheduled>,
    cur_slot: u64,
    next_seq: u64,
    now: SimTime,
    processed: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            front: Vec::new(),
            head: 0,
            wheel: (0..WHEEL_SLOTS).map(|_| Vec::new()).collect(),
            spare: Vec::new(),
            occupied: [0; BITMAP_WORDS],
            in_wheel: 0,
            far: QuaternaryHeap::new(),
            cur_slot: 0,
            next_seq: 0,
            now: SimTime::ZERO,
            processed: 0,
        }
    }
}

fn slot_of(key: u128) -> u64 {
    (key >> (64 + SLOT_SHIFT)) as u64
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
        self.front.len() - self.head + self.in_wheel + self.far.len()
    }

    /// Schedules `kind` at absolute time `at` (never in the past).
    pub fn schedule(&mut self, at: SimTime, kind: EventKind) {
        debug_assert!(at >= self.now, "event scheduled in the past: {kind:?}");
        let seq = self.next_seq;
        self.next_seq += 1;
        let ev = Scheduled::new(at, seq, kind);
        let slot = at.ps() >> SLOT_SHIFT;
        if slot <= self.cur_slot {
            self.insert_front(ev);
        } else if slot - self.cur_slot < WHEEL_SLOTS as u64 {
            let i = (slot & WHEEL_MASK) as usize;
            let bucket = &mut self.wheel[i];
            if bucket.capacity() == 0 {
                *bucket = self.spare.pop().unwrap_or_default();
            }
            bucket.push(ev);
            self.occupied[i / 64] |= 1 << (i % 64);
            self.in_wheel += 1;
        } else {
            self.far.push(ev);
        }
    }

    pub fn schedule_in(&mut self, delay: SimTime, kind: EventKind) {
        self.schedule(self.now + delay, kind);
    }

    /// The first slot after `cur_slot` whose bucket holds events, if any does.
    fn next_wheel_slot(&self) -> Option<u64> {
        if self.in_wheel == 0 {
            return None;
        }
        let start = ((self.cur_slot + 1) & WHEEL_MASK) as usize;
        // Scan from `start` to the end of the bitmap, then wrap around to the beginning; the
        // bucket of `cur_slot` itself is always empty, so the first set bit found is the next.
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (u64::MAX << b0);
        let found = if first != 0 {
            Some(w0 * 64 + first.trailing_zeros() as usize)
        } else {
            (w0 + 1..BITMAP_WORDS)
                .chain(0..=w0)
                .find(|&w| self.occupied[w] != 0)
                .map(|w| w * 64 + self.occupied[w].trailing_zeros() as usize)
        };
        let i = found.expect("in_wheel > 0 but no bucket occupied") as u64;
        let ahead = (i.wrapping_sub(self.cur_slot) & WHEEL_MASK).max(1);
        Some(self.cur_slot + ahead)
    }

    /// Adds an event of the current slot to the sorted run; a new event usually sorts last
    /// (later sequence, rarely an earlier time), so the search starts from the end.
    fn insert_front(&mut self, ev: Scheduled) {
        match self.front.last() {
            Some(last) if last.key > ev.key => {
                let at = self.head + self.front[self.head..].partition_point(|e| e.key < ev.key);
                self.front.insert(at, ev);
            }
            _ => self.front.push(ev),
        }
    }

    /// Moves the clock's slot to the next one holding events and loads them into `front`
    /// (which is empty). Returns false when nothing is pending.
    fn advance(&mut self) -> bool {
        let from_wheel = self.next_wheel_slot();
        let from_far = self.far.peek().map(|e| slot_of(e.key));
        let slot = match (from_wheel, from_far) {
            (None, None) => return false,
            (Some(w), None) => w,
            (None, Some(f)) => f,
            (Some(w), Some(f)) => w.min(f),
        };
        self.cur_slot = slot;
        self.front.clear();
        self.head = 0;
        if from_wheel == Some(slot) {
            let i = (slot & WHEEL_MASK) as usize;
            self.occupied[i / 64] &= !(1 << (i % 64));
            // The bucket's buffer becomes the run; the old run's (empty) buffer is kept spare.
            std::mem::swap(&mut self.front, &mut self.wheel[i]);
            self.spare.push(std::mem::take(&mut self.wheel[i]));
            self.in_wheel -= self.front.len();
            if self.front.len() > 1 {
                self.front.sort_unstable_by_key(|e| e.key);
            }
        }
        while self.far.peek().is_some_and(|e| slot_of(e.key) <= slot) {
            let ev = self.far.pop().expect("peeked");
            self.insert_front(ev);
        }
        true
    }

    /// The event `n` places after the next one to pop, if it is already in the current slot's
    /// sorted run (a hint: events scheduled meanwhile may come before it).
    pub fn peek_ahead(&self, n: usize) -> Option<EventKind> {
        self.front.get(self.head + n).map(|e| e.kind)
    }

    /// Pops the next event at or before `end`, advancing the clock to it.
    pub fn pop_until(&mut self, end: SimTime) -> Option<EventKind> {
        if self.head == self.front.len() && !self.advance() {
            return None;
        }
        let ev = self.front[self.head];
        if ev.time() > end {
            return None;
        }
        self.head += 1;
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

    /// The reference: one heap over (time, sequence), the order the wheel must reproduce.
    struct Reference {
        heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, u32)>>,
        seq: u64,
    }

    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *state >> 33
    }

    #[test]
    fn same_order_as_a_single_heap() {
        // Delays drawn from what cnsim schedules: same instant, sub-slot, frame times and link
        // delays, exact ties on a 1.2 us grid, PAUSE-length and scheme-timer-length gaps, and
        // some beyond the wheel's horizon; pops interleaved with pushes and bounded by `end`.
        for seed in 1..=20u64 {
            let mut rng = seed;
            let mut q = EventQueue::new();
            let mut r = Reference {
                heap: Default::default(),
                seq: 0,
            };
            let mut id = 0u32;
            let mut end = SimTime(0);
            for _ in 0..20_000 {
                let pushes = lcg(&mut rng) % 3;
                for _ in 0..pushes {
                    let delay = match lcg(&mut rng) % 8 {
                        0 => 0,
                        1 => lcg(&mut rng) % 65_536,
                        2 => 1_200_000 * (1 + lcg(&mut rng) % 3),
                        3 => 1_000_000 + lcg(&mut rng) % 2_000_000,
                        4 => lcg(&mut rng) % 300_000_000,
                        5 => 3_355_392_000,
                        6 => lcg(&mut rng) % 20_000_000_000,
                        _ => lcg(&mut rng) % 5_000_000,
                    };
                    let at = q.now().ps() + delay;
                    q.schedule(SimTime(at), EventKind::SourceArrival(id));
                    r.heap.push(std::cmp::Reverse((at, r.seq, id)));
                    r.seq += 1;
                    id += 1;
                }
                if lcg(&mut rng).is_multiple_of(16) {
                    end = SimTime(q.now().ps() + lcg(&mut rng) % 10_000_000);
                }
                let got = q.pop_until(end);
                let want = match r.heap.peek() {
                    Some(std::cmp::Reverse((t, _, _))) if *t <= end.ps() => {
                        let std::cmp::Reverse((t, _, id)) = r.heap.pop().unwrap();
                        assert_eq!(q.now(), SimTime(t));
                        Some(EventKind::SourceArrival(id))
                    }
                    _ => None,
                };
                assert_eq!(got, want, "seed {seed}");
                assert_eq!(q.pending(), r.heap.len());
            }
            while let Some(std::cmp::Reverse((t, _, id))) = r.heap.pop() {
                assert_eq!(
                    q.pop_until(SimTime::MAX),
                    Some(EventKind::SourceArrival(id))
                );
                assert_eq!(q.now(), SimTime(t));
            }
            assert_eq!(q.pop_until(SimTime::MAX), None);
        }
    }
}
