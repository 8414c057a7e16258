use std::collections::{HashMap, VecDeque};

use super::*;
use crate::scenario::{DstSpec, Multipath};

fn scenario(topology: &str, extra: &str) -> Result<Scenario, ConfigError> {
    let text = format!("name = \"t\"\nduration_s = 1e-3\n{extra}\n[topology]\n{topology}\n");
    Scenario::from_toml(&text, &[])
}

fn ok(topology: &str) -> Scenario {
    scenario(topology, "").unwrap_or_else(|e| panic!("{e}"))
}

fn error(topology: &str, extra: &str) -> ConfigError {
    match scenario(topology, extra) {
        Ok(_) => panic!("accepted: {topology} {extra}"),
        Err(e) => e,
    }
}

/// Number of shortest paths between two nodes (hosts have one link, so none passes through one).
fn shortest_paths(sc: &Scenario, from: &str, to: &str) -> (usize, u64) {
    let mut adjacent: HashMap<&str, Vec<&str>> = HashMap::new();
    for l in &sc.links {
        adjacent.entry(&l.ends[0]).or_default().push(&l.ends[1]);
        adjacent.entry(&l.ends[1]).or_default().push(&l.ends[0]);
    }
    let mut dist: HashMap<&str, usize> = HashMap::from([(from, 0)]);
    let mut count: HashMap<&str, u64> = HashMap::from([(from, 1)]);
    let mut queue = VecDeque::from([from]);
    while let Some(u) = queue.pop_front() {
        for &v in &adjacent[u] {
            if !dist.contains_key(v) {
                dist.insert(v, dist[u] + 1);
                queue.push_back(v);
            }
            if dist[v] == dist[u] + 1 {
                *count.entry(v).or_default() += count[u];
            }
        }
    }
    (dist[to], count[to])
}

fn names_starting(sc: &Scenario, prefix: &str) -> usize {
    sc.switches
        .iter()
        .filter(|s| s.name.starts_with(prefix))
        .count()
}

#[test]
fn a_k4_fat_tree_has_16_hosts_20_switches_48_links_and_4_paths_between_pods() {
    let sc = ok("kind = \"fat_tree\"\nk = 4");
    assert_eq!(
        (sc.hosts.len(), sc.switches.len(), sc.links.len()),
        (16, 20, 48)
    );
    assert_eq!(
        (
            names_starting(&sc, "edge"),
            names_starting(&sc, "agg"),
            names_starting(&sc, "core")
        ),
        (8, 8, 4)
    );
    // Between pods: up to a core and down, (k/2)^2 ways; between racks of a pod: k/2; in a rack: 1.
    assert_eq!(shortest_paths(&sc, "h0_0_0", "h3_1_1"), (6, 4));
    assert_eq!(shortest_paths(&sc, "h1_0_0", "h1_1_0"), (4, 2));
    assert_eq!(shortest_paths(&sc, "h2_1_0", "h2_1_1"), (2, 1));
    assert!(sc.links.iter().all(|l| l.rate_bps == 10e9));
    assert_eq!(sc.routing.multipath, Multipath::Ecmp, "ECMP by default");
    // k = 8: k^3/4 hosts, 5k^2/4 switches, 3k^3/4 links, (k/2)^2 paths between pods.
    let sc = ok("kind = \"fat_tree\"\nk = 8");
    assert_eq!(
        (sc.hosts.len(), sc.switches.len(), sc.links.len()),
        (128, 80, 384)
    );
    assert_eq!(shortest_paths(&sc, "h0_0_0", "h7_3_3"), (6, 16));
}

