//! `summary.flows` from the flow records as they are handed over, batch by batch, in flow id
//! order: a streamed run writes its records to a file as it goes and keeps only this digest.
//!
//! What the digest keeps is the memory bound of a streamed run's summary (docs/outputs.md):
//! counters and sums (constant), the FCT of every completed flow (8 bytes each, for its
//! percentiles), and with `[report] slowdown_size_edges_bytes` the slowdown of every completed
//! flow (8 bytes more, for the per-bucket percentiles). Sums are taken in flow id order, as a
//! sum over the whole table is, so a streamed run's summary is the in-memory run's, bit for bit.

pub(crate) mod slowdown;

use crate::flows::{FlowRecords, FlowSummary};
use crate::traffic::flows::Workload;

use slowdown::SizeBuckets;

/// What `summary.flows` needs of the records seen so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct FlowDigest {
    started: u64,
    with_drops: u64,
    /// FCT of the completed flows, in flow order (sorted when summarised).
    fct_s: Vec<f64>,
    slowdown_sum: f64,
    size_sum_bytes: f64,
    delivered_bytes: u64,
    retransmitted_bytes: u64,
    timeouts: u64,
    /// A flow's sender got its last ACK (a transported run): the goodput fields are shown.
    any_sender_end: bool,
    goodput_sum_bps: f64,
    goodput_count: u64,
    first_start_s: f64,
    last_end_s: f64,
    completed_bytes: u64,
    buckets: Option<SizeBuckets>,
}

impl FlowDigest {
    /// An empty digest; with `edges` (bytes) it also keeps the slowdown-by-size buckets.
    pub(crate) fn new(edges: &[f64]) -> FlowDigest {
        FlowDigest {
            // The start values of `f64`'s own sum and of the folds the table summary made.
            slowdown_sum: -0.0,
            size_sum_bytes: -0.0,
            goodput_sum_bps: -0.0,
            first_start_s: f64::INFINITY,
            last_end_s: f64::NEG_INFINITY,
            buckets: (!edges.is_empty()).then(|| SizeBuckets::new(edges)),
            ..FlowDigest::default()
        }
    }

    /// Takes in the next records (flow ids following those seen so far).
    pub(crate) fn add(&mut self, r: &FlowRecords) {
        self.started += r.flow_id.len() as u64;
        for i in 0..r.flow_id.len() {
            let (fct, ideal, size) = (r.fct_s[i], r.ideal_fct_s[i], r.size_bytes[i]);
            self.with_drops += u64::from(r.frames_dropped[i] > 0);
            self.size_sum_bytes += size as f64;
            self.delivered_bytes += r.delivered_bytes[i];
            self.retransmitted_bytes += r.retransmitted_bytes[i];
            self.timeouts += u64::from(r.timeouts[i]);
            self.any_sender_end |= !r.sender_end_s[i].is_nan();
            self.first_start_s = self.first_start_s.min(r.start_s[i]);
            if !r.end_s[i].is_nan() {
                self.last_end_s = self.last_end_s.max(r.end_s[i]);
            }
            if r.completed[i] {
                self.completed_bytes += size;
            }
            if !r.goodput_bps[i].is_nan() {
                self.goodput_sum_bps += r.goodput_bps[i];
                self.goodput_count += 1;
            }
            if !fct.is_nan() {
                self.fct_s.push(fct);
                self.slowdown_sum += fct / ideal;
            }
            if let Some(b) = self.buckets.as_mut() {
                b.add(size, fct, ideal);
            }
        }
    }

    /// Frames lost by flows after their records were taken in: `newly_with_drops` of them
    /// had lost none before.
    pub(crate) fn add_late_drops(&mut self, newly_with_drops: u64) {
        self.with_drops += newly_with_drops;
    }

    /// `summary.flows`; None when the run has no flow workload.
    pub(crate) fn summary(mut self, w: &Workload) -> Option<FlowSummary> {
        if self.started == 0 && w.requested_load.is_none() {
            return None;
        }
        let fct = &mut self.fct_s;
        fct.sort_by(f64::total_cmp);
        let n = fct.len();
        let mean = |sum: f64, count: usize| (count > 0).then(|| sum / count as f64);
        // Nearest-rank percentile.
        let quantile = |q: f64| {
            let rank = ((q * n as f64).ceil() as usize).clamp(1, n.max(1));
            fct.get(rank - 1).copied()
        };
        let started = self.started;
        let goodput_bps = self.any_sender_end && self.last_end_s > self.first_start_s;
        Some(FlowSummary {
            started,
            completed: n as u64,
            incomplete: started - n as u64,
            with_drops: self.with_drops,
            fct_mean_s: mean(fct.iter().sum::<f64>(), n),
            fct_p50_s: quantile(0.5),
            fct_p99_s: quantile(0.99),
            fct_max_s: fct.last().copied(),
            slowdown_mean: mean(self.slowdown_sum, n),
            size_mean_bytes: mean(self.size_sum_bytes, started as usize),
            requested_size_mean_bytes: w.requested_mean_bytes,
            generated: w.generated_flows,
            generated_size_mean_bytes: mean(w.generated_bytes as f64, w.generated_flows as usize),
            load: (w.capacity_bits > 0.0).then(|| w.generated_bytes as f64 * 8.0 / w.capacity_bits),
            requested_load: w.requested_load,
            delivered_bytes: self.delivered_bytes,
            retransmitted_bytes: self.retransmitted_bytes,
            goodput_mean_bps: if self.any_sender_end {
                mean(self.goodput_sum_bps, self.goodput_count as usize)
            } else {
                None
            },
            timeouts: self.timeouts,
            goodput_bps: goodput_bps.then(|| {
                self.completed_bytes as f64 * 8.0 / (self.last_end_s - self.first_start_s)
            }),
            slowdown_by_size: self.buckets.map(SizeBuckets::finish),
        })
    }
}
