//! The event queue, ordered by (time, insertion sequence), so events at the same picosecond run
//! in the order they were scheduled and every run is deterministic.
//!
//! It is a timing wheel in front of a heap (a two-level calendar queue). Time is cut into slots
//! of a power of two of ps, chosen per network when it is built (`slot_shift_for`): 2^16 ps
//! (65.5 ns) on 10 Gb/s networks, 2^14 (16.4 ns) at 40 Gb/s, 2^12 (4.1 ns) at 100 Gb/s; the
//! events of the next `WHEEL_SLOTS - 1` slots (268 us at 65.5 ns, 16.8 us at 4.1 ns) sit in
//! unsorted per-slot buckets, and anything later (PAUSE and scheme timers, the probe) in a
//! 4-ary heap (`far`). Scheduling into a bucket is O(1); a bucket is sorted only when the clock
//! reaches its slot (up to 31 events by insertion: one to a few on small networks, tens on a
//! mid-sized fabric; the hundreds of a large one by a stable radix sort on the time within the
//! slot, exact because a bucket is filled in sequence order) and then is the current run,
//! popped from its head in place. The pop order is exactly the single heap's (same keys, same
//! comparison): the
//! current run holds every pending event of slot <= `cur_slot`, everything else lies in later
//! slots.
//!
//! The common paths are short because most slots hold one event on small networks: scheduling
//! into a later slot whose bucket has room is inlined (a push and a bit set), moving to the
//! next slot finds it in a bitmap and compares it with the far heap's earliest slot, kept in a
//! field, and a bucket keeps a small buffer for its next turn. Large buffers go through a
//! spare list for the cache's sake (see `EventQueue::spare`).

use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

use crate::flow_control::Lane;
use crate::time::SimTime;

/// Index of a node (host or switch) in the simulation.
pub(crate) type NodeIdx = u32;
/// Index of a port within its node.
pub(crate) type PortIdx = u16;
/// Index of a frame on a link in the network's frame store (`net/frame_store.rs`).
pub(crate) type FrameSlot = u32;

/// What happens. Payloads are element indices; the elements hold the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// A switch port's transmitter is free and frames wait (one event per frame per hop:
    /// scheduled only then, `net/switch_tx.rs`).
    PortFree { node: NodeIdx, port: PortIdx },
    /// The head frame of a port's pipe reaches the far end of the link. `slot` (the frame's
    /// place in the `FrameStore`) and `peer` (the node it arrives at) are what the handler
    /// would find through the port; in the event, the prefetcher finds them without it.
    Arrive {
        node: NodeIdx,
        port: PortIdx,
        slot: FrameSlot,
        peer: NodeIdx,
    },
    /// The peer's pause on one lane (802.3x, or one PFC class) of this sending port may have
    /// ended.
    PauseExpire {
        node: NodeIdx,
        port: PortIdx,
        lane: Lane,
    },
    /// Re-send XOFF on one lane of this port while the condition holding the peer lasts.
    PauseRefresh {
        node: NodeIdx,
        port: PortIdx,
        lane: Lane,
    },
    /// A traffic source's next frame (or its start/stop for saturating sources).
    SourceArrival(u32),
    /// Flow `n` of the workload starts (flows start in id order, one event at a time).
    FlowStart(u32),
    /// A host whose queued frames were all held by rate limiters may send again.
    HostWake { node: NodeIdx, generation: u32 },
    /// A host's receive server finished a frame.
    RxDone(NodeIdx),
    /// A reaction point's timer (QCN timer, BCN drift/stop) of the limiter in VOQ `slot`.
    RpTimer {
        node: NodeIdx,
        slot: u32,
        ticket: u32,
    },
    /// A transported flow's retransmission timer at its sender (`net/host/transport/`).
    TransportTimer { node: NodeIdx, flow: u32 },
    /// A TCP flow's delayed-ACK timer at its receiver (`net/host/transport/`).
    TransportAckTimer { node: NodeIdx, flow: u32 },
    /// A long flow's application writes its next packet or stops writing, at its sender; at
    /// its receiver, the flow completed when it stopped (`net/host/transport/app.rs`).
    AppWrite { node: NodeIdx, flow: u32 },
    /// A scheduled service-rate change; index into the simulation's rate-change table.
    RateChange(u32),
    /// Periodic probe.
    Probe,
    /// Start (0) or end (1) of the report window.
    WindowMark(u8),
    /// The test kit's scheduled action `n` (`testkit.rs`); no run schedules it.
    #[cfg(test)]
    Test(u32),
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

/// The widest slot, 2^16 ps = 65.536 ns: shorter than the shortest frame on a 10 Gb/s wire
/// (67.2 ns), so on the seeds' networks the current slot holds few events even on large
/// topologies.
const WIDEST_SLOT_SHIFT: u32 = 16;
/// The narrowest slot, 2^10 ps = 1.05 ns (the shortest frame at 400 Gb/s takes 1.68 ns): the
/// wheel still reaches 4.3 us ahead, and `radix_sort_bucket` needs at least 8 bits of time
/// within a slot.
const NARROWEST_SLOT_SHIFT: u32 = 10;
/// The shortest frame Ethernet puts on a wire: 64 bytes and 20 of preamble and inter-frame
/// gap, whatever `model.wire_overhead_bytes` a scenario counts.
const SHORTEST_WIRE_FRAME_BITS: f64 = 84.0 * 8.0;

