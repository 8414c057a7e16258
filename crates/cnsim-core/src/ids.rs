//! The identities every layer shares: which host, which flow. Below every module, so that the
//! traffic generators, the flow table and the elements name hosts and flows without importing
//! each other.

/// Index of a host (end node) in the scenario's `hosts` list.
pub(crate) type HostId = u32;

/// Index of a flow in the run's flow table (flow workloads).
pub(crate) type FlowId = u32;

/// The frame belongs to no flow record (frame-level sources: bernoulli, cbr, saturate).
pub(crate) const NO_FLOW: FlowId = u32::MAX;
