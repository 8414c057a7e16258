//! `locality = { rack = R, pod = P }` on a traffic entry with `dst = "uniform"`: the traffic
//! matrix of a fabric measured by where its traffic stays. Each flow (each frame of a
//! `bernoulli` source) goes with probability `rack` to another host of the sender's rack, with
//! probability `pod` to a host of the sender's pod outside its rack, and otherwise to a host
//! outside its pod; uniformly within that part. Roy et al. ("Inside the Social Network's
//! (Datacenter) Network", SIGCOMM 2015) report Meta's services by these three fractions, and
//! Parsimon (NSDI 2023) builds its Meta traffic matrices from them.
//!
//! Racks and pods are runs of consecutive hosts in the host list: `hosts_per_rack` hosts make
//! a rack, `racks_per_pod` racks a pod. A `[topology]` fills both in from its layout (fat_tree:
//! an edge switch's k/2 hosts, k/2 edges per pod; leaf_spine: a leaf's hosts, the whole fabric
//! one pod; clos3: racks and pods), so the resolved scenario carries them; a hand-written
//! network gives them and lists its hosts in that order.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::incast::UNIFORM;
use super::topology::Layout;
use super::{DstSpec, TrafficKind, TrafficSpec};
use crate::error::{Check, ConfigError};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct LocalitySpec {
    /// Fraction of the flows (frames) that stay in the sender's rack.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub(crate) rack: f64,
    /// Fraction that leave the rack but stay in the sender's pod.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub(crate) pod: f64,
    /// Hosts per rack (from `[topology]`; required for a hand-written network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub(crate) hosts_per_rack: Option<u32>,
    /// Racks per pod (from `[topology]`; required for a hand-written network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub(crate) racks_per_pod: Option<u32>,
}

/// A checked locality: the fractions and the sizes of a rack and a pod in hosts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Locality {
    pub(crate) rack_fraction: f64,
    pub(crate) pod_fraction: f64,
    pub(crate) rack_hosts: u32,
    pub(crate) pod_hosts: u32,
}

impl LocalitySpec {
    /// Fills in the rack and pod sizes a generated topology has; sizes the user gave are kept
    /// (another grouping of the same host order), and `checked` only asks for whole pods.
    pub(super) fn fill_from(&mut self, layout: &Layout) {
        self.hosts_per_rack.get_or_insert(layout.hosts_per_rack);
        self.racks_per_pod.get_or_insert(layout.racks_per_pod);
    }

    /// The locality of an entry at `path` of a network of `n_hosts`; errors name the field.
    pub(crate) fn checked(&self, path: &str, n_hosts: u32) -> Result<Locality, ConfigError> {
        let c = Check { path };
        for (field, v) in [("rack", self.rack), ("pod", self.pod)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(c.fail(field, format!("a fraction in [0, 1] (got {v})")));
            }
        }
        if self.rack + self.pod > 1.0 + 1e-12 {
            return Err(c.fail(
                "pod",
                format!(
                    "rack + pod is at most 1 (got {} + {}); the rest leaves the pod",
                    self.rack, self.pod
                ),
            ));
        }
        let need = "required without a [topology] (hosts are grouped in list order)";
        let rack_hosts = self
            .hosts_per_rack
            .ok_or_else(|| c.fail("hosts_per_rack", need))?;
        let racks = self
            .racks_per_pod
            .ok_or_else(|| c.fail("racks_per_pod", need))?;
        let pod_hosts = rack_hosts.checked_mul(racks).filter(|&p| p > 0);
        let Some(pod_hosts) = pod_hosts.filter(|&p| n_hosts.is_multiple_of(p)) else {
            return Err(c.fail(
                "hosts_per_rack",
                format!(
                    "the {n_hosts} hosts are not whole pods of {racks} racks of {rack_hosts} \
                     hosts"
                ),
            ));
        };
        let remote = 1.0 - self.rack - self.pod;
        let empty = [
            (
                self.rack > 0.0 && rack_hosts < 2,
                "rack",
                "a rack has no other host",
            ),
            (
                self.pod > 0.0 && racks < 2,
                "pod",
                "a pod has no other rack",
            ),
            (
                remote > 1e-12 && n_hosts == pod_hosts,
                "pod",
                "there is no other pod: the rest (1 - rack - pod) has nowhere to go",
            ),
        ];
        if let Some((_, field, why)) = empty.into_iter().find(|(bad, ..)| *bad) {
            return Err(c.fail(field, why));
        }
        Ok(Locality {
            rack_fraction: self.rack,
            pod_fraction: self.pod,
            rack_hosts,
            pod_hosts,
        })
    }
}

/// An entry's `locality`: only with `dst = "uniform"` on `flows` or `bernoulli`, and checked.
pub(crate) fn check_entry(t: &TrafficSpec, path: &str, n_hosts: u32) -> Result<(), ConfigError> {
    let Some(l) = &t.locality else {
        return Ok(());
    };
    let c = Check { path };
    if !matches!(t.kind, TrafficKind::Flows | TrafficKind::Bernoulli) {
        return Err(c.fail("locality", "applies to kind = \"flows\" or \"bernoulli\""));
    }
    if !matches!(&t.dst, Some(DstSpec::One(d)) if d == UNIFORM) {
        return Err(c.fail(
            "locality",
            "needs dst = \"uniform\" (it places the destinations)",
        ));
    }
    l.checked(&format!("{path}.locality"), n_hosts).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(rack: f64, pod: f64, per_rack: u32, racks: u32) -> LocalitySpec {
        LocalitySpec {
            rack,
            pod,
            hosts_per_rack: Some(per_rack),
            racks_per_pod: Some(racks),
        }
    }

    #[test]
    fn a_checked_locality_has_the_part_sizes_in_hosts() {
        let l = spec(0.2, 0.5, 16, 48)
            .checked("traffic[0].locality", 6144)
            .unwrap();
        assert_eq!((l.rack_hosts, l.pod_hosts), (16, 768));
        assert_eq!((l.rack_fraction, l.pod_fraction), (0.2, 0.5));
    }

    #[test]
    fn bad_localities_name_the_field_and_the_reason() {
        let err = |s: LocalitySpec, n| s.checked("traffic[0].locality", n).unwrap_err().to_string();
        assert!(err(spec(1.2, 0.0, 4, 2), 16).contains("traffic[0].locality.rack"));
        assert!(err(spec(0.6, 0.6, 4, 2), 16).contains("at most 1"));
        assert!(err(spec(0.1, 0.0, 4, 2), 12).contains("not whole pods"));
        assert!(err(spec(0.1, 0.0, 1, 2), 16).contains("a rack has no other host"));
        assert!(err(spec(0.0, 0.5, 4, 1), 16).contains("no other rack"));
        // One pod (a leaf-spine): everything must stay in it.
        assert!(err(spec(0.2, 0.5, 4, 4), 16).contains("no other pod"));
        assert!(spec(0.2, 0.8, 4, 4).checked("t", 16).is_ok());
        let missing = LocalitySpec {
            hosts_per_rack: None,
            ..spec(0.1, 0.1, 4, 2)
        };
        assert!(err(missing, 16).contains("hosts_per_rack: required without a [topology]"));
    }
}
