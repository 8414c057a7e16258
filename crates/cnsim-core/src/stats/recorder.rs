//! Periodic probes, recorded in long format (time, metric, entity, value) as flat columns that
//! the Python side turns into a DataFrame without per-row objects.

use std::collections::HashMap;

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

    pub(crate) fn begin_sample(&mut self, time_s: f64) {
        self.now_s = time_s;
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
}
