//! What a run will cost, estimated from the scenario alone (no network is built), for the
//! fail-fast caps of `[limits]`: events from the traffic's frame rates and path lengths, probe
//! samples from the elements, memory from the elements, the routes, the queues that can be
//! busy, the flows (counted from the size distribution's mean) and the samples.
//!
//! The memory constants are measured (docs/robustness.md: peaks of `cnsim run --no-plots`
//! and of `cnsim.run` on trees, fat trees and flow workloads, fitted by least squares), so the
//! estimate is meant to land within a factor of 2 of a run's peak, figures aside.

use std::collections::HashMap;
use std::path::Path;

use super::flows::PERMUTATION;
use super::flows::{bounded_pareto_mean, empirical_mean};
use super::report::{ProbeScope, PROBE_TIERS_ABOVE_SAMPLES};
use super::{DstSpec, LoadBasis, Scenario, SizeSpec, TrafficKind, TrafficSpec};

const UNIFORM: &str = "uniform";

/// The process before the run: the core and Python with numpy and pyarrow (measured: 30 MB
/// for `cnsim.run`, 84 MB for `cnsim run --no-plots`, 187 MB with its default figures).
const PROCESS_BYTES: f64 = 100e6;
/// Per host: its state, its per-source summary, its names in the resolved scenario, the
/// report and Python's copies (fitted: 4.5 KB through the API, 7.3 KB through the CLI).
const BYTES_PER_HOST: f64 = 7_500.0;
/// Per link: its two ports, their summary entries and Python's copies (fitted: 10.6 KB through
/// the API, 12.6 KB through the CLI).
const BYTES_PER_LINK: f64 = 12_500.0;
/// Bytes per probe sample: 24 in the core's columns, about as much again in the DataFrame
/// and the Parquet encoder that copy them.
const BYTES_PER_SAMPLE: f64 = 64.0;
/// Bytes per (host, destination) queue with its rate limiter state. A host keeps one only for
/// destinations it has work or a limiter for.
const BYTES_PER_VOQ: f64 = 256.0;
/// VOQs a sending host without rate limiters is taken to hold at once (queues with frames
/// waiting).
const BUSY_VOQS_PER_HOST: f64 = 64.0;
/// Bytes per flow of a workload: its row, its run-time state and its output record, in the
/// core and in Python (measured on a million 1000-byte flows: 165 B through the API, 173 B
/// through the CLI).
const BYTES_PER_FLOW: f64 = 175.0;
/// Rows a per-tier probe records at most: every metric for a handful of tiers and of pairs
/// of tiers.
const TIER_SAMPLES_PER_PROBE: f64 = 400.0;
/// Rows a streamed run gathers into one row group before writing it (`cnsim/stream.py`).
const STREAM_ROW_GROUP_ROWS: f64 = 65_536.0;
/// Events per flow besides its frames': its start and its completion.
const EVENTS_PER_FLOW: f64 = 2.0;

/// What a run is estimated to cost (for the fail-fast caps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub events: f64,
    pub probe_samples: f64,
    pub memory_bytes: f64,
}

impl SizeSpec {
    /// The distribution's mean in bytes, as the workload samples it: a CDF's (inline, named,
    /// or read from its file) linear between its points, a bounded Pareto's closed form. A
    /// Pareto without a mean (shape <= 1) gives its scale, the smallest size, so flows are not
    /// undercounted. None when it cannot be known yet (an unreadable CDF file, which building
    /// the network then reports).
    pub(crate) fn mean_bytes(&self) -> Option<f64> {
        let from_file = match self {
            SizeSpec::Empirical {
                cdf_file: Some(file),
                ..
            } => {
                let points = super::cdf::read_file(Path::new(file), "").ok()?;
                Some(points)
            }
            SizeSpec::Empirical { cdf, .. } if cdf.points().is_none_or(|p| p.is_empty()) => {
                return None
            }
            _ => None,
        };
        let mean = match self {
            SizeSpec::Fixed { bytes } => *bytes,
            SizeSpec::Exponential { mean_bytes } => *mean_bytes,
            SizeSpec::Pareto {
                shape,
                scale_bytes,
                mean_bytes,
            } => match (mean_bytes, scale_bytes) {
                (Some(mean), _) => *mean,
                (None, Some(scale)) if *shape > 1.0 => shape * scale / (shape - 1.0),
                _ => f64::INFINITY,
            },
            SizeSpec::BoundedPareto {
                shape,
                min_bytes,
                max_bytes,
            } => bounded_pareto_mean(*shape, *min_bytes, *max_bytes),
            SizeSpec::Empirical { cdf, .. } => {
                let points = from_file.or_else(|| cdf.points())?;
                empirical_mean(&points)
            }
        };
        match self {
            SizeSpec::Pareto {
                scale_bytes: Some(scale),
                ..
            } if !mean.is_finite() => Some(*scale),
            _ => (mean.is_finite() && mean > 0.0).then_some(mean),
        }
    }
}

