//! `[topology]`: a data-center fabric from a few numbers, expanded into the hand-written form
//! (hosts, switches, links) when the scenario is read, so the resolved scenario (what
//! `cnsim show --resolved` prints and a run saves) is the expanded one and runs again as it is.
//!
//! - `fat_tree`: the k-ary fat tree of Al-Fares, Loukissas and Vahdat (SIGCOMM 2008): k pods of
//!   k/2 edge and k/2 aggregation switches, each edge switch with k/2 hosts and a link to every
//!   aggregation switch of its pod, aggregation switch j of every pod linked to core switches
//!   j k/2 .. (j+1) k/2 - 1 of the (k/2)^2; k^3/4 hosts, (k/2)^2 equal-cost paths between pods.
//! - `leaf_spine`: leaves with their hosts, every leaf linked to every spine.
//! - `clos3`: a three-tier Clos of pods (the fabric of Facebook's data centers, as Parsimon
//!   evaluates on it): each pod has racks (one rack switch, its hosts) and `fabric_planes`
//!   fabric switches, every rack switch linked to every fabric switch of its pod; fabric switch
//!   f of every pod is linked to each of the `spines_per_plane` spine switches of plane f.
//!
//! Hosts are numbered pod by pod, rack by rack (a leaf is a rack), so a pod or a rack is a run
//! of hosts; switches follow tier by tier from the bottom; links list the host links first, then
//! tier by tier from the bottom, so a switch's ports (numbered in the order of its links) are its
//! hosts or downlinks first, then its uplinks.

use std::collections::BTreeMap;
use std::ops::Range;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod fabrics;

use super::selection::HostPart;
use super::{HostSpec, LinkSpec, Scenario, SwitchPause, SwitchSpec, Watermarks};
use crate::error::{num, Check, ConfigError};
use crate::scenario::MAX_PORTS_PER_NODE;

/// Most hosts a generated topology may have (a fat tree of k = 158 has 986,078).
pub(crate) const MAX_GENERATED_HOSTS: u64 = 1_000_000;

const DEFAULT_HOST_RATE_BPS: f64 = 10e9;
const DEFAULT_LINK_DELAY_S: f64 = 1e-6;

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TopologyKind {
    /// k-ary fat tree (Al-Fares et al.): `k`.
    FatTree,
    /// Two tiers: `leaves`, `spines`, `hosts_per_leaf`.
    LeafSpine,
    /// Three tiers of pods: `pods`, `racks_per_pod`, `hosts_per_rack`, `fabric_planes`,
    /// `spines_per_plane`.
    Clos3,
}

