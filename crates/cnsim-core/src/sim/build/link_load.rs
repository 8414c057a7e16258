//! `load_basis = "busiest_link"`: a traffic entry's `load` as the utilisation of the link its
//! traffic loads most, as Parsimon (NSDI 2023) states its workloads ("max load"), instead of
//! the fraction of each sender's line rate.
//!
//! The expected load of every link is computed from the entry's traffic matrix (each sender's
//! destination probabilities, `Destinations::spread`) and the forwarding tables, with every
//! sender at its full line rate: a switch splits what it forwards towards an edge switch evenly
//! over its equal-cost next hops (ECMP's expectation over the hash; with `lowest_port` all of
//! it takes the one next hop). The senders then offer `load` / (the busiest link's utilisation
//! at full rate) of their line rate, which puts that link at `load`. A sender's own link is at
//! full rate, so the busiest link is at least as loaded as a host link and the hosts' load is
//! at most `load`.
//!
//! Cost: traffic is summed per (source edge switch, destination host) with a difference array
//! over host runs (O(edges x hosts)), then pushed from the source edges down each destination
//! edge switch's shortest-path tree (O(edges x fabric links)): about 2 M steps on the 6,144-host
//! Meta fabric. Only entries that ask for it pay it.

use std::collections::HashMap;

use crate::engine::PortIdx;
use crate::error::ConfigError;
use crate::net::Node;
use crate::scenario::{LoadBasis, Scenario, TrafficKind, MIN_LOAD};
use crate::traffic::flows::destinations;
use crate::traffic::{Destinations, LoadScaling};

use super::frame_destinations;
use super::routes::{search_switches, Reach};

/// The scenario with each `busiest_link` entry's `load` replaced by its hosts' load (None if
/// no entry asks for it), and how each was scaled.
pub(crate) fn host_loads(
    sc: &Scenario,
    index: &HashMap<&str, u32>,
    nodes: &[Node],
    reach: &Reach,
) -> Result<(Option<Scenario>, Vec<LoadScaling>), ConfigError> {
    let mut scaled = None::<Scenario>;
    let mut facts = Vec::new();
    for (ti, t) in sc.traffic.iter().enumerate() {
        if t.load_basis != LoadBasis::BusiestLink {
            continue;
        }
        let senders: Vec<u32> = t.hosts.iter().map(|h| index[h.as_str()]).collect();
        let dsts = match t.kind {
            TrafficKind::Flows => destinations(sc, ti, t, &senders, index),
            _ => (senders.iter())
                .map(|&h| frame_destinations(t, index, h, sc.hosts.len() as u32))
                .collect(),
        };
        let pairs: Vec<(u32, Destinations)> = senders.into_iter().zip(dsts).collect();
        let busiest = busiest_link(nodes, sc.hosts.len(), reach, &pairs);
        let asked = t.load.expect("validated");
        let host_load = asked / busiest.utilisation_at_full_rate;
        if t.kind == TrafficKind::Bernoulli && host_load < MIN_LOAD {
            return Err(ConfigError::field(
                format!("traffic[{ti}].load"),
                format!(
                    "puts the hosts at {host_load:e} of their line rate (the busiest link \
                     carries {:.1} x a host's rate), below the smallest bernoulli load {MIN_LOAD:e}",
                    busiest.utilisation_at_full_rate
                ),
            ));
        }
        let sc2 = scaled.get_or_insert_with(|| sc.clone());
        // From here on the entry's `load` is its hosts' (what the estimate reads).
        sc2.traffic[ti].load = Some(host_load);
        sc2.traffic[ti].load_basis = LoadBasis::HostLink;
        facts.push(LoadScaling {
            traffic: ti,
            busiest_link_load: asked,
            busiest_link: link_name(sc, nodes, busiest.node, busiest.port),
            busiest_link_load_at_full_rate: busiest.utilisation_at_full_rate,
            host_load,
        });
    }
    Ok((scaled, facts))
}

