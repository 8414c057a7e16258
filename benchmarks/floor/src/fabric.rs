//! The fabric and its handlers (see `main.rs` for what the model is).

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

use crate::queue::{Event, Queue};

/// A frame on the wire: 16 bytes, carried by its arrival event.
#[derive(Clone, Copy, Default, Debug)]
pub struct Frame {
    dst: u32,
    flow: u32,
    bytes: u32,
    hash: u32,
}

/// What an event does, in the top two bits of `Event::what`; the rest is an index.
const ARRIVE: u32 = 0; // a frame reaches node `index`
const PORT_FREE: u32 = 1 << 30; // switch port `index` (global) ends a frame and has more
const HOST_FREE: u32 = 2 << 30; // host `index` ends a frame and has more to send
const FLOW_START: u32 = 3 << 30; // the next flow starts
const KIND: u32 = 3 << 30;

const FRAME_BYTES: u64 = 1500;
const LINK_DELAY_PS: u64 = 1_000_000;
const HOST_PS_PER_BYTE: u64 = 800; // 10 Gb/s
const FABRIC_PS_PER_BYTE: u64 = 200; // 40 Gb/s
/// `meta-fabric-6144`'s switch buffer.
const SHARED_BUFFER_BYTES: u64 = 12_000_000;

/// The fabric's shape (`meta-fabric-6144`'s `[topology]`).
pub struct Shape {
    pub pods: u32,
    pub racks: u32,
    pub hosts_per_rack: u32,
    pub planes: u32,
    pub spines: u32,
}

impl Shape {
    /// `meta-fabric-6144`'s.
    pub const META_6144: Shape = Shape {
        pods: 8,
        racks: 48,
        hosts_per_rack: 16,
        planes: 4,
        spines: 24,
    };

    fn hosts(&self) -> u32 {
        self.pods * self.racks * self.hosts_per_rack
    }
}

#[derive(Clone, Copy)]
enum Tier {
    Rack { pod: u32, rack: u32 },
    Fabric { pod: u32 },
    Spine,
}

struct Switch {
    tier: Tier,
    first_port: u32,
    memory_bytes: u64,
}

/// One cache line: an arriving frame reads and writes nothing else of its output port.
#[repr(align(64))]
struct Port {
    free_at_ps: u64,
    ps_per_byte: u64,
    /// The node the link leads to.
    peer: u32,
    departure_pending: bool,
    owner: u32,
    queue: VecDeque<Frame>,
}

#[derive(Default)]
struct Host {
    free_at_ps: u64,
    wake_pending: bool,
    active: Vec<u32>,
    next: usize,
}

struct Flow {
    dst: u32,
    size_bytes: u64,
    sent_bytes: u64,
    received_bytes: u64,
    start_ps: u64,
}

#[derive(Default, Debug, Clone, PartialEq)]
pub struct Counts {
    pub events: u64,
    pub frame_hops: u64,
    pub generated: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub flows_started: u64,
    pub flows_completed: u64,
    pub fct_sum_ps: u128,
}

pub struct Fabric {
    shape: Shape,
    hosts: Vec<Host>,
    switches: Vec<Switch>,
    ports: Vec<Port>,
    /// Each host's (pod, rack, place in rack): routing reads it for the destination.
    place: Vec<[u16; 3]>,
    flows: Vec<Flow>,
    cdf: Vec<(f64, f64)>,
    flow_rate_per_ps: f64,
    rng: Xoshiro256PlusPlus,
    q: Queue,
    pub counts: Counts,
    /// Each switch's shared buffer.
    pub buffer_bytes: u64,
}

/// Adds a switch of `tier` whose ports lead, in order, to `links`: (the node at the far end,
/// the link's ps per byte).
fn add_switch(
    switches: &mut Vec<Switch>,
    ports: &mut Vec<Port>,
    tier: Tier,
    links: impl Iterator<Item = (u32, u64)>,
) {
    let owner = switches.len() as u32;
    let first_port = ports.len() as u32;
    ports.extend(links.map(|(peer, ps_per_byte)| Port {
        free_at_ps: 0,
        ps_per_byte,
        peer,
        departure_pending: false,
        owner,
        queue: VecDeque::new(),
    }));
    switches.push(Switch {
        tier,
        first_port,
        memory_bytes: 0,
    });
}

