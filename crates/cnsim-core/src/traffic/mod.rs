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
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::HostId;
use crate::rng::SimRng;
use crate::scenario::locality::{Locality, LocalitySpec};
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
    /// `locality`: another host of `me`'s rack, of its pod outside the rack, or outside the
    /// pod, with the entry's fractions (`scenario/locality.rs`); uniform within the part.
    Local {
        me: HostId,
        n_hosts: u32,
        locality: Locality,
    },
}

impl Destinations {
    /// `dst = "uniform"`: all other hosts, or placed by the entry's (validated) `locality`.
    pub(crate) fn uniform(me: HostId, n_hosts: u32, locality: Option<&LocalitySpec>) -> Self {
        match locality {
            None => Destinations::AllOthers { me, n_hosts },
            Some(l) => Destinations::Local {
                me,
                n_hosts,
                locality: l.checked("locality", n_hosts).expect("validated"),
            },
        }
    }

    /// A destination, uniform over the candidates (no draw for a fixed one).
    pub(crate) fn pick(&self, rng: &mut SimRng) -> HostId {
        match self {
            Destinations::Fixed(d) => *d,
            Destinations::UniformOver(list) => list[rng.random_range(0..list.len())],
            Destinations::AllOthers { me, n_hosts } => {
                let r = rng.random_range(0..(*n_hosts - 1) as usize) as u32;
                r + (r >= *me) as u32
            }
            Destinations::Local {
                me,
                n_hosts,
                locality,
            } => pick_local(*me, *n_hosts, locality, rng),
        }
    }
}

/// How a `load_basis = "busiest_link"` entry's load was turned into its hosts' load
/// (`summary.json`, `load_scaling`; computed in `sim/build/link_load.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LoadScaling {
    /// The entry's index in `[[traffic]]`.
    pub(crate) traffic: usize,
    /// The load asked of the busiest link (the entry's `load`).
    pub(crate) busiest_link_load: f64,
    /// The link, `node:port->peer` (its transmitting node and port).
    pub(crate) busiest_link: String,
    /// Its expected utilisation with every sender at its full line rate.
    pub(crate) busiest_link_load_at_full_rate: f64,
    /// What each sender then offers, as a fraction of its line rate.
    pub(crate) host_load: f64,
}

/// A run of consecutive hosts `lo..hi`, each the destination of a draw with probability
/// `p_each`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct HostRun {
    pub(crate) lo: u32,
    pub(crate) hi: u32,
    pub(crate) p_each: f64,
}

impl Destinations {
    /// What `pick` draws, as disjoint runs of hosts with their probabilities (summing to 1):
    /// the traffic matrix row of a sender, for the expected link loads (`sim/build/link_load.rs`).
    pub(crate) fn spread(&self) -> Vec<HostRun> {
        let run = |lo: u32, hi: u32, p_each: f64| HostRun { lo, hi, p_each };
        // `lo..hi` less the gap `gap_lo..gap_hi` inside it, each host at `p_each`.
        let around = |lo: u32, hi: u32, gap_lo: u32, gap_hi: u32, p_each: f64| {
            [run(lo, gap_lo, p_each), run(gap_hi, hi, p_each)]
        };
        let mut runs: Vec<HostRun> = match self {
            Destinations::Fixed(d) => vec![run(*d, d + 1, 1.0)],
            Destinations::UniformOver(list) => {
                let p = 1.0 / list.len() as f64;
                list.iter().map(|&d| run(d, d + 1, p)).collect()
            }
            Destinations::AllOthers { me, n_hosts } => {
                around(0, *n_hosts, *me, me + 1, 1.0 / (n_hosts - 1) as f64).to_vec()
            }
            Destinations::Local {
                me,
                n_hosts,
                locality: l,
            } => {
                let rack = me / l.rack_hosts * l.rack_hosts;
                let pod = me / l.pod_hosts * l.pod_hosts;
                let beyond = 1.0 - l.rack_fraction - l.pod_fraction;
                let each = |fraction: f64, hosts: u32| fraction / hosts.max(1) as f64;
                let mut v = around(
                    rack,
                    rack + l.rack_hosts,
                    *me,
                    me + 1,
                    each(l.rack_fraction, l.rack_hosts - 1),
                )
                .to_vec();
                v.extend(around(
                    pod,
                    pod + l.pod_hosts,
                    rack,
                    rack + l.rack_hosts,
                    each(l.pod_fraction, l.pod_hosts - l.rack_hosts),
                ));
                v.extend(around(
                    0,
                    *n_hosts,
                    pod,
                    pod + l.pod_hosts,
                    each(beyond, n_hosts - l.pod_hosts),
                ));
                v
            }
        };
        runs.retain(|r| r.hi > r.lo && r.p_each > 0.0);
        runs
    }
}

