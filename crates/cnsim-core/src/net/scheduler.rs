//! A switch output port's data queues, one per 802.1Q priority class, and the scheduler that
//! picks the class to send next: strict priority (class 7 first) or deficit weighted round
//! robin (Shreedhar and Varghese, SIGCOMM 1995) with a quantum of bytes per class. Classes
//! that PFC has paused are passed over; their frames keep their place. With all traffic in
//! class 0 (no priorities given) both disciplines are the single FIFO of before.
//!
//! A queued frame stays where it arrived, in the network's frame store: a queue holds its slot
//! and what the port needs to send it (`Queued`, 12 bytes), so a frame that waits is neither
//! copied into the queue nor out of it, and its departure does not read it.

use std::collections::VecDeque;

use crate::engine::FrameSlot;
use crate::scenario::{Scheduler, N_CLASSES};

/// A waiting frame: its slot in the frame store, and what its departure reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Queued {
    pub(crate) slot: FrameSlot,
    pub(crate) bytes: u32,
    /// The port it came in by (the buffer's per-input accounting).
    pub(crate) ingress: u16,
    /// Its class.
    pub(crate) priority: u8,
    /// A data frame (not a scheme's message riding the data queue).
    pub(crate) data: bool,
}

/// The most frames a class queue's buffer keeps once the queue runs empty (18 KB of frames).
/// A port that once held thousands of frames (a switch's whole shared buffer, on a congested
/// uplink) would otherwise keep that buffer for the rest of the run, and over a long run on a
/// large fabric port after port takes its turn: the 6,144-host fabric's memory grew by about
/// 10 MB per simulated millisecond, most of it such buffers (docs/performance.md, "Session 15").
const KEEP_EMPTY_FRAMES: usize = 256;

/// Kept small, since every switch port has one: the queue of the first class the port queues
/// (class 0 in a run without priorities; RoCE's class 3 in a lossless fabric) inline, the
/// other seven and the DWRR state boxed and made on first use. With the data's class in the
/// box, every frame read the box's queue header, one more cache miss per hop on a large
/// fabric (docs/performance.md, "Session 21").
#[derive(Clone, Debug)]
pub(crate) struct ClassQueues {
    /// The queue of class `first_class`.
    first: VecDeque<Queued>,
    /// The class of `first`: the first class queued here (`NO_CLASS` before).
    first_class: u8,
    /// The other classes in order (`other_slot`).
    others: Option<Box<[VecDeque<Queued>; N_CLASSES - 1]>>,
    /// Bit c set = class c has frames.
    backlogged: u8,
    /// Bit c set = class c has had frames (the classes the probes report).
    used: u8,
    /// None = strict priority.
    dwrr: Option<Box<Dwrr>>,
}

/// DWRR: credit per round, the credit left, the class being served, and whether it has had
/// its credit for this visit.
#[derive(Clone, Debug, Default)]
struct Dwrr {
    quantum_bytes: [u32; N_CLASSES],
    deficit_bytes: [u64; N_CLASSES],
    current: usize,
    credited: bool,
}

/// `ClassQueues::first_class` before a frame is queued.
const NO_CLASS: u8 = u8::MAX;

impl Default for ClassQueues {
    fn default() -> ClassQueues {
        ClassQueues {
            first: VecDeque::new(),
            first_class: NO_CLASS,
            others: None,
            backlogged: 0,
            used: 0,
            dwrr: None,
        }
    }
}

impl ClassQueues {
    pub(crate) fn set_scheduler(&mut self, discipline: Scheduler, quantum_bytes: [u32; N_CLASSES]) {
        self.dwrr = match discipline {
            Scheduler::Strict => None,
            Scheduler::Dwrr => Some(Box::new(Dwrr {
                quantum_bytes,
                ..Dwrr::default()
            })),
        };
    }

    fn queue(&self, class: usize) -> Option<&VecDeque<Queued>> {
        class_queue(
            (&self.first, self.first_class, self.others.as_deref()),
            class,
        )
    }

    /// The queue of `class`; the first class queued here gets the inline one.
    fn queue_mut(&mut self, class: usize) -> &mut VecDeque<Queued> {
        if self.first_class == NO_CLASS {
            self.first_class = class as u8;
        }
        if class == self.first_class as usize {
            return &mut self.first;
        }
        let slot = other_slot(class, self.first_class);
        &mut self.others.get_or_insert_with(Box::default)[slot]
    }

    /// Queues `frame` in its class.
    pub(crate) fn push_back(&mut self, frame: Queued) {
        let c = frame.priority as usize;
        self.backlogged |= 1 << c;
        self.used |= 1 << c;
        self.queue_mut(c).push_back(frame);
    }