/// The slot width (as a power of two of ps) for a network whose fastest port sends at
/// `fastest_rate_bps` and whose longest link delay is `longest_delay`: the widest slot, within
/// `NARROWEST_SLOT_SHIFT..=WIDEST_SLOT_SHIFT`, not longer than the fastest port's shortest
/// frame, unless the wheel would then not reach twice the longest delay ahead. A transmission
/// then always ends in a later slot, so the `PortFree` it schedules goes into a bucket, never
/// into the sorted current run; and a frame's arrival goes into the wheel, not the far heap.
/// On a 100 Gb/s fabric with an ACK per frame, 65.5 ns slots held thousands of events and each
/// 64-byte frame's `PortFree` went into the run a few hundred events deep (`memmove`, 10% of
/// the loop); 4.1 ns slots ran the k = 16 RoCE fat tree 15-19% faster, while the seeds' 10 Gb/s
/// networks run fastest at 65.5 ns (docs/performance.md, "Session 29"). The pop order, and so
/// every output, is the same at any width.
pub(crate) fn slot_shift_for(fastest_rate_bps: f64, longest_delay: SimTime) -> u32 {
    let shortest_frame_ps = SHORTEST_WIRE_FRAME_BITS / fastest_rate_bps * 1e12;
    // No port gives a rate of 0 (an infinite frame time: the widest slot).
    let shift = shortest_frame_ps.log2().floor();
    if shift.is_nan() {
        // A negative rate or not a number (validation refuses both): any width is exact.
        return WIDEST_SLOT_SHIFT;
    }
    // The narrowest slot whose wheel reaches twice the longest delay.
    let reach = (2 * longest_delay.ps()).div_ceil(WHEEL_SLOTS as u64 - 1);
    let shift = (shift as u32).max(reach.next_power_of_two().ilog2());
    shift.clamp(NARROWEST_SLOT_SHIFT, WIDEST_SLOT_SHIFT)
}

/// Slots in the wheel (a power of two): 4096 x 65.5 ns = 268 us ahead, past every serialisation
/// and link delay of the presets (16.8 us at 4.1 ns: `slot_shift_for` widens the slot when a
/// link delay is longer than half that); PAUSE and scheme timers go to the far heap.
const WHEEL_SLOTS: usize = 4096;
const WHEEL_MASK: u64 = WHEEL_SLOTS as u64 - 1;
const BITMAP_WORDS: usize = WHEEL_SLOTS / 64;
/// A bucket whose buffer holds at most this many events keeps it when its slot is done (two
/// cache lines' worth of a 32-byte event are written per turn at most); a larger buffer, from a
/// slot with many events, goes to `spare`.
const KEEP_CAPACITY: usize = 16;
/// Capacity of a bucket's first buffer (what `Vec` would pick for 32-byte events).
const FIRST_CAPACITY: usize = 4;
/// From this many events on, a bucket is sorted by `radix_sort_bucket`; fewer are sorted by
/// insertion alone (fewer instructions than the counting pass below 32 on a k = 8 fat tree,
/// more from 64 on a 384-host Clos). A mid-sized fabric's slot holds tens of events
/// (comparison sorting them was 16% of the loop on that Clos), a large one's hundreds
/// (docs/performance.md, "Session 24").
const RADIX_MIN_EVENTS: usize = 32;
/// `far_slot` when the far heap is empty: later than any slot.
const NO_SLOT: u64 = u64::MAX;

pub(crate) struct EventQueue {
    /// Slots are 2^`slot_shift` ps wide (`slot_shift_for`).
    slot_shift: u32,
    /// The slot whose bucket (`wheel[cur_slot & WHEEL_MASK]`) is the current run: every pending
    /// event of slot <= `cur_slot`, in ascending key order from `head` on (`..head` popped).
    /// All other pending events lie in later slots.
    cur_slot: u64,
    head: usize,
    now: SimTime,
    processed: u64,
    next_seq: u64,
    /// Slot of the earliest event in `far` (`NO_SLOT` when it is empty), so that moving to the
    /// next slot compares two integers instead of looking into the heap.
    far_slot: u64,
    /// Bucket `slot & WHEEL_MASK` holds the events of slot `slot` for the slots
    /// `cur_slot + 1 ..= cur_slot + WHEEL_SLOTS - 1`, unsorted, and the current run.
    /// A fixed-size array, so the masked index needs no bounds check.
    wheel: Box<[Vec<Scheduled>; WHEEL_SLOTS]>,
    /// Bit `i` set when bucket `i` holds events of a later slot (the current bucket's bit is
    /// clear).
    occupied: [u64; BITMAP_WORDS],
    /// Large bucket buffers no bucket is using, most recently used last. On a large topology a
    /// slot holds hundreds of events; if each bucket kept such a buffer, the wheel would cycle
    /// through megabytes of them every turn and every push would miss the cache. Reusing the
    /// last freed buffer keeps the working set to the few buckets occupied at once. Small
    /// buffers (`KEEP_CAPACITY`) stay with their bucket: a slot with one or two events then
    /// costs no trip through this list.
    spare: Vec<Vec<Scheduled>>,
    /// The radix sort's second buffer (`radix_sort_bucket`).
    scratch: Vec<Scheduled>,
    /// Events beyond the wheel when they were scheduled (they stay here until their slot comes).
    far: QuaternaryHeap<Scheduled>,
}