#[test]
fn a_leaf_spine_has_a_path_through_each_spine_at_the_rate_its_oversubscription_gives() {
    let sc = ok("kind = \"leaf_spine\"\nleaves = 4\nspines = 3\nhosts_per_leaf = 5");
    assert_eq!(
        (sc.hosts.len(), sc.switches.len(), sc.links.len()),
        (20, 7, 32)
    );
    assert_eq!(shortest_paths(&sc, "h0_0", "h3_4"), (4, 3));
    let fabric = |sc: &Scenario| sc.links.last().expect("links").rate_bps;
    // Non-blocking by default: 5 x 10 Gb/s over 3 uplinks, to the whole b/s.
    assert_eq!(fabric(&sc), (50e9_f64 / 3.0).round());
    let sc = ok(
        "kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 8\n\
                 oversubscription = 2\nhost_rate_bps = 25e9",
    );
    assert_eq!(fabric(&sc), 50e9, "8 x 25 Gb/s over 2 uplinks at 2:1");
    let sc = ok(
        "kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 8\n\
                 fabric_rate_bps = 40e9\nhost_link_delay_s = 2e-6\nfabric_link_delay_s = 5e-7",
    );
    assert_eq!(fabric(&sc), 40e9);
    assert_eq!(sc.links[0].delay_s, 2e-6);
    assert_eq!(sc.links.last().expect("links").delay_s, 5e-7);
}

#[test]
fn a_clos3_has_racks_fabric_planes_and_spine_planes() {
    let sc = ok(
        "kind = \"clos3\"\npods = 2\nracks_per_pod = 3\nhosts_per_rack = 2\n\
                 fabric_planes = 2\nspines_per_plane = 3\noversubscription = 2",
    );
    // 12 hosts; 6 rack, 4 fabric and 6 spine switches; 12 host, 12 rack-fabric, 12 fabric-spine
    // links.
    assert_eq!(
        (sc.hosts.len(), sc.switches.len(), sc.links.len()),
        (12, 16, 36)
    );
    assert_eq!(
        (
            names_starting(&sc, "rsw"),
            names_starting(&sc, "fsw"),
            names_starting(&sc, "ssw")
        ),
        (6, 4, 6)
    );
    // Across pods: a fabric plane, then a spine of it; across racks of a pod: a fabric switch.
    assert_eq!(shortest_paths(&sc, "h0_0_0", "h1_2_1"), (6, 6));
    assert_eq!(shortest_paths(&sc, "h0_0_0", "h0_1_0"), (4, 2));
    let rate = |a: &str| sc.links.iter().find(|l| l.ends[0] == a).expect(a).rate_bps;
    // Rack: 2 x 10 Gb/s over 2 planes at 2:1 = 5 Gb/s; fabric: 3 racks x 5 Gb/s over 3 spines.
    assert_eq!((rate("rsw0_0"), rate("fsw0_0")), (5e9, 5e9));
}

#[test]
fn switch_settings_apply_to_all_switches_or_per_tier() {
    let sc = ok("kind = \"fat_tree\"\nk = 4\n\
                 switch = { shared_buffer_bytes = 1e6, cp = false }\n\
                 host = { nic_buffer_bytes = 5e5 }\n\
                 [topology.tiers.core]\nshared_buffer_bytes = 4e6\ncp = true\n\
                 pause = { trigger = \"ingress\", xoff_bytes = 9e4, xon_bytes = 6e4 }");
    for s in &sc.switches {
        let core = s.name.starts_with("core");
        assert_eq!(
            s.shared_buffer_bytes,
            Some(if core { 4e6 } else { 1e6 }),
            "{}",
            s.name
        );
        assert_eq!(s.cp, core, "{}", s.name);
        assert_eq!(s.pause.is_some(), core, "{}", s.name);
    }
    assert!(sc.hosts.iter().all(|h| h.nic_buffer_bytes == Some(5e5)));
}