/// One draw for the part (rack, pod, beyond), one for the host in it: a uniform index over the
/// part's hosts less the enclosing smaller part (me; my rack; my pod), mapped around the gap.
fn pick_local(me: HostId, n_hosts: u32, l: &Locality, rng: &mut SimRng) -> HostId {
    let u: f64 = rng.random();
    let (lo, size, gap_lo, gap_size) = if u < l.rack_fraction {
        (me / l.rack_hosts * l.rack_hosts, l.rack_hosts, me, 1)
    } else if u < l.rack_fraction + l.pod_fraction {
        let rack = me / l.rack_hosts * l.rack_hosts;
        (
            me / l.pod_hosts * l.pod_hosts,
            l.pod_hosts,
            rack,
            l.rack_hosts,
        )
    } else {
        (0, n_hosts, me / l.pod_hosts * l.pod_hosts, l.pod_hosts)
    };
    let r = lo + rng.random_range(0..(size - gap_size) as usize) as u32;
    if r >= gap_lo {
        r + gap_size
    } else {
        r
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

    /// 32 hosts: racks of 4, pods of 16 (4 racks); host 5 (in rack 4-7 of pod 0-15) sends a
    /// quarter to its rack, half to its pod outside the rack, a quarter beyond.
    fn host_5_by_locality() -> Destinations {
        let locality = Locality {
            rack_fraction: 0.25,
            pod_fraction: 0.5,
            rack_hosts: 4,
            pod_hosts: 16,
        };
        Destinations::Local {
            me: 5,
            n_hosts: 32,
            locality,
        }
    }

    #[test]
    fn local_destinations_follow_the_fractions_and_cover_each_part() {
        let dst = host_5_by_locality();
        let mut rng = stream(3, StreamKind::Traffic, 0);
        let n = 100_000;
        let mut hits = [0u32; 32];
        for _ in 0..n {
            hits[dst.pick(&mut rng) as usize] += 1;
        }
        assert_eq!(hits[5], 0, "never the sender");
        let share = |r: std::ops::Range<usize>| hits[r].iter().sum::<u32>() as f64 / n as f64;
        // Binomial standard deviation at n = 1e5 is at most 0.0016: 0.01 is six of them.
        assert!((share(4..8) - 0.25).abs() < 0.01, "rack {}", share(4..8));
        assert!((share(0..4) + share(8..16) - 0.5).abs() < 0.01, "pod");
        assert!((share(16..32) - 0.25).abs() < 0.01, "beyond the pod");
        // Uniform within each part: every rack mate 1/3 of 25%, pod hosts 1/12 of 50%, remote
        // hosts 1/16 of 25% (each within 15% of its expected count).
        let expect = |h: usize| match h {
            4..=7 => 0.25 / 3.0,
            0..=15 => 0.5 / 12.0,
            _ => 0.25 / 16.0,
        };
        for (h, &k) in hits.iter().enumerate().filter(|(h, _)| *h != 5) {
            let want = expect(h) * n as f64;
            assert!(
                (k as f64 - want).abs() < 0.15 * want,
                "host {h}: {k} vs {want}"
            );
        }
    }

    /// Per host, the probability `spread` gives it.
    fn spread_per_host(d: &Destinations, n_hosts: usize) -> Vec<f64> {
        let mut p = vec![0.0; n_hosts];
        for r in d.spread() {
            for q in &mut p[r.lo as usize..r.hi as usize] {
                *q += r.p_each;
            }
        }
        p
    }

    #[test]
    fn spread_is_what_pick_draws() {
        // The locality example, worked: rack mates 0.25 / 3, pod hosts 0.5 / 12, remote
        // hosts 0.25 / 16, the sender 0.
        let local = host_5_by_locality();
        let p = spread_per_host(&local, 32);
        for (h, &q) in p.iter().enumerate() {
            let want = match h {
                5 => 0.0,
                4..=7 => 0.25 / 3.0,
                0..=15 => 0.5 / 12.0,
                _ => 0.25 / 16.0,
            };
            assert!((q - want).abs() < 1e-15, "host {h}: {q} vs {want}");
        }
        // All others: 1/7 each but the sender; a list: 1/len each; fixed: all on one.
        let all = spread_per_host(&Destinations::AllOthers { me: 0, n_hosts: 8 }, 8);
        assert_eq!(all[0], 0.0);
        assert!(all[1..].iter().all(|&q| (q - 1.0 / 7.0).abs() < 1e-15));
        let list = spread_per_host(&Destinations::UniformOver(vec![2, 6]), 8);
        assert_eq!(list, vec![0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.5, 0.0]);
        assert_eq!(
            spread_per_host(&Destinations::Fixed(3), 4),
            vec![0.0, 0.0, 0.0, 1.0]
        );
        // And the empirical frequencies of `pick` agree with it (five binomial sigmas).
        let mut rng = stream(7, StreamKind::Traffic, 1);
        let n = 200_000;
        let mut hits = [0u32; 32];
        for _ in 0..n {
            hits[local.pick(&mut rng) as usize] += 1;
        }
        for (h, &k) in hits.iter().enumerate() {
            let want = p[h] * n as f64;
            let sigma = (want * (1.0 - p[h])).sqrt();
            assert!(
                (k as f64 - want).abs() <= 5.0 * sigma + 1e-9,
                "host {h}: {k} vs {want}"
            );
        }
    }

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
