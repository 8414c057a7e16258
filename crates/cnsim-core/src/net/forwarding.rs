//! A switch's forwarding table: the output port towards each destination host, with the
//! equal-cost alternatives when `[routing] multipath = "ecmp"`.
//!
//! A host has one link, so every host on an edge switch has the same routes from any other
//! switch: the table holds one entry per edge switch (a switch with hosts), not per host, and
//! the host -> (edge switch, port there) map is one array all switches share. On the 100,000-host
//! benchmark tree that is 3,129 switches x 3,125 edges (20 MB) instead of x 100,000 hosts (626 MB,
//! filled in seconds: docs/performance.md).

use std::sync::Arc;

use crate::engine::PortIdx;
use crate::net::frame::{FlowId, Frame, NO_FLOW};
use crate::rng::mix;
use crate::scenario::EcmpKey;

/// No route to this destination.
pub(crate) const UNREACHABLE: PortIdx = PortIdx::MAX;
/// The destination's edge switch is this one: the port is the host's own (`Attach::port`).
const LOCAL: u16 = PortIdx::MAX - 1;
/// An entry of `next` with this bit set is an equal-cost group index, not a port (unless it
/// is `LOCAL` or `UNREACHABLE`).
const GROUP_BIT: u16 = 1 << 15;
/// Group indices stay below `LOCAL`'s low bits.
const MAX_GROUPS: usize = (GROUP_BIT - 2) as usize;

/// Where a host attaches: the index of its edge switch among the edge switches (the last index,
/// one past them, for a host with no switch) and the switch's port to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Attach {
    pub(crate) edge: u32,
    pub(crate) port: PortIdx,
}

/// Every host's attachment, in host order, shared by all the switches' tables.
pub(crate) type Attachments = Arc<[Attach]>;

#[derive(Clone, Debug)]
pub(crate) struct Forwarding {
    /// Per host: its edge switch and the port there (shared).
    attach: Attachments,
    /// Per edge switch (plus one last `UNREACHABLE` entry for hosts without a switch), two
    /// bytes: the next hop (the lowest port index of the shortest paths), or `GROUP_BIT | g`
    /// for equal-cost group `g` when ECMP is on, `LOCAL`, or `UNREACHABLE`. A frame reads the
    /// shared attachment and this small array: on a 1024-host tree, separate per-destination
    /// port and group arrays (6 bytes a destination) were a cache miss on most frames
    /// (docs/performance.md).
    next: Vec<u16>,
    /// The distinct sets of equal-cost next hops (a leaf has one: its uplinks), each sorted.
    groups: Vec<Group>,
    ecmp: Option<Ecmp>,
}

/// An equal-cost group: its ports and the reciprocal that takes a hash modulo their number
/// without a division (`remainder`).
#[derive(Clone, Debug)]
struct Group {
    ports: Box<[PortIdx]>,
    reciprocal: u128,
}

impl Group {
    fn new(ports: &[PortIdx]) -> Group {
        Group {
            ports: ports.into(),
            reciprocal: reciprocal(ports.len() as u64),
        }
    }
}

/// `ceil(2^128 / d)` for `d` >= 2, the constant of `remainder`.
fn reciprocal(d: u64) -> u128 {
    (u128::MAX / d.max(2) as u128).wrapping_add(1)
}

/// `a % d` without a division (a 64-bit division is some 15-40 cycles on the path to the
/// output port), exact for every 64-bit `a` and `d` >= 2 with `m = reciprocal(d)`: Lemire,
/// Kaser and Kurz, "Faster Remainder by Direct Computation" (Software: Practice and
/// Experience 49(6), 2019), Theorem 1 with F = 128 >= N + log2(d), N = 64: the remainder is the
/// high 64 bits of `(m * a mod 2^128) * d / 2^64`, here in two 64 x 64 -> 128-bit products.
#[inline]
fn remainder(a: u64, m: u128, d: u64) -> u64 {
    let fraction = m.wrapping_mul(a as u128);
    let low = ((fraction as u64 as u128) * d as u128) >> 64;
    (((fraction >> 64) * d as u128 + low) >> 64) as u64
}

#[derive(Clone, Copy, Debug)]
struct Ecmp {
    key: EcmpKey,
    /// Per-switch salt, so that switches at different tiers do not make correlated choices
    /// (hash polarisation).
    salt: u64,
}

