//! One direction of a link's frames in flight: (arrival time, slot of the frame in the
//! network's `FrameStore`) in arrival order, in a ring buffer. Its own type rather than a
//! `VecDeque` for one thing the standard deque does not offer: the slot the next entry will be
//! written to, which the event loop prefetches (`sim/prefetch.rs`).

use crate::net::frame_store::FrameSlot;
use crate::time::SimTime;

/// A frame on the link: the time it reaches the far end and where it is stored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InFlight {
    pub(crate) arrival: SimTime,
    pub(crate) slot: FrameSlot,
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

    /// Appends the frame in `slot`, arriving at `arrival`.
    pub(crate) fn push_back(&mut self, slot: FrameSlot, arrival: SimTime) {
        let entry = InFlight { arrival, slot };
        if self.len == self.slots.len() {
            self.grow(entry);
        }
        let at = (self.head + self.len) & self.mask();
        self.slots[at] = entry;
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

    /// Removes the first entry and returns its frame's slot.
    pub(crate) fn pop_front(&mut self) -> Option<FrameSlot> {
        if self.len == 0 {
            return None;
        }
        let slot = self.slots[self.head].slot;
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(slot)
    }

    pub(crate) fn front(&self) -> Option<&InFlight> {
        (self.len > 0).then(|| &self.slots[self.head])
    }

    pub(crate) fn back(&self) -> Option<&InFlight> {
        let at = (self.head + self.len.checked_sub(1)?) & self.mask();
        Some(&self.slots[at])
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

    #[test]
    fn behaves_as_a_deque_across_growth_and_wrap_around() {
        let mut pipe = Pipe::default();
        let mut deque = VecDeque::new();
        let mut rng = 7u64;
        for k in 0..10_000u64 {
            rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            if !(rng >> 33).is_multiple_of(3) {
                pipe.push_back(k as FrameSlot, SimTime(k));
                deque.push_back(k);
            } else {
                assert_eq!(pipe.pop_front().map(u64::from), deque.pop_front());
            }
            assert_eq!(pipe.len(), deque.len());
            assert_eq!(pipe.front().map(|e| e.arrival.ps()), deque.front().copied());
            assert_eq!(pipe.back().map(|e| e.arrival.ps()), deque.back().copied());
            if k % 97 == 0 {
                let ours: Vec<_> = pipe.iter().map(|e| e.slot as u64).collect();
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
            pipe.push_back(k as FrameSlot, SimTime(k));
            if k.is_multiple_of(3) {
                pipe.pop_front();
            }
            if pipe.len() < pipe.slots.len() {
                let next = pipe.next_slot().map(|e| e as *const InFlight);
                pipe.push_back(1000 + k as FrameSlot, SimTime(1000 + k));
                assert_eq!(next, pipe.back().map(|e| e as *const InFlight));
                pipe.pop_front();
            }
        }
    }
}
