//! The three fabrics, each as lists in the hand-written form: hosts rack by rack, switches
//! tier by tier from the bottom, host links then each tier's uplinks (`topology.rs` says why).

use super::{Generated, Layout, TopologySpec, PATH};
use crate::error::{Check, ConfigError};
use crate::scenario::{HostSpec, LinkSpec, SwitchSpec};

/// Builds the lists, tier by tier.
struct Builder<'a> {
    spec: &'a TopologySpec,
    hosts: Vec<HostSpec>,
    switches: Vec<SwitchSpec>,
    links: Vec<LinkSpec>,
}

impl<'a> Builder<'a> {
    fn new(spec: &'a TopologySpec, hosts: usize, switches: usize, links: usize) -> Self {
        Builder {
            spec,
            hosts: Vec::with_capacity(hosts),
            switches: Vec::with_capacity(switches),
            links: Vec::with_capacity(links),
        }
    }

    fn host(&mut self, name: String, switch: &str) {
        self.links.push(LinkSpec {
            ends: [name.clone(), switch.to_string()],
            rate_bps: self.spec.host_rate_bps,
            delay_s: self.spec.host_link_delay_s,
            delay_line_s: 0.0,
            schedule: Vec::new(),
            loss_rate: self.spec.link_loss_rate,
        });
        self.hosts.push(self.spec.host.host(name));
    }

    fn switches(&mut self, tier: &str, names: impl Iterator<Item = String>) {
        let template = self.spec.tier(tier);
        self.switches.extend(names.map(|n| template.switch(n)));
    }

    fn link(&mut self, lower: String, upper: String, rate_bps: f64) {
        self.links.push(LinkSpec {
            ends: [lower, upper],
            rate_bps,
            delay_s: self.spec.fabric_link_delay_s,
            delay_line_s: 0.0,
            schedule: Vec::new(),
            loss_rate: self.spec.link_loss_rate,
        });
    }

    fn done(self, layout: Layout) -> Generated {
        Generated {
            hosts: self.hosts,
            switches: self.switches,
            links: self.links,
            layout,
        }
    }
}

pub(super) fn fat_tree(spec: &TopologySpec) -> Result<Generated, ConfigError> {
    let k = spec.k.expect("checked");
    if !k.is_multiple_of(2) {
        return Err(Check { path: PATH }.fail("k", format!("must be even, at least 2 (got {k})")));
    }
    let half = k / 2;
    spec.check_hosts("k", u64::from(k).pow(3) / 4)?;
    spec.check_ports("k", "fat_tree", u64::from(k))?;
    let rate = spec.fabric_rate_bps.unwrap_or(spec.host_rate_bps);
    Check { path: PATH }.rate("fabric_rate_bps", rate)?;
    let hosts = (k * half * half) as usize;
    let mut b = Builder::new(spec, hosts, (k * k + half * half) as usize, 3 * hosts);
    for p in 0..k {
        for e in 0..half {
            for i in 0..half {
                b.host(format!("h{p}_{e}_{i}"), &format!("edge{p}_{e}"));
            }
        }
    }
    let pods = || (0..k).flat_map(move |p| (0..half).map(move |x| (p, x)));
    b.switches("edge", pods().map(|(p, e)| format!("edge{p}_{e}")));
    b.switches("aggregation", pods().map(|(p, a)| format!("agg{p}_{a}")));
    b.switches("core", (0..half * half).map(|c| format!("core{c}")));
    for (p, e) in pods() {
        for a in 0..half {
            b.link(format!("edge{p}_{e}"), format!("agg{p}_{a}"), rate);
        }
    }
    for (p, a) in pods() {
        for m in 0..half {
            b.link(format!("agg{p}_{a}"), format!("core{}", a * half + m), rate);
        }
    }
    Ok(b.done(Layout {
        kind: spec.kind,
        pods: k,
        racks_per_pod: half,
        hosts_per_rack: half,
    }))
}