impl Default for Forwarding {
    /// No routes, towards no hosts (a switch before the routes are computed).
    fn default() -> Forwarding {
        Forwarding::new(Arc::from([]), 0)
    }
}

impl Forwarding {
    /// A table with no routes, towards the hosts of `attach` on `n_edges` edge switches.
    pub(crate) fn new(attach: Attachments, n_edges: usize) -> Forwarding {
        Forwarding {
            attach,
            next: vec![UNREACHABLE; n_edges + 1],
            groups: Vec::new(),
            ecmp: None,
        }
    }

    /// Spread traffic over equal-cost next hops by a hash of `key` salted with `salt`.
    pub(crate) fn enable_ecmp(&mut self, key: EcmpKey, salt: u64) {
        self.ecmp = Some(Ecmp { key, salt });
    }

    /// This switch is edge switch `edge`: its hosts are reached through their own ports.
    pub(crate) fn set_local(&mut self, edge: usize) {
        self.next[edge] = LOCAL;
    }

    /// The next hops towards the hosts of edge switch `edge`, all on shortest paths, in
    /// increasing port order.
    pub(crate) fn set(&mut self, edge: usize, next_hops: &[PortIdx]) {
        let Some(&lowest) = next_hops.first() else {
            self.next[edge] = UNREACHABLE;
            return;
        };
        assert!(
            lowest < GROUP_BIT,
            "port index {lowest} out of the table's range"
        );
        self.next[edge] = lowest;
        if self.ecmp.is_none() || next_hops.len() < 2 {
            return;
        }
        // Groups per switch are few (its distinct sets of equal-cost ports): a linear search,
        // compared in line (a slice `==` is a `memcmp` call, most of the build's time on a
        // 100,000-host tree, where this runs once per (switch, edge switch)).
        let same = |g: &Group| {
            g.ports.len() == next_hops.len() && g.ports.iter().zip(next_hops).all(|(a, b)| a == b)
        };
        let group = match self.groups.iter().position(same) {
            Some(i) => i,
            None => {
                self.groups.push(Group::new(next_hops));
                self.groups.len() - 1
            }
        };
        assert!(group < MAX_GROUPS, "too many equal-cost groups");
        self.next[edge] = GROUP_BIT | group as u16;
    }

    /// Edge `edge`'s entry as `set` made it (for `set_entry` on the next edge with the same
    /// next hops).
    pub(crate) fn entry(&self, edge: usize) -> u16 {
        self.next[edge]
    }

    /// Gives edge `edge` an entry `entry` read back from this table (same next hops).
    pub(crate) fn set_entry(&mut self, edge: usize, entry: u16) {
        self.next[edge] = entry;
    }

    /// The ports towards the hosts of edge switch `edge` that frames take: the one next hop,
    /// or an ECMP group's (each taken by an even share of keys, in expectation); none for
    /// the edge switch itself or an unreachable edge.
    pub(crate) fn next_hops(&self, edge: usize) -> &[PortIdx] {
        let next = &self.next[edge];
        match *next {
            LOCAL | UNREACHABLE => &[],
            n if n & GROUP_BIT != 0 => &self.groups[(n & !GROUP_BIT) as usize].ports,
            _ => std::slice::from_ref(next),
        }
    }

    pub(crate) fn reaches(&self, dst: usize) -> bool {
        self.next[self.attach[dst].edge as usize] != UNREACHABLE
    }

    /// The output port of `frame`.
    #[inline]
    pub(crate) fn port(&self, frame: &Frame) -> PortIdx {
        self.port_for(frame.src, frame.dst, frame.flow_id)
    }

    /// The output port of a frame from host `src` to host `dst` of flow `flow_id`.
    /// A single next hop is two loads and a test here; an ECMP group's hash is out of line.
    #[inline]
    pub(crate) fn port_for(&self, src: u32, dst: u32, flow_id: FlowId) -> PortIdx {
        self.port_at(self.attach[dst as usize], src, dst, flow_id)
    }

    /// As `port`, for any frame: None for one addressed to no host of the table (a PAUSE or
    /// PFC frame is link-local, addressed to `u32::MAX`, and never routed). For a prefetch
    /// hint (`sim/prefetch.rs`), which looks at every frame arriving at a switch.
    #[inline]
    pub(crate) fn port_if_routed(&self, frame: &Frame) -> Option<PortIdx> {
        let attach = *self.attach.get(frame.dst as usize)?;
        Some(self.port_at(attach, frame.src, frame.dst, frame.flow_id))
    }

