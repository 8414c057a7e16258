//! `[report]`: what a run measures besides the fixed counters, which the Python analysis
//! computes from the probes (recovery time, transient duration, steady-state statistics), the
//! figures, the headline numbers and the floor of samples a statistics window needs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReportSpec {
    /// Interval of the periodic probes (throughput, queues, rates).
    #[serde(default = "default_probe_interval_s")]
    pub(crate) probe_interval_s: f64,
    /// Window over which per-source throughput, drops and fairness are counted exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) window_s: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) recovery: Option<RecoverySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) transient: Option<TransientSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) steady: Option<SteadySpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) plots: Vec<PlotSpec>,
    /// The experiment's headline numbers, printed first by the terminal, the notebook and the
    /// HTML report (`[[report.headline]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) headline: Vec<HeadlineSpec>,
    /// A steady or transient window holding fewer probe samples than this makes a warning (its
    /// "mean" would be a handful of samples).
    #[serde(default = "default_min_window_samples")]
    pub(crate) min_window_samples: u32,
    /// Flow-size bucket edges in bytes, increasing: with them `summary.flows.slowdown_by_size`
    /// holds, per bucket b0, b1, ... (bucket i: sizes in (edge[i-1], edge[i]], the last one
    /// above the last edge), the flows started and completed and the slowdown p50/p95/p99
    /// (nearest rank), so a sweep can tabulate slowdown by size without keeping the flows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) slowdown_size_edges_bytes: Vec<f64>,
    /// What the probes record: every element's series, or per tier the sum over its elements
    /// (`auto`: elements, unless their series would pass `PROBE_TIERS_ABOVE_SAMPLES` rows).
    /// Written to the resolved scenario only when set.
    #[serde(default, skip_serializing_if = "ProbeScope::is_auto")]
    pub(crate) probe: ProbeScope,
    /// The outputs are streamed (`Simulation::run_streaming`): set by the caller, not the
    /// file, for the memory estimate (records and samples are not held).
    #[serde(skip)]
    pub(crate) streamed: bool,
}

/// `[report] probe`: which entities the time series has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ProbeScope {
    /// `elements` while the elements' series stay within `PROBE_TIERS_ABOVE_SAMPLES` rows,
    /// else `tiers`.
    #[default]
    Auto,
    /// Every host, switch, port, class queue, rate limiter and controller (named as itself).
    Elements,
    /// Per tier (hosts, then switches by their hops from the nearest host: `tier1`, `tier2`
    /// ...), each metric summed over the tier's elements; ports per pair of tiers
    /// (`tier1->tier2`).
    Tiers,
}

impl ProbeScope {
    fn is_auto(&self) -> bool {
        *self == ProbeScope::Auto
    }
}

/// Above this many rows of per-element series, `probe = "auto"` records per-tier sums: the
/// rows a big fabric's ports would give over a long run (a 6,144-host fabric probed every
/// 0.5 ms makes 1.5e8 rows a second) are not what a study reads, and their file would be
/// gigabytes. 1e7 rows keep every preset's elements (docs/scenario.md, `[report]`).
pub(crate) const PROBE_TIERS_ABOVE_SAMPLES: f64 = 1e7;

/// One headline number: a summary value, optionally read against a reference (the victim's
/// rate against its max-min fair share, a recovery time against the seed's).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HeadlineSpec {
    /// What the number is ("victim VS -> VR").
    pub(crate) label: String,
    /// A path into summary.json, as a sweep's metrics name it
    /// ("window.per_source.VS.throughput_bps", "metrics.recovery_time_s").
    pub(crate) metric: String,
    /// What to read it against, in the metric's unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reference: Option<f64>,
    /// What the reference is ("max-min fair share").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reference_label: Option<String>,
}

fn default_min_window_samples() -> u32 {
    10
}

/// Steady-state statistics over a window (DCQCN's fixed point): the queue's mean and standard
/// deviation, and the spread of the reaction points' rates, computed by the Python analysis
/// from the probes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SteadySpec {
    /// Start of the window (after the start-up transient).
    pub(crate) start_s: f64,
    /// End of the window; None = the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) end_s: Option<f64>,
    /// The bottleneck output queue, as a port entity ("sw->recv").
    pub(crate) port: String,
    /// Rate-limiter entity globs ("host->dst") whose `rp_rate_bps` are pooled; empty = all.
    #[serde(default)]
    pub(crate) entities: Vec<String>,
}

/// Transient duration by Jain's initial data deletion (seed 001), computed by the Python
/// analysis from the probes (over replications when a sweep averages them).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TransientSpec {
    #[serde(default = "default_transient_metric")]
    pub(crate) metric: String,
    /// Entity globs summed into the aggregate; empty = all.
    #[serde(default)]
    pub(crate) entities: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) start_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) end_s: Option<f64>,
    /// Round-trip time used to express the duration in RTTs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rtt_s: Option<f64>,
    #[serde(default)]
    pub(crate) method: KneeMethod,
    #[serde(default = "default_knee_tol")]
    pub(crate) tol: f64,
    /// Fraction of the series searched for the knee.
    #[serde(default = "default_knee_fraction")]
    pub(crate) max_fraction: f64,
}

fn default_transient_metric() -> String {
    "host_rx_bps".into()
}

/// Knee rule of the transient analysis (docs/seed001.md; `cnsim.analysis.transient_duration`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum KneeMethod {
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
            headline: Vec::new(),
            min_window_samples: default_min_window_samples(),
            slowdown_size_edges_bytes: Vec::new(),
            probe: ProbeScope::Auto,
            streamed: false,
        }
    }
}

/// Recovery time (seed 004): computed by the Python analysis from the probes.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecoverySpec {
    /// When the capacity returns (the end of the rate drop).
    pub(crate) after_s: f64,
    /// The capacity the aggregate throughput should get back to.
    pub(crate) capacity_bps: f64,
    #[serde(default = "default_recovery_metric")]
    pub(crate) metric: String,
    /// Entity globs summed into the aggregate; empty = all.
    #[serde(default)]
    pub(crate) entities: Vec<String>,
    /// Relative band around the capacity that counts as recovered.
    #[serde(default = "default_band")]
    pub(crate) band: f64,
    /// How long the aggregate must stay in the band. None = 3 probe intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) hold_s: Option<f64>,
}

fn default_recovery_metric() -> String {
    "host_tx_bps".into()
}

fn default_band() -> f64 {
    0.05
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PlotKind {
    #[default]
    Timeseries,
    Bar,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Aggregate {
    #[default]
    None,
    Sum,
}

/// A figure the Python side draws from the probes (or the summary, for bars).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlotSpec {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) kind: PlotKind,
    pub(crate) metric: String,
    #[serde(default)]
    pub(crate) entities: Vec<String>,
    #[serde(default)]
    pub(crate) aggregate: Aggregate,
    #[serde(default)]
    pub(crate) title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) xlim_s: Option<[f64; 2]>,
}
