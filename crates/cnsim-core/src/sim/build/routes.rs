//! Static shortest-path routes, computed once per edge switch instead of once per host.
//!
//! A host has exactly one link, so it never lies inside a path: the distance from host h to a
//! switch s is 1 + the distance from h's switch t to s over switches alone, and the same for
//! every host on t. One breadth-first search from each switch that has hosts (over the switch
//! graph only) thus gives every host's routes, with the next hops the per-host search gave:
//! at t the port to the host, elsewhere the ports to switches one hop closer to t, in port
//! order. On a two-tier tree of H hosts and 32-host leaves this is H / 32 searches over the
//! few thousand switches, where a search per host over the whole graph was H searches over
//! H + switches nodes (the quadratic step that made 40,000 hosts take most of a minute).
//! The tables are indexed by the destination's edge switch (`net/forwarding.rs`): one entry
//! per (switch, edge switch), written once per search.

use crate::engine::PortIdx;
use crate::net::forwarding::{Attach, Attachments, Forwarding};
use crate::net::Node;
use crate::rng::mix;
use crate::scenario::{Multipath, RoutingSpec};

/// Keeps ECMP salts apart from the random streams' keys.
const ECMP_SALT_TAG: u64 = 0xEC3F_0000_0000_0000;

/// Which hosts each switch's routes reach, for checking traffic without a per-pair walk.
pub(crate) struct Reach {
    /// Per node: hosts reachable from it (for a switch: over switches; a host's entry is 0).
    hosts_reached: Vec<u32>,
    n_hosts: usize,
    /// The switches with hosts, in the order of their index in the forwarding tables.
    pub(super) edges: Vec<usize>,
    /// Per node: (port, peer switch) of its links to other switches (empty for a host).
    pub(super) fabric: Vec<Vec<(PortIdx, u32)>>,
}

impl Reach {
    /// True if host `me` can send to every other host.
    pub(crate) fn all_from(&self, nodes: &[Node], me: u32) -> bool {
        let first = nodes[me as usize].ports()[0].peer_node as usize;
        if first < self.n_hosts {
            // Two hosts joined by a link: each reaches only the other.
            return self.n_hosts == 2;
        }
        self.hosts_reached[first] as usize == self.n_hosts
    }
}

/// Fills every switch's forwarding table: all its next hops on a shortest path to each host;
/// with one path per destination the lowest port index wins, so routes are deterministic, and
/// ECMP hashes with a salt drawn from the scenario seed and the switch.
pub(crate) fn compute_routes(
    nodes: &mut [Node],
    n_hosts: usize,
    routing: &RoutingSpec,
    seed: u64,
) -> Reach {
    let n = nodes.len();
    // Per switch: (port, peer switch) of its links to other switches.
    let fabric: Vec<Vec<(PortIdx, u32)>> = nodes
        .iter()
        .map(|nd| {
            (nd.ports().iter().enumerate())
                .filter(|(_, p)| p.peer_node as usize >= n_hosts)
                .map(|(i, p)| (i as PortIdx, p.peer_node))
                .collect()
        })
        .collect();
    // Per switch: its hosts, in host order, with the switch's port to each.
    let mut edge: Vec<Vec<(usize, PortIdx)>> = vec![Vec::new(); n];
    for (h, node) in nodes[..n_hosts].iter().enumerate() {
        let port = &node.ports()[0];
        if port.peer_node as usize >= n_hosts {
            edge[port.peer_node as usize].push((h, port.peer_port));
        }
    }
    let attach = attachments(nodes, n_hosts, &edge);
    let edges: Vec<usize> = (n_hosts..n).filter(|&t| !edge[t].is_empty()).collect();
    for (s, node) in nodes.iter_mut().enumerate().skip(n_hosts) {
        let Node::Switch(sw) = node else { continue };
        sw.route = Forwarding::new(attach.clone(), edges.len());
        if routing.multipath == Multipath::Ecmp {
            sw.route
                .enable_ecmp(routing.ecmp_key, mix(mix(seed) ^ ECMP_SALT_TAG ^ s as u64));
        }
    }
    let mut reach = Reach {
        hosts_reached: vec![0; n],
        n_hosts,
        edges: Vec::new(),
        fabric: Vec::new(),
    };
    let mut dist = vec![u32::MAX; n];
    let mut order: Vec<u32> = Vec::new();
    let mut next_hops: Vec<PortIdx> = Vec::new();
    // Per switch: its last next hops (as a mask over its fabric links, when it has at most
    // 64) and the entry they got, so the next edge with the same set (a leaf's uplinks, for
    // every remote leaf) is one store, not a search of the switch's groups: those searches,
    // a cache miss each across thousands of switches, were most of the build at 100k hosts.
    let mut memo: Vec<Option<(u64, u16)>> = vec![None; n];
    for (e, &t) in edges.iter().enumerate() {
        search_switches(&fabric, t, &mut dist, &mut order);
        let reached: usize = order.iter().map(|&s| edge[s as usize].len()).sum();
        reach.hosts_reached[t] = reached as u32;
        for &s in &order {
            let s = s as usize;
            let Node::Switch(sw) = &mut nodes[s] else {
                unreachable!("the search visits switches only")
            };
            if s == t {
                sw.route.set_local(e);
                continue;
            }
            let closer = |v: u32| dist[v as usize] == dist[s] - 1;
            let mask = (fabric[s].len() <= 64).then(|| {
                (fabric[s].iter().enumerate())
                    .filter(|(_, (_, v))| closer(*v))
                    .fold(0u64, |m, (i, _)| m | 1 << i)
            });
            match (mask, memo[s]) {
                (Some(mask), Some((last, entry))) if mask == last => sw.route.set_entry(e, entry),
                _ => {
                    next_hops.clear();
                    next_hops.extend(
                        (fabric[s].iter())
                            .filter(|(_, v)| closer(*v))
                            .map(|(p, _)| *p),
                    );
                    sw.route.set(e, &next_hops);
                    memo[s] = mask.map(|m| (m, sw.route.entry(e)));
                }
            }
        }
        for &s in &order {
            dist[s as usize] = u32::MAX;
        }
    }
    reach.edges = edges;
    reach.fabric = fabric;
    reach
}