    /// A frame of `class` may leave without being queued: nothing is queued and the
    /// discipline is strict priority (DWRR keeps per-visit state a frame's passage updates).
    /// Marks the class used, as queuing the frame would have (`Switch::pass_through`).
    pub(crate) fn pass_through(&mut self, class: u8) -> bool {
        if self.backlogged != 0 || self.dwrr.is_some() {
            return false;
        }
        self.used |= 1 << class;
        true
    }

    /// The classes that have had frames, as a bit mask.
    pub(crate) fn used(&self) -> u8 {
        self.used
    }

    /// Bytes queued in `class` (walks the queue: for probes, not the data path).
    pub(crate) fn class_bytes(&self, class: usize) -> u64 {
        self.queue(class)
            .map_or(0, |q| q.iter().map(|f| f.bytes as u64).sum())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.backlogged == 0
    }

    /// The head frame of the first class queued here: what a prefetch hint loads
    /// (`sim/prefetch.rs`).
    pub(crate) fn front(&self) -> Option<&Queued> {
        self.first.front()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Queued> {
        let others = self.others.iter().flat_map(|o| o.iter().flatten());
        self.first.iter().chain(others)
    }

    /// The next frame to send, passing over the classes in `paused` (bit c = class c paused).
    pub(crate) fn pop(&mut self, paused: u8) -> Option<Queued> {
        let eligible = self.backlogged & !paused;
        if eligible == 0 {
            return None;
        }
        let class = match self.dwrr.as_mut() {
            None => 7 - eligible.leading_zeros() as usize,
            Some(dwrr) => {
                let queues = (&self.first, self.first_class, self.others.as_deref());
                dwrr.pick(eligible, self.backlogged, |c| head_bytes(queues, c))
            }
        };
        let queue = self.queue_mut(class);
        let frame = queue.pop_front();
        if queue.is_empty() {
            if queue.capacity() > KEEP_EMPTY_FRAMES {
                queue.shrink_to(KEEP_EMPTY_FRAMES);
            }
            // The next frame goes to the ring's first slot (`clear` puts the head there), in
            // the line the last ones used, not the next slot round a ring that grew to the
            // longest queue: where every frame is queued (a scheme's CPs, PFC) a port that
            // holds a frame or two wrote a new line per frame (docs/performance.md, "Session
            // 21").
            queue.clear();
            self.backlogged &= !(1 << class);
            if let Some(dwrr) = self.dwrr.as_mut() {
                dwrr.emptied(class);
            }
        }
        frame
    }
}

/// A port's queues as `ClassQueues` keeps them: the first class's, its class, the others'.
type Queues<'a> = (
    &'a VecDeque<Queued>,
    u8,
    Option<&'a [VecDeque<Queued>; N_CLASSES - 1]>,
);

/// The queue of `class`, if it has one yet.
fn class_queue(
    (first, first_class, others): Queues<'_>,
    class: usize,
) -> Option<&VecDeque<Queued>> {
    if class == first_class as usize {
        return Some(first);
    }
    others.map(|o| &o[other_slot(class, first_class)])
}

/// Where a class other than `first_class` is kept among the others: the classes in order,
/// `first_class` left out.
fn other_slot(class: usize, first_class: u8) -> usize {
    debug_assert_ne!(class, first_class as usize);
    class - usize::from(class > first_class as usize)
}

/// The size of `class`'s head frame (a backlogged class).
fn head_bytes(queues: Queues<'_>, class: usize) -> u64 {
    let queue = class_queue(queues, class).expect("a backlogged class has its queue");
    queue.front().expect("eligible class has frames").bytes as u64
}

impl Dwrr {
    /// Visit classes in turn; a class on its visit gets its quantum once and sends while its
    /// head frame fits the credit; a class with nothing queued loses its credit.
    fn pick(&mut self, eligible: u8, backlogged: u8, head_bytes: impl Fn(usize) -> u64) -> usize {
        loop {
            let c = self.current;
            if eligible & (1 << c) == 0 {
                if backlogged & (1 << c) == 0 {
                    self.deficit_bytes[c] = 0;
                }
                self.next_class();
                continue;
            }
            if !self.credited {
                self.deficit_bytes[c] += self.quantum_bytes[c] as u64;
                self.credited = true;
            }
            let head = head_bytes(c);
            if head <= self.deficit_bytes[c] {
                self.deficit_bytes[c] -= head;
                return c;
            }
            self.next_class();
        }
    }