impl Default for EventQueue {
    fn default() -> Self {
        let wheel: Box<[Vec<Scheduled>]> = vec![Vec::new(); WHEEL_SLOTS].into_boxed_slice();
        EventQueue {
            slot_shift: WIDEST_SLOT_SHIFT,
            cur_slot: 0,
            head: 0,
            now: SimTime::ZERO,
            processed: 0,
            next_seq: 0,
            far_slot: NO_SLOT,
            wheel: wheel.try_into().expect("WHEEL_SLOTS buckets"),
            occupied: [0; BITMAP_WORDS],
            spare: Vec::new(),
            scratch: Vec::new(),
            far: QuaternaryHeap::new(),
        }
    }
}

fn bucket_of(slot: u64) -> usize {
    (slot & WHEEL_MASK) as usize
}

/// The current run's events from the next one to pop on (`EventQueue::upcoming`): the
/// slice is found once for the prefetcher's four looks ahead.
pub(crate) struct Upcoming<'a>(&'a [Scheduled]);

impl Upcoming<'_> {
    /// The event `n` places after the next one to pop, if it is in the run.
    #[inline]
    pub(crate) fn get(&self, n: usize) -> Option<EventKind> {
        self.0.get(n).map(|e| e.kind)
    }
}

/// Sorts a bucket into key order. A bucket holds the events of one slot in the order they were
/// scheduled, i.e. in increasing sequence, so a stable sort by time alone gives the order of the
/// full keys; within a slot the time is its low `slot_shift` bits (10 to 16; the sort needs at
/// least 8). One stable counting pass on their high `bits = log2(n) + 1` bits (at most 8) puts
/// the `n` events in groups of `2^(slot_shift - bits)` ps, in order, each group still in
/// sequence order and holding about one event on average, whatever `n`; an insertion pass then
/// orders each group by time (it moves few).
/// A bucket with a group larger than `MAX_INSERTION_GROUP` (events crowded into one group) is
/// sorted by two counting passes instead, on the low and then the high 8 bits, so the sort
/// stays linear. `scratch` is the second buffer, as long as the largest bucket sorted so
/// far. Never inlined: its counter tables in `enter_slot`'s frame cost every slot change a
/// stack probe (7% more instructions on seed004-qcn, whose buckets never get here).
#[inline(never)]
fn radix_sort_bucket(run: &mut Vec<Scheduled>, scratch: &mut Vec<Scheduled>, slot_shift: u32) {
    debug_assert!(run
        .windows(2)
        .all(|w| (w[0].key as u64) < (w[1].key as u64)));
    let n = run.len();
    debug_assert!(n >= 2, "a bucket of {n} events needs no sort");
    debug_assert!((8..=WIDEST_SLOT_SHIFT).contains(&slot_shift));
    // The second buffer only grows: filling it to `n` at every sort cost a copy per event.
    if scratch.len() < n {
        scratch.resize(n, run[0]);
    }
    let bits = (n.ilog2() + 1).min(8);
    let shift = slot_shift - bits;
    // A table no larger than the groups need: zeroing and summing 256 counters for a few
    // tens of events was most of their sort.
    let grouped = match bits {
        0..=6 => group_pass::<64>(run, &mut scratch[..n], slot_shift, shift),
        _ => group_pass::<256>(run, &mut scratch[..n], slot_shift, shift),
    };
    if !grouped {
        // The high pass has `slot_shift - 8` bits (at most 8).
        counting_pass(run, &mut scratch[..n], |e| {
            offset_in_slot(e, slot_shift) & 0xff
        });
        counting_pass(&scratch[..n], run, |e| offset_in_slot(e, slot_shift) >> 8);
        return;
    }
    // The grouped events are in `scratch`: copied back from a small one (the bucket keeps its
    // buffer), the buffers swapped for a large one (a copy per event saved).
    if n < SWAP_MIN_EVENTS {
        run.copy_from_slice(&scratch[..n]);
    } else {
        std::mem::swap(run, scratch);
        run.truncate(n);
    }
    insertion_sort_by_time(run);
}

/// From this many events on, `radix_sort_bucket` swaps the bucket's buffer with its second
/// buffer rather than copying the events back (a bucket's buffer that large goes to `spare`
/// when its slot is done anyway).
const SWAP_MIN_EVENTS: usize = 64;

/// The event's time within its slot of 2^`slot_shift` ps, in ps.
#[inline(always)]
fn offset_in_slot(e: &Scheduled, slot_shift: u32) -> usize {
    ((e.key >> 64) as u64 & ((1 << slot_shift) - 1)) as usize
}

/// The most events of one group `radix_sort_bucket` orders by insertion (16 events in
/// random order move about 60 times; a group this large is rare).
const MAX_INSERTION_GROUP: usize = 16;

/// `radix_sort_bucket`'s pass on the high bits: a stable counting pass of `run` into `scratch`
/// by `offset_in_slot >> shift` (under `GROUPS`, the table's size). False, with nothing moved,
/// when a group holds more than `MAX_INSERTION_GROUP` events.
#[inline(always)]
fn group_pass<const GROUPS: usize>(
    run: &[Scheduled],
    scratch: &mut [Scheduled],
    slot_shift: u32,
    shift: u32,
) -> bool {
    let groups = (1 << slot_shift) >> shift;
    debug_assert!(groups <= GROUPS);
    // The mask only tells the compiler the index is in range (the shift already keeps it so).
    let group = |e: &Scheduled| (offset_in_slot(e, slot_shift) >> shift) & (GROUPS - 1);
    let mut starts = [0u32; GROUPS];
    for e in run.iter() {
        starts[group(e)] += 1;
    }
    let mut at = 0;
    for start in starts.iter_mut().take(groups) {
        let count = *start;
        if count as usize > MAX_INSERTION_GROUP {
            return false;
        }
        *start = at;
        at += count;
    }
    for e in run.iter() {
        let g = group(e);
        scratch[starts[g] as usize] = *e;
        starts[g] += 1;
    }
    true
}

