//! Flow workloads: the list of flows a run starts, made before the run so that a generated
//! workload and the trace written from it (`cnsim trace`) drive identical runs.
//!
//! `kind = "flows"`: per sending host, Poisson arrivals at rate load x line rate / (8 x mean
//! size); each arrival draws (in this order) its gap, its size and its destination from the
//! source's own stream. `kind = "flow_trace"`: rows from a CSV file or an inline list. All rows
//! are sorted by start time (stable: ties keep entry, host and arrival order); a flow's id is
//! its index in that order.

use std::collections::HashMap;
use std::path::Path;

use rand::seq::SliceRandom;
use rand::Rng;
use rand_distr::{Distribution, Exp, Pareto};

use crate::error::ConfigError;
use crate::ids::HostId;
use crate::rng::{stream, SimRng, StreamKind};
use crate::scenario::flows::{bounded_pareto_mean, empirical_mean, PERMUTATION};
use crate::scenario::{DstSpec, Scenario, SizeSpec, TrafficKind, TrafficSpec, Transport};
use crate::time::{serialization_time, SimTime};
use crate::traffic::Destinations;

/// One flow of the workload.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FlowRow {
    pub(crate) start_s: f64,
    pub(crate) src: HostId,
    pub(crate) dst: HostId,
    pub(crate) size_bytes: u64,
    pub(crate) priority: u8,
    /// Largest frame the flow is cut into (the entry's `frame_bytes`).
    pub(crate) frame_bytes: u32,
    /// What carries the flow (the entry's `transport`).
    pub(crate) transport: Transport,
    /// A long flow that its application writes as the run goes (a `saturate` or `cbr` source
    /// over a transport): `size_bytes` is what it has written so far, final when it stops.
    /// None: the whole flow is there at its start (flows, traces). Boxed: most flows have none.
    pub(crate) writes: Option<Box<AppWrites>>,
}

/// How the application of a long flow writes it (docs/transport.md, "Long flows").
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AppWrites {
    /// `cbr`: one packet of `frame_bytes` every this long (frame_bytes x 8 / rate_bps, as the
    /// open-loop source spaces its frames), the first at the start. None: `saturate`, always
    /// backlogged: a packet is written when the transport takes it.
    pub(crate) interval: Option<SimTime>,
    /// No packet is written at or after this time (`stop_s`; `SimTime::MAX`: never).
    pub(crate) stop: SimTime,
}

impl AppWrites {
    /// Most packets the application can write from `start` to `end` (the run's end) at most
    /// at `line_rate_bps` (a saturating one writes only what the NIC takes): a bound on the
    /// flow's packet sequence numbers.
    pub(crate) fn max_packets(
        &self,
        start: SimTime,
        end: SimTime,
        frame_bytes: u32,
        line_rate_bps: f64,
    ) -> u64 {
        let span = self.stop.min(end).saturating_sub(start);
        let interval = self
            .interval
            .unwrap_or_else(|| serialization_time(frame_bytes as u64, line_rate_bps));
        span.ps() / interval.ps().max(1) + 1
    }
}

/// A workload and what it asked for, to report the realised mean size and load beside it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Workload {
    pub(crate) flows: Vec<FlowRow>,
    /// Mean flow size the `kind = "flows"` entries asked for (None: no such entry, or entries
    /// with different means).
    pub(crate) requested_mean_bytes: Option<f64>,
    /// Offered load the entries asked for, as a fraction of the senders' line rates.
    pub(crate) requested_load: Option<f64>,
    /// Sum of the senders' line rates times the arrival window, in bits: the denominator of
    /// the realised load (generated entries only).
    pub(crate) capacity_bits: f64,
    /// Bytes of the generated entries' flows, and how many they are.
    pub(crate) generated_bytes: u64,
    pub(crate) generated_flows: u64,
    /// The `load_basis = "busiest_link"` entries' scaling (filled in by the build).
    pub(crate) load_scaling: Vec<super::LoadScaling>,
}

/// A size distribution ready to sample.
pub(crate) enum SizeDist {
    Fixed(f64),
    Exponential {
        dist: Exp<f64>,
        mean: f64,
    },
    Pareto {
        dist: Pareto<f64>,
        scale: f64,
        shape: f64,
    },
    BoundedPareto {
        shape: f64,
        min: f64,
        max: f64,
    },
    /// (size, cumulative probability) points, linear between them.
    Empirical(Vec<[f64; 2]>),
}

