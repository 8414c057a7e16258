//! The event queue: a timing wheel of 2^shift-ps slots whose buckets are sorted (stably, by
//! time: a bucket is filled in the order events are scheduled, so ties run first come, first
//! served) when the clock reaches them, as cnsim's is (`crates/cnsim-core/src/engine.rs`).

use crate::fabric::Frame;

/// A scheduled event: 32 bytes, the frame of an arrival inside it.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub time: u64,
    pub what: u32,
    pub frame: Frame,
}

const WHEEL_SLOTS: usize = 4096;

pub struct Queue {
    shift: u32,
    buckets: Vec<Vec<Event>>,
    /// Events beyond the wheel's reach (none on this fabric in practice: flow starts come
    /// a microsecond apart), moved into the wheel as it turns. One moved in goes behind the
    /// events of its time scheduled into the wheel meanwhile: a tie order cnsim's queue keeps
    /// exactly (by sequence number) and this one would not, were its far list ever used.
    far: Vec<Event>,
    cur_slot: u64,
    run: Vec<Event>,
    head: usize,
    in_buckets: usize,
    scratch: Vec<Event>,
}

impl Queue {
    pub fn new(shift: u32) -> Queue {
        Queue {
            shift,
            buckets: (0..WHEEL_SLOTS).map(|_| Vec::new()).collect(),
            far: Vec::new(),
            cur_slot: 0,
            run: Vec::new(),
            head: 0,
            in_buckets: 0,
            scratch: Vec::new(),
        }
    }

    #[inline]
    pub fn schedule(&mut self, time: u64, what: u32, frame: Frame) {
        let event = Event { time, what, frame };
        let slot = time >> self.shift;
        if slot <= self.cur_slot {
            // Into the sorted current run, after the events of the same time.
            let at = self.head + self.run[self.head..].partition_point(|e| e.time <= time);
            self.run.insert(at, event);
        } else if slot - self.cur_slot < WHEEL_SLOTS as u64 {
            self.buckets[slot as usize % WHEEL_SLOTS].push(event);
            self.in_buckets += 1;
        } else {
            self.far.push(event);
        }
    }

    /// The next event, if it comes before `end`.
    #[inline]
    pub fn pop_before(&mut self, end: u64) -> Option<Event> {
        loop {
            if let Some(&event) = self.run.get(self.head) {
                if event.time >= end {
                    return None;
                }
                self.head += 1;
                return Some(event);
            }
            if self.in_buckets == 0 && self.far.is_empty() {
                return None;
            }
            self.advance();
        }
    }

    fn advance(&mut self) {
        self.run.clear();
        self.head = 0;
        loop {
            self.cur_slot += 1;
            if !self.far.is_empty() {
                self.bring_near();
            }
            let bucket = &mut self.buckets[self.cur_slot as usize % WHEEL_SLOTS];
            if !bucket.is_empty() {
                std::mem::swap(&mut self.run, bucket);
                self.in_buckets -= self.run.len();
                radix_sort(&mut self.run, &mut self.scratch, self.shift);
                return;
            }
        }
    }

    fn bring_near(&mut self) {
        let (cur, shift) = (self.cur_slot, self.shift);
        let (near, far): (Vec<Event>, Vec<Event>) = self
            .far
            .drain(..)
            .partition(|e| (e.time >> shift) - cur < WHEEL_SLOTS as u64);
        self.far = far;
        for e in near {
            self.buckets[(e.time >> shift) as usize % WHEEL_SLOTS].push(e);
            self.in_buckets += 1;
        }
    }

    /// How many pending events `pred` holds for.
    pub fn count(&self, pred: impl Fn(&Event) -> bool) -> usize {
        let run = self.run[self.head..].iter();
        let rest = self.buckets.iter().flatten().chain(self.far.iter());
        run.chain(rest).filter(|e| pred(e)).count()
    }
}

/// Sorts a bucket by time, stably: by insertion below 32 events, else by a least-significant-
/// digit radix sort on the time within the slot, in passes of 8 bits.
fn radix_sort(run: &mut Vec<Event>, scratch: &mut Vec<Event>, shift: u32) {
    if run.len() < 32 {
        for i in 1..run.len() {
            let e = run[i];
            let mut j = i;
            while j > 0 && run[j - 1].time > e.time {
                run[j] = run[j - 1];
                j -= 1;
            }
            run[j] = e;
        }
        return;
    }
    let mask = (1u64 << shift) - 1;
    let mut digit_shift = 0;
    while digit_shift < shift {
        let mut counts = [0u32; 256];
        for e in run.iter() {
            counts[((e.time & mask) >> digit_shift) as usize & 255] += 1;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let n = *c;
            *c = sum;
            sum += n;
        }
        scratch.clear();
        scratch.resize(run.len(), run[0]);
        for e in run.iter() {
            let d = ((e.time & mask) >> digit_shift) as usize & 255;
            scratch[counts[d] as usize] = *e;
            counts[d] += 1;
        }
        std::mem::swap(run, scratch);
        digit_shift += 8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn event(time: u64, what: u32) -> Event {
        Event {
            time,
            what,
            frame: Frame::default(),
        }
    }

    #[test]
    fn the_radix_sort_is_a_stable_sort_by_time() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for len in [0, 1, 5, 31, 32, 33, 200, 1_000] {
            // Few distinct times, so ties are many; `what` numbers the events in order.
            let run: Vec<Event> = (0..len)
                .map(|i| event((5 << 16) | (rng.random_range(0..40u64) * 997), i))
                .collect();
            let mut expected = run.clone();
            expected.sort_by_key(|e| e.time);
            let (mut sorted, mut scratch) = (run, Vec::new());
            radix_sort(&mut sorted, &mut scratch, 16);
            let order = |v: &[Event]| v.iter().map(|e| (e.time, e.what)).collect::<Vec<_>>();
            assert_eq!(order(&sorted), order(&expected), "{len} events");
        }
    }

    #[test]
    fn events_pop_by_time_then_in_the_order_they_were_scheduled() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut q = Queue::new(16);
        let (mut reference, mut popped) = (Vec::new(), Vec::new());
        let (mut now, mut next_id) = (0u64, 0u32);
        for _ in 0..20_000 {
            if rng.random_bool(0.55) {
                // Within the current slot, a few slots on, or beyond the wheel (far).
                let delay = match rng.random_range(0..10) {
                    0..=3 => rng.random_range(0..8) * 8_000,
                    4..=8 => rng.random_range(0..3_000_000) / 1_000 * 1_000,
                    _ => rng.random_range(300_000_000..400_000_000),
                };
                q.schedule(now + delay, next_id, Frame::default());
                reference.push((now + delay, next_id));
                next_id += 1;
            } else if let Some(e) = q.pop_before(u64::MAX) {
                now = e.time;
                popped.push((e.time, e.what));
            }
        }
        while let Some(e) = q.pop_before(u64::MAX) {
            popped.push((e.time, e.what));
        }
        reference.sort();
        assert_eq!(popped, reference);
    }
}
