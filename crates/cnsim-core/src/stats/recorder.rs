//! Periodic probes, recorded in long format (time, metric, entity, value) as flat columns that
//! the Python side turns into a DataFrame without per-row objects.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::scenario::METRICS;

#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    pub time_s: Vec<f64>,
    pub metric: Vec<u32>,
    pub entity: Vec<u32>,
    pub value: Vec<f64>,
    pub metrics: Vec<String>,
    pub entities: Vec<String>,
}

#[derive(Default)]
pub(crate) struct Recorder {
    pub(crate) series: TimeSeries,
    entity_ids: HashMap<String, u32>,
    now_s: f64,
    /// Entities already handed over by `take_new` (a streamed run).
    entities_taken: usize,
    /// Summing (`[report] probe = "tiers"`): the sample's sums per (metric, entity), in the
    /// order first recorded, written as rows by `end_sample`.
    sums: Option<Sums>,
}

#[derive(Default)]
struct Sums {
    rows: Vec<(u32, u32, f64)>,
    at: FxHashMap<(u32, u32), usize>,
}

impl Recorder {
    pub(crate) fn new() -> Recorder {
        Recorder {
            series: TimeSeries {
                metrics: METRICS.iter().map(|m| m.to_string()).collect(),
                ..TimeSeries::default()
            },
            ..Recorder::default()
        }
    }

    /// Interns an entity name (done once per element, not per sample).
    pub(crate) fn entity(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.entity_ids.get(name) {
            return id;
        }
        let id = self.series.entities.len() as u32;
        self.series.entities.push(name.to_string());
        self.entity_ids.insert(name.to_string(), id);
        id
    }

    /// A recorder whose samples hold, per (metric, entity), the sum of the values recorded:
    /// the elements of a tier share its entity.
    pub(crate) fn summing() -> Recorder {
        Recorder {
            sums: Some(Sums::default()),
            ..Recorder::new()
        }
    }

    pub(crate) fn begin_sample(&mut self, time_s: f64) {
        self.now_s = time_s;
    }

    /// The end of a sample: a summing recorder writes its sums.
    pub(crate) fn end_sample(&mut self) {
        let Some(sums) = self.sums.as_mut() else {
            return;
        };
        sums.at.clear();
        for (metric, entity, value) in std::mem::take(&mut sums.rows) {
            self.series.time_s.push(self.now_s);
            self.series.metric.push(metric);
            self.series.entity.push(entity);
            self.series.value.push(value);
        }
    }

    /// The name of an interned entity.
    pub(crate) fn name(&self, entity: u32) -> &str {
        &self.series.entities[entity as usize]
    }

    /// The rows recorded since the last call, with the entities named since (their ids
    /// continue the earlier ones) and every metric name: a streamed run's batch. The recorder
    /// keeps only the entity names, to intern them.
    pub(crate) fn take_new(&mut self) -> TimeSeries {
        let s = &mut self.series;
        let batch = TimeSeries {
            time_s: std::mem::take(&mut s.time_s),
            metric: std::mem::take(&mut s.metric),
            entity: std::mem::take(&mut s.entity),
            value: std::mem::take(&mut s.value),
            metrics: s.metrics.clone(),
            entities: s.entities[self.entities_taken..].to_vec(),
        };
        self.entities_taken = s.entities.len();
        batch
    }

    pub(crate) fn record(&mut self, metric: &str, entity: u32, value: f64) {
        let m = METRICS
            .iter()
            .position(|&x| x == metric)
            .unwrap_or_else(|| panic!("unknown metric {metric}")) as u32;
        if let Some(sums) = self.sums.as_mut() {
            let next = sums.rows.len();
            let at = *sums.at.entry((m, entity)).or_insert(next);
            if at == next {
                sums.rows.push((m, entity, 0.0));
            }
            sums.rows[at].2 += value;
            return;
        }
        self.series.time_s.push(self.now_s);
        self.series.metric.push(m);
        self.series.entity.push(entity);
        self.series.value.push(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_new_hands_over_rows_and_new_entities_once() {
        let mut rec = Recorder::new();
        let a = rec.entity("a");
        rec.begin_sample(1.0);
        rec.record("queue_bytes", a, 5.0);
        let first = rec.take_new();
        assert_eq!(
            (first.time_s, first.entities),
            (vec![1.0], vec!["a".to_string()])
        );
        assert_eq!(first.metrics.len(), METRICS.len());
        let b = rec.entity("b");
        assert_eq!(rec.entity("a"), a);
        rec.begin_sample(2.0);
        rec.record("queue_bytes", b, 6.0);
        rec.record("queue_bytes", a, 7.0);
        let second = rec.take_new();
        assert_eq!(second.entity, vec![b, a]);
        assert_eq!(second.value, vec![6.0, 7.0]);
        assert_eq!(second.entities, vec!["b".to_string()]);
        let empty = rec.take_new();
        assert!(empty.time_s.is_empty() && empty.entities.is_empty());
        // The full list of names stays, for interning.
        assert_eq!(rec.series.entities, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn a_summing_recorder_writes_one_row_per_metric_and_entity_per_sample() {
        let mut rec = Recorder::summing();
        let (t1, t2) = (rec.entity("tier1"), rec.entity("tier2"));
        rec.begin_sample(1.0);
        rec.record("queue_bytes", t1, 5.0);
        rec.record("queue_bytes", t2, 1.0);
        rec.record("queue_bytes", t1, 7.0);
        rec.record("dropped_frames", t1, 2.0);
        assert!(
            rec.series.time_s.is_empty(),
            "rows wait for the end of the sample"
        );
        rec.end_sample();
        assert_eq!(rec.series.entity, vec![t1, t2, t1]);
        assert_eq!(rec.series.value, vec![12.0, 1.0, 2.0]);
        rec.begin_sample(2.0);
        rec.record("queue_bytes", t2, 3.0);
        rec.end_sample();
        assert_eq!(rec.series.time_s, vec![1.0, 1.0, 1.0, 2.0]);
        assert_eq!(rec.series.value[3], 3.0);
    }
}