/// `[topology]`: which fabric, its size, its rates and delays, and the settings of its hosts
/// and switches (all switches, or per tier).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct TopologySpec {
    pub kind: TopologyKind,
    /// fat_tree: switch radix, even (k pods, k^3/4 hosts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// leaf_spine: leaf switches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    /// leaf_spine: spine switches (every leaf links to each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    /// leaf_spine: hosts under each leaf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_per_leaf: Option<u32>,
    /// clos3: pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods: Option<u32>,
    /// clos3: racks (rack switches) per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub racks_per_pod: Option<u32>,
    /// clos3: hosts per rack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_per_rack: Option<u32>,
    /// clos3: fabric switches per pod, one per spine plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_planes: Option<u32>,
    /// clos3: spine switches in each plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spines_per_plane: Option<u32>,
    /// Rate of every host link.
    #[serde(default = "default_host_rate_bps")]
    pub host_rate_bps: f64,
    /// Rate of the first tier of switch links (fat_tree: every switch link, default the host
    /// rate; leaf_spine: leaf-spine; clos3: rack-fabric; default: as `oversubscription` gives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_rate_bps: Option<f64>,
    /// clos3: rate of the fabric-spine links (default: as `spine_oversubscription` gives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_rate_bps: Option<f64>,
    /// leaf_spine (a leaf) and clos3 (a rack switch): host capacity / uplink capacity; 1 =
    /// non-blocking (the default), 2 = 2:1. Sets `fabric_rate_bps`; give one of the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
    /// clos3: a fabric switch's rack-facing capacity / spine-facing capacity (default 1).
    /// Sets `spine_rate_bps`; give one of the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spine_oversubscription: Option<f64>,
    /// One-way delay of every host link.
    #[serde(default = "default_link_delay_s")]
    pub host_link_delay_s: f64,
    /// One-way delay of every switch-to-switch link.
    #[serde(default = "default_link_delay_s")]
    pub fabric_link_delay_s: f64,
    /// `loss_rate` of every generated link (host and fabric), each direction: random frame
    /// loss for studies under loss (docs/transport.md). 0 = lossless.
    #[serde(default, skip_serializing_if = "is_zero_rate")]
    pub link_loss_rate: f64,
    /// Settings of every host.
    #[serde(default, skip_serializing_if = "HostTemplate::is_empty")]
    pub host: HostTemplate,
    /// Settings of every switch (a tier's table overrides them field by field).
    #[serde(default, skip_serializing_if = "SwitchTemplate::is_empty")]
    pub switch: SwitchTemplate,
    /// Settings per tier (fat_tree: `edge`, `aggregation`, `core`; leaf_spine: `leaf`,
    /// `spine`; clos3: `rack`, `fabric`, `spine`), over `switch`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tiers: BTreeMap<String, SwitchTemplate>,
}

fn default_host_rate_bps() -> f64 {
    DEFAULT_HOST_RATE_BPS
}

fn is_zero_rate(v: &f64) -> bool {
    *v == 0.0
}

fn default_link_delay_s() -> f64 {
    DEFAULT_LINK_DELAY_S
}

/// The fields of `[[switches]]` but the name; unset ones take the switch defaults.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct SwitchTemplate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_buffer_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_buffer_alpha: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_buffer_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_buffer_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<SwitchPause>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cp: Option<bool>,
}

/// The fields of `[[hosts]]` that make sense for every host (not the name or a schedule).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct HostTemplate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_buffer_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_rate_bps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_buffer_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_pause: Option<Watermarks>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_delay_s: Option<f64>,
}

impl SwitchTemplate {
    fn is_empty(&self) -> bool {
        *self == SwitchTemplate::default()
    }

    /// This template's fields where set, else `under`'s.
    fn over(&self, under: &SwitchTemplate) -> SwitchTemplate {
        SwitchTemplate {
            latency_s: self.latency_s.or(under.latency_s),
            shared_buffer_bytes: self.shared_buffer_bytes.or(under.shared_buffer_bytes),
            shared_buffer_alpha: self.shared_buffer_alpha.or(under.shared_buffer_alpha),
            output_buffer_bytes: self.output_buffer_bytes.or(under.output_buffer_bytes),
            input_buffer_bytes: self.input_buffer_bytes.or(under.input_buffer_bytes),
            pause: self.pause.or(under.pause),
            cp: self.cp.or(under.cp),
        }
    }

    fn switch(&self, name: String) -> SwitchSpec {
        SwitchSpec {
            name,
            latency_s: self.latency_s.unwrap_or(0.0),
            shared_buffer_bytes: self.shared_buffer_bytes,
            shared_buffer_alpha: self.shared_buffer_alpha,
            output_buffer_bytes: self.output_buffer_bytes,
            input_buffer_bytes: self.input_buffer_bytes,
            pause: self.pause,
            cp: self.cp.unwrap_or(true),
        }
    }
}

impl HostTemplate {
    fn is_empty(&self) -> bool {
        *self == HostTemplate::default()
    }

    fn host(&self, name: String) -> HostSpec {
        HostSpec {
            name,
            nic_buffer_bytes: self.nic_buffer_bytes,
            rx_rate_bps: self.rx_rate_bps,
            rx_schedule: Vec::new(),
            rx_buffer_bytes: self.rx_buffer_bytes,
            rx_pause: self.rx_pause.clone(),
            response_delay_s: self.response_delay_s.unwrap_or(0.0),
        }
    }
}