/// The multiply-shift of a hash into 0..n (Lemire's "fastrange").
fn pick(hash: u32, salt: u32, n: u32) -> u32 {
    let mixed = (hash ^ salt).wrapping_mul(0x9E37_79B1);
    ((mixed as u64 * n as u64) >> 32) as u32
}

impl Fabric {
    /// A fabric whose hosts start flows of sizes drawn from `cdf` at `host_load` of their line
    /// rate (Poisson, uniform destinations), or none when `host_load` is 0.
    pub fn new(shape: Shape, host_load: f64, cdf: Vec<(f64, f64)>, seed: u64) -> Fabric {
        let n_hosts = shape.hosts();
        let rack_sw = |pod: u32, rack: u32| n_hosts + pod * shape.racks + rack;
        let n_racks = shape.pods * shape.racks;
        let fabric_sw = |pod: u32, plane: u32| n_hosts + n_racks + pod * shape.planes + plane;
        let n_fabric = shape.pods * shape.planes;
        let spine_sw =
            |plane: u32, spine: u32| n_hosts + n_racks + n_fabric + plane * shape.spines + spine;
        let (mut switches, mut ports) = (Vec::new(), Vec::new());
        for pod in 0..shape.pods {
            for rack in 0..shape.racks {
                let first_host = (pod * shape.racks + rack) * shape.hosts_per_rack;
                let down = (0..shape.hosts_per_rack).map(|h| (first_host + h, HOST_PS_PER_BYTE));
                let up = (0..shape.planes).map(|plane| (fabric_sw(pod, plane), FABRIC_PS_PER_BYTE));
                let tier = Tier::Rack { pod, rack };
                add_switch(&mut switches, &mut ports, tier, down.chain(up));
            }
        }
        for pod in 0..shape.pods {
            for plane in 0..shape.planes {
                let down = (0..shape.racks).map(|rack| (rack_sw(pod, rack), FABRIC_PS_PER_BYTE));
                let up = (0..shape.spines).map(|s| (spine_sw(plane, s), FABRIC_PS_PER_BYTE));
                add_switch(
                    &mut switches,
                    &mut ports,
                    Tier::Fabric { pod },
                    down.chain(up),
                );
            }
        }
        for plane in 0..shape.planes {
            for _spine in 0..shape.spines {
                let down = (0..shape.pods).map(|pod| (fabric_sw(pod, plane), FABRIC_PS_PER_BYTE));
                add_switch(&mut switches, &mut ports, Tier::Spine, down);
            }
        }
        let place = (0..n_hosts)
            .map(|h| {
                let rack = h / shape.hosts_per_rack;
                [
                    (rack / shape.racks) as u16,
                    (rack % shape.racks) as u16,
                    (h % shape.hosts_per_rack) as u16,
                ]
            })
            .collect();
        let mean = mean_bytes(&cdf);
        let bytes_per_s = host_load * 10e9 / 8.0 * n_hosts as f64;
        let mut q = Queue::new(16);
        if host_load > 0.0 {
            q.schedule(0, FLOW_START, Frame::default());
        }
        Fabric {
            hosts: (0..n_hosts).map(|_| Host::default()).collect(),
            shape,
            switches,
            ports,
            place,
            flows: Vec::new(),
            cdf,
            flow_rate_per_ps: bytes_per_s / mean / 1e12,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            q,
            counts: Counts::default(),
            buffer_bytes: SHARED_BUFFER_BYTES,
        }
    }

    /// Runs until `end_ps` (events at `end_ps` and later stay pending).
    pub fn run(&mut self, end_ps: u64) {
        while let Some(ev) = self.q.pop_before(end_ps) {
            self.counts.events += 1;
            let index = ev.what & !KIND;
            match ev.what & KIND {
                ARRIVE => {
                    self.counts.frame_hops += 1;
                    if index < self.hosts.len() as u32 {
                        self.host_receive(ev.frame, ev.time);
                    } else {
                        self.switch_receive(index - self.hosts.len() as u32, ev.frame, ev.time);
                    }
                }
                PORT_FREE => self.port_free(index, ev.time),
                HOST_FREE => {
                    self.hosts[index as usize].wake_pending = false;
                    self.host_send(index, ev.time);
                }
                _ => self.flow_start(ev.time),
            }
        }
    }