impl Scenario {
    /// Estimates of the run's events, probe samples and memory, from the traffic's frame
    /// rates, the path lengths, the probes and the elements; cheap (no network is built). An
    /// entry with `load_basis = "busiest_link"` counts with its hosts at `load`, an upper
    /// bound: their load is `load` / (the busiest link's load at full rate, at least 1), known
    /// once the routes are (the build checks the caps again then: `estimate_known_loads`).
    pub fn estimate(&self) -> Estimate {
        self.estimate_counting(true)
    }

    /// The estimate without the entries whose hosts' load is not known before the routes are
    /// (`load_basis = "busiest_link"`): what the caps are checked against before the build.
    /// After it, those entries carry their hosts' load (`sim/build/link_load.rs`), and this is
    /// the whole estimate.
    pub(crate) fn estimate_known_loads(&self) -> Estimate {
        self.estimate_counting(false)
    }

    fn estimate_counting(&self, busiest_link_entries: bool) -> Estimate {
        // A host's line rate: its first link's (a map, not a search of the links per host).
        let mut rates: HashMap<&str, f64> = Default::default();
        for l in self.links.iter().rev() {
            for end in &l.ends {
                rates.insert(end.as_str(), l.rate_bps);
            }
        }
        let line_rate = |host: &str| rates.get(host).copied().unwrap_or(0.0);
        let n_hosts = self.hosts.len() as f64;
        let mut frames_events = 0.0;
        let mut workload_flows = 0.0;
        let mut busy_voqs = 0.0;
        let mut pairs = 0.0;
        let counted =
            |t: &&TrafficSpec| busiest_link_entries || t.load_basis == LoadBasis::HostLink;
        for t in self.traffic.iter().filter(counted) {
            let stop = t.stop_s.unwrap_or(self.duration_s).min(self.duration_s);
            let active_s = (stop - t.start_s).max(0.0);
            let frame_bits = 8.0 * f64::from(t.frame_bytes + self.model.wire_overhead_bytes);
            let hops = self.longest_path_links(t).max(1) as f64;
            let mean_bytes = t.size.as_ref().and_then(SizeSpec::mean_bytes);
            busy_voqs += t.hosts.len() as f64 * BUSY_VOQS_PER_HOST.min(destinations(t, n_hosts));
            let mut entry_flows = 0.0;
            for h in &t.hosts {
                let rate = match t.kind {
                    TrafficKind::Bernoulli | TrafficKind::Flows => {
                        t.load.unwrap_or(1.0) * line_rate(h)
                    }
                    TrafficKind::Cbr => t.rate_bps.unwrap_or(0.0).min(line_rate(h)),
                    TrafficKind::Saturate => line_rate(h),
                    TrafficKind::FlowTrace => 0.0,
                    TrafficKind::Incast => super::incast::offered_bps_per_host(t, mean_bytes),
                };
                if let Some(mean) = mean_bytes {
                    entry_flows += rate / (8.0 * mean) * active_s;
                }
                // Per frame: its generation, and per link an end of transmission and an
                // arrival; plus the delivery.
                frames_events += rate / frame_bits * active_s * (2.0 * hops + 2.0);
            }
            workload_flows += entry_flows;
            pairs += self.limited_pairs(t, n_hosts, entry_flows);
        }
        // An inline flow list: its bytes (a trace file is read only when the network is
        // built); its senders are not known here, so every host may hold busy queues.
        for t in (self.traffic.iter()).filter(|t| t.kind == TrafficKind::FlowTrace) {
            workload_flows += t.flows.len() as f64;
            let bytes: f64 = t.flows.iter().map(|f| f.size_bytes).sum();
            let frame_bits = 8.0 * f64::from(t.frame_bytes + self.model.wire_overhead_bytes);
            frames_events += bytes * 8.0 / frame_bits * (2.0 * 4.0 + 2.0);
            busy_voqs += n_hosts * BUSY_VOQS_PER_HOST.min(n_hosts);
        }
        let busy_voqs = busy_voqs.min(n_hosts * BUSY_VOQS_PER_HOST.min(n_hosts));
        let probes = (self.duration_s / self.report.probe_interval_s).floor();
        let n_links = self.links.len() as f64;
        let limiters = pairs.min(n_hosts * n_hosts);
        let per_probe = if self.probes_tiers() {
            TIER_SAMPLES_PER_PROBE
        } else {
            self.element_samples_per_probe()
        };
        let probe_samples = probes * per_probe;
        // A streamed run holds a row group's samples in the making (those of a probe or
        // two; docs/outputs.md, "Streamed files"). Its flow records are not held either, but
        // the peak of a flow workload is the workload's rows and state, made before the run
        // (measured: a million 1000-byte flows peak at 296 MB streamed, 303 MB not), so a
        // flow costs the same.
        let held_samples = if self.report.streamed {
            (2.0 * per_probe)
                .max(STREAM_ROW_GROUP_ROWS)
                .min(probe_samples)
        } else {
            probe_samples
        };
        let memory_bytes = PROCESS_BYTES
            + BYTES_PER_HOST * n_hosts
            + BYTES_PER_LINK * n_links
            + (busy_voqs + limiters) * BYTES_PER_VOQ
            + self.switches.len() as f64 * n_hosts * 2.0
            + workload_flows * BYTES_PER_FLOW
            + held_samples * BYTES_PER_SAMPLE;
        Estimate {
            events: frames_events + workload_flows * EVENTS_PER_FLOW + probes,
            probe_samples,
            memory_bytes,
        }
    }