/// Per host, its edge switch's index among the switches with hosts (in switch order) and the
/// switch's port to it; a host linked to another host gets the index past the last edge.
fn attachments(nodes: &[Node], n_hosts: usize, edge: &[Vec<(usize, PortIdx)>]) -> Attachments {
    let mut edge_index = vec![u32::MAX; nodes.len()];
    let mut n_edges = 0u32;
    for (t, hosts) in edge.iter().enumerate().skip(n_hosts) {
        if !hosts.is_empty() {
            edge_index[t] = n_edges;
            n_edges += 1;
        }
    }
    (nodes[..n_hosts].iter())
        .map(|node| {
            let port = &node.ports()[0];
            match edge_index[port.peer_node as usize] {
                u32::MAX => Attach {
                    edge: n_edges,
                    port: 0,
                },
                e => Attach {
                    edge: e,
                    port: port.peer_port,
                },
            }
        })
        .collect()
}

/// Breadth-first search over switches from `t`: `dist` (all `u32::MAX` on entry) gets the
/// hop counts, `order` the switches reached in search order.
pub(super) fn search_switches(
    fabric: &[Vec<(PortIdx, u32)>],
    t: usize,
    dist: &mut [u32],
    order: &mut Vec<u32>,
) {
    order.clear();
    dist[t] = 0;
    order.push(t as u32);
    // `order` is the search's queue too: its unvisited tail.
    let mut next = 0;
    while let Some(&u) = order.get(next) {
        next += 1;
        for &(_, v) in &fabric[u as usize] {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = dist[u as usize] + 1;
                order.push(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::net::frame::NO_FLOW;
    use crate::scenario::Scenario;

    /// The per-host search the routes replaced: BFS from each host over every node, hosts
    /// other than the start not forwarding; the next hops of switch s are its ports to nodes
    /// one hop closer.
    fn reference(
        nodes: &[Node],
        n_hosts: usize,
        routing: &RoutingSpec,
        seed: u64,
    ) -> Vec<Forwarding> {
        let n = nodes.len();
        let neighbours: Vec<Vec<u32>> = (nodes.iter())
            .map(|nd| nd.ports().iter().map(|p| p.peer_node).collect())
            .collect();
        // Each host its own "edge", so the table is the per-host one it was.
        let attach: Vec<Attach> = (0..n_hosts as u32)
            .map(|edge| Attach { edge, port: 0 })
            .collect();
        let attach: Attachments = attach.into();
        let mut tables: Vec<Forwarding> = (n_hosts..n)
            .map(|s| {
                let mut f = Forwarding::new(attach.clone(), n_hosts);
                if routing.multipath == Multipath::Ecmp {
                    f.enable_ecmp(routing.ecmp_key, mix(mix(seed) ^ ECMP_SALT_TAG ^ s as u64));
                }
                f
            })
            .collect();
        for h in 0..n_hosts {
            let mut dist = vec![u32::MAX; n];
            dist[h] = 0;
            let mut queue = VecDeque::from([h as u32]);
            while let Some(u) = queue.pop_front() {
                if u as usize != h && (u as usize) < n_hosts {
                    continue;
                }
                for &v in &neighbours[u as usize] {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[u as usize] + 1;
                        queue.push_back(v);
                    }
                }
            }
            for s in n_hosts..n {
                if dist[s] == u32::MAX {
                    continue;
                }
                let hops: Vec<PortIdx> = (neighbours[s].iter().enumerate())
                    .filter(|(_, &v)| dist[v as usize] == dist[s] - 1)
                    .map(|(p, _)| p as PortIdx)
                    .collect();
                tables[s - n_hosts].set(h, &hops);
            }
        }
        tables
    }

    /// Two pods of leaves under two spines, a parallel link, a pair of hosts joined directly,
    /// and an island switch with its own hosts.
    const TOPOLOGY: &str = r#"
        name = "routes"
        duration_s = 1e-3
        hosts = [{ name = "a0" }, { name = "a1" }, { name = "b0" }, { name = "b1" },
                 { name = "c0" }, { name = "d0" }, { name = "d1" }, { name = "x" }, { name = "y" },
                 { name = "i0" }, { name = "i1" }]
        switches = [{ name = "la" }, { name = "lb" }, { name = "lc" }, { name = "ld" },
                    { name = "s0" }, { name = "s1" }, { name = "m" }, { name = "island" }]
        links = [
            { ends = ["a0", "la"], rate_bps = 1e9 }, { ends = ["a1", "la"], rate_bps = 1e9 },
            { ends = ["lb", "b0"], rate_bps = 1e9 }, { ends = ["b1", "lb"], rate_bps = 1e9 },
            { ends = ["c0", "lc"], rate_bps = 1e9 }, { ends = ["d0", "ld"], rate_bps = 1e9 },
            { ends = ["d1", "ld"], rate_bps = 1e9 },
            { ends = ["la", "s0"], rate_bps = 1e9 }, { ends = ["la", "s1"], rate_bps = 1e9 },
            { ends = ["s1", "lb"], rate_bps = 1e9 }, { ends = ["lb", "s0"], rate_bps = 1e9 },
            { ends = ["lb", "s0"], rate_bps = 1e9 },
            { ends = ["lc", "s0"], rate_bps = 1e9 }, { ends = ["s1", "lc"], rate_bps = 1e9 },
            { ends = ["lc", "m"], rate_bps = 1e9 }, { ends = ["m", "ld"], rate_bps = 1e9 },
            { ends = ["x", "y"], rate_bps = 1e9 },
            { ends = ["i0", "island"], rate_bps = 1e9 }, { ends = ["island", "i1"], rate_bps = 1e9 },
        ]
    "#;

    #[test]
    fn routes_equal_the_per_host_search() {
        for multipath in ["lowest_port", "ecmp"] {
            let text = format!("{TOPOLOGY}\n[routing]\nmultipath = \"{multipath}\"\n");
            let sc = Scenario::from_toml(&text, &[]).expect("valid");
            let n_hosts = sc.hosts.len();
            let built = super::super::build(&sc).expect("builds");
            let want = reference(&built.nodes, n_hosts, &sc.routing, sc.seed);
            for (s, node) in built.nodes.iter().enumerate().skip(n_hosts) {
                let Node::Switch(sw) = node else {
                    panic!("switches follow hosts")
                };
                let reference = &want[s - n_hosts];
                for dst in 0..n_hosts as u32 {
                    assert_eq!(
                        sw.route.reaches(dst as usize),
                        reference.reaches(dst as usize)
                    );
                    for src in 0..n_hosts as u32 {
                        assert_eq!(
                            sw.route.port_for(src, dst, NO_FLOW),
                            reference.port_for(src, dst, NO_FLOW),
                            "{multipath}: switch {} towards host {dst} from {src}",
                            sw.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn reach_counts_hosts_over_switches() {
        let sc = Scenario::from_toml(TOPOLOGY, &[]).expect("valid");
        let mut built = super::super::build(&sc).expect("builds");
        let reach = compute_routes(&mut built.nodes, sc.hosts.len(), &sc.routing, sc.seed);
        // a0 reaches the 7 hosts of the four leaves, not x, y or the island: not all.
        assert_eq!(reach.hosts_reached[sc.hosts.len()], 7);
        assert!(!reach.all_from(&built.nodes, 0));
        assert!(!reach.all_from(&built.nodes, 7), "x reaches only y");
    }

    /// Swift's hop count (`net::path::switches_on_path`): between two hosts under one leaf, 1
    /// switch; under two leaves, leaf, spine, leaf: 3, whichever spine the flow hashes to.
    #[test]
    fn switches_on_a_leaf_spine_path() {
        let text = r#"
            name = "leaf-spine"
            duration_s = 0.001
            [topology]
            kind = "leaf_spine"
            leaves = 3
            spines = 2
            hosts_per_leaf = 2
            host_rate_bps = 1e10
        "#;
        let sc = Scenario::from_toml(text, &[]).expect("valid");
        let built = super::super::build(&sc).expect("builds");
        assert_eq!(sc.hosts.len(), 6);
        let mut counts = [0u32; 4];
        for dst in 1..6 {
            for flow in [NO_FLOW, dst, dst + 100] {
                let hops = crate::net::path::switches_on_path(&built.nodes, 0, dst, flow);
                counts[hops as usize] += 1;
            }
        }
        assert_eq!(
            counts,
            [0, 3, 0, 12],
            "one neighbour, four hosts across the spines"
        );
    }
}