    /// The output port towards `dst`, attached at `attach`.
    #[inline]
    fn port_at(&self, attach: Attach, src: u32, dst: u32, flow_id: FlowId) -> PortIdx {
        let next = self.next[attach.edge as usize];
        if next & GROUP_BIT == 0 {
            return next;
        }
        match next {
            LOCAL => attach.port,
            UNREACHABLE => UNREACHABLE,
            _ => self.group_port(next, src, dst, flow_id),
        }
    }

    /// The entry `port_for` reads for a frame to `dst` (what a prefetch hint loads:
    /// `sim/prefetch.rs`).
    #[inline]
    pub(crate) fn entry_for(&self, dst: u32) -> Option<&u16> {
        self.next.get(self.attach.get(dst as usize)?.edge as usize)
    }

    /// The port of a frame whose next hop is the ECMP group `next` (`GROUP_BIT` set).
    #[inline(never)]
    fn group_port(&self, next: u16, src: u32, dst: u32, flow_id: FlowId) -> PortIdx {
        let ecmp = self.ecmp.expect("groups are made with ECMP only");
        let group = &self.groups[(next & !GROUP_BIT) as usize];
        let ports = &group.ports;
        let mut key = (src as u64) << 32 | dst as u64;
        if ecmp.key == EcmpKey::Flow && flow_id != NO_FLOW {
            key = mix(key) ^ flow_id as u64;
        }
        let (hash, n) = (mix(key ^ ecmp.salt), ports.len() as u64);
        // `hash % n` without a division, twice per frame-hop here: a mask when n is a power of
        // two (a fabric's usual group: a leaf's uplinks), else by the group's reciprocal (the
        // 6,144-host fabric's 24 spines of a plane).
        let choice = if n.is_power_of_two() {
            hash & (n - 1)
        } else {
            remainder(hash, group.reciprocal, n)
        };
        ports[choice as usize]
    }