    /// A class whose queue ran empty loses its credit and its turn (DRR).
    fn emptied(&mut self, class: usize) {
        self.deficit_bytes[class] = 0;
        if self.current == class {
            self.next_class();
        }
    }

    fn next_class(&mut self) {
        self.current = (self.current + 1) % N_CLASSES;
        self.credited = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(class: u8, bytes: u32) -> Queued {
        Queued {
            slot: 0,
            bytes,
            ingress: 0,
            priority: class,
            data: true,
        }
    }

    #[test]
    fn strict_serves_the_highest_unpaused_class() {
        let mut q = ClassQueues::default();
        for c in [0, 3, 7, 3] {
            q.push_back(frame(c, 100));
        }
        assert_eq!(q.pop(0).unwrap().priority, 7);
        assert_eq!(q.pop(1 << 3).unwrap().priority, 0);
        assert!(q.pop(1 << 3).is_none());
        assert_eq!(q.pop(0).unwrap().priority, 3);
        assert_eq!(q.pop(0).unwrap().priority, 3);
        assert!(q.is_empty());
    }

    #[test]
    fn the_first_class_queued_is_kept_inline_and_the_others_in_order() {
        let mut q = ClassQueues::default();
        for (c, bytes) in [(3, 100), (0, 200), (5, 300), (3, 400), (7, 500)] {
            q.push_back(frame(c, bytes));
        }
        assert_eq!(q.first_class, 3);
        assert_eq!(q.first.len(), 2);
        let others = q.others.as_ref().expect("made by class 0");
        // Classes 0, 1, 2, 4, 5, 6, 7 in slots 0-6.
        assert_eq!(
            (others[0].len(), others[3].len(), others[4].len()),
            (1, 0, 1)
        );
        assert_eq!((others[5].len(), others[6].len()), (0, 1));
        assert_eq!([0, 3, 5, 7].map(|c| q.class_bytes(c)), [200, 500, 300, 500]);
        assert_eq!(q.front().map(|f| f.bytes), Some(100));
        // Strict priority, whichever queue a class is in; PFC's pause of class 3 passes it over.
        let order: Vec<u8> = std::iter::from_fn(|| q.pop(1 << 3))
            .map(|f| f.priority)
            .collect();
        assert_eq!(order, [7, 5, 0]);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop(0)).map(|f| f.bytes).collect();
        assert_eq!(order, [100, 400]);
        assert!(q.is_empty());
    }

    #[test]
    fn a_queue_that_runs_empty_starts_again_at_its_first_slot() {
        let mut q = ClassQueues::default();
        for _ in 0..3 {
            q.push_back(frame(0, 100));
        }
        while q.pop(0).is_some() {}
        assert_eq!(q.first.capacity(), 4);
        // Left where it was, the head would be at the last slot and the second frame would
        // wrap round to the first.
        q.push_back(frame(0, 200));
        q.push_back(frame(0, 300));
        let (first, wrapped) = q.first.as_slices();
        assert_eq!((first.len(), wrapped.len()), (2, 0));
    }

    #[test]
    fn a_queue_that_runs_empty_gives_back_a_large_buffer() {
        let mut q = ClassQueues::default();
        for class in [0, 5] {
            for _ in 0..5000 {
                q.push_back(frame(class, 1500));
            }
        }
        while q.pop(0).is_some() {}
        assert!(
            q.first.capacity() <= KEEP_EMPTY_FRAMES,
            "{}",
            q.first.capacity()
        );
        let class5 = &q.others.as_ref().expect("made by class 5")[4];
        assert!(
            class5.capacity() <= KEEP_EMPTY_FRAMES,
            "{}",
            class5.capacity()
        );
        // A small buffer stays as it is.
        q.push_back(frame(0, 1500));
        let small = q.first.capacity();
        q.pop(0);
        assert_eq!(q.first.capacity(), small);
    }

    #[test]
    fn dwrr_shares_bytes_by_quantum() {
        let mut q = ClassQueues::default();
        let mut quanta = [1500; N_CLASSES];
        quanta[1] = 3000;
        q.set_scheduler(Scheduler::Dwrr, quanta);
        for _ in 0..300 {
            q.push_back(frame(0, 1500));
            q.push_back(frame(1, 1500));
        }
        let mut sent = [0u64; 2];
        for _ in 0..300 {
            let f = q.pop(0).unwrap();
            sent[f.priority as usize] += f.bytes as u64;
        }
        // Weights 1:2 while both are backlogged: 100 frames of class 0, 200 of class 1.
        assert_eq!(sent, [150_000, 300_000]);
    }
}