/// `node:port->peer` by the scenario's names.
fn link_name(sc: &Scenario, nodes: &[Node], node: u32, port: PortIdx) -> String {
    let name = |n: u32| {
        let n = n as usize;
        match n.checked_sub(sc.hosts.len()) {
            None => sc.hosts[n].name.as_str(),
            Some(s) => sc.switches[s].name.as_str(),
        }
    };
    let peer = nodes[node as usize].ports()[port as usize].peer_node;
    format!("{}:{port}->{}", name(node), name(peer))
}

/// The link a traffic matrix loads most, with every sender at its full line rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BusiestLink {
    /// The node that transmits on the link (a host for a host's own link) and its port.
    pub(crate) node: u32,
    pub(crate) port: PortIdx,
    /// Expected utilisation of the link (load / line rate) when every sender offers its full
    /// line rate; at least 1 (a sender's own link).
    pub(crate) utilisation_at_full_rate: f64,
}

/// The busiest link of the traffic of `senders` (each a host and its destinations), every
/// sender at the line rate of its link.
pub(crate) fn busiest_link(
    nodes: &[Node],
    n_hosts: usize,
    reach: &Reach,
    senders: &[(u32, Destinations)],
) -> BusiestLink {
    let mut port_bps: Vec<Vec<f64>> = nodes.iter().map(|n| vec![0.0; n.ports().len()]).collect();
    for (host, _) in senders {
        port_bps[*host as usize][0] += nodes[*host as usize].ports()[0].line_rate_bps;
    }
    let between = edge_demands(nodes, n_hosts, reach, senders, &mut port_bps);
    for (b, column) in between.iter().enumerate() {
        spread_towards(nodes, reach, b, column, &mut port_bps);
    }
    let mut busiest = BusiestLink {
        node: 0,
        port: 0,
        utilisation_at_full_rate: 0.0,
    };
    for (node, loads) in port_bps.iter().enumerate() {
        for (port, &bps) in loads.iter().enumerate() {
            let u = bps / nodes[node].ports()[port].line_rate_bps;
            if u > busiest.utilisation_at_full_rate {
                busiest = BusiestLink {
                    node: node as u32,
                    port: port as PortIdx,
                    utilisation_at_full_rate: u,
                };
            }
        }
    }
    busiest
}

/// Adds each host's incoming traffic to the link into it (from its edge switch, or from the
/// host it is linked to), and returns the traffic between edge switches, indexed
/// `[destination edge][source edge]` in bits per second.
fn edge_demands(
    nodes: &[Node],
    n_hosts: usize,
    reach: &Reach,
    senders: &[(u32, Destinations)],
    port_bps: &mut [Vec<f64>],
) -> Vec<Vec<f64>> {
    let n_edges = reach.edges.len();
    let mut edge_of = vec![usize::MAX; nodes.len()];
    for (e, &t) in reach.edges.iter().enumerate() {
        edge_of[t] = e;
    }
    // The node a host's link leads to, and that node's edge index (MAX for a host).
    let peer = |h: usize| nodes[h].ports()[0].peer_node as usize;
    let mut by_edge: Vec<Vec<usize>> = vec![Vec::new(); n_edges + 1];
    for (k, (host, _)) in senders.iter().enumerate() {
        by_edge[edge_of[peer(*host as usize)].min(n_edges)].push(k);
    }
    let mut between = vec![vec![0.0; n_edges]; n_edges];
    let mut diff = vec![0.0f64; n_hosts + 1];
    for (a, members) in by_edge.iter().enumerate().filter(|(_, m)| !m.is_empty()) {
        diff.fill(0.0);
        for &k in members {
            let (host, dst) = &senders[k];
            let rate = nodes[*host as usize].ports()[0].line_rate_bps;
            for run in dst.spread() {
                diff[run.lo as usize] += rate * run.p_each;
                diff[run.hi as usize] -= rate * run.p_each;
            }
        }
        let mut bps = 0.0;
        for (d, step) in diff[..n_hosts].iter().enumerate() {
            bps += step;
            if bps <= 0.0 {
                continue;
            }
            // Into host d over its own link, from its switch (or the host linked to it).
            let link = &nodes[d].ports()[0];
            port_bps[link.peer_node as usize][link.peer_port as usize] += bps;
            let b = edge_of[peer(d)];
            if b != usize::MAX && a < n_edges && b != a {
                between[b][a] += bps;
            }
        }
    }
    between
}