impl SizeDist {
    pub(crate) fn new(spec: &SizeSpec, cdf_from_file: Option<Vec<[f64; 2]>>) -> SizeDist {
        match spec {
            SizeSpec::Fixed { bytes } => SizeDist::Fixed(*bytes),
            SizeSpec::Exponential { mean_bytes } => SizeDist::Exponential {
                dist: Exp::new(1.0 / mean_bytes).expect("validated mean > 0"),
                mean: *mean_bytes,
            },
            SizeSpec::Pareto {
                shape,
                scale_bytes,
                mean_bytes,
            } => {
                let scale = scale_bytes.unwrap_or_else(|| {
                    mean_bytes.expect("validated: scale or mean") * (shape - 1.0) / shape
                });
                SizeDist::Pareto {
                    dist: Pareto::new(scale, *shape).expect("validated scale, shape > 0"),
                    scale,
                    shape: *shape,
                }
            }
            SizeSpec::BoundedPareto {
                shape,
                min_bytes,
                max_bytes,
            } => SizeDist::BoundedPareto {
                shape: *shape,
                min: *min_bytes,
                max: *max_bytes,
            },
            SizeSpec::Empirical { cdf, .. } => SizeDist::Empirical(
                cdf_from_file
                    .or_else(|| cdf.points())
                    .expect("validated: a known workload"),
            ),
        }
    }

    /// The distribution's mean in bytes (before rounding to whole bytes).
    pub(crate) fn mean_bytes(&self) -> f64 {
        match self {
            SizeDist::Fixed(b) => *b,
            SizeDist::Exponential { mean, .. } => *mean,
            SizeDist::Pareto { scale, shape, .. } => {
                let (scale, shape) = (*scale, *shape);
                if shape > 1.0 {
                    shape * scale / (shape - 1.0)
                } else {
                    f64::INFINITY
                }
            }
            SizeDist::BoundedPareto { shape, min, max } => bounded_pareto_mean(*shape, *min, *max),
            SizeDist::Empirical(points) => empirical_mean(points),
        }
    }

    /// A size in whole bytes, at least 1.
    pub(crate) fn sample(&self, rng: &mut SimRng) -> u64 {
        let x = match self {
            SizeDist::Fixed(b) => *b,
            SizeDist::Exponential { dist, .. } => dist.sample(rng),
            SizeDist::Pareto { dist, .. } => dist.sample(rng),
            SizeDist::BoundedPareto { shape, min, max } => {
                // Inverse CDF of the truncated law: F(x) = (1 - (L/x)^a) / (1 - (L/H)^a).
                let u: f64 = rng.random();
                let tail = 1.0 - (min / max).powf(*shape);
                min * (1.0 - u * tail).powf(-1.0 / shape)
            }
            SizeDist::Empirical(points) => empirical_quantile(points, rng.random()),
        };
        (x.round() as u64).max(1)
    }
}

fn empirical_quantile(points: &[[f64; 2]], u: f64) -> f64 {
    let i = points.partition_point(|&[_, p]| p < u);
    if i == 0 {
        return points[0][0];
    }
    let ([x0, p0], [x1, p1]) = (points[i - 1], points[i.min(points.len() - 1)]);
    if p1 <= p0 {
        return x1;
    }
    x0 + (x1 - x0) * (u - p0) / (p1 - p0)
}

/// Builds the whole workload of a scenario. `line_rate_bps[h]` is host h's NIC rate.
pub(crate) fn workload(
    sc: &Scenario,
    host_index: &HashMap<&str, u32>,
    line_rate_bps: &[f64],
) -> Result<Workload, ConfigError> {
    let mut w = Workload::default();
    let mut means = Vec::new();
    let mut loads = Vec::new();
    let end_s = sc.duration_s;
    for (ti, t) in sc.traffic.iter().enumerate() {
        let path = format!("traffic[{ti}]");
        match t.kind {
            TrafficKind::Flows => {
                let size = t.size.as_ref().expect("validated");
                let cdf = read_cdf_file(size, &path)?;
                let dist = SizeDist::new(size, cdf);
                means.push(dist.mean_bytes());
                loads.push(t.load.expect("validated"));
                generate(sc, ti, t, &dist, host_index, line_rate_bps, end_s, &mut w)?;
            }
            TrafficKind::FlowTrace => {
                let rows = match &t.trace {
                    Some(file) => super::trace::read(Path::new(file), host_index, &path)?,
                    None => inline_rows(t, host_index),
                };
                w.flows.extend(rows.into_iter().map(|mut r| {
                    r.start_s += t.start_s;
                    r.frame_bytes = t.frame_bytes;
                    r.transport = t.transport;
                    r
                }));
            }
            TrafficKind::Incast => {
                let size = t.size.as_ref().expect("validated");
                let dist = SizeDist::new(size, read_cdf_file(size, &path)?);
                super::incast::generate(sc, ti, t, &dist, host_index, end_s, &mut w.flows);
            }
            _ => {}
        }
    }
    w.flows.retain(|f| f.start_s < end_s);
    w.flows
        .sort_by(|a, b| a.start_s.partial_cmp(&b.start_s).expect("finite times"));
    let same = |v: &[f64]| (!v.is_empty() && v.iter().all(|x| *x == v[0])).then(|| v[0]);
    w.requested_mean_bytes = same(&means);
    w.requested_load = same(&loads);
    Ok(w)
}

