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