/// Where the generated hosts are: `pods` x `racks_per_pod` racks of `hosts_per_rack` (a
/// leaf_spine is one pod whose racks are the leaves), numbered in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) kind: TopologyKind,
    pub(crate) pods: u32,
    pub(crate) racks_per_pod: u32,
    pub(crate) hosts_per_rack: u32,
}

/// A generated network in the hand-written form.
pub(crate) struct Generated {
    pub(crate) hosts: Vec<HostSpec>,
    pub(crate) switches: Vec<SwitchSpec>,
    pub(crate) links: Vec<LinkSpec>,
    pub(crate) layout: Layout,
}

impl TopologyKind {
    fn name(self) -> &'static str {
        match self {
            TopologyKind::FatTree => "fat_tree",
            TopologyKind::LeafSpine => "leaf_spine",
            TopologyKind::Clos3 => "clos3",
        }
    }

    /// The tiers, bottom up.
    fn tiers(self) -> &'static [&'static str] {
        match self {
            TopologyKind::FatTree => &["edge", "aggregation", "core"],
            TopologyKind::LeafSpine => &["leaf", "spine"],
            TopologyKind::Clos3 => &["rack", "fabric", "spine"],
        }
    }
}

const PATH: &str = "topology";

impl TopologySpec {
    /// Checks the fields and expands the topology.
    pub(crate) fn generate(&self) -> Result<Generated, ConfigError> {
        self.check_fields()?;
        let c = Check { path: PATH };
        c.rate("host_rate_bps", self.host_rate_bps)?;
        c.time_non_negative("host_link_delay_s", self.host_link_delay_s)?;
        c.time_non_negative("fabric_link_delay_s", self.fabric_link_delay_s)?;
        c.in_closed("link_loss_rate", self.link_loss_rate, 0.0, 1.0)?;
        self.host
            .host("h".into())
            .validate(&format!("{PATH}.host"))?;
        self.switch
            .switch("s".into())
            .validate(&format!("{PATH}.switch"))?;
        for (tier, t) in &self.tiers {
            if !self.kind.tiers().contains(&tier.as_str()) {
                return Err(c.fail(
                    &format!("tiers.{tier}"),
                    format!(
                        "a {} has the tiers {}",
                        self.kind.name(),
                        self.kind.tiers().join(", ")
                    ),
                ));
            }
            t.switch("s".into())
                .validate(&format!("{PATH}.tiers.{tier}"))?;
        }
        match self.kind {
            TopologyKind::FatTree => fabrics::fat_tree(self),
            TopologyKind::LeafSpine => fabrics::leaf_spine(self),
            TopologyKind::Clos3 => fabrics::clos3(self),
        }
    }