fn inline_rows(t: &TrafficSpec, host_index: &HashMap<&str, u32>) -> Vec<FlowRow> {
    t.flows
        .iter()
        .map(|f| FlowRow {
            start_s: f.start_s,
            src: host_index[f.src.as_str()],
            dst: host_index[f.dst.as_str()],
            size_bytes: f.size_bytes.round() as u64,
            priority: f.priority,
            frame_bytes: t.frame_bytes,
            transport: t.transport,
            writes: None,
        })
        .collect()
}

fn read_cdf_file(size: &SizeSpec, path: &str) -> Result<Option<Vec<[f64; 2]>>, ConfigError> {
    let SizeSpec::Empirical {
        cdf_file: Some(file),
        ..
    } = size
    else {
        return Ok(None);
    };
    let field = format!("{path}.size.cdf_file");
    // Read and checked, errors at the file's own lines.
    let points = crate::scenario::cdf::read_file(Path::new(file), &field)?;
    Ok(Some(points))
}

/// Poisson flow arrivals of one `kind = "flows"` entry, each sender on its own stream.
#[allow(clippy::too_many_arguments)]
fn generate(
    sc: &Scenario,
    ti: usize,
    t: &TrafficSpec,
    dist: &SizeDist,
    host_index: &HashMap<&str, u32>,
    line_rate_bps: &[f64],
    end_s: f64,
    w: &mut Workload,
) -> Result<(), ConfigError> {
    let senders: Vec<u32> = t.hosts.iter().map(|h| host_index[h.as_str()]).collect();
    let partners = destinations(sc, ti, t, &senders, host_index);
    if let Some(k) = partners
        .iter()
        .position(|d| matches!(d, Destinations::UniformOver(l) if l.is_empty()))
    {
        return Err(ConfigError::field(
            format!("traffic[{ti}].dst"),
            format!("host '{}' has no destination other than itself", t.hosts[k]),
        ));
    }
    let stop_s = t.stop_s.unwrap_or(end_s).min(end_s);
    for (k, &src) in senders.iter().enumerate() {
        let seed = t.seed.unwrap_or(sc.seed);
        let mut rng = stream(seed, StreamKind::Flows, ((ti as u64) << 32) | k as u64);
        let line = line_rate_bps[src as usize];
        let rate_per_s = t.load.expect("validated") * line / (8.0 * dist.mean_bytes());
        w.capacity_bits += line * (stop_s - t.start_s).max(0.0);
        let gaps = Exp::new(rate_per_s).map_err(|_| {
            ConfigError::field(
                format!("traffic[{ti}].load"),
                "gives no usable flow arrival rate",
            )
        })?;
        let mut at = t.start_s;
        loop {
            at += gaps.sample(&mut rng);
            if at >= stop_s {
                break;
            }
            let size_bytes = dist.sample(&mut rng);
            let dst = partners[k].pick(&mut rng);
            w.generated_bytes += size_bytes;
            w.generated_flows += 1;
            w.flows.push(FlowRow {
                start_s: at,
                src,
                dst,
                size_bytes,
                priority: t.priority,
                frame_bytes: t.frame_bytes,
                transport: t.transport,
                writes: None,
            });
        }
    }
    Ok(())
}