#[test]
fn selections_name_pods_racks_and_leaves() {
    let extra = "[[traffic]]\nkind = \"cbr\"\nrate_bps = 1e9\nhosts = { pod = 1, rack = 0 }\n\
                 dst = { pod = 3 }\n\
                 [[traffic]]\nkind = \"bernoulli\"\nload = 0.1\nhosts = \"all\"\ndst = \"uniform\"";
    let sc = scenario("kind = \"fat_tree\"\nk = 4", extra).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&sc.traffic[0].hosts[..], ["h1_0_0", "h1_0_1"]);
    let Some(DstSpec::Many(dst)) = &sc.traffic[0].dst else {
        panic!("a list")
    };
    assert_eq!(dst, &["h3_0_0", "h3_0_1", "h3_1_0", "h3_1_1"]);
    assert_eq!(sc.traffic[1].hosts.len(), 16);
    let extra = "[[traffic]]\nkind = \"cbr\"\nrate_bps = 1e9\nhosts = { leaf = 1 }\ndst = \"h0_0\"";
    let sc = scenario(
        "kind = \"leaf_spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 3",
        extra,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&sc.traffic[0].hosts[..], ["h1_0", "h1_1", "h1_2"]);
}

#[test]
fn the_resolved_scenario_is_the_expanded_one_and_reads_back_the_same() {
    let extra =
        "[[traffic]]\nkind = \"bernoulli\"\nload = 0.1\nhosts = { pod = 0 }\ndst = \"uniform\"";
    let sc = scenario(
        "kind = \"clos3\"\npods = 2\nracks_per_pod = 2\nhosts_per_rack = 2\n\
                       fabric_planes = 2\nspines_per_plane = 1",
        extra,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let text = sc.to_toml();
    assert!(
        !text.contains("[topology]") && !text.contains("pod ="),
        "{text}"
    );
    assert!(text.contains("multipath = \"ecmp\""));
    let again = Scenario::from_toml(&text, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.to_toml(), text);
}

#[test]
fn an_explicit_multipath_is_kept() {
    let sc = scenario(
        "kind = \"fat_tree\"\nk = 2",
        "[routing]\nmultipath = \"lowest_port\"",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.routing.multipath, Multipath::LowestPort);
    assert_eq!((sc.hosts.len(), sc.switches.len()), (2, 5));
}

#[test]
fn errors_name_the_field() {
    let cases: &[(&str, &str, &str, &str)] = &[
        ("kind = \"fat_tree\"", "", "topology.k", "required"),
        ("kind = \"fat_tree\"\nk = 5", "", "topology.k", "even"),
        ("kind = \"fat_tree\"\nk = 0", "", "topology.k", "even, at least 2 (got 0)"),
        ("kind = \"fat_tree\"\nk = 1", "", "topology.k", "even, at least 2 (got 1)"),
        ("kind = \"fat_tree\"\nk = 4\nleaves = 2", "", "topology.leaves", "does not apply"),
        ("kind = \"fat_tree\"\nk = 4\noversubscription = 2", "", "topology.oversubscription", "does not apply"),
        ("kind = \"fat_tree\"\nk = 200", "", "topology.k", "more than"),
        ("kind = \"fat_tree\"\nk = 4\nhost_rate_bps = 0", "", "topology.host_rate_bps", "> 0"),
        ("kind = \"fat_tree\"\nk = 4\nhost_link_delay_s = -1", "", "topology.host_link_delay_s", ">= 0"),
        ("kind = \"fat_tree\"\nk = 4\nswitch = { shared_buffer_bytes = -1 }", "", "topology.switch.shared_buffer_bytes", "> 0"),
        ("kind = \"fat_tree\"\nk = 4\ntiers.spine = { cp = false }", "", "topology.tiers.spine", "edge, aggregation, core"),
        ("kind = \"fat_tree\"\nk = 4\nhost = { rx_buffer_bytes = 1e4 }", "", "topology.host.rx_buffer_bytes", "rx_rate_bps"),
        ("kind = \"fat_tree\"\nk = 4\nswitch = { buffer = 1 }", "", "topology.switch.buffer", "unknown field"),
        ("kind = \"mesh\"", "", "topology.kind", "mesh"),
        ("kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\nfabric_rate_bps = 1e10\noversubscription = 2", "", "topology.oversubscription", "not both"),
        ("kind = \"leaf_spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\noversubscription = 0", "", "topology.oversubscription", "> 0"),
        // The rate it derives is out of range: the error says so, not that the ratio was 4.
        ("kind = \"leaf_spine\"\nleaves = 2\nspines = 7\nhosts_per_leaf = 3\noversubscription = 1e9", "", "topology.oversubscription", "1e9 gives fabric_rate_bps = 4 b/s (3e10 b/s of hosts over 7 uplinks / 1e9), which must be in [1000, 1e12] b/s"),
        ("kind = \"leaf_spine\"\nleaves = 2\nspines = 2", "", "topology.hosts_per_leaf", "required"),
        ("kind = \"leaf_spine\"\nleaves = 70000\nspines = 1\nhosts_per_leaf = 1", "", "topology.leaves", "port numbers"),
        ("kind = \"clos3\"\npods = 2\nracks_per_pod = 2\nhosts_per_rack = 2\nfabric_planes = 2", "", "topology.spines_per_plane", "required"),
        ("kind = \"fat_tree\"\nk = 4", "hosts = [{ name = \"x\" }]", "hosts", "either [topology]"),
        (
            "kind = \"fat_tree\"\nk = 4",
            "[[traffic]]\nkind = \"cbr\"\nrate_bps = 1e9\nhosts = { pod = 4 }\ndst = \"h0_0_0\"",
            "traffic[0].hosts.pod",
            "pods 0-3",
        ),
        (
            "kind = \"fat_tree\"\nk = 4",
            "[[traffic]]\nkind = \"cbr\"\nrate_bps = 1e9\nhosts = [\"h0_0_0\"]\ndst = { pod = 1, rack = 2 }",
            "traffic[0].dst.rack",
            "racks per pod 0-1",
        ),
        (
            "kind = \"fat_tree\"\nk = 4",
            "[[traffic]]\nkind = \"cbr\"\nrate_bps = 1e9\nhosts = { leaf = 0 }\ndst = \"h0_0_0\"",
            "traffic[0].hosts.leaf",
            "not leaves",
        ),
        (
            "kind = \"fat_tree\"\nk = 4",
            "[[traffic]]\nkind = \"cbr\"\nrate_bps = 1e9\nhosts = { rack = 0 }\ndst = \"h0_0_0\"",
            "traffic[0].hosts.pod",
            "required",
        ),
        (
            "kind = \"leaf_spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2",
            "[[traffic]]\nkind = \"cbr\"\nrate_bps = 1e9\nhosts = { pod = 0 }\ndst = \"h0_0\"",
            "traffic[0].hosts",
            "leaf = L",
        ),
        (
            "kind = \"leaf_spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2",
            "[[traffic]]\nkind = \"cbr\"\nrate_bps = 1e9\nhosts = { leaf = 2 }\ndst = \"h0_0\"",
            "traffic[0].hosts.leaf",
            "leaves 0-1",
        ),
    ];
    for (topology, extra, path, words) in cases {
        let e = error(topology, extra);
        assert_eq!(e.path(), Some(*path), "{topology} {extra}: {e}");
        assert!(e.to_string().contains(words), "{topology} {extra}: {e}");
    }
}

#[test]
fn a_selection_without_a_topology_is_an_error_but_all_is_not() {
    let base = "name = \"t\"\nduration_s = 1e-3\nhosts = [{ name = \"a\" }, { name = \"b\" }]\n\
                links = [{ ends = [\"a\", \"b\"], rate_bps = 1e9 }]\n[[traffic]]\nkind = \"cbr\"\n\
                rate_bps = 1e6\n";
    let sc = Scenario::from_toml(&format!("{base}hosts = \"all\"\ndst = \"uniform\""), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(&sc.traffic[0].hosts[..], ["a", "b"]);
    let e = Scenario::from_toml(&format!("{base}hosts = {{ pod = 0 }}\ndst = \"a\""), &[])
        .expect_err("no topology");
    assert_eq!(e.path(), Some("traffic[0].hosts"), "{e}");
    assert!(e.to_string().contains("needs a [topology]"), "{e}");
}