/// One stable counting pass by `digit` (0-255), from `from` to `to` (as long).
#[inline(always)]
fn counting_pass(from: &[Scheduled], to: &mut [Scheduled], digit: impl Fn(&Scheduled) -> usize) {
    let mut starts = [0u32; 256];
    for e in from {
        starts[digit(e) & 0xff] += 1;
    }
    let mut at = 0;
    for start in starts.iter_mut() {
        let count = *start;
        *start = at;
        at += count;
    }
    for e in from {
        let d = digit(e) & 0xff;
        to[starts[d] as usize] = *e;
        starts[d] += 1;
    }
}

/// Sorts `run` into key order by insertion: linear when it is nearly sorted, as after the counting
/// pass (only events of one group are out of order, and only among themselves); quadratic at
/// worst, so alone it sorts only buckets under `RADIX_MIN_EVENTS`. Events of one time are
/// already in sequence order, and the sort is stable, so comparing times is enough (one 64-bit
/// comparison, not two).
#[inline(always)]
fn insertion_sort_by_time(run: &mut [Scheduled]) {
    let time = |e: &Scheduled| (e.key >> 64) as u64;
    for i in 1..run.len() {
        if time(&run[i]) >= time(&run[i - 1]) {
            continue;
        }
        let e = run[i];
        let mut j = i;
        while j > 0 && time(&run[j - 1]) > time(&e) {
            run[j] = run[j - 1];
            j -= 1;
        }
        run[j] = e;
    }
}

impl EventQueue {
    /// A queue with the widest slots (tests; a network's queue is `with_slot_shift`).
    #[cfg(test)]
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A queue whose slots are 2^`slot_shift` ps wide (`slot_shift_for`; within
    /// `NARROWEST_SLOT_SHIFT..=WIDEST_SLOT_SHIFT`).
    pub(crate) fn with_slot_shift(slot_shift: u32) -> Self {
        assert!(
            (NARROWEST_SLOT_SHIFT..=WIDEST_SLOT_SHIFT).contains(&slot_shift),
            "slot shift {slot_shift} outside {NARROWEST_SLOT_SHIFT}..={WIDEST_SLOT_SHIFT}"
        );
        EventQueue {
            slot_shift,
            ..Self::default()
        }
    }

    /// The slot width, as a power of two of ps.
    #[cfg(test)]
    pub(crate) fn slot_shift(&self) -> u32 {
        self.slot_shift
    }

    fn slot_of(&self, key: u128) -> u64 {
        (key >> (64 + self.slot_shift)) as u64
    }

    pub(crate) fn now(&self) -> SimTime {
        self.now
    }

    /// Events popped so far.
    pub(crate) fn processed(&self) -> u64 {
        self.processed
    }

    /// Events scheduled and not yet popped (walks the wheel).
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        let in_wheel: usize = self.wheel.iter().map(Vec::len).sum();
        in_wheel - self.head + self.far.len()
    }

    /// Schedules `kind` at absolute time `at` (never in the past).
    ///
    /// Inlined: the common case (a later slot of the wheel whose bucket has room) is a push and
    /// a bit set; the rest is in `schedule_slow`.
    #[inline]
    pub(crate) fn schedule(&mut self, at: SimTime, kind: EventKind) {
        debug_assert!(at >= self.now, "event scheduled in the past: {kind:?}");
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = at.ps() >> self.slot_shift;
        // `slot - cur_slot` in 1..WHEEL_SLOTS, in one comparison (an earlier or the current
        // slot wraps to a large number).
        if slot.wrapping_sub(self.cur_slot).wrapping_sub(1) < WHEEL_SLOTS as u64 - 1 {
            let i = bucket_of(slot);
            let bucket = &mut self.wheel[i];
            if bucket.len() < bucket.capacity() {
                // The event is made here, not before the test: made before, it sat on the
                // stack for `schedule_slow` and was copied into the bucket by 16-byte loads
                // of fields just stored one by one, which cannot be forwarded from the store
                // buffer, so each waited for every store before it, cache misses included.
                bucket.push(Scheduled::new(at, seq, kind));
                self.occupied[i / 64] |= 1 << (i % 64);
                return;
            }
        }
        self.schedule_slow(Scheduled::new(at, seq, kind), slot);
    }

    #[inline]
    pub(crate) fn schedule_in(&mut self, delay: SimTime, kind: EventKind) {
        self.schedule(self.now + delay, kind);
    }

    /// `schedule` for an event of the current slot, beyond the wheel, or into a full bucket.
    #[inline(never)]
    fn schedule_slow(&mut self, ev: Scheduled, slot: u64) {
        if slot <= self.cur_slot {
            self.insert_current(ev);
        } else if slot - self.cur_slot < WHEEL_SLOTS as u64 {
            let i = bucket_of(slot);
            self.make_room(i);
            self.wheel[i].push(ev);
            self.occupied[i / 64] |= 1 << (i % 64);
        } else {
            self.far.push(ev);
            self.far_slot = self.far_slot.min(slot);
        }
    }