pub(crate) fn destinations(
    sc: &Scenario,
    ti: usize,
    t: &TrafficSpec,
    senders: &[u32],
    host_index: &HashMap<&str, u32>,
) -> Vec<Destinations> {
    let n_hosts = sc.hosts.len() as u32;
    match t.dst.as_ref().expect("validated") {
        DstSpec::One(d) if d == PERMUTATION => {
            let seed = t.seed.unwrap_or(sc.seed);
            let mut rng = stream(seed, StreamKind::Flows, (1 << 63) | ti as u64);
            derangement(senders, &mut rng)
                .into_iter()
                .map(Destinations::Fixed)
                .collect()
        }
        DstSpec::One(d) if d == "uniform" => senders
            .iter()
            .map(|&me| Destinations::uniform(me, n_hosts, t.locality.as_ref()))
            .collect(),
        DstSpec::One(d) => senders
            .iter()
            .map(|_| Destinations::Fixed(host_index[d.as_str()]))
            .collect(),
        DstSpec::Many(list) => senders
            .iter()
            .map(|&s| {
                Destinations::UniformOver(
                    list.iter()
                        .map(|d| host_index[d.as_str()])
                        .filter(|&d| d != s)
                        .collect(),
                )
            })
            .collect(),
        DstSpec::Part(_) => unreachable!("validated: selections are expanded"),
    }
}

/// A random permutation of `hosts` in which nobody is its own partner (rejection sampling:
/// about e tries on average).
fn derangement(hosts: &[u32], rng: &mut SimRng) -> Vec<u32> {
    let mut order: Vec<u32> = hosts.to_vec();
    loop {
        order.shuffle(rng);
        if order.iter().zip(hosts).all(|(a, b)| a != b) {
            return order;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_of(dist: &SizeDist, n: usize) -> f64 {
        let mut rng = stream(9, StreamKind::Flows, 0);
        (0..n).map(|_| dist.sample(&mut rng) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn exponential_and_bounded_pareto_means() {
        let exp = SizeDist::new(&SizeSpec::Exponential { mean_bytes: 60e3 }, None);
        assert_eq!(exp.mean_bytes(), 60e3);
        // 200k samples: standard error 60e3/sqrt(2e5) = 134 B.
        assert!((mean_of(&exp, 200_000) - 60e3).abs() < 5.0 * 134.0);
        let bp = SizeDist::new(
            &SizeSpec::BoundedPareto {
                shape: 1.2,
                min_bytes: 1000.0,
                max_bytes: 1e6,
            },
            None,
        );
        let m = bp.mean_bytes();
        // Closed form for a=1.2, L=1e3, H=1e6: 4,494 B.
        assert!((m - 4494.0).abs() < 1.0, "{m}");
        assert!((mean_of(&bp, 400_000) - m).abs() / m < 0.03);
        let mut rng = stream(1, StreamKind::Flows, 1);
        assert!((0..10_000)
            .map(|_| bp.sample(&mut rng))
            .all(|x| (1000..=1_000_000).contains(&x)));
    }

    #[test]
    fn pareto_from_mean_has_that_mean() {
        let p = SizeDist::new(
            &SizeSpec::Pareto {
                shape: 2.5,
                scale_bytes: None,
                mean_bytes: Some(60e3),
            },
            None,
        );
        assert!((p.mean_bytes() - 60e3).abs() < 1e-6);
        // Shape 2.5 has a finite variance; 400k samples give the mean within 2%.
        assert!((mean_of(&p, 400_000) - 60e3).abs() / 60e3 < 0.02);
    }

    #[test]
    fn empirical_cdf_interpolates() {
        let pts = vec![[100.0, 0.5], [1100.0, 1.0]];
        assert_eq!(empirical_quantile(&pts, 0.25), 100.0);
        assert_eq!(empirical_quantile(&pts, 0.75), 600.0);
        assert_eq!(empirical_quantile(&pts, 1.0), 1100.0);
        // Half the mass at 100, half uniform on [100, 1100] (mean 600): 350.
        let d = SizeDist::Empirical(pts);
        assert_eq!(d.mean_bytes(), 350.0);
        assert!((mean_of(&d, 200_000) - 350.0).abs() < 3.0);
    }

    #[test]
    fn derangement_has_no_fixed_point() {
        let hosts: Vec<u32> = (0..16).collect();
        let mut rng = stream(3, StreamKind::Flows, 7);
        for _ in 0..100 {
            let d = derangement(&hosts, &mut rng);
            assert!(d.iter().zip(&hosts).all(|(a, b)| a != b));
            let mut sorted = d.clone();
            sorted.sort();
            assert_eq!(sorted, hosts);
        }
    }

    #[test]
    fn all_others_never_picks_the_sender() {
        let mut rng = stream(3, StreamKind::Flows, 8);
        let d = Destinations::AllOthers { me: 2, n_hosts: 4 };
        let mut seen = [0; 4];
        for _ in 0..3000 {
            seen[d.pick(&mut rng) as usize] += 1;
        }
        assert_eq!(seen[2], 0);
        assert!(seen.iter().enumerate().all(|(i, &c)| i == 2 || c > 800));
    }
}
