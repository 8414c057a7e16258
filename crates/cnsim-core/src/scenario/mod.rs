//! The scenario: one serde model, the only definition of cnsim's input format.
//!
//! A scenario is TOML. Unknown keys are errors (`deny_unknown_fields`), every error names the
//! path of the field (`traffic[2].load: must be in (0, 1] (got 1.5)`), and the resolved scenario
//! (defaults filled in) is written next to every result so a run can always be repeated.

mod estimate;
pub mod flows;
mod overrides;
pub mod pfc;
pub mod routing;
pub mod selection;
pub mod topology;
mod validate;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cc::bcn::BcnParams;
use crate::cc::dcqcn::{DcqcnParams, ParameterSet};
use crate::cc::e2cm::E2cmParams;
use crate::cc::path_probe::PathProbeParams;
use crate::cc::qcn::QcnParams;
use crate::error::ConfigError;

pub use estimate::Estimate;
pub use flows::{Cdf, FlowSpec, SizeSpec};
pub use overrides::apply_override;
pub use pfc::{PfcSpec, PfcThreshold, Scheduler, N_CLASSES};
pub use routing::{EcmpKey, Multipath, RoutingSpec};
pub use selection::{HostPart, HostSet};
pub use topology::TopologySpec;
pub use validate::{
    DEFAULT_MAX_EVENTS, DEFAULT_MAX_MEMORY_BYTES, DEFAULT_MAX_PROBE_SAMPLES, MAX_FRAME_BYTES,
    MAX_PORTS_PER_NODE, MIN_LOAD,
};

/// Pause duration sent with XOFF by default: the maximum, 65535 quanta (3.36 ms at 10 Gb/s).
pub const DEFAULT_XOFF_QUANTA: u16 = u16::MAX;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time to run.
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub duration_s: f64,
    /// A generated fabric (fat tree, leaf-spine, three-tier Clos), expanded into `hosts`,
    /// `switches` and `links` when the scenario is read; a resolved scenario has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologySpec>,
    /// Required, unless `topology` generates them.
    #[serde(default)]
    pub hosts: Vec<HostSpec>,
    #[serde(default)]
    pub switches: Vec<SwitchSpec>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    #[serde(default)]
    pub traffic: Vec<TrafficSpec>,
    #[serde(default)]
    pub congestion: CongestionSpec,
    #[serde(default)]
    pub report: ReportSpec,
    /// How switches use equal-cost paths.
    #[serde(default)]
    pub routing: RoutingSpec,
    /// Priority-based flow control (IEEE 802.1Qbb) and the per-class output scheduler; None =
    /// no PFC, strict priority between classes ([pfc.md](../docs/pfc.md)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcSpec>,
    /// Model options that apply everywhere.
    #[serde(default)]
    pub model: ModelSpec,
    /// Caps on the estimated cost of a run, checked before it starts (raise them to run a
    /// scenario that needs more).
    #[serde(default, skip_serializing_if = "LimitsSpec::is_default")]
    pub limits: LimitsSpec,
}

/// Fail-fast resource caps: validation estimates a run's events, probe samples and memory and
/// refuses a scenario above a cap with an error naming the cap, instead of running for hours
/// or until the machine runs out of memory. None = the default cap.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Simulated events (default 1e10, some 20 minutes at 10 M events/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_events: Option<f64>,
    /// Probe samples (rows of the time series; default 1e8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_probe_samples: Option<f64>,
    /// Memory of the network state and the time series (default 8e9 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory_bytes: Option<f64>,
}

impl LimitsSpec {
    fn is_default(&self) -> bool {
        *self == LimitsSpec::default()
    }
}

fn default_seed() -> u64 {
    1
}

/// Control frames (PAUSE, CNM, BCN) always overtake data in every output queue (strict
/// priority), and are never paused or dropped.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ModelSpec {
    /// Bytes of preamble + inter-frame gap added to each frame on the wire (0 in the seeds).
    pub wire_overhead_bytes: u32,
    /// Size of PAUSE frames (CNM and BCN sizes are `congestion.qcn.cnm_bytes` /
    /// `congestion.bcn.bcn_bytes`).
    pub control_frame_bytes: u32,
    /// How a host serves the flows waiting for one destination (one VOQ): first come, first
    /// served, or a frame from each in turn.
    pub flow_service: FlowService,
}