    /// Before a push into a full bucket: if the most recently freed spare buffer is larger,
    /// the bucket's events move into it (the small buffer is freed), rather than the bucket's
    /// own buffer growing in memory the cache has not seen for a turn of the wheel.
    fn make_room(&mut self, i: usize) {
        let bucket = &mut self.wheel[i];
        if bucket.len() < bucket.capacity() {
            return;
        }
        if self
            .spare
            .last()
            .is_some_and(|s| s.capacity() > bucket.capacity())
        {
            let mut buffer = self.spare.pop().expect("checked");
            buffer.extend_from_slice(bucket);
            *bucket = buffer;
        } else if bucket.capacity() == 0 {
            // A bucket's first buffer: room for a few events without going through `grow`.
            *bucket = Vec::with_capacity(FIRST_CAPACITY);
        }
    }

    /// The first slot after `cur_slot` whose bucket holds events, with its bit in `occupied`
    /// (word index and mask); `NO_SLOT` when the wheel is empty.
    #[inline]
    fn next_wheel_slot(&self) -> (u64, usize, u64) {
        let start = self.cur_slot + 1;
        let (w0, b0) = (bucket_of(start) / 64, start % 64);
        let first = self.occupied[w0] & (u64::MAX << b0);
        if first != 0 {
            // Usually the next event is less than 64 slots (4.2 us) ahead: its bit is in the
            // word of `start`, at or after `start`'s bit, with no wrap-around in between.
            let slot = start + (first.trailing_zeros() as u64 - b0);
            return (slot, w0, first & first.wrapping_neg());
        }
        self.next_wheel_slot_beyond(w0)
    }

    /// `next_wheel_slot` past the word of `w0`: scan to the end of the bitmap, then wrap
    /// around to the beginning (the bits of word `w0` before `start` are slots a turn ahead);
    /// the bit of the current bucket is clear, so the first set bit found is the next slot.
    #[inline(never)]
    fn next_wheel_slot_beyond(&self, w0: usize) -> (u64, usize, u64) {
        match (w0 + 1..BITMAP_WORDS)
            .chain(0..=w0)
            .find(|&w| self.occupied[w] != 0)
        {
            Some(w) => {
                let word = self.occupied[w];
                let i = (w * 64) as u64 + word.trailing_zeros() as u64;
                let slot = self.cur_slot + (i.wrapping_sub(self.cur_slot) & WHEEL_MASK);
                (slot, w, word & word.wrapping_neg())
            }
            None => (NO_SLOT, 0, 0),
        }
    }

    /// Adds an event of the current slot to the sorted run; a new event usually sorts last
    /// (later sequence, rarely an earlier time), so the search starts from the end. One that
    /// sorts nearer the run's head than its end goes in from the head's side: the events
    /// before it move back into the slot of the event popped last (`head - 1`, read already),
    /// not the rest of the run forward. On a large fabric with ACKs a 64-byte frame's
    /// `PortFree` falls in the current slot, close to its head, and moving the run's tail
    /// forward was 5% of the loop (`memmove`; docs/performance.md, "Session 21").
    fn insert_current(&mut self, ev: Scheduled) {
        let c = bucket_of(self.cur_slot);
        self.make_room(c);
        let run = &mut self.wheel[c];
        match run.last() {
            Some(last) if last.key > ev.key => {
                let at = self.head + run[self.head..].partition_point(|e| e.key < ev.key);
                if self.head > 0 && at - self.head < run.len() - at {
                    run.copy_within(self.head..at, self.head - 1);
                    self.head -= 1;
                    run[at - 1] = ev;
                } else {
                    run.insert(at, ev);
                }
            }
            _ => run.push(ev),
        }
    }

    /// Moves the clock's slot to the next one holding events, makes its bucket the run and
    /// returns its first event; None when nothing is pending. The current run is used up.
    fn advance(&mut self) -> Option<Scheduled> {
        let (slot, word, bit) = self.next_wheel_slot();
        if self.far_slot <= slot {
            return self.advance_with_far(slot, word, bit);
        }
        self.release_run();
        self.occupied[word % BITMAP_WORDS] &= !bit;
        self.enter_slot(slot)
    }

    /// `advance` when the far heap has events at or before the wheel's next slot (or both are
    /// empty).
    #[inline(never)]
    fn advance_with_far(&mut self, wheel_slot: u64, word: usize, bit: u64) -> Option<Scheduled> {
        let slot = self.far_slot;
        if slot == NO_SLOT {
            return None;
        }
        self.release_run();
        if wheel_slot == slot {
            self.occupied[word % BITMAP_WORDS] &= !bit;
        }
        self.enter_slot(slot);
        self.take_from_far(slot);
        Some(self.wheel[bucket_of(slot)][0])
    }

    /// Empties the used-up run's bucket; a large buffer goes to `spare`.
    fn release_run(&mut self) {
        let done = &mut self.wheel[bucket_of(self.cur_slot)];
        done.clear();
        if done.capacity() > KEEP_CAPACITY {
            self.spare.push(std::mem::take(done));
        }
    }

    /// Makes `slot` the current one (its bit in `occupied` already cleared) and sorts its
    /// bucket into the run; returns the run's first event (the far heap may add earlier ones).
    /// Inline: a call here cost seed004-qcn 5% more instructions.
    #[inline]
    fn enter_slot(&mut self, slot: u64) -> Option<Scheduled> {
        self.cur_slot = slot;
        self.head = 0;
        let run = &mut self.wheel[bucket_of(slot)];
        match run.len() {
            0 | 1 => {}
            // Two events are common on mid-sized networks; one comparison sorts them.
            2 => {
                if run[0].key > run[1].key {
                    run.swap(0, 1);
                }
            }
            n if n < RADIX_MIN_EVENTS => insertion_sort_by_time(run),
            _ => radix_sort_bucket(run, &mut self.scratch, self.slot_shift),
        }
        run.first().copied()
    }

