//! `summary.flows.slowdown_by_size`: the FCT slowdown (FCT over the flow's FCT alone on the
//! idle network) per flow-size bucket, the table data-center CC papers plot (HPCC, SIGCOMM
//! 2019, Fig. 11), so a sweep can tabulate it without keeping every run's flows.
//!
//! `[report] slowdown_size_edges_bytes = [e0, ..., e(k-1)]` makes k + 1 buckets keyed b0..bk:
//! bucket i holds sizes in (e(i-1), e(i)] (b0 from 0, bk above e(k-1)). Percentiles are
//! nearest-rank over the bucket's completed flows, as `fct_p99_s` is; `cnsim.flow_sizes` with
//! edges [0, e0, ..., inf] and `method = "inverted_cdf"` gives the same numbers.

use std::collections::BTreeMap;

#[cfg(test)]
use crate::flows::FlowRecords;
use crate::flows::SizeBucket;

/// The buckets of the run's flows, or None without edges (the summary then has no table).
#[cfg(test)]
pub(crate) fn by_size(r: &FlowRecords, edges: &[f64]) -> Option<BTreeMap<String, SizeBucket>> {
    if edges.is_empty() {
        return None;
    }
    let mut buckets = SizeBuckets::new(edges);
    for ((&size, &fct), &ideal) in r.size_bytes.iter().zip(&r.fct_s).zip(&r.ideal_fct_s) {
        buckets.add(size, fct, ideal);
    }
    Some(buckets.finish())
}

/// The buckets filled flow by flow (`flow_digest/mod.rs`): per bucket the flows started and
/// the slowdowns of those completed (8 bytes per completed flow).
#[derive(Clone, Debug)]
pub(crate) struct SizeBuckets {
    edges: Vec<f64>,
    started: Vec<u64>,
    slowdowns: Vec<Vec<f64>>,
}

impl SizeBuckets {
    pub(crate) fn new(edges: &[f64]) -> SizeBuckets {
        SizeBuckets {
            edges: edges.to_vec(),
            started: vec![0; edges.len() + 1],
            slowdowns: vec![Vec::new(); edges.len() + 1],
        }
    }

    /// One started flow: its size, FCT (NaN if it did not complete) and idle-network FCT.
    pub(crate) fn add(&mut self, size: u64, fct: f64, ideal: f64) {
        // The first edge at or above the size: sizes in (e(i-1), e(i)] land in bucket i.
        let i = self.edges.partition_point(|&e| e < size as f64);
        self.started[i] += 1;
        if !fct.is_nan() {
            self.slowdowns[i].push(fct / ideal);
        }
    }

    pub(crate) fn finish(self) -> BTreeMap<String, SizeBucket> {
        let (edges, started) = (self.edges, self.started);
        let buckets = (self.slowdowns.into_iter().enumerate()).map(|(i, mut s)| {
            s.sort_by(f64::total_cmp);
            let bucket = SizeBucket {
                min_bytes: if i == 0 { 0.0 } else { edges[i - 1] },
                max_bytes: edges.get(i).copied(),
                started: started[i],
                completed: s.len() as u64,
                p50: nearest_rank(&s, 0.50),
                p95: nearest_rank(&s, 0.95),
                p99: nearest_rank(&s, 0.99),
            };
            (format!("b{i}"), bucket)
        });
        buckets.collect()
    }
}

/// The q-quantile of sorted values by nearest rank: the ceil(q n)-th smallest.
fn nearest_rank(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(rows: &[(u64, f64, f64)]) -> FlowRecords {
        let mut r = FlowRecords::default();
        for &(size, fct, ideal) in rows {
            r.size_bytes.push(size);
            r.fct_s.push(fct);
            r.ideal_fct_s.push(ideal);
        }
        r
    }

    #[test]
    fn buckets_hold_sizes_up_to_their_edge() {
        // Sizes 10 and 100 are in b0 = (0, 100], 101 in b1 = (100, 1000], 5000 in b2.
        let r = records(&[
            (10, 2.0, 1.0),
            (100, 3.0, 1.0),
            (101, 4.0, 2.0),
            (5000, f64::NAN, 1.0),
        ]);
        let b = by_size(&r, &[100.0, 1000.0]).expect("edges given");
        assert_eq!(b.len(), 3);
        assert_eq!((b["b0"].started, b["b0"].completed), (2, 2));
        assert_eq!((b["b0"].p50, b["b0"].p99), (Some(2.0), Some(3.0)));
        assert_eq!(
            (b["b1"].min_bytes, b["b1"].max_bytes),
            (100.0, Some(1000.0))
        );
        assert_eq!(b["b1"].p95, Some(2.0));
        assert_eq!(
            (b["b2"].started, b["b2"].completed, b["b2"].p99),
            (1, 0, None)
        );
        assert_eq!(b["b2"].max_bytes, None);
        assert!(by_size(&r, &[]).is_none());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        // 100 slowdowns 1..=100: p50 the 50th, p95 the 95th, p99 the 99th.
        let rows: Vec<(u64, f64, f64)> = (1..=100).map(|k| (1, k as f64, 1.0)).collect();
        let b = by_size(&records(&rows), &[10.0]).expect("edges given");
        assert_eq!(
            (b["b0"].p50, b["b0"].p95, b["b0"].p99),
            (Some(50.0), Some(95.0), Some(99.0))
        );
        assert_eq!(nearest_rank(&[7.0], 0.99), Some(7.0));
    }
}