pub(super) fn leaf_spine(spec: &TopologySpec) -> Result<Generated, ConfigError> {
    let (leaves, spines, per_leaf) = (
        spec.leaves.expect("checked"),
        spec.spines.expect("checked"),
        spec.hosts_per_leaf.expect("checked"),
    );
    spec.check_hosts("leaves", u64::from(leaves) * u64::from(per_leaf))?;
    spec.check_ports(
        "hosts_per_leaf",
        "leaf",
        u64::from(per_leaf) + u64::from(spines),
    )?;
    spec.check_ports("leaves", "spine", u64::from(leaves))?;
    let rate = spec.uplink_rate(
        spec.fabric_rate_bps,
        ("fabric_rate_bps", "oversubscription"),
        spec.oversubscription,
        f64::from(per_leaf) * spec.host_rate_bps,
        spines,
    )?;
    let hosts = (leaves * per_leaf) as usize;
    let mut b = Builder::new(
        spec,
        hosts,
        (leaves + spines) as usize,
        hosts + (leaves * spines) as usize,
    );
    for l in 0..leaves {
        for i in 0..per_leaf {
            b.host(format!("h{l}_{i}"), &format!("leaf{l}"));
        }
    }
    b.switches("leaf", (0..leaves).map(|l| format!("leaf{l}")));
    b.switches("spine", (0..spines).map(|s| format!("spine{s}")));
    for l in 0..leaves {
        for s in 0..spines {
            b.link(format!("leaf{l}"), format!("spine{s}"), rate);
        }
    }
    Ok(b.done(Layout {
        kind: spec.kind,
        pods: 1,
        racks_per_pod: leaves,
        hosts_per_rack: per_leaf,
    }))
}

pub(super) fn clos3(spec: &TopologySpec) -> Result<Generated, ConfigError> {
    let (pods, racks, per_rack, planes, per_plane) = (
        spec.pods.expect("checked"),
        spec.racks_per_pod.expect("checked"),
        spec.hosts_per_rack.expect("checked"),
        spec.fabric_planes.expect("checked"),
        spec.spines_per_plane.expect("checked"),
    );
    let n_hosts = u64::from(pods) * u64::from(racks) * u64::from(per_rack);
    spec.check_hosts("pods", n_hosts)?;
    spec.check_ports(
        "hosts_per_rack",
        "rack",
        u64::from(per_rack) + u64::from(planes),
    )?;
    spec.check_ports(
        "racks_per_pod",
        "fabric",
        u64::from(racks) + u64::from(per_plane),
    )?;
    spec.check_ports("pods", "spine", u64::from(pods))?;
    let rack_up = spec.uplink_rate(
        spec.fabric_rate_bps,
        ("fabric_rate_bps", "oversubscription"),
        spec.oversubscription,
        f64::from(per_rack) * spec.host_rate_bps,
        planes,
    )?;
    let fabric_up = spec.uplink_rate(
        spec.spine_rate_bps,
        ("spine_rate_bps", "spine_oversubscription"),
        spec.spine_oversubscription,
        f64::from(racks) * rack_up,
        per_plane,
    )?;
    let mut b = Builder::new(
        spec,
        n_hosts as usize,
        (pods * racks + pods * planes + planes * per_plane) as usize,
        n_hosts as usize + (pods * racks * planes + pods * planes * per_plane) as usize,
    );
    for p in 0..pods {
        for r in 0..racks {
            for i in 0..per_rack {
                b.host(format!("h{p}_{r}_{i}"), &format!("rsw{p}_{r}"));
            }
        }
    }
    let grid =
        |outer: u32, inner: u32| (0..outer).flat_map(move |a| (0..inner).map(move |b| (a, b)));
    b.switches(
        "rack",
        grid(pods, racks).map(|(p, r)| format!("rsw{p}_{r}")),
    );
    b.switches(
        "fabric",
        grid(pods, planes).map(|(p, f)| format!("fsw{p}_{f}")),
    );
    b.switches(
        "spine",
        grid(planes, per_plane).map(|(f, j)| format!("ssw{f}_{j}")),
    );
    for (p, r) in grid(pods, racks) {
        for f in 0..planes {
            b.link(format!("rsw{p}_{r}"), format!("fsw{p}_{f}"), rack_up);
        }
    }
    for (p, f) in grid(pods, planes) {
        for j in 0..per_plane {
            b.link(format!("fsw{p}_{f}"), format!("ssw{f}_{j}"), fabric_up);
        }
    }
    Ok(b.done(Layout {
        kind: spec.kind,
        pods,
        racks_per_pod: racks,
        hosts_per_rack: per_rack,
    }))
}