    /// The Poisson process's next flow: a uniform source, a uniform other destination, a
    /// size from the CDF.
    fn flow_start(&mut self, now: u64) {
        let n = self.hosts.len() as u32;
        let src = self.rng.random_range(0..n);
        let mut dst = self.rng.random_range(0..n - 1);
        if dst >= src {
            dst += 1;
        }
        let u: f64 = self.rng.random::<f64>() * 100.0;
        let size_bytes = (sample(&self.cdf, u) as u64).max(1);
        self.start_flow(src, dst, size_bytes, now);
        let gap: f64 = -(1.0 - self.rng.random::<f64>()).ln() / self.flow_rate_per_ps;
        self.q
            .schedule(now + gap as u64 + 1, FLOW_START, Frame::default());
    }

    /// Starts a flow of `size_bytes` from host `src` to host `dst` at `now`.
    pub fn start_flow(&mut self, src: u32, dst: u32, size_bytes: u64, now: u64) {
        let id = self.flows.len() as u32;
        self.flows.push(Flow {
            dst,
            size_bytes,
            sent_bytes: 0,
            received_bytes: 0,
            start_ps: now,
        });
        self.counts.flows_started += 1;
        let host = &mut self.hosts[src as usize];
        host.active.push(id);
        if !host.wake_pending && host.free_at_ps <= now {
            self.host_send(src, now);
        }
    }

    /// A host's NIC sends the next frame of its flows in round robin.
    fn host_send(&mut self, me: u32, now: u64) {
        let n_hosts = self.hosts.len() as u32;
        let host = &mut self.hosts[me as usize];
        if host.active.is_empty() {
            return;
        }
        if host.next >= host.active.len() {
            host.next = 0;
        }
        let id = host.active[host.next];
        let flow = &mut self.flows[id as usize];
        let bytes = FRAME_BYTES.min(flow.size_bytes - flow.sent_bytes);
        flow.sent_bytes += bytes;
        if flow.sent_bytes == flow.size_bytes {
            host.active.remove(host.next);
        } else {
            host.next += 1;
        }
        let frame = Frame {
            dst: flow.dst,
            flow: id,
            bytes: bytes as u32,
            hash: id.wrapping_mul(0x85EB_CA6B),
        };
        self.counts.generated += 1;
        let done = now + bytes * HOST_PS_PER_BYTE;
        host.free_at_ps = done;
        let rack = me / self.shape.hosts_per_rack;
        self.q
            .schedule(done + LINK_DELAY_PS, ARRIVE | (n_hosts + rack), frame);
        if !host.active.is_empty() {
            host.wake_pending = true;
            self.q.schedule(done, HOST_FREE | me, Frame::default());
        }
    }

    fn host_receive(&mut self, frame: Frame, now: u64) {
        self.counts.delivered += 1;
        let flow = &mut self.flows[frame.flow as usize];
        flow.received_bytes += frame.bytes as u64;
        if flow.received_bytes == flow.size_bytes {
            self.counts.flows_completed += 1;
            self.counts.fct_sum_ps += (now - flow.start_ps) as u128;
        }
    }

    fn route(&self, sw: &Switch, frame: &Frame, salt: u32) -> u32 {
        let [pod, rack, h] = self.place[frame.dst as usize].map(u32::from);
        let s = &self.shape;
        match sw.tier {
            Tier::Rack { pod: p, rack: r } if p == pod && r == rack => h,
            Tier::Rack { .. } => s.hosts_per_rack + pick(frame.hash, salt, s.planes),
            Tier::Fabric { pod: p, .. } if p == pod => rack,
            Tier::Fabric { .. } => s.racks + pick(frame.hash, salt, s.spines),
            Tier::Spine => pod,
        }
    }