    /// Only the fields of the kind, and all of its counts.
    fn check_fields(&self) -> Result<(), ConfigError> {
        let c = Check { path: PATH };
        let counts = [
            ("k", self.k),
            ("leaves", self.leaves),
            ("spines", self.spines),
            ("hosts_per_leaf", self.hosts_per_leaf),
            ("pods", self.pods),
            ("racks_per_pod", self.racks_per_pod),
            ("hosts_per_rack", self.hosts_per_rack),
            ("fabric_planes", self.fabric_planes),
            ("spines_per_plane", self.spines_per_plane),
        ];
        let rates = [
            ("oversubscription", self.oversubscription),
            ("spine_rate_bps", self.spine_rate_bps),
            ("spine_oversubscription", self.spine_oversubscription),
        ];
        let (needed, allowed): (&[&str], &[&str]) = match self.kind {
            TopologyKind::FatTree => (&["k"], &["fabric_rate_bps"]),
            TopologyKind::LeafSpine => (
                &["leaves", "spines", "hosts_per_leaf"],
                &["fabric_rate_bps", "oversubscription"],
            ),
            TopologyKind::Clos3 => (
                &[
                    "pods",
                    "racks_per_pod",
                    "hosts_per_rack",
                    "fabric_planes",
                    "spines_per_plane",
                ],
                &[
                    "fabric_rate_bps",
                    "oversubscription",
                    "spine_rate_bps",
                    "spine_oversubscription",
                ],
            ),
        };
        let kind = self.kind.name();
        for (field, v) in counts {
            match (v, needed.contains(&field)) {
                (Some(_), false) => {
                    return Err(c.fail(field, format!("does not apply to kind = \"{kind}\"")))
                }
                (None, true) => {
                    return Err(c.fail(field, format!("required for kind = \"{kind}\"")))
                }
                // A k-ary fat tree has k/2 of everything: k is even, so at least 2.
                (Some(0), true) if field == "k" => {
                    return Err(c.fail(field, "must be even, at least 2 (got 0)"))
                }
                (Some(0), true) => return Err(c.fail(field, "must be at least 1")),
                _ => {}
            }
        }
        for (field, v) in rates {
            if v.is_some() && !allowed.contains(&field) {
                return Err(c.fail(field, format!("does not apply to kind = \"{kind}\"")));
            }
        }
        for (rate, ratio) in [
            ("fabric_rate_bps", "oversubscription"),
            ("spine_rate_bps", "spine_oversubscription"),
        ] {
            let given = |f: &str| match f {
                "fabric_rate_bps" => self.fabric_rate_bps.is_some(),
                "spine_rate_bps" => self.spine_rate_bps.is_some(),
                "oversubscription" => self.oversubscription.is_some(),
                _ => self.spine_oversubscription.is_some(),
            };
            if given(rate) && given(ratio) {
                return Err(c.fail(ratio, format!("give {rate} or {ratio}, not both")));
            }
        }
        Ok(())
    }

    /// The hosts the counts give, refused above `MAX_GENERATED_HOSTS`.
    fn check_hosts(&self, field: &str, hosts: u64) -> Result<(), ConfigError> {
        if hosts > MAX_GENERATED_HOSTS {
            return Err(Check { path: PATH }.fail(
                field,
                format!("gives {hosts} hosts, more than the {MAX_GENERATED_HOSTS} a generated topology may have"),
            ));
        }
        Ok(())
    }

    /// A switch of `ports` links must number them in its port index.
    fn check_ports(&self, field: &str, tier: &str, ports: u64) -> Result<(), ConfigError> {
        if ports > MAX_PORTS_PER_NODE as u64 {
            return Err(Check { path: PATH }.fail(
                field,
                format!("gives a {tier} switch {ports} links; at most {MAX_PORTS_PER_NODE} fit its port numbers"),
            ));
        }
        Ok(())
    }

    /// The tier's switch settings: its table over `switch`.
    fn tier(&self, name: &str) -> SwitchTemplate {
        match self.tiers.get(name) {
            Some(t) => t.over(&self.switch),
            None => self.switch.clone(),
        }
    }

    /// `given`, or `hosts_bps / (uplinks x ratio)` rounded to a whole b/s (`ratio` given or 1),
    /// checked as a link rate under the field that set it.
    fn uplink_rate(
        &self,
        given: Option<f64>,
        (rate_field, ratio_field): (&str, &str),
        ratio: Option<f64>,
        hosts_bps: f64,
        uplinks: u32,
    ) -> Result<f64, ConfigError> {
        let c = Check { path: PATH };
        if let Some(r) = given {
            c.rate(rate_field, r)?;
            return Ok(r);
        }
        if let Some(x) = ratio {
            c.positive(ratio_field, x)?;
        }
        let rate = (hosts_bps / (f64::from(uplinks) * ratio.unwrap_or(1.0))).round();
        // The rate is derived: the error says from what, so that the figure it quotes is not
        // taken for the ratio the user gave.
        c.rate(rate_field, rate).map_err(|e| {
            let ConfigError::Field { reason, .. } = e else {
                return e;
            };
            let from = format!("{} b/s of hosts over {uplinks} uplinks", num(hosts_bps));
            let derived = format!("{rate_field} = {} b/s", num(rate));
            match ratio {
                Some(x) => c.fail(
                    ratio_field,
                    format!(
                        "{} gives {derived} ({from} / {}), which {reason}",
                        num(x),
                        num(x)
                    ),
                ),
                None => c.fail(
                    rate_field,
                    format!("not given, so {derived} ({from}), which {reason}"),
                ),
            }
        })?;
        Ok(rate)
    }
}