    /// Probe samples per probe with every element's series: 6 per host, 2 per switch, 5 per
    /// port (with CP feedback), 3 per rate limiter.
    fn element_samples_per_probe(&self) -> f64 {
        let n_hosts = self.hosts.len() as f64;
        let limiters = if self.congestion.scheme.is_none() {
            0.0
        } else {
            (self.traffic.iter())
                .map(|t| t.hosts.len() as f64 * destinations(t, n_hosts))
                .sum::<f64>()
                .min(n_hosts * n_hosts)
        };
        6.0 * n_hosts
            + 2.0 * self.switches.len() as f64
            + 10.0 * self.links.len() as f64
            + 3.0 * limiters
    }

    /// The probes record per-tier sums (`[report] probe`; `auto`: when every element's series
    /// would pass `PROBE_TIERS_ABOVE_SAMPLES` rows).
    pub(crate) fn probes_tiers(&self) -> bool {
        match self.report.probe {
            ProbeScope::Elements => false,
            ProbeScope::Tiers => true,
            ProbeScope::Auto => {
                let probes = (self.duration_s / self.report.probe_interval_s).floor();
                probes * self.element_samples_per_probe() > PROBE_TIERS_ABOVE_SAMPLES
            }
        }
    }

    /// Links on the longest shortest path from the entry's first sender to its destinations.
    fn longest_path_links(&self, t: &TrafficSpec) -> usize {
        let Some(src) = t.hosts.first() else {
            return 1;
        };
        let mut adjacent: HashMap<&str, Vec<&str>> = Default::default();
        for l in &self.links {
            adjacent.entry(&l.ends[0]).or_default().push(&l.ends[1]);
            adjacent.entry(&l.ends[1]).or_default().push(&l.ends[0]);
        }
        let mut dist: HashMap<&str, usize> = Default::default();
        dist.insert(src.as_str(), 0);
        let mut frontier = vec![src.as_str()];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for node in frontier {
                let d = dist[node];
                for &other in adjacent.get(node).map_or(&[][..], |v| v.as_slice()) {
                    if !dist.contains_key(other) {
                        dist.insert(other, d + 1);
                        next.push(other);
                    }
                }
            }
            frontier = next;
        }
        let far = |d: &str| dist.get(d).copied().unwrap_or(0);
        match &t.dst {
            Some(DstSpec::One(d)) if d == UNIFORM || d == PERMUTATION => {
                dist.values().copied().max().unwrap_or(1)
            }
            Some(DstSpec::One(d)) => far(d),
            Some(DstSpec::Many(list)) => list.iter().map(|d| far(d)).max().unwrap_or(1),
            Some(DstSpec::Part(_)) | None => dist.values().copied().max().unwrap_or(1),
        }
    }
}

