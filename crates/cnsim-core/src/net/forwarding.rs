//! A switch's forwarding table: the output port towards each destination host, with the
//! equal-cost alternatives when `[routing] multipath = "ecmp"`.

use crate::engine::PortIdx;
use crate::net::frame::{FlowId, Frame, NO_FLOW};
use crate::rng::mix;
use crate::scenario::EcmpKey;

/// No route to this destination.
pub(crate) const UNREACHABLE: PortIdx = PortIdx::MAX;
/// An entry of `next` with this bit set is an equal-cost group index, not a port.
const GROUP_BIT: u16 = 1 << 15;

#[derive(Clone, Debug)]
pub(crate) struct Forwarding {
    /// Per destination host, two bytes: the next hop (the lowest port index of the shortest
    /// paths), or `GROUP_BIT | g` for equal-cost group `g` when ECMP is on, or `UNREACHABLE`.
    /// One small array read per frame: on a 1024-host tree, separate per-destination port and
    /// group arrays (6 bytes a destination) were a cache miss on most frames
    /// (docs/performance.md).
    next: Vec<u16>,
    /// The distinct sets of equal-cost next hops (a leaf has one: its uplinks), each sorted.
    groups: Vec<Box<[PortIdx]>>,
    ecmp: Option<Ecmp>,
}

#[derive(Clone, Copy, Debug)]
struct Ecmp {
    key: EcmpKey,
    /// Per-switch salt, so that switches at different tiers do not make correlated choices
    /// (hash polarisation).
    salt: u64,
}

impl Forwarding {
    /// A table with no routes for `n_hosts` destinations.
    pub(crate) fn new(n_hosts: usize) -> Forwarding {
        Forwarding {
            next: vec![UNREACHABLE; n_hosts],
            groups: Vec::new(),
            ecmp: None,
        }
    }

    /// Spread traffic over equal-cost next hops by a hash of `key` salted with `salt`.
    pub(crate) fn enable_ecmp(&mut self, key: EcmpKey, salt: u64) {
        self.ecmp = Some(Ecmp { key, salt });
    }

    /// The next hops towards `dst`, all on shortest paths, in increasing port order.
    pub(crate) fn set(&mut self, dst: usize, next_hops: &[PortIdx]) {
        let Some(&lowest) = next_hops.first() else {
            self.next[dst] = UNREACHABLE;
            return;
        };
        assert!(
            lowest < GROUP_BIT,
            "port index {lowest} out of the table's range"
        );
        self.next[dst] = lowest;
        if self.ecmp.is_none() || next_hops.len() < 2 {
            return;
        }
        // Groups per switch are few (its distinct sets of equal-cost ports): a linear search.
        let group = match self.groups.iter().position(|g| **g == *next_hops) {
            Some(i) => i,
            None => {
                self.groups.push(next_hops.into());
                self.groups.len() - 1
            }
        };
        assert!(
            group < (GROUP_BIT - 1) as usize,
            "too many equal-cost groups"
        );
        self.next[dst] = GROUP_BIT | group as u16;
    }

    pub(crate) fn reaches(&self, dst: usize) -> bool {
        self.next[dst] != UNREACHABLE
    }

    /// The output port of `frame`.
    #[inline]
    pub(crate) fn port(&self, frame: &Frame) -> PortIdx {
        self.port_for(frame.src, frame.dst, frame.flow_id)
    }

    /// The output port of a frame from host `src` to host `dst` of flow `flow_id`.
    /// A single next hop is one load and a test here; an ECMP group's hash is out of line.
    #[inline]
    pub(crate) fn port_for(&self, src: u32, dst: u32, flow_id: FlowId) -> PortIdx {
        let next = self.next[dst as usize];
        if next & GROUP_BIT == 0 || next == UNREACHABLE {
            return next;
        }
        self.group_port(next, src, dst, flow_id)
    }

    /// The port of a frame whose next hop is the ECMP group `next` (`GROUP_BIT` set).
    #[inline(never)]
    fn group_port(&self, next: u16, src: u32, dst: u32, flow_id: FlowId) -> PortIdx {
        let ecmp = self.ecmp.expect("groups are made with ECMP only");
        let ports = &self.groups[(next & !GROUP_BIT) as usize];
        let mut key = (src as u64) << 32 | dst as u64;
        if ecmp.key == EcmpKey::Flow && flow_id != NO_FLOW {
            key = mix(key) ^ flow_id as u64;
        }
        ports[(mix(key ^ ecmp.salt) % ports.len() as u64) as usize]
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

    #[test]
    fn single_path_uses_the_lowest_port() {
        let mut fw = Forwarding::new(4);
        fw.set(2, &[3, 5]);
        assert_eq!(fw.port(&frame(0, 2, NO_FLOW)), 3);
        assert!(fw.reaches(2));
        assert!(!fw.reaches(1));
        assert!(!fw.keys_by_flow());
    }

    #[test]
    fn ecmp_keeps_a_pair_on_one_port_and_spreads_pairs() {
        let mut fw = Forwarding::new(64);
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
        let mut fw = Forwarding::new(2);
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
    }

    #[test]
    fn salts_decorrelate_switches() {
        let mut a = Forwarding::new(256);
        let mut b = Forwarding::new(256);
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
        let mut fw = Forwarding::new(2);
        fw.enable_ecmp(EcmpKey::Pair, 0);
        fw.set(1, &[]);
        assert!(!fw.reaches(1));
    }
}