impl Layout {
    /// The host indices a selection stands for; errors name `path`'s fields.
    pub(crate) fn range(&self, part: &HostPart, path: &str) -> Result<Range<usize>, ConfigError> {
        let c = Check { path };
        let kind = self.kind.name();
        let (pod, rack) = match (self.kind, part.pod, part.rack, part.leaf) {
            (TopologyKind::LeafSpine, None, None, Some(l)) => (0, Some(l)),
            (TopologyKind::LeafSpine, _, _, _) => {
                return Err(ConfigError::field(
                    path,
                    format!("a {kind} is selected by leaf: {{ leaf = L }}"),
                ))
            }
            (_, _, _, Some(_)) => {
                return Err(c.fail("leaf", format!("a {kind} has pods and racks, not leaves")))
            }
            (_, Some(p), r, None) => (p, r),
            (_, None, _, None) => {
                return Err(c.fail("pod", "required: { pod = P } or { pod = P, rack = R }"))
            }
        };
        if pod >= self.pods {
            return Err(c.fail(
                "pod",
                format!("no pod {pod} (the {kind} has pods 0-{})", self.pods - 1),
            ));
        }
        let rack_hosts = self.hosts_per_rack as usize;
        let pod_hosts = self.racks_per_pod as usize * rack_hosts;
        let first = pod as usize * pod_hosts;
        match rack {
            None => Ok(first..first + pod_hosts),
            Some(r) if r < self.racks_per_pod => {
                let start = first + r as usize * rack_hosts;
                Ok(start..start + rack_hosts)
            }
            Some(r) => {
                let (field, what) = match self.kind {
                    TopologyKind::LeafSpine => ("leaf", "leaves"),
                    _ => ("rack", "racks per pod"),
                };
                Err(c.fail(
                    field,
                    format!(
                        "no {field} {r} (the {kind} has {what} 0-{})",
                        self.racks_per_pod - 1
                    ),
                ))
            }
        }
    }
}

/// With `[topology]` and no `routing.multipath`, multipath is ECMP: a generated fabric's equal
/// paths are what it is for. Applied to the TOML before it is read, so the resolved scenario
/// says `multipath = "ecmp"`.
pub(crate) fn default_multipath(root: &mut toml::Table) {
    if !root.contains_key("topology") {
        return;
    }
    let routing = root
        .entry("routing")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(r) = routing {
        r.entry("multipath")
            .or_insert_with(|| toml::Value::String("ecmp".into()));
    }
}

impl Scenario {
    /// Replaces `[topology]` by the hosts, switches and links it stands for, and the traffic
    /// entries' selections (`"all"`, a pod, rack or leaf) by the names of their hosts.
    pub(crate) fn expand_topology(&mut self) -> Result<(), ConfigError> {
        let layout = match self.topology.take() {
            None => None,
            Some(t) => {
                for (field, given) in [
                    ("hosts", !self.hosts.is_empty()),
                    ("switches", !self.switches.is_empty()),
                    ("links", !self.links.is_empty()),
                ] {
                    if given {
                        return Err(ConfigError::field(
                            field,
                            "give either [topology] or the hosts, switches and links by hand",
                        ));
                    }
                }
                let g = t.generate()?;
                self.hosts = g.hosts;
                self.switches = g.switches;
                self.links = g.links;
                Some(g.layout)
            }
        };
        super::selection::expand_selections(self, layout.as_ref())
    }
}

#[cfg(test)]
mod tests;
