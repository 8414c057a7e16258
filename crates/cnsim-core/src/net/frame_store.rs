//! The frames on the network's links and in its switches' output queues, in one store. A
//! link's pipe holds (arrival time, slot) and a frame's arrival event names its slot, so what
//! an arrival reads is found from the event itself: the event loop's prefetcher loads the
//! arriving frame four events ahead without walking from the sending port through its pipe
//! (`sim/prefetch.rs`), and a pipe entry is 16 bytes, not the 80 of a frame and its time.
//!
//! A frame stays in its slot from the host that sends it to the host it arrives at: a switch
//! that queues it or starts it at once keeps it there (its class queue holds the slot with
//! the input port, `scheduler.rs`, and then its output pipe); a frame is taken out when it
//! reaches a host, or when a switch drops it or handles it itself (PAUSE, PFC, a scheme's
//! message for the control queue). Freed slots are reused last-freed-first, a line likely in
//! the cache.

pub(crate) use crate::engine::FrameSlot;
use crate::net::frame::Frame;

#[derive(Clone, Debug, Default)]
pub(crate) struct FrameStore {
    frames: Vec<Frame>,
    /// Slots not holding a frame, the most recently freed last.
    free: Vec<FrameSlot>,
    /// The slot `put` wrote last, or `mark_last` named.
    last: FrameSlot,
}

impl FrameStore {
    /// Stores `frame` (copied straight into its slot) and returns the slot.
    #[inline]
    pub(crate) fn put(&mut self, frame: &Frame) -> FrameSlot {
        self.last = match self.free.pop() {
            Some(slot) => {
                self.frames[slot as usize] = *frame;
                slot
            }
            None => self.grow(frame),
        };
        self.last
    }

    /// Makes `slot` the last put: a stored frame that a port starts (`Port::start_in_store`).
    #[inline]
    pub(crate) fn mark_last(&mut self, slot: FrameSlot) {
        self.last = slot;
    }

    /// The slot `put` wrote last.
    pub(crate) fn last_put(&self) -> FrameSlot {
        self.last
    }

    /// The frame `put` stored last: the one a port has just started, to stamp or mark it on
    /// its way out (found without the port's pipe).
    #[inline]
    pub(crate) fn last_put_mut(&mut self) -> &mut Frame {
        &mut self.frames[self.last as usize]
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, frame: &Frame) -> FrameSlot {
        let slot = FrameSlot::try_from(self.frames.len()).expect("under 2^32 frames stored");
        self.frames.push(*frame);
        slot
    }

    /// Removes the frame in `slot` and returns it.
    #[inline]
    pub(crate) fn take(&mut self, slot: FrameSlot) -> Frame {
        self.free(slot);
        self.frames[slot as usize]
    }

    /// Frees `slot` (its frame is dropped, or was copied out).
    #[inline]
    pub(crate) fn free(&mut self, slot: FrameSlot) {
        self.free.push(slot);
    }

    #[inline]
    pub(crate) fn get(&self, slot: FrameSlot) -> &Frame {
        &self.frames[slot as usize]
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, slot: FrameSlot) -> &mut Frame {
        &mut self.frames[slot as usize]
    }

    /// The frame in `slot` if there is such a slot (a prefetch hint's target: the hint may
    /// name a slot freed since; it reads nothing the simulation depends on).
    #[inline]
    pub(crate) fn peek(&self, slot: FrameSlot) -> Option<&Frame> {
        self.frames.get(slot as usize)
    }

    /// The slot the next `put` writes, if it reuses one (a prefetch hint's target).
    #[inline]
    pub(crate) fn next_slot(&self) -> Option<&Frame> {
        self.peek(*self.free.last()?)
    }

    /// Frames stored now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.frames.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimTime;

    #[test]
    fn slots_are_reused_last_freed_first() {
        let mut store = FrameStore::default();
        let frame = |bytes| Frame::data(0, 1, bytes, SimTime::ZERO);
        let (a, b) = (store.put(&frame(100)), store.put(&frame(200)));
        assert_eq!((a, b), (0, 1));
        assert!(store.next_slot().is_none());
        assert_eq!(store.take(a).bytes, 100);
        assert_eq!(store.next_slot().map(|f| f.bytes), Some(100));
        let c = store.put(&frame(300));
        assert_eq!(c, a, "the freed slot is reused");
        assert_eq!(store.get(c).bytes, 300);
        assert_eq!(store.last_put_mut().bytes, 300);
        store.get_mut(b).bytes = 250;
        assert_eq!(store.take(b).bytes, 250);
        assert_eq!(store.len(), 1);
        assert!(store.peek(7).is_none());
    }
}