/// Pushes the traffic of each source edge switch towards edge switch `b` down the shortest
/// paths, farthest switches first, splitting evenly over each switch's next hops.
fn spread_towards(
    nodes: &[Node],
    reach: &Reach,
    b: usize,
    from_edge_bps: &[f64],
    port_bps: &mut [Vec<f64>],
) {
    if from_edge_bps.iter().all(|&x| x == 0.0) {
        return;
    }
    let mut inflow = vec![0.0f64; nodes.len()];
    for (a, &bps) in from_edge_bps.iter().enumerate() {
        inflow[reach.edges[a]] += bps;
    }
    let mut dist = vec![u32::MAX; nodes.len()];
    let mut order = Vec::new();
    search_switches(&reach.fabric, reach.edges[b], &mut dist, &mut order);
    for &s in order.iter().skip(1).rev() {
        let s = s as usize;
        let bps = std::mem::take(&mut inflow[s]);
        let Node::Switch(sw) = &nodes[s] else {
            unreachable!("the search visits switches only")
        };
        let hops = sw.route.next_hops(b);
        if bps == 0.0 || hops.is_empty() {
            continue;
        }
        let share = bps / hops.len() as f64;
        for &p in hops {
            port_bps[s][p as usize] += share;
            inflow[sw.ports[p as usize].peer_node as usize] += share;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::sim::build::routes::compute_routes;

    /// A scenario of `topology` (the `[topology]` keys, hosts at 10 Gb/s) with one traffic
    /// entry (its keys after `kind`, `hosts = "all"`, `dst = "uniform"`), and `extra` tables.
    fn scenario(topology: &str, traffic: &str, extra: &str) -> String {
        format!(
            "name = \"t\"\nduration_s = 0.05\n[topology]\n{topology}\nhost_rate_bps = 10e9\n\
             {extra}\n[[traffic]]\nhosts = \"all\"\ndst = \"uniform\"\n{traffic}\n"
        )
    }

    /// A leaf-spine of `leaves` x `hosts` hosts and `spines` spines, fabric links at `fabric`.
    fn leaf_spine(leaves: u32, spines: u32, hosts: u32, fabric: f64) -> String {
        format!(
            "kind = \"leaf_spine\"\nleaves = {leaves}\nspines = {spines}\n\
             hosts_per_leaf = {hosts}\nfabric_rate_bps = {fabric:?}"
        )
    }

    const BERNOULLI: &str = "kind = \"bernoulli\"\nload = 0.5";

    fn built(toml: &str) -> (Vec<Node>, usize, Reach) {
        let sc = Scenario::from_toml(toml, &[]).expect("valid scenario");
        let mut b = super::super::build(&sc).expect("builds");
        let n_hosts = sc.hosts.len();
        let reach = compute_routes(&mut b.nodes, n_hosts, &sc.routing, sc.seed);
        (b.nodes, n_hosts, reach)
    }

    /// The busiest link of every host sending to all others, on the network of `toml`.
    fn busiest_uniform(toml: &str) -> BusiestLink {
        let (nodes, n_hosts, reach) = built(toml);
        let senders: Vec<(u32, Destinations)> = (0..n_hosts as u32)
            .map(|me| {
                let n_hosts = n_hosts as u32;
                (me, Destinations::AllOthers { me, n_hosts })
            })
            .collect();
        let b = busiest_link(&nodes, n_hosts, &reach, &senders);
        assert!(b.node as usize >= n_hosts, "a switch's link: {b:?}");
        b
    }

    #[test]
    fn a_leaf_spine_with_uniform_traffic_loads_its_uplinks_by_the_remote_share() {
        // 4 leaves x 4 hosts at 10 Gb/s, 2 spines, 10 Gb/s fabric links: 2:1 at a leaf.
        // A host sends 12/15 of its traffic off its leaf: a leaf 4 x 10 x 12/15 = 32 Gb/s
        // over 2 uplinks of 10, 1.6 each; spine downlinks the same. Hosts' own links: 1.
        let b = busiest_uniform(&scenario(&leaf_spine(4, 2, 4, 10e9), BERNOULLI, ""));
        assert!((b.utilisation_at_full_rate - 1.6).abs() < 1e-12, "{b:?}");
    }

    #[test]
    fn one_path_per_destination_puts_a_leafs_remote_traffic_on_one_uplink() {
        // The leaf-spine above with `lowest_port`: the 32 Gb/s off a leaf all take its first
        // uplink, 3.2 x its 10 Gb/s.
        let routing = "[routing]\nmultipath = \"lowest_port\"";
        let b = busiest_uniform(&scenario(&leaf_spine(4, 2, 4, 10e9), BERNOULLI, routing));
        assert!((b.utilisation_at_full_rate - 3.2).abs() < 1e-12, "{b:?}");
    }

    #[test]
    fn a_clos3_is_busiest_between_fabric_and_spine() {
        // 3 pods x 4 racks x 2 hosts (24) at 10 Gb/s, 2 planes of 1 spine, all links 10 Gb/s.
        // A fabric switch takes 10 Gb/s from each of its 4 racks, of which 16/23 leaves the
        // pod over its one spine link: 40 x 16/23 / 10 = 64/23 (the Meta fabric's 1.75 at
        // 48 racks x 16 hosts, 4 planes, 24 spines, 40 Gb/s links). A rack's uplinks carry
        // 22/23, a host's own link 1.
        let clos3 = "kind = \"clos3\"\npods = 3\nracks_per_pod = 4\nhosts_per_rack = 2\n\
                     fabric_planes = 2\nspines_per_plane = 1\nfabric_rate_bps = 10e9\n\
                     spine_rate_bps = 10e9";
        let b = busiest_uniform(&scenario(clos3, BERNOULLI, ""));
        assert!(
            (b.utilisation_at_full_rate - 64.0 / 23.0).abs() < 1e-12,
            "{b:?}"
        );
    }

    /// Flows of 10 kB at 0.8 on the busiest link of the 4 x 4 leaf-spine, over 50 ms.
    fn leaf_spine_flows(basis: &str) -> String {
        let flows = format!("kind = \"flows\"\nload = 0.8\n{basis}\nsize = {{ bytes = 10000 }}");
        scenario(&leaf_spine(4, 2, 4, 10e9), &flows, "")
    }

    /// The realised load of a build's flows, as a fraction of the 16 hosts' 10 Gb/s x 50 ms.
    fn realised_load(b: &super::super::Built) -> f64 {
        let bits: f64 = b.flows.iter().map(|f| f.size_bytes as f64 * 8.0).sum();
        bits / (16.0 * 10e9 * 0.05)
    }

    #[test]
    fn a_busiest_link_entry_offers_the_scaled_host_load() {
        // Busiest link 1.6 x at full rate (the leaf-spine above): hosts at 0.8 / 1.6 = 0.5.
        let toml = leaf_spine_flows("load_basis = \"busiest_link\"");
        let b = super::super::build(&Scenario::from_toml(&toml, &[]).unwrap()).unwrap();
        let [scaling] = &b.workload.load_scaling[..] else {
            panic!("one scaled entry: {:?}", b.workload.load_scaling)
        };
        assert_eq!(scaling.traffic, 0);
        assert!((scaling.busiest_link_load_at_full_rate - 1.6).abs() < 1e-12);
        assert!((scaling.host_load - 0.5).abs() < 1e-12, "{scaling:?}");
        assert!(scaling.busiest_link.contains("->"), "{scaling:?}");
        // 16 hosts x 10 Gb/s x 0.5 x 50 ms / 80 kbit: about 5,000 flows; the realised load
        // within 3% of 0.5 (Poisson: 1.4% standard deviation).
        let realised = realised_load(&b);
        assert!((realised - 0.5).abs() < 0.015, "realised {realised}");
        // The same entry on the host basis offers 0.8.
        let b =
            super::super::build(&Scenario::from_toml(&leaf_spine_flows(""), &[]).unwrap()).unwrap();
        assert!(b.workload.load_scaling.is_empty());
        assert!((realised_load(&b) - 0.8).abs() < 0.02);
    }

    #[test]
    fn the_caps_are_checked_with_the_hosts_load_once_it_is_known() {
        // The entry above puts its hosts at 0.5; estimated at 0.8 (its `load`), the run would
        // count 1.6 x its frames and flows. The same traffic on the host basis at 0.5:
        let at_half = leaf_spine_flows("").replace("load = 0.8", "load = 0.5");
        let needs = Scenario::from_toml(&at_half, &[])
            .unwrap()
            .estimate()
            .events;
        let busiest = leaf_spine_flows("load_basis = \"busiest_link\"");
        let upper = Scenario::from_toml(&busiest, &[])
            .unwrap()
            .estimate()
            .events;
        assert!(upper > 1.5 * needs, "{upper} against {needs}");
        let with_cap = |cap: f64| format!("{busiest}\n[limits]\nmax_events = {cap:e}\n");
        // A cap between the two: the run is not refused (it was, on the entry's `load`).
        let sc = Scenario::from_toml(&with_cap(1.01 * needs), &[]).expect("validates");
        super::super::build(&sc).expect("within the cap at the hosts' load");
        // A cap under what it needs: validation leaves the entry to the build, which refuses.
        let sc = Scenario::from_toml(&with_cap(0.99 * needs), &[]).expect("validates");
        let err = super::super::build(&sc).err().expect("refused").to_string();
        assert!(err.contains("limits.max_events"), "{err}");
        assert!(!err.contains("without"), "{err}");
        // Refused before the build, the estimate says what it leaves out.
        let tiny = format!("{busiest}\n[limits]\nmax_memory_bytes = 1\n");
        let err = Scenario::from_toml(&tiny, &[]).unwrap_err().to_string();
        assert!(
            err.contains("without traffic[0] (a load on the busiest link"),
            "{err}"
        );
    }

    #[test]
    fn load_basis_is_refused_where_there_is_no_load() {
        let cbr = scenario(
            &leaf_spine(4, 2, 4, 10e9),
            "kind = \"cbr\"\nrate_bps = 1e9\nload_basis = \"busiest_link\"",
            "",
        );
        let err = Scenario::from_toml(&cbr, &[]).unwrap_err().to_string();
        assert!(err.contains("traffic[0].load_basis"), "{err}");
        assert!(err.contains("does not apply"), "{err}");
    }

    #[test]
    fn one_destination_loads_its_own_link_with_every_sender() {
        // Three hosts of a 4-host leaf-spine all send to host 0: its link carries 3 x.
        let (nodes, n_hosts, reach) = built(&scenario(&leaf_spine(2, 1, 2, 40e9), BERNOULLI, ""));
        let senders: Vec<(u32, Destinations)> =
            (1..4).map(|h| (h, Destinations::Fixed(0))).collect();
        let b = busiest_link(&nodes, n_hosts, &reach, &senders);
        assert!((b.utilisation_at_full_rate - 3.0).abs() < 1e-12, "{b:?}");
        let into_host = &nodes[0].ports()[0];
        assert_eq!((b.node, b.port), (into_host.peer_node, into_host.peer_port));
    }
}
