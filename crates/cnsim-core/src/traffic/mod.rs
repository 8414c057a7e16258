//! Frame sources. Each sending host of a `[[traffic]]` entry gets a `Source` with its own
//! random stream (scenario seed + source index).
//!
//! Bernoulli (seeds 000-003): at each frame slot of the line rate a frame arrives with
//! probability `load`; the gap to the next arrival is drawn as a geometric number of slots, so
//! the cost is one event per frame, not per slot.

pub(crate) mod flows;
pub(crate) mod incast;
pub(crate) mod trace;

use rand::Rng;
use rand_distr::{Distribution, Geometric};

use crate::ids::HostId;
use crate::rng::SimRng;
use crate::time::{serialization_time, SimTime};

#[derive(Clone, Debug)]
pub(crate) enum Destinations {
    Fixed(HostId),
    /// Uniform over these hosts, the source itself excluded.
    UniformOver(Vec<HostId>),
    /// Uniform over all `n_hosts` hosts but `me`, without a list (O(1) memory on large
    /// topologies; the same draws as `UniformOver` of the other hosts in order).
    AllOthers {
        me: HostId,
        n_hosts: u32,
    },
}

impl Destinations {
    /// A destination, uniform over the candidates (no draw for a fixed one).
    pub(crate) fn pick(&self, rng: &mut SimRng) -> HostId {
        match self {
            Destinations::Fixed(d) => *d,
            Destinations::UniformOver(list) => list[rng.random_range(0..list.len())],
            Destinations::AllOthers { me, n_hosts } => {
                let r = rng.random_range(0..(*n_hosts - 1) as usize) as u32;
                r + (r >= *me) as u32
            }
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Pattern {
    Bernoulli {
        slot: SimTime,
        gaps: Geometric,
    },
    Cbr {
        interval: SimTime,
    },
    /// Always backlogged: the host pulls frames as it can send them.
    Saturate,
}

pub(crate) struct Source {
    pub(crate) host: HostId,
    pub(crate) node: u32,
    pub(crate) dst: Destinations,
    pub(crate) pattern: Pattern,
    pub(crate) frame_bytes: u32,
    pub(crate) start: SimTime,
    pub(crate) stop: SimTime,
    pub(crate) rng: SimRng,
    /// Saturating sources: whether the backlog is switched on.
    pub(crate) active: bool,
    /// 802.1Q priority class of the frames.
    pub(crate) priority: u8,
}

impl Source {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn bernoulli(
        host: HostId,
        node: u32,
        dst: Destinations,
        load: f64,
        line_rate_bps: f64,
        frame_bytes: u32,
        start: SimTime,
        stop: SimTime,
        rng: SimRng,
    ) -> Source {
        let slot = serialization_time(frame_bytes as u64, line_rate_bps);
        let gaps = Geometric::new(load).expect("load validated in (0, 1]");
        Source {
            host,
            node,
            dst,
            pattern: Pattern::Bernoulli { slot, gaps },
            frame_bytes,
            start,
            stop,
            rng,
            active: false,
            priority: 0,
        }
    }

    /// Time of the first arrival (or of switching a saturating source on).
    pub(crate) fn first_arrival(&mut self) -> SimTime {
        match &self.pattern {
            Pattern::Bernoulli { slot, gaps } => {
                let skipped = gaps.sample(&mut self.rng);
                self.start + *slot * skipped
            }
            Pattern::Cbr { .. } | Pattern::Saturate => self.start,
        }
    }

    /// Time of the arrival after one at `now`: Bernoulli gaps are 1 + Geometric(load) slots.
    pub(crate) fn next_arrival(&mut self, now: SimTime) -> SimTime {
        match &self.pattern {
            Pattern::Bernoulli { slot, gaps } => {
                let skipped = gaps.sample(&mut self.rng);
                now + *slot * skipped.saturating_add(1)
            }
            Pattern::Cbr { interval } => now + *interval,
            Pattern::Saturate => SimTime::MAX,
        }
    }

    pub(crate) fn pick_destination(&mut self) -> HostId {
        self.dst.pick(&mut self.rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, StreamKind};

    #[test]
    fn bernoulli_mean_rate_matches_load() {
        let stop = SimTime::from_secs_f64(1.0);
        let mut s = Source::bernoulli(
            0,
            0,
            Destinations::Fixed(1),
            0.5,
            10e9,
            1500,
            SimTime::ZERO,
            stop,
            stream(3, StreamKind::Traffic, 0),
        );
        let mut t = s.first_arrival();
        let mut n = 0u64;
        while t < SimTime::from_secs_f64(0.1) {
            n += 1;
            t = s.next_arrival(t);
        }
        // 0.1 s / 1.2 us = 83,333 slots; at p = 0.5, 41,667 frames +- 145 (binomial sd).
        assert!((n as f64 - 41_666.7).abs() < 5.0 * 144.3, "{n}");
    }

    #[test]
    fn arrivals_fall_on_slot_boundaries() {
        let mut s = Source::bernoulli(
            0,
            0,
            Destinations::Fixed(1),
            0.3,
            10e9,
            1500,
            SimTime::from_micros(5),
            SimTime::MAX,
            stream(1, StreamKind::Traffic, 0),
        );
        let mut t = s.first_arrival();
        for _ in 0..100 {
            assert_eq!((t - SimTime::from_micros(5)).ps() % 1_200_000, 0);
            t = s.next_arrival(t);
        }
    }

    #[test]
    fn full_load_sends_every_slot() {
        let mut s = Source::bernoulli(
            0,
            0,
            Destinations::Fixed(1),
            1.0,
            10e9,
            1500,
            SimTime::ZERO,
            SimTime::MAX,
            stream(1, StreamKind::Traffic, 0),
        );
        assert_eq!(s.first_arrival(), SimTime::ZERO);
        assert_eq!(s.next_arrival(SimTime::ZERO), SimTime::from_nanos(1200));
    }

    #[test]
    fn uniform_destinations_cover_the_list() {
        let mut s = Source::bernoulli(
            0,
            0,
            Destinations::UniformOver(vec![1, 2, 3]),
            1.0,
            10e9,
            1500,
            SimTime::ZERO,
            SimTime::MAX,
            stream(1, StreamKind::Destination, 0),
        );
        let mut seen = [0; 4];
        for _ in 0..3000 {
            seen[s.pick_destination() as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(
            seen[1..].iter().all(|&c| (800..1200).contains(&c)),
            "{seen:?}"
        );
    }
}
