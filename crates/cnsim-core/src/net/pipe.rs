//! One direction of a link's frames in flight: (arrival time, frame) in arrival order, in a
//! ring buffer. Its own type rather than a `VecDeque` for one thing the standard deque does not
//! offer: the slot the next frame will be written to, which the event loop prefetches
//! (`sim/prefetch.rs`); on a large fabric that write missed the cache on most hops.

use crate::net::frame::Frame;
use crate::time::SimTime;

/// A frame on the link and the time it reaches the far end. The frame first (`repr(C)`), so
/// that copies of a whole entry and of its frame alone move the frame in the same 16-byte
/// pieces: a frame read right after it was copied (popped, then queued at the switch) loads
/// each piece from one store. With the time first, every piece spanned two stores, which the
/// store buffer cannot forward, and the queue's write waited for both to reach the cache
/// (the top stall of the long fabric run: docs/performance.md).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct InFlight {
    pub(crate) frame: Frame,
    pub(crate) arrival: SimTime,
}

/// Capacity of a pipe's first buffer (a power of two, as every capacity is).
const FIRST_CAPACITY: usize = 4;

#[derive(Clone, Debug, Default)]
pub(crate) struct Pipe {
    /// The ring; its length (0 or a power of two) is the capacity. Every slot holds a value
    /// (copies of a pushed entry fill new buffers), so the ring needs no unsafe code.
    slots: Vec<InFlight>,
    head: usize,
    len: usize,
}

impl Pipe {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Appends `frame`, arriving at `arrival`, written straight into its slot (no entry made
    /// on the stack first: read back in 16-byte pieces, its fields' separate stores could not
    /// be forwarded).
    pub(crate) fn push_back(&mut self, frame: &Frame, arrival: SimTime) {
        if self.len == self.slots.len() {
            self.grow(InFlight {
                frame: *frame,
                arrival,
            });
        }
        let at = (self.head + self.len) & self.mask();
        let slot = &mut self.slots[at];
        slot.frame = *frame;
        slot.arrival = arrival;
        self.len += 1;
    }

    /// Twice the capacity, the entries in order from slot 0.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, filler: InFlight) {
        let capacity = (2 * self.slots.len()).max(FIRST_CAPACITY);
        let mut slots = Vec::with_capacity(capacity);
        slots.extend(self.iter().copied());
        slots.resize(capacity, filler);
        self.slots = slots;
        self.head = 0;
    }

    /// Removes the first entry and returns its frame.
    pub(crate) fn pop_front(&mut self) -> Option<Frame> {
        if self.len == 0 {
            return None;
        }
        let frame = self.slots[self.head].frame;
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(frame)
    }

    pub(crate) fn front(&self) -> Option<&InFlight> {
        (self.len > 0).then(|| &self.slots[self.head])
    }

    #[cfg(test)]
    pub(crate) fn back(&self) -> Option<&InFlight> {
        let at = (self.head + self.len.checked_sub(1)?) & self.mask();
        Some(&self.slots[at])
    }

    pub(crate) fn back_mut(&mut self) -> Option<&mut InFlight> {
        let at = (self.head + self.len.checked_sub(1)?) & self.mask();
        Some(&mut self.slots[at])
    }

    /// The slot the next `push_back` writes (None before the first buffer): a prefetch hint's
    /// target.
    pub(crate) fn next_slot(&self) -> Option<&InFlight> {
        self.slots
            .get((self.head + self.len) & self.slots.len().wrapping_sub(1))
    }

    /// The entries, first to arrive first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &InFlight> {
        let mask = self.slots.len().wrapping_sub(1);
        (0..self.len).map(move |k| &self.slots[(self.head + k) & mask])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn frame(k: u64) -> Frame {
        Frame::data(0, 1, 1500, SimTime(k))
    }

    #[test]
    fn behaves_as_a_deque_across_growth_and_wrap_around() {
        let mut pipe = Pipe::default();
        let mut deque = VecDeque::new();
        let mut rng = 7u64;
        for k in 0..10_000u64 {
            rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            if !(rng >> 33).is_multiple_of(3) {
                pipe.push_back(&frame(k), SimTime(k));
                deque.push_back(k);
            } else {
                assert_eq!(pipe.pop_front().map(|f| f.born.ps()), deque.pop_front());
            }
            assert_eq!(pipe.len(), deque.len());
            assert_eq!(pipe.front().map(|e| e.arrival.ps()), deque.front().copied());
            assert_eq!(pipe.back().map(|e| e.arrival.ps()), deque.back().copied());
            if k % 97 == 0 {
                let ours: Vec<_> = pipe.iter().map(|e| e.frame.born.ps()).collect();
                let theirs: Vec<_> = deque.iter().copied().collect();
                assert_eq!(ours, theirs);
            }
        }
    }

    #[test]
    fn the_next_slot_is_where_the_next_entry_goes() {
        let mut pipe = Pipe::default();
        assert!(pipe.next_slot().is_none());
        for k in 0..40u64 {
            pipe.push_back(&frame(k), SimTime(k));
            if k.is_multiple_of(3) {
                pipe.pop_front();
            }
            if pipe.len() < pipe.slots.len() {
                let next = pipe.next_slot().map(|e| e as *const InFlight);
                pipe.push_back(&frame(1000 + k), SimTime(1000 + k));
                assert_eq!(next, pipe.back().map(|e| e as *const InFlight));
                pipe.pop_front();
            }
        }
    }
}