    /// Moves the far heap's events of `slot` (the current one) into the run.
    fn take_from_far(&mut self, slot: u64) {
        while let Some(ev) = self
            .far
            .peek()
            .copied()
            .filter(|e| self.slot_of(e.key) <= slot)
        {
            self.far.pop();
            self.insert_current(ev);
        }
        self.far_slot = self.far.peek().map_or(NO_SLOT, |e| self.slot_of(e.key));
    }

    /// The events after the one just popped that are already in the current slot's sorted
    /// run, in order (a hint: events scheduled meanwhile may come before them).
    #[inline]
    pub(crate) fn upcoming(&self) -> Upcoming<'_> {
        Upcoming(&self.wheel[bucket_of(self.cur_slot)][self.head..])
    }

    /// Pops the next event at or before `end`, advancing the clock to it.
    #[inline]
    pub(crate) fn pop_until(&mut self, end: SimTime) -> Option<EventKind> {
        let ev = match self.wheel[bucket_of(self.cur_slot)].get(self.head) {
            Some(&ev) => ev,
            None => self.advance()?,
        };
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
    use proptest::strategy::{Just, Strategy};

    #[test]
    fn an_event_is_two_16_byte_pieces() {
        // The key, then the kind with its largest payload (an arrival's four indices): the
        // buckets and the radix sort move events of 32 bytes.
        assert_eq!(std::mem::size_of::<EventKind>(), 16);
        assert_eq!(std::mem::size_of::<Scheduled>(), 32);
    }

    /// A bucket of `times`, scheduled in that order.
    fn bucket(times: impl Iterator<Item = u64>) -> Vec<Scheduled> {
        let kind = |i: usize| EventKind::SourceArrival(i as u32);
        (times.enumerate())
            .map(|(i, t)| Scheduled::new(SimTime(t), i as u64, kind(i)))
            .collect()
    }

    /// `radix_sort_bucket` leaves `unsorted` (through `scratch`, kept from earlier sorts) in
    /// the order a comparison sort by key gives.
    fn assert_radix_sorts(unsorted: &[Scheduled], scratch: &mut Vec<Scheduled>, slot_shift: u32) {
        let mut run = unsorted.to_vec();
        radix_sort_bucket(&mut run, scratch, slot_shift);
        let mut expected = unsorted.to_vec();
        expected.sort_by_key(|e| e.key);
        let keys = |v: &[Scheduled]| v.iter().map(|e| (e.key, e.kind)).collect::<Vec<_>>();
        assert_eq!(keys(&run), keys(&expected));
    }

    /// Buckets whose groups (256 ps in a 65.5 ns slot) are small (the insertion pass orders
    /// them), one group just over `MAX_INSERTION_GROUP` and one at it, and times crowded into
    /// one group or a few (the low byte's counting pass first), ties included: each sorts as a
    /// comparison sort does, at every slot width.
    #[test]
    fn radix_sort_orders_every_kind_of_bucket_by_key() {
        for slot_shift in NARROWEST_SLOT_SHIFT..=WIDEST_SLOT_SHIFT {
            radix_sort_orders_buckets_of_slots_of(slot_shift);
        }
    }

    fn radix_sort_orders_buckets_of_slots_of(slot_shift: u32) {
        let mut scratch = Vec::new();
        let slot = 1u64 << slot_shift;
        for (n, span) in [
            // Tens of events (the table of 64 counters up to 63), ties among them, and a
            // bucket of one time (a group over `MAX_INSERTION_GROUP`: the two byte passes).
            (8, 65_536),
            (13, 65_536),
            (31, 65_536),
            (32, 4_096),
            (40, 64),
            (20, 1),
            (64, 65_536),
            (600, 65_536),
            (3_000, 65_536),
            (200, 4_096),
            (300, 256),
            (80, 8),
        ] {
            // All in one slot, one whose number has bits set just above the time within it
            // (a mask as wide as another width's would see them).
            let (span, start) = (span.min(slot), 0x2b5 * slot);
            let times = (0..n as u64).map(|i| start + crate::rng::mix(span << 32 | i) % span);
            assert_radix_sorts(&bucket(times), &mut scratch, slot_shift);
        }
        // Over 128 events: 256 groups of `width` ps.
        let width = slot >> 8;
        for group in [MAX_INSERTION_GROUP, MAX_INSERTION_GROUP + 1] {
            // One group of `group` events in reverse time order (ties in narrow groups) among
            // 200 spread ones.
            let start = 0x2b5 * slot;
            let crowded = (0..group as u64).map(|i| start + 0x42 * width + width - 1 - i % width);
            let spread = (0..200u64)
                .filter(|&g| g != 0x42)
                .map(|g| start + g * width + (g * 37) % width);
            assert_radix_sorts(&bucket(crowded.chain(spread)), &mut scratch, slot_shift);
        }
    }

    /// Events of the current slot scheduled while its crowded run (a large fabric's slot holds
    /// a thousand) is popped sort where their keys say: next to the next event to pop, in the
    /// middle, near the end or past it, ties after the events scheduled before them.
    #[test]
    fn events_scheduled_into_a_crowded_current_run_pop_in_order() {
        let mut q = EventQueue::new();
        let base = 5u64 << WIDEST_SLOT_SHIFT;
        // (time, id), ids in scheduling order, so (time, id) is the queue's (time, sequence).
        let mut want = Vec::new();
        let schedule = |q: &mut EventQueue, t: u64, want: &mut Vec<(u64, u32)>| {
            let id = want.len() as u32;
            q.schedule(SimTime(t), EventKind::SourceArrival(id));
            want.push((t, id));
        };
        for i in 0..200 {
            schedule(&mut q, base + 300 * i, &mut want);
        }
        let mut got = Vec::new();
        for round in 0..150u64 {
            let Some(EventKind::SourceArrival(id)) = q.pop_until(SimTime::MAX) else {
                panic!("an event is due");
            };
            got.push((q.now().ps(), id));
            let now = q.now().ps();
            for t in [
                now,
                now + 1,
                now + 299,
                base + 30_000 + round,
                base + 59_700,
                base + 65_000,
            ] {
                schedule(&mut q, t, &mut want);
            }
        }
        while let Some(EventKind::SourceArrival(id)) = q.pop_until(SimTime::MAX) {
            got.push((q.now().ps(), id));
        }
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn a_radix_sort_after_a_larger_one_holds_its_own_events_only() {
        let mut scratch = Vec::new();
        assert_radix_sorts(
            &bucket((0..500u64).map(|i| (i * 7_919) % 65_536)),
            &mut scratch,
            WIDEST_SLOT_SHIFT,
        );
        // Times sharing their high byte (one crowded group): the low byte's pass only, whose
        // result is in the second buffer, now longer than this bucket.
        let small = bucket((0..100u64).map(|i| 0x1200 + (i * 37) % 256));
        assert_radix_sorts(&small, &mut scratch, WIDEST_SLOT_SHIFT);
        // The high byte's pass and the insertion pass, from the longer buffer.
        let mixed = bucket((0..80u64).map(|i| (i * 40_503) % 65_536));
        assert_radix_sorts(&mixed, &mut scratch, WIDEST_SLOT_SHIFT);
        // A bucket of tens, copied back from the longer buffer rather than swapped with it.
        let tens = bucket((0..20u64).map(|i| (i * 40_503) % 65_536));
        assert_radix_sorts(&tens, &mut scratch, WIDEST_SLOT_SHIFT);
    }

    /// The slot is the widest power of two of ps not longer than the fastest port's shortest
    /// frame (84 bytes on the wire), within the bounds.
    #[test]
    fn the_slot_is_shorter_than_the_fastest_ports_shortest_frame() {
        // 10 Gb/s: 67.2 ns -> 65.5 ns; 25: 26.9 -> 16.4; 40: 16.8 -> 16.4; 100: 6.72 -> 4.1;
        // 400: 1.68 -> 1.05; 1 Gb/s and no port: the widest; 800 Gb/s: the narrowest.
        let us = |x: u64| SimTime(x * 1_000_000);
        for (rate_gbps, shift) in [
            (10.0, 16),
            (25.0, 14),
            (40.0, 14),
            (100.0, 12),
            (200.0, 11),
            (400.0, 10),
            (1.0, 16),
            (800.0, 10),
            (0.0, 16),
            (f64::NAN, 16),
            (-1.0, 16),
        ] {
            assert_eq!(
                slot_shift_for(rate_gbps * 1e9, us(1)),
                shift,
                "{rate_gbps} Gb/s"
            );
        }
        for rate_gbps in [10.0, 25.0, 40.0, 100.0, 200.0, 400.0] {
            let shortest_frame_ps = 84.0 * 8.0 / rate_gbps * 1e3;
            let shift = slot_shift_for(rate_gbps * 1e9, us(2));
            assert!(
                (1u64 << shift) as f64 <= shortest_frame_ps,
                "{rate_gbps} Gb/s"
            );
        }
        // Long links widen the slot until the wheel reaches twice the delay: 100 Gb/s with
        // 8.4 us (16.8 us of wheel at 4.1 ns slots), 10 us (8.2 ns), 50 us (32.8 ns), 1 ms
        // (the widest).
        for (delay, shift) in [
            (SimTime(8_380_000), 12),
            (us(10), 13),
            (us(50), 15),
            (us(1000), 16),
        ] {
            assert_eq!(slot_shift_for(100e9, delay), shift, "{delay:?}");
            let horizon_ps = (WHEEL_SLOTS as u64 - 1) << shift;
            assert!(shift == WIDEST_SLOT_SHIFT || horizon_ps >= 2 * delay.ps());
        }
    }

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
        // some beyond the wheel's horizon; pops interleaved with pushes and bounded by `end`;
        // slots of 65.5 ns, 16.4 ns, 4.1 ns and 1 ns.
        for seed in 1..=20u64 {
            let mut rng = seed;
            let slot_shift = [16, 14, 12, 10][seed as usize % 4];
            let mut q = EventQueue::with_slot_shift(slot_shift);
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

    #[test]
    fn crowded_slots_sort_as_a_single_heap() {
        // Hundreds to thousands of events per slot (a large fabric's), so buckets take the
        // radix sort: ties at a slot's start, times over all the bits of the slot, and times
        // whose high or low byte is the same for every event (a radix pass skipped); slots of
        // 65.5 ns, 16.4 ns, 4.1 ns and 1 ns.
        for seed in 1..=12u64 {
            let mut rng = seed;
            let slot_shift = [16, 14, 12, 10][seed as usize % 4];
            let slot = 1u64 << slot_shift;
            let mut q = EventQueue::with_slot_shift(slot_shift);
            let mut reference = std::collections::BinaryHeap::new();
            let mut id = 0u32;
            for _ in 0..40 {
                for _ in 0..lcg(&mut rng) % 3000 {
                    let within = match lcg(&mut rng) % 4 {
                        0 => 0,
                        1 => lcg(&mut rng) % slot,
                        2 => lcg(&mut rng) % 256,
                        _ => (lcg(&mut rng) % (slot >> 8)) << 8,
                    };
                    let at = (q.now().ps() / slot + 1 + lcg(&mut rng) % 4) * slot + within;
                    q.schedule(SimTime(at), EventKind::SourceArrival(id));
                    reference.push(std::cmp::Reverse((at, id)));
                    id += 1;
                }
                for _ in 0..lcg(&mut rng) % 4000 {
                    let want = reference.pop();
                    let got = q.pop_until(SimTime::MAX);
                    assert_eq!(
                        got,
                        want.map(|std::cmp::Reverse((_, id))| EventKind::SourceArrival(id)),
                        "seed {seed}"
                    );
                    if let Some(std::cmp::Reverse((t, _))) = want {
                        assert_eq!(q.now(), SimTime(t));
                    }
                }
            }
            while let Some(std::cmp::Reverse((t, id))) = reference.pop() {
                assert_eq!(
                    q.pop_until(SimTime::MAX),
                    Some(EventKind::SourceArrival(id))
                );
                assert_eq!(q.now(), SimTime(t));
            }
        }
    }

    /// One step of a random run of the queue.
    #[derive(Clone, Debug)]
    enum Step {
        /// Schedule an event `delay` ps after the clock.
        Schedule(u64),
        /// Pop with `end` this many ps after the clock.
        Pop(u64),
        /// Compare `upcoming().get(0..4)` with the reference's next events.
        Peek,
    }

    /// Delays around every boundary the queue has: the same instant, the current slot, the
    /// next few slots, exact ties on a frame-time grid, the wheel's horizon (just inside and
    /// just beyond), and the far heap, for slots of 2^`slot_shift` ps.
    fn delay(slot_shift: u32) -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::prelude::*;
        let slot = 1u64 << slot_shift;
        let horizon = slot * WHEEL_SLOTS as u64;
        prop_oneof![
            Just(0u64),
            0..slot,
            (1..4u64, 0..slot).prop_map(move |(k, r)| k * slot + r),
            (1..4u64).prop_map(|k| k * 1_200_000),
            0..5_000_000u64,
            (0..3 * slot).prop_map(move |r| horizon - 2 * slot + r),
            0..3 * horizon,
            0..20_000_000_000u64,
        ]
    }

    fn step(slot_shift: u32) -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            5 => delay(slot_shift).prop_map(Step::Schedule),
            4 => prop_oneof![0..200_000u64, 0..3_000_000u64, Just(u64::MAX / 2)].prop_map(Step::Pop),
            1 => Just(Step::Peek),
        ]
    }

    proptest::proptest! {
        /// Random schedule/pop/peek sequences give exactly a single (time, sequence) heap's
        /// order, clock and pending count, and `upcoming` never names an event out of order,
        /// at every slot width.
        #[test]
        fn random_runs_match_a_single_heap(
            (slot_shift, steps) in (NARROWEST_SLOT_SHIFT..=WIDEST_SLOT_SHIFT).prop_flat_map(
                |shift| (Just(shift), proptest::collection::vec(step(shift), 0..600))
            )
        ) {
            let mut q = EventQueue::with_slot_shift(slot_shift);
            let mut reference = std::collections::BinaryHeap::new();
            for (id, step) in steps.iter().enumerate() {
                let id = id as u32;
                match *step {
                    Step::Schedule(delay) => {
                        let at = q.now().ps() + delay;
                        q.schedule(SimTime(at), EventKind::SourceArrival(id));
                        reference.push(std::cmp::Reverse((at, id)));
                    }
                    Step::Pop(ahead) => {
                        let end = q.now().ps() + ahead;
                        let want = match reference.peek() {
                            Some(&std::cmp::Reverse((t, _))) if t <= end => reference.pop(),
                            _ => None,
                        };
                        let got = q.pop_until(SimTime(end));
                        proptest::prop_assert_eq!(
                            got,
                            want.map(|std::cmp::Reverse((_, id))| EventKind::SourceArrival(id))
                        );
                        if let Some(std::cmp::Reverse((t, _))) = want {
                            proptest::prop_assert_eq!(q.now(), SimTime(t));
                        }
                    }
                    Step::Peek => {
                        let next = reference.clone().into_sorted_vec();
                        for n in 0..4 {
                            if let Some(kind) = q.upcoming().get(n) {
                                let std::cmp::Reverse((_, id)) = next[next.len() - 1 - n];
                                proptest::prop_assert_eq!(kind, EventKind::SourceArrival(id));
                            }
                        }
                    }
                }
                proptest::prop_assert_eq!(q.pending(), reference.len());
            }
            while let Some(std::cmp::Reverse((t, id))) = reference.pop() {
                proptest::prop_assert_eq!(q.pop_until(SimTime::MAX), Some(EventKind::SourceArrival(id)));
                proptest::prop_assert_eq!(q.now(), SimTime(t));
            }
            proptest::prop_assert_eq!(q.pop_until(SimTime::MAX), None);
        }
    }
}