    /// True if frames of one pair may take different paths (ECMP keyed by flow, with a choice).
    pub(crate) fn keys_by_flow(&self) -> bool {
        self.ecmp.is_some_and(|e| e.key == EcmpKey::Flow) && !self.groups.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(src: u32, dst: u32, flow_id: FlowId) -> Frame {
        let mut f = Frame::data(src, dst, 1500, crate::time::SimTime::ZERO);
        f.flow_id = flow_id;
        f
    }

    /// A table over `n_hosts` hosts, each on its own edge switch (edge h is host h).
    fn per_host(n_hosts: usize) -> Forwarding {
        let attach: Vec<Attach> = (0..n_hosts as u32)
            .map(|edge| Attach { edge, port: 0 })
            .collect();
        Forwarding::new(attach.into(), n_hosts)
    }

    #[test]
    fn single_path_uses_the_lowest_port() {
        let mut fw = per_host(4);
        fw.set(2, &[3, 5]);
        assert_eq!(fw.port(&frame(0, 2, NO_FLOW)), 3);
        assert!(fw.reaches(2));
        assert!(!fw.reaches(1));
        assert!(!fw.keys_by_flow());
    }

    #[test]
    fn ecmp_keeps_a_pair_on_one_port_and_spreads_pairs() {
        let mut fw = per_host(64);
        fw.enable_ecmp(EcmpKey::Pair, 7);
        for dst in 0..64 {
            fw.set(dst, &[4, 5, 6, 7]);
        }
        assert_eq!(fw.groups.len(), 1, "equal groups are shared");
        let mut used = [0u32; 8];
        for src in 0..64 {
            for dst in 0..64 {
                let p = fw.port(&frame(src, dst, NO_FLOW));
                assert_eq!(p, fw.port(&frame(src, dst, 9)), "the pair decides");
                used[p as usize] += 1;
            }
        }
        // 4096 pairs over 4 ports: each within 10% of 1024.
        for (p, &n) in used.iter().enumerate().skip(4) {
            assert!((922..=1126).contains(&n), "port {p}: {n}");
        }
    }

    #[test]
    fn ecmp_by_flow_spreads_the_flows_of_one_pair() {
        let mut fw = per_host(2);
        fw.enable_ecmp(EcmpKey::Flow, 11);
        fw.set(1, &[0, 1]);
        assert!(fw.keys_by_flow());
        let ports: Vec<PortIdx> = (0..100).map(|id| fw.port(&frame(0, 1, id))).collect();
        let on_zero = ports.iter().filter(|&&p| p == 0).count();
        assert!(
            (30..=70).contains(&on_zero),
            "{on_zero} of 100 flows on port 0"
        );
        // A frame without a flow falls back to the pair.
        assert_eq!(fw.port(&frame(0, 1, NO_FLOW)), fw.port_for(0, 1, NO_FLOW));
        // The hint's lookup: the same port, and none for a frame addressed to no host.
        for id in 0..100 {
            let f = frame(0, 1, id);
            assert_eq!(fw.port_if_routed(&f), Some(fw.port(&f)));
        }
        assert_eq!(fw.port_if_routed(&frame(0, u32::MAX, NO_FLOW)), None);
    }

    #[test]
    fn the_choice_is_the_hash_modulo_the_group_size_for_every_size() {
        // A power-of-two group takes a mask instead of the division: the same port.
        for n in 2..=9u16 {
            let mut fw = per_host(2);
            fw.enable_ecmp(EcmpKey::Pair, 5);
            let group: Vec<PortIdx> = (10..10 + n).collect();
            fw.set(1, &group);
            for src in 0..200u32 {
                let hash = mix(((src as u64) << 32 | 1) ^ 5);
                let expected = group[(hash % n as u64) as usize];
                assert_eq!(
                    fw.port_for(src, 1, NO_FLOW),
                    expected,
                    "n = {n}, src = {src}"
                );
            }
        }
    }

    #[test]
    fn the_remainder_by_reciprocal_is_the_remainder() {
        let mut rng = 3u64;
        let divisors = (2..=300u64).chain([1_000, 65_535, 65_536, u32::MAX as u64, u64::MAX]);
        for d in divisors {
            let m = reciprocal(d);
            let edges = [0, 1, d - 1, d, d.saturating_add(1), u64::MAX - 1, u64::MAX];
            for a in edges.into_iter().chain((0..200).map(|_| {
                rng = mix(rng);
                rng
            })) {
                assert_eq!(remainder(a, m, d), a % d, "{a} % {d}");
            }
        }
    }

    #[test]
    fn salts_decorrelate_switches() {
        let mut a = per_host(256);
        let mut b = per_host(256);
        a.enable_ecmp(EcmpKey::Pair, mix(1));
        b.enable_ecmp(EcmpKey::Pair, mix(2));
        for dst in 0..256 {
            a.set(dst, &[0, 1]);
            b.set(dst, &[0, 1]);
        }
        let same = (0..256)
            .filter(|&d| a.port_for(0, d, NO_FLOW) == b.port_for(0, d, NO_FLOW))
            .count();
        assert!((96..=160).contains(&same), "{same} of 256 choices agree");
    }

    #[test]
    fn an_empty_next_hop_list_is_unreachable() {
        let mut fw = per_host(2);
        fw.enable_ecmp(EcmpKey::Pair, 0);
        fw.set(1, &[]);
        assert!(!fw.reaches(1));
    }

    #[test]
    fn hosts_of_one_edge_share_its_entry_and_local_hosts_their_port() {
        // Hosts 0 and 1 on edge 0 (ports 4 and 5 there), host 2 on edge 1, host 3 on none.
        let attach = [(0, 4), (0, 5), (1, 2), (2, 0)].map(|(edge, port)| Attach { edge, port });
        let mut at_edge0 = Forwarding::new(attach.to_vec().into(), 2);
        at_edge0.set_local(0);
        at_edge0.set(1, &[7]);
        assert_eq!(at_edge0.port_for(2, 0, NO_FLOW), 4);
        assert_eq!(at_edge0.port_for(2, 1, NO_FLOW), 5);
        assert_eq!(at_edge0.port_for(0, 2, NO_FLOW), 7);
        assert_eq!(at_edge0.port_for(0, 3, NO_FLOW), UNREACHABLE);
        assert!(!at_edge0.reaches(3));
        let mut elsewhere = Forwarding::new(attach.to_vec().into(), 2);
        elsewhere.enable_ecmp(EcmpKey::Pair, 3);
        elsewhere.set(0, &[1, 2]);
        assert_eq!(elsewhere.groups.len(), 1);
        for dst in [0, 1] {
            assert!([1, 2].contains(&elsewhere.port_for(2, dst, NO_FLOW)));
        }
        assert!(!elsewhere.reaches(2), "edge 1 has no route set");
    }
}
