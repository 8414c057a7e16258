//! `[routing]`: how switches choose among equal-cost shortest paths.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Forwarding is static shortest-path (fewest hops, hosts do not forward). Where a switch has
/// several next hops of equal cost, `multipath` chooses how it uses them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RoutingSpec {
    pub(crate) multipath: Multipath,
    /// What an ECMP switch hashes to pick a next hop (ignored by `lowest_port`).
    pub(crate) ecmp_key: EcmpKey,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Multipath {
    /// One path per destination: the equal-cost next hop on the lowest port index.
    #[default]
    LowestPort,
    /// Equal-cost multipath: each switch hashes the key with a per-switch salt (from the
    /// scenario seed) onto its equal-cost next hops, so traffic spreads and a key keeps its path.
    Ecmp,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EcmpKey {
    /// The (source host, destination host) pair: all traffic of a pair takes one path, so
    /// per-pair reaction points and in-order delivery hold.
    #[default]
    Pair,
    /// The flow of a flow workload (the pair for frame-level sources and control frames):
    /// flows of one pair may take different paths.
    Flow,
}