    fn switch_receive(&mut self, me: u32, frame: Frame, now: u64) {
        let sw = &self.switches[me as usize];
        let out = sw.first_port + self.route(sw, &frame, me);
        let sw = &mut self.switches[me as usize];
        if sw.memory_bytes + frame.bytes as u64 > self.buffer_bytes {
            self.counts.dropped += 1;
            return;
        }
        let port = &mut self.ports[out as usize];
        if port.queue.is_empty() && port.free_at_ps <= now {
            Self::transmit(&mut self.q, port, frame, now);
            return;
        }
        sw.memory_bytes += frame.bytes as u64;
        port.queue.push_back(frame);
        if !port.departure_pending {
            port.departure_pending = true;
            self.q
                .schedule(port.free_at_ps, PORT_FREE | out, Frame::default());
        }
    }

    fn port_free(&mut self, index: u32, now: u64) {
        let port = &mut self.ports[index as usize];
        let frame = port
            .queue
            .pop_front()
            .expect("a departure is scheduled only for a waiting frame");
        self.switches[port.owner as usize].memory_bytes -= frame.bytes as u64;
        Self::transmit(&mut self.q, port, frame, now);
        if port.queue.is_empty() {
            port.departure_pending = false;
        } else {
            self.q
                .schedule(port.free_at_ps, PORT_FREE | index, Frame::default());
        }
    }

    fn transmit(q: &mut Queue, port: &mut Port, frame: Frame, now: u64) {
        let done = now + frame.bytes as u64 * port.ps_per_byte;
        port.free_at_ps = done;
        q.schedule(done + LINK_DELAY_PS, ARRIVE | port.peer, frame);
    }

    /// Frames in switch queues and on links: generated = delivered + dropped + these.
    pub fn in_flight(&self) -> u64 {
        let queued: usize = self.ports.iter().map(|p| p.queue.len()).sum();
        let on_links = self.q.count(|e: &Event| e.what & KIND == ARRIVE);
        queued as u64 + on_links as u64
    }
}

/// The mean of a piecewise-linear CDF of (bytes, percent) points.
pub fn mean_bytes(cdf: &[(f64, f64)]) -> f64 {
    cdf.windows(2)
        .map(|w| (w[1].1 - w[0].1) / 100.0 * (w[0].0 + w[1].0) / 2.0)
        .sum()
}

/// The size at percentile `u` (0..100) of a piecewise-linear CDF.
fn sample(cdf: &[(f64, f64)], u: f64) -> f64 {
    let i = cdf.partition_point(|&(_, p)| p < u).clamp(1, cdf.len() - 1);
    let ((x0, p0), (x1, p1)) = (cdf[i - 1], cdf[i]);
    if p1 <= p0 {
        return x1;
    }
    x0 + (x1 - x0) * (u - p0) / (p1 - p0)
}

/// WebSearch (DCTCP, SIGCOMM 2010), the CDF cnsim ships (`crates/cnsim-core/workloads/`).
pub const WEBSEARCH: &str = include_str!("../../../crates/cnsim-core/workloads/websearch.txt");

/// A CDF in the HPCC simulator's format: a line per point, `size_bytes cdf_percent`.
pub fn parse_cdf(text: &str) -> Result<Vec<(f64, f64)>, String> {
    let mut points = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let point = match fields[..] {
            [size, percent] => size.parse::<f64>().ok().zip(percent.parse::<f64>().ok()),
            _ => None,
        };
        let Some(point) = point else {
            return Err(format!(
                "line {}: expected `size_bytes cdf_percent`, got {line:?}",
                n + 1
            ));
        };
        points.push(point);
    }
    let rising = points
        .windows(2)
        .all(|w| w[1].0 >= w[0].0 && w[1].1 >= w[0].1);
    if points.len() < 2 || !rising || points.last().is_some_and(|p| p.1 != 100.0) {
        return Err("a CDF needs two or more points, rising, ending at 100 percent".into());
    }
    Ok(points)
}

