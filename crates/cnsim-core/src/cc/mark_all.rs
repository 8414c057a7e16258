//! A scheme written only for a test of the registry (`scheme = "mark_all"`): its CP marks every
//! data frame it queues with a message to the frame's source, and the source's RP counts the
//! marks. It plugs in by this file and one `#[cfg(test)]` line in the registry, nothing else.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Carried, CcScheme, CongestionSpec, CpFrame, MessageKind, Named, NoNp, NoSender, Registered};
use crate::error::ConfigError;
use crate::rng::SimRng;
use crate::time::SimTime;

/// `[congestion.mark_all]`: nothing to set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MarkAllParams {}

/// The mark, from a CP to the source of a data frame it queued.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Mark;

/// Counts the marks; never limits.
pub(crate) struct Counter {
    line_rate_bps: f64,
    marks: u64,
}

pub(crate) struct MarkAll;

impl CcScheme for MarkAll {
    type Params = MarkAllParams;
    type Config = MarkAllParams;
    type Msg = Mark;
    type Cp = ();
    type Rp = Counter;
    type Np = NoNp;
    type Sender = NoSender;
    type Variant = MarkAllParams;

    const NAMES: &'static [Named] = &[Named {
        name: "mark_all",
        doc: "",
    }];
    const CONTROL_KINDS: &'static [Named] = &[Named {
        name: "mark",
        doc: "",
    }];

    fn fill_defaults(spec: &mut CongestionSpec, _: &str) {
        spec.mark_all.get_or_insert_with(MarkAllParams::default);
    }
    fn validate(_: &MarkAllParams, _: &CongestionSpec, _: &str) -> Result<(), ConfigError> {
        Ok(())
    }
    fn resolve(_: &CongestionSpec, _: &str) -> MarkAllParams {
        MarkAllParams {}
    }
    fn variant(_: &MarkAllParams) -> MarkAllParams {
        MarkAllParams {}
    }
    fn kind(_: &Mark) -> MessageKind {
        Self::message_kind(0)
    }
    fn msg_bytes(_: &Mark, _: &MarkAllParams) -> u32 {
        64
    }
    fn new_cp(_: &MarkAllParams, _: u32, _: f64, _: &mut SimRng) {}
    fn on_enqueue(
        _: &mut (),
        frame: CpFrame<'_, Mark>,
        _: u64,
        _: u32,
        _: &mut SimRng,
    ) -> Option<Mark> {
        matches!(frame.payload, Carried::Data).then_some(Mark)
    }
    fn install(_: &MarkAllParams, _: &Mark, line_rate_bps: f64, _: SimTime, _: &mut SimRng) -> Option<Counter> {
        Some(Counter {
            line_rate_bps,
            marks: 0,
        })
    }
    fn on_feedback(rp: &mut Counter, _: &Mark, _: SimTime, _: &mut SimRng) {
        rp.marks += 1;
    }
    /// The count, in the time series as `rp_feedback`.
    fn feedback(rp: &Counter) -> Option<f64> {
        Some(rp.marks as f64)
    }
    fn rate_bps(rp: &Counter) -> f64 {
        rp.line_rate_bps
    }
    fn is_released(_: &Counter) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// A sends 1 Gb/s to b through one switch for 0.5 ms and stops; the run drains by 1 ms.
    const SCENARIO: &str = r#"
        name = "marks"
        duration_s = 0.001
        hosts = [{ name = "a" }, { name = "b" }]
        switches = [{ name = "s" }]
        links = [
            { ends = ["a", "s"], rate_bps = 10e9, delay_s = 1e-6 },
            { ends = ["s", "b"], rate_bps = 10e9, delay_s = 1e-6 },
        ]
        traffic = [{ kind = "cbr", hosts = ["a"], dst = "b", rate_bps = 1e9, stop_s = 0.0005 }]
        report = { probe_interval_s = 1e-4 }
        congestion = { scheme = "mark_all" }
    "#;

    fn count(summary: &Value, path: &str) -> u64 {
        summary
            .pointer(path)
            .and_then(Value::as_u64)
            .unwrap_or_else(|| panic!("{path} in {summary}"))
    }

    #[test]
    fn a_scheme_in_its_own_file_marks_every_frame_and_counts_the_marks() {
        let report = crate::run_toml(SCENARIO, &[], None, &mut |_| true).expect("runs");
        let s = &report.summary;
        let sent = count(s, "/per_source/a/tx_frames");
        assert!(sent > 40, "1 Gb/s of 1500 B frames for 0.5 ms: {sent}");
        assert_eq!(count(s, "/frames/delivered"), sent);
        // One mark per data frame the switch queued, counted as the scheme's control kind.
        assert_eq!(count(s, "/control_frames/mark"), sent);
        assert_eq!(count(s, "/control_frames/bytes"), 64 * sent);
        assert_eq!(s["variant"]["scheme"], "mark_all");
        // The RP counted every mark (its feedback is its count); all arrived before the end.
        let ts = &report.timeseries;
        let metric = ts.metrics.iter().position(|m| m == "rp_feedback").unwrap() as u32;
        let entity = ts.entities.iter().position(|e| e == "a->b").expect("a's RP") as u32;
        let counted: Vec<f64> = (0..ts.time_s.len())
            .filter(|&i| ts.metric[i] == metric && ts.entity[i] == entity)
            .map(|i| ts.value[i])
            .collect();
        assert_eq!(counted.last(), Some(&(sent as f64)), "{counted:?}");
    }
}