impl Default for ModelSpec {
    fn default() -> Self {
        ModelSpec {
            wire_overhead_bytes: 0,
            control_frame_bytes: 64,
            flow_service: FlowService::Fifo,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowService {
    /// A flow sends all its bytes before the next flow to the same destination starts.
    #[default]
    Fifo,
    /// Flows to the same destination take turns, one frame each.
    RoundRobin,
}

/// A point where a service rate changes (a link direction or a host's receiver).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    pub at_s: f64,
    pub rate_bps: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub name: String,
    /// Transmit buffer shared by all of the host's per-destination queues (VOQs) and rate
    /// limiter queues; a frame that does not fit is dropped at the source. None = infinite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_buffer_bytes: Option<f64>,
    /// Receive (service) rate of the sink. None = it absorbs frames as fast as they arrive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_rate_bps: Option<f64>,
    /// Changes of the receive rate over time (an output-generated hotspot).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rx_schedule: Vec<RateStep>,
    /// Receive buffer; frames beyond it are dropped (place `rx`). None = infinite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_buffer_bytes: Option<f64>,
    /// PAUSE the upstream switch when the receive buffer passes these watermarks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_pause: Option<Watermarks>,
    /// Endpoint response time: added to every frame the host receives.
    #[serde(default)]
    pub response_delay_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Watermarks {
    /// Send XOFF when the watched byte count rises above this.
    pub xoff_bytes: f64,
    /// Send XON when it falls below this.
    pub xon_bytes: f64,
    /// pause_time carried by XOFF, in quanta of 512 bit times.
    #[serde(default = "default_quanta")]
    pub quanta: u16,
}

fn default_quanta() -> u16 {
    DEFAULT_XOFF_QUANTA
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PauseTrigger {
    /// Total switch memory (seed 000): pause every input.
    Global,
    /// Bytes each input port holds in the buffer (seeds 001, 003): pause that input.
    Ingress,
    /// Bytes in an output queue (seed 004): pause every other port.
    Egress,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SwitchPause {
    /// false: the switch sends no PAUSE (the table stays, so a sweep can switch it off and on
    /// with one parameter, seed 003's "PAUSE on/off").
    #[serde(default = "yes")]
    pub enabled: bool,
    pub trigger: PauseTrigger,
    pub xoff_bytes: f64,
    pub xon_bytes: f64,
    #[serde(default = "default_quanta")]
    pub quanta: u16,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    pub name: String,
    /// Forwarding latency, applied to every frame arriving at the switch before it is buffered.
    #[serde(default)]
    pub latency_s: f64,
    /// Total shared memory (all queues). None = infinite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_buffer_bytes: Option<f64>,
    /// Limit per output queue. None = no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_buffer_bytes: Option<f64>,
    /// Memory partitioned per input port (seed 003). None = not partitioned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_buffer_bytes: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<SwitchPause>,
    /// Congestion detection (QCN/BCN congestion points) on this switch's output queues.
    #[serde(default = "yes")]
    pub cp: bool,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The two nodes (host or switch names) the link joins.
    pub ends: [String; 2],
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub rate_bps: f64,
    /// One-way propagation delay.
    #[serde(default)]
    pub delay_s: f64,
    /// Extra one-way delay of a delay line (seed 004: 100 us each way = 200 us round trip).
    #[serde(default)]
    pub delay_line_s: f64,
    /// Rate changes of one direction of the link (`from` = the sending end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<LinkRateStep>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkRateStep {
    pub from: String,
    pub at_s: f64,
    pub rate_bps: f64,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TrafficKind {
    /// A frame arrives at each frame slot of the line rate with probability `load`.
    Bernoulli,
    /// Constant bit rate `rate_bps`.
    Cbr,
    /// Always backlogged (saturating UDP): sends whenever the NIC and its limiter allow.
    Saturate,
    /// Flows: Poisson arrivals per source at `load`, sizes drawn from `size`.
    Flows,
    /// Flows read from a trace file (`trace`) or listed inline (`flows`).
    FlowTrace,
}

/// Where a source's frames go: one host, "uniform" over all others, or a list (uniform over it);
/// a part of the `[topology]` is replaced by the list of its hosts when the scenario is read.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum DstSpec {
    One(String),
    Many(Vec<String>),
    Part(HostPart),
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    pub kind: TrafficKind,
    /// The sending hosts, each with its own source and random stream: names, "all", or a part
    /// of the `[topology]` (`{ pod = P }`, `{ pod = P, rack = R }`, `{ leaf = L }`).
    #[serde(default, skip_serializing_if = "HostSet::is_empty")]
    pub hosts: HostSet,
    /// A host, "uniform" (all others), a list, or "permutation" (flows: each sender gets one
    /// fixed partner, a random derangement of the entry's hosts). Not for `flow_trace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<DstSpec>,
    /// Offered load as a fraction of the host's line rate (bernoulli, flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("exclusiveMinimum" = 0, "maximum" = 1))]
    pub load: Option<f64>,
    /// Rate (cbr).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<f64>,
    #[serde(default = "default_frame_bytes")]
    pub frame_bytes: u32,
    #[serde(default)]
    pub start_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// Flow sizes (flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeSpec>,
    /// Trace file of flows, CSV `start_s,src,dst,size_bytes[,priority]` (flow_trace; a path
    /// relative to the scenario file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Flows listed inline (flow_trace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows: Vec<FlowSpec>,
    /// Priority class (0-7) of the entry's frames or flows (a trace gives its own per flow):
    /// the switch output queue they use, and the class PFC pauses.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub priority: u8,
    /// Seed of the entry's random arrivals, sizes and destinations (bernoulli, flows); None =
    /// the scenario's seed. Given, every run replays the same workload whatever the run's
    /// seed or scheme (seed 003: one trace for every variant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

fn is_zero(v: &u8) -> bool {
    *v == 0
}

fn default_frame_bytes() -> u32 {
    1500
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    #[default]
    None,
    Qcn,
    Bcn,
    /// BCN with ECM's defaults (`BcnParams::ecm`), overridden by `[congestion.bcn]`.
    Ecm,
    /// Path probes (a diagnostic scheme): the longest queue on each path, per destination.
    PathProbe,
    /// DCQCN (SIGCOMM 2015): ECN marking at switches, CNPs from receivers, per-pair RPs.
    Dcqcn,
    /// E2CM (seed 003): ECM's loop (`[congestion.bcn]` over ECM's defaults) plus per-flow
    /// probes (`[congestion.e2cm]`).
    E2cm,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CongestionSpec {
    #[serde(default)]
    pub scheme: Scheme,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qcn: Option<QcnParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bcn: Option<BcnParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_probe: Option<PathProbeParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dcqcn: Option<DcqcnParams>,
    /// E2CM's fine loop (its coarse loop is `bcn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2cm: Option<E2cmParams>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportSpec {
    /// Interval of the periodic probes (throughput, queues, rates).
    #[serde(default = "default_probe_interval_s")]
    pub probe_interval_s: f64,
    /// Window over which per-source throughput, drops and fairness are counted exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoverySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transient: Option<TransientSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadySpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plots: Vec<PlotSpec>,
}

/// Steady-state statistics over a window (DCQCN's fixed point): the queue's mean and standard
/// deviation, and the spread of the reaction points' rates, computed by the Python analysis
/// from the probes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SteadySpec {
    /// Start of the window (after the start-up transient).
    pub start_s: f64,
    /// End of the window; None = the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_s: Option<f64>,
    /// The bottleneck output queue, as a port entity ("sw->recv").
    pub port: String,
    /// Rate-limiter entity globs ("host->dst") whose `rp_rate_bps` are pooled; empty = all.
    #[serde(default)]
    pub entities: Vec<String>,
}

/// Transient duration by Jain's initial data deletion (seed 001), computed by the Python
/// analysis from the probes (over replications when a sweep averages them).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransientSpec {
    #[serde(default = "default_transient_metric")]
    pub metric: String,
    /// Entity globs summed into the aggregate; empty = all.
    #[serde(default)]
    pub entities: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_s: Option<f64>,
    /// Round-trip time used to express the duration in RTTs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_s: Option<f64>,
    #[serde(default)]
    pub method: KneeMethod,
    #[serde(default = "default_knee_tol")]
    pub tol: f64,
    /// Fraction of the series searched for the knee.
    #[serde(default = "default_knee_fraction")]
    pub max_fraction: f64,
}

fn default_transient_metric() -> String {
    "host_rx_bps".into()
}

/// Knee rule of the transient analysis (docs/seed001.md; `cnsim.analysis.transient_duration`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KneeMethod {
    /// The point of the relative-change curve farthest from its chord.
    #[default]
    Chord,
    /// Where the curve's remaining range falls below `tol`.
    Settle,
    /// The chord knee of the curve's remaining range: where it stops moving for good.
    Flat,
}

fn default_knee_tol() -> f64 {
    0.005
}

fn default_knee_fraction() -> f64 {
    0.5
}

fn default_probe_interval_s() -> f64 {
    1e-3
}

impl Default for ReportSpec {
    fn default() -> Self {
        ReportSpec {
            probe_interval_s: default_probe_interval_s(),
            window_s: None,
            recovery: None,
            transient: None,
            steady: None,
            plots: Vec::new(),
        }
    }
}

/// Recovery time (seed 004): computed by the Python analysis from the probes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecoverySpec {
    /// When the capacity returns (the end of the rate drop).
    pub after_s: f64,
    /// The capacity the aggregate throughput should get back to.
    pub capacity_bps: f64,
    #[serde(default = "default_recovery_metric")]
    pub metric: String,
    /// Entity globs summed into the aggregate; empty = all.
    #[serde(default)]
    pub entities: Vec<String>,
    /// Relative band around the capacity that counts as recovered.
    #[serde(default = "default_band")]
    pub band: f64,
    /// How long the aggregate must stay in the band. None = 3 probe intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_s: Option<f64>,
}

fn default_recovery_metric() -> String {
    "host_tx_bps".into()
}

fn default_band() -> f64 {
    0.05
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PlotKind {
    #[default]
    Timeseries,
    Bar,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    #[default]
    None,
    Sum,
}

/// A figure the Python side draws from the probes (or the summary, for bars).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    pub name: String,
    #[serde(default)]
    pub kind: PlotKind,
    pub metric: String,
    #[serde(default)]
    pub entities: Vec<String>,
    #[serde(default)]
    pub aggregate: Aggregate,
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xlim_s: Option<[f64; 2]>,
}

/// Probe metric names (the `metric` column of the time series).
pub const METRICS: &[&str] = &[
    "host_offered_bps",
    "host_tx_bps",
    "host_rx_bps",
    "port_tx_bps",
    "queue_bytes",
    "class_queue_bytes",
    "switch_memory_bytes",
    "rx_queue_bytes",
    "nic_queue_bytes",
    "paused_frac",
    "pfc_paused_frac",
    "dropped_frames",
    "rp_rate_bps",
    "rp_target_bps",
    "cp_fb",
    "cp_messages",
    "rp_feedback",
];

impl Scenario {
    /// The scenario's JSON Schema (draft 2020-12), generated from these types so editors and
    /// `jsonschema` check a file against the same rules serde applies (`cnsim schema`).
    pub fn json_schema() -> serde_json::Value {
        schemars::schema_for!(Scenario).to_value()
    }

    /// Parses TOML text, applies `--set path=value` overrides, fills defaults and validates.
    pub fn from_toml(text: &str, overrides: &[(String, String)]) -> Result<Scenario, ConfigError> {
        let scenario = Scenario::parse(text, overrides)?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// As [`Scenario::from_toml`], with relative file paths (traces, CDFs) made absolute from
    /// `base_dir` (None: the current directory) before validation, so the resource estimate
    /// reads the files that will run.
    pub fn from_toml_in(
        text: &str,
        overrides: &[(String, String)],
        base_dir: Option<&std::path::Path>,
    ) -> Result<Scenario, ConfigError> {
        let mut scenario = Scenario::parse(text, overrides)?;
        scenario.make_paths_absolute(base_dir);
        scenario.validate()?;
        Ok(scenario)
    }

    /// Parsed, overridden, expanded and defaulted; not yet validated.
    fn parse(text: &str, overrides: &[(String, String)]) -> Result<Scenario, ConfigError> {
        let mut value: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| crate::error::toml_syntax_error(text, &e))?;
        for (path, v) in overrides {
            apply_override(&mut value, path, v)?;
        }
        topology::default_multipath(&mut value);
        flows::default_empirical(&mut value);
        apply_ecm_defaults(&mut value);
        apply_dcqcn_parameter_set(&mut value)?;
        let mut scenario: Scenario = deserialize_with_path(value)?;
        scenario.expand_topology()?;
        scenario.fill_defaults();
        Ok(scenario)
    }

    /// The resolved scenario as TOML (what `scenario.toml` in the output holds).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a validated scenario always serialises")
    }

    /// Scheme parameter tables are filled with their defaults when the scheme is selected, so
    /// the resolved scenario shows every constant that ran.
    fn fill_defaults(&mut self) {
        match self.congestion.scheme {
            Scheme::Qcn if self.congestion.qcn.is_none() => {
                self.congestion.qcn = Some(QcnParams::default())
            }
            Scheme::Bcn if self.congestion.bcn.is_none() => {
                self.congestion.bcn = Some(BcnParams::default())
            }
            Scheme::Ecm if self.congestion.bcn.is_none() => {
                self.congestion.bcn = Some(BcnParams::ecm())
            }
            Scheme::PathProbe if self.congestion.path_probe.is_none() => {
                self.congestion.path_probe = Some(PathProbeParams::default())
            }
            Scheme::Dcqcn if self.congestion.dcqcn.is_none() => {
                self.congestion.dcqcn = Some(DcqcnParams::default())
            }
            Scheme::E2cm => {
                self.congestion.bcn.get_or_insert_with(BcnParams::ecm);
                self.congestion.e2cm.get_or_insert_with(E2cmParams::default);
            }
            _ => {}
        }
    }
}

/// `scheme = "ecm"` or `"e2cm"`: the user's `[congestion.bcn]` keys are laid over ECM's
/// defaults, so a partial table keeps ECM's values (not plain BCN's) for what it leaves out.
fn apply_ecm_defaults(root: &mut toml::Table) {
    let Some(toml::Value::Table(cong)) = root.get_mut("congestion") else {
        return;
    };
    if !matches!(
        cong.get("scheme").and_then(|v| v.as_str()),
        Some("ecm" | "e2cm")
    ) {
        return;
    }
    let toml::Value::Table(mut merged) =
        toml::Value::try_from(BcnParams::ecm()).expect("serialisable")
    else {
        unreachable!("a struct serialises to a table");
    };
    if let Some(toml::Value::Table(user)) = cong.remove("bcn") {
        merged.extend(user);
    }
    cong.insert("bcn".into(), toml::Value::Table(merged));
}

/// `[congestion.dcqcn] parameter_set = "..."`: the table's other keys are laid over the named
/// set's values, so a partial table keeps the set's values for what it leaves out.
fn apply_dcqcn_parameter_set(root: &mut toml::Table) -> Result<(), ConfigError> {
    let Some(toml::Value::Table(cong)) = root.get_mut("congestion") else {
        return Ok(());
    };
    let Some(toml::Value::Table(user)) = cong.get("dcqcn") else {
        return Ok(());
    };
    let Some(name) = user.get("parameter_set") else {
        return Ok(());
    };
    let set: ParameterSet = name.clone().try_into().map_err(|e: toml::de::Error| {
        ConfigError::field("congestion.dcqcn.parameter_set", e.message().to_string())
    })?;
    let toml::Value::Table(mut merged) =
        toml::Value::try_from(DcqcnParams::of_set(set)).expect("serialisable")
    else {
        unreachable!("a struct serialises to a table");
    };
    if let Some(toml::Value::Table(user)) = cong.remove("dcqcn") {
        merged.extend(user);
    }
    cong.insert("dcqcn".into(), toml::Value::Table(merged));
    Ok(())
}

fn deserialize_with_path(value: toml::Table) -> Result<Scenario, ConfigError> {
    let de = toml::Value::Table(value);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let msg = inner.message().to_string();
        let path = if path == "." { "scenario".into() } else { path };
        ConfigError::field(path, msg)
    })
}

#[cfg(test)]
mod tests;