pub fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    (status.lines().find_map(|l| l.strip_prefix("VmHWM:")))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000_000;

    fn small() -> Shape {
        Shape {
            pods: 2,
            racks: 2,
            hosts_per_rack: 2,
            planes: 2,
            spines: 2,
        }
    }

    fn websearch() -> Vec<(f64, f64)> {
        parse_cdf(WEBSEARCH).unwrap()
    }

    #[test]
    fn the_websearch_cdf_has_its_published_mean() {
        // shared/workloads/README.md: 1,711,250 B for the piecewise-linear CDF.
        assert!((mean_bytes(&websearch()) - 1_711_250.0).abs() < 0.5);
    }

    #[test]
    fn a_size_is_interpolated_between_the_cdfs_points() {
        let cdf = websearch();
        assert_eq!(sample(&cdf, 0.0), 0.0);
        assert_eq!(sample(&cdf, 7.5), 5_000.0);
        assert_eq!(sample(&cdf, 15.0), 10_000.0);
        assert_eq!(sample(&cdf, 17.5), 15_000.0);
        assert_eq!(sample(&cdf, 100.0), 30_000_000.0);
    }

    #[test]
    fn a_bad_cdf_is_refused_with_its_line() {
        assert!(parse_cdf("0 0\n10 x\n").unwrap_err().contains("line 2"));
        assert!(parse_cdf("0 0\n10 50\n")
            .unwrap_err()
            .contains("100 percent"));
        assert!(parse_cdf("10 0\n5 100\n").unwrap_err().contains("rising"));
    }

    #[test]
    fn a_two_frame_flow_across_pods_takes_its_worked_time() {
        let mut fabric = Fabric::new(small(), 0.0, websearch(), 1);
        fabric.start_flow(0, 7, 3_000, 0);
        fabric.run(1_000 * US);
        // Six hops: 1.2 us at 10 Gb/s out of the host and into the destination, 0.3 us at
        // 40 Gb/s over the four fabric links, 1 us of delay each: the first frame arrives at
        // 9.6 us, the second a host's serialization later (the 10 Gb/s ends pace it).
        let c = &fabric.counts;
        assert_eq!((c.flows_completed, c.fct_sum_ps), (1, 10_800_000));
        assert_eq!((c.generated, c.delivered, c.frame_hops), (2, 2, 12));
        // Twelve arrivals and the host's one wake-up: no frame waited at a switch.
        assert_eq!(c.events, 13);
    }

    #[test]
    fn a_frame_that_finds_its_port_busy_waits_in_the_shared_buffer() {
        let shape = Shape {
            hosts_per_rack: 3,
            ..small()
        };
        let mut fabric = Fabric::new(shape, 0.0, websearch(), 1);
        fabric.start_flow(0, 2, 1_500, 0);
        fabric.start_flow(1, 2, 1_500, 0);
        // Both reach the rack switch at 2.2 us; host 0's (scheduled first) leaves at once,
        // host 1's waits in the buffer until 3.4 us.
        fabric.run(3 * US);
        assert_eq!(fabric.switches[0].memory_bytes, 1_500);
        fabric.run(1_000 * US);
        let c = &fabric.counts;
        // Arrivals at 4.4 and 5.6 us.
        assert_eq!((c.flows_completed, c.fct_sum_ps), (2, 10_000_000));
        // Four arrivals and the waiting frame's departure.
        assert_eq!((c.frame_hops, c.events), (4, 5));
        assert_eq!(fabric.switches[0].memory_bytes, 0);
    }

    fn loaded_run(seed: u64) -> (Counts, u64) {
        let shape = Shape {
            pods: 2,
            racks: 4,
            hosts_per_rack: 4,
            planes: 2,
            spines: 3,
        };
        let mut fabric = Fabric::new(shape, 0.9, websearch(), seed);
        fabric.buffer_bytes = 4_500;
        fabric.run(2_000 * US);
        let in_flight = fabric.in_flight();
        (fabric.counts.clone(), in_flight)
    }

    #[test]
    fn a_loaded_run_conserves_its_frames_and_repeats_for_its_seed() {
        let (c, in_flight) = loaded_run(7);
        assert!(
            c.dropped > 0 && c.delivered > 0 && c.flows_completed > 0,
            "{c:?}"
        );
        assert_eq!(c.generated, c.delivered + c.dropped + in_flight);
        assert_eq!(loaded_run(7).0, c);
        assert_ne!(loaded_run(8).0, c);
    }
}