/// How many destinations each sender of the entry has.
impl Scenario {
    /// The rate limiters entry `t` may hold under a scheme: one per (host, destination) pair
    /// it sends to, at most one per flow (a flow opens one pair); over a transport one per
    /// queue pair, which goes when its flow completes, so at most the queues a host is taken
    /// to keep busy (`BUSY_VOQS_PER_HOST`). (A 6,144-host fabric over TCP with DCTCP was once
    /// refused for 1e10 bytes of limiters for every pair of hosts, and peaked at 331 MB.)
    fn limited_pairs(&self, t: &TrafficSpec, n_hosts: f64, entry_flows: f64) -> f64 {
        if self.congestion.scheme.is_none() {
            return 0.0;
        }
        let hosts = t.hosts.len() as f64;
        let pairs = hosts * destinations(t, n_hosts);
        let opened = match t.kind {
            TrafficKind::Flows | TrafficKind::Incast => pairs.min(entry_flows),
            _ => pairs,
        };
        if t.transport.is_none() {
            opened
        } else {
            opened.min(hosts * BUSY_VOQS_PER_HOST)
        }
    }
}

fn destinations(t: &TrafficSpec, n_hosts: f64) -> f64 {
    match &t.dst {
        Some(DstSpec::One(d)) if d == UNIFORM => n_hosts - 1.0,
        Some(DstSpec::Many(list)) => list.len() as f64,
        Some(DstSpec::One(_) | DstSpec::Part(_)) | None => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::flows::Cdf;

    fn empirical(cdf: Cdf, file: Option<&str>) -> SizeSpec {
        SizeSpec::Empirical {
            cdf,
            cdf_file: file.map(String::from),
        }
    }

    #[test]
    fn means_are_the_distributions_not_their_smallest_sizes() {
        let bounded = SizeSpec::BoundedPareto {
            shape: 1.2,
            min_bytes: 1000.0,
            max_bytes: 1e6,
        };
        // The closed form for a = 1.2, L = 1e3, H = 1e6 (traffic/flows.rs tests it by sampling).
        assert!((bounded.mean_bytes().unwrap() - 4494.0).abs() < 1.0);
        let named = empirical(Cdf::Named("websearch".into()), None);
        assert!((named.mean_bytes().unwrap() - 1_711_250.0).abs() < 0.5);
        let inline = empirical(Cdf::Points(vec![[100.0, 0.5], [1100.0, 1.0]]), None);
        assert_eq!(inline.mean_bytes(), Some(350.0));
        let heavy = SizeSpec::Pareto {
            shape: 0.9,
            scale_bytes: Some(500.0),
            mean_bytes: None,
        };
        assert_eq!(heavy.mean_bytes(), Some(500.0), "no mean: the scale");
        assert_eq!(
            empirical(Cdf::Named("nope".into()), None).mean_bytes(),
            None
        );
    }

    #[test]
    fn a_cdf_file_gives_its_mean_in_either_format() {
        let dir = std::env::temp_dir().join(format!("cnsim-estimate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        for (name, text) in [
            ("pct.txt", "0 0\n100 50\n1100 100\n"),
            ("p.txt", "100 0.5\n1100 1\n"),
        ] {
            let file = dir.join(name);
            std::fs::write(&file, text).expect("write");
            let spec = empirical(Cdf::default(), Some(file.to_str().expect("utf-8")));
            let want = if name == "p.txt" { 350.0 } else { 325.0 };
            assert_eq!(spec.mean_bytes(), Some(want), "{name}");
        }
        let missing = empirical(Cdf::default(), Some("/nonexistent/cdf.txt"));
        assert_eq!(missing.mean_bytes(), None);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_streamed_run_is_counted_with_a_row_group_of_samples() {
        // 8 hosts, 4 switches, 12 links: 176 rows a probe, 100,000 probes: 1.76e7 rows.
        let text = "name = \"s\"\nduration_s = 0.1\n[topology]\nkind = \"leaf_spine\"\n\
                    leaves = 2\nspines = 2\nhosts_per_leaf = 4\n[report]\n\
                    probe_interval_s = 1e-6\nprobe = \"elements\"";
        let mut sc = Scenario::from_toml(text, &[]).unwrap_or_else(|e| panic!("{e}"));
        let memory = sc.estimate();
        sc.report.streamed = true;
        let streamed = sc.estimate();
        assert_eq!(memory.probe_samples, streamed.probe_samples);
        let held = memory.probe_samples - STREAM_ROW_GROUP_ROWS;
        let saved = memory.memory_bytes - streamed.memory_bytes;
        assert!((saved - held * BYTES_PER_SAMPLE).abs() < 1.0, "{saved}");
    }

    #[test]
    fn a_scheme_counts_a_limiter_per_flow_not_per_pair_of_hosts() {
        // 128 hosts, 16,256 (host, destination) pairs; WebSearch at 0.5 for 10 ms opens
        // 128 x 0.5 x 10 Gb/s / (8 x 1,711,250 B) x 0.01 s = 467.5 flows, so as many limiters
        // at most (open loop or over TCP), not one for each pair; over TCP, however many flows,
        // at most 64 busy queue pairs per host (8,192).
        let scenario = |extra: &str| {
            let text = format!(
                "name = \"ls128\"\nduration_s = 0.01\n[topology]\nkind = \"leaf_spine\"\n\
                 leaves = 8\nspines = 2\nhosts_per_leaf = 16\n[[traffic]]\nkind = \"flows\"\n\
                 hosts = \"all\"\ndst = \"uniform\"\nload = 0.5\n\
                 size = {{ cdf = \"websearch\" }}\n{extra}"
            );
            Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"))
        };
        let flows = 128.0 * 0.5 * 10e9 / (8.0 * 1_711_250.0) * 0.01;
        let limiters = |sc: &Scenario, flows: f64| sc.limited_pairs(&sc.traffic[0], 128.0, flows);
        assert_eq!(
            limiters(&scenario(""), flows),
            0.0,
            "no scheme, no limiters"
        );
        let qcn = scenario("[congestion]\nscheme = \"qcn\"");
        assert_eq!(limiters(&qcn, flows), flows);
        assert_eq!(limiters(&qcn, 1e6), 16_256.0, "at most one per pair");
        let dctcp = scenario("transport = \"tcp\"\n[congestion]\nscheme = \"dctcp\"");
        assert_eq!(limiters(&dctcp, flows), flows);
        assert_eq!(limiters(&dctcp, 1e6), 128.0 * BUSY_VOQS_PER_HOST);
    }

    #[test]
    fn an_8_host_websearch_run_counts_its_flows_from_the_mean() {
        let text = "name = \"ws8\"\nduration_s = 10\n[topology]\nkind = \"leaf_spine\"\n\
                    leaves = 1\nspines = 1\nhosts_per_leaf = 8\n[[traffic]]\nkind = \"flows\"\n\
                    hosts = \"all\"\ndst = \"uniform\"\nload = 0.5\nsize = { cdf = \"websearch\" }";
        let sc = Scenario::from_toml(text, &[]).unwrap_or_else(|e| panic!("{e}"));
        let e = sc.estimate();
        // 8 x 0.5 x 10 Gb/s / (8 x 1,711,250 B) x 10 s = 29,218 flows, 5 MB of records: the
        // process, the hosts and links dominate. (Counted from the smallest size, 1 byte,
        // this run once needed 5e10 flows.)
        let flows_mb = 8.0 * 0.5 * 10e9 / (8.0 * 1_711_250.0) * 10.0 * BYTES_PER_FLOW / 1e6;
        assert!((flows_mb - 5.1).abs() < 0.1, "{flows_mb}");
        assert!(e.memory_bytes < 2.0 * PROCESS_BYTES, "{e:?}");
        assert!(e.memory_bytes > PROCESS_BYTES + flows_mb * 1e6, "{e:?}");
    }
}
