//! Path probe: a diagnostic scheme that measures, per source-destination path, the longest
//! egress queue a probe met on its way. Written only against the scheme hooks (it is their
//! test, and the template for probing schemes such as E2CM):
//! - RP: every `interval_bytes` of data a host sends to a destination, it sends a probe that
//!   rides the data queue (so it waits where the data waits);
//! - CP: each switch output queue stamps the probe with max(stamp, queue length including the
//!   probe) when the probe is enqueued;
//! - NP: the destination returns the probe to the source at control priority;
//! - RP: records the returned stamp (time series `rp_feedback`, in bytes). It never limits.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Carried, CcScheme, CongestionSpec, CpFrame, MessageKind, Named, NoSender, NpFrame, Registered};
use crate::error::{Check, ConfigError};
use crate::rng::SimRng;
use crate::time::SimTime;

/// `[congestion.path_probe]`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct PathProbeParams {
    /// Data bytes sent to a destination between two probes.
    pub(crate) interval_bytes: u64,
    /// Size of a probe frame.
    pub(crate) probe_bytes: u32,
}

impl Default for PathProbeParams {
    fn default() -> Self {
        PathProbeParams {
            interval_bytes: 75_000,
            probe_bytes: 64,
        }
    }
}

impl PathProbeParams {
    pub(crate) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.in_closed("interval_bytes", self.interval_bytes as f64, 64.0, 1e12)?;
        c.in_closed("probe_bytes", self.probe_bytes as f64, 64.0, 9216.0)
    }
}

/// The probe: forward (riding the data queue, stamped by CPs) or returned (to the RP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Probe {
    /// Longest queue met so far, bytes.
    pub(crate) max_queue_bytes: u64,
    pub(crate) returned: bool,
}

impl Probe {
    pub(crate) fn rides_data_queue(&self) -> bool {
        !self.returned
    }
}

pub(crate) struct PathProbeCp;

impl PathProbeCp {
    pub(crate) fn on_probe(&mut self, probe: &mut Probe, queue_bytes: u64) {
        if !probe.returned {
            probe.max_queue_bytes = probe.max_queue_bytes.max(queue_bytes);
        }
    }
}

pub(crate) struct PathProbeNp;

impl PathProbeNp {
    pub(crate) fn on_probe(&mut self, probe: &Probe) -> Probe {
        Probe {
            returned: true,
            ..*probe
        }
    }
}

pub(crate) struct PathProbeRp {
    line_rate_bps: f64,
    interval_bytes: u64,
    bytes_to_probe: u64,
    last_queue_bytes: Option<u64>,
    pub(crate) probes_returned: u64,
}

impl PathProbeRp {
    pub(crate) fn new(params: &PathProbeParams, line_rate_bps: f64) -> PathProbeRp {
        PathProbeRp {
            line_rate_bps,
            interval_bytes: params.interval_bytes,
            bytes_to_probe: params.interval_bytes,
            last_queue_bytes: None,
            probes_returned: 0,
        }
    }

    /// A data frame left: a probe follows every `interval_bytes`.
    pub(crate) fn on_transmit(&mut self, frame_bytes: u32) -> Option<Probe> {
        match self.bytes_to_probe.checked_sub(frame_bytes as u64) {
            Some(left) if left > 0 => {
                self.bytes_to_probe = left;
                None
            }
            _ => {
                self.bytes_to_probe = self.interval_bytes;
                Some(Probe {
                    max_queue_bytes: 0,
                    returned: false,
                })
            }
        }
    }

    pub(crate) fn on_returned(&mut self, probe: &Probe) {
        self.last_queue_bytes = Some(probe.max_queue_bytes);
        self.probes_returned += 1;
    }

    pub(crate) fn rate_bps(&self) -> f64 {
        self.line_rate_bps
    }

    pub(crate) fn path_queue_bytes(&self) -> Option<f64> {
        self.last_queue_bytes.map(|b| b as f64)
    }
}

// What the summary says ran (a comment: the summary's schema describes
// the variant by its fields).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PathProbeVariant {
    pub(crate) interval_bytes: u64,
}

/// The path probe as registered: `scheme = "path_probe"`, `[congestion.path_probe]`.
pub(crate) struct PathProbe;

impl CcScheme for PathProbe {
    type Params = PathProbeParams;
    type Config = PathProbeParams;
    type Msg = Probe;
    type Cp = PathProbeCp;
    type Rp = PathProbeRp;
    type Np = PathProbeNp;
    type Sender = NoSender;
    type Variant = PathProbeVariant;

    const NAMES: &'static [Named] = &[Named {
        name: "path_probe",
        doc: "Path probes (a diagnostic scheme): the longest queue on each path, per destination.",
    }];
    const CONTROL_KINDS: &'static [Named] = &[Named {
        name: "path_probe",
        doc: "Path probes, forward and returned (scheme `path_probe`).",
    }];

    fn fill_defaults(spec: &mut CongestionSpec, _selected: &str) {
        spec.path_probe.get_or_insert_with(PathProbeParams::default);
    }

    fn validate(params: &PathProbeParams, _: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        params.validate(path)
    }

    fn resolve(spec: &CongestionSpec, _selected: &str) -> PathProbeParams {
        spec.path_probe.clone().unwrap_or_default()
    }

    fn variant(p: &PathProbeParams) -> PathProbeVariant {
        PathProbeVariant {
            interval_bytes: p.interval_bytes,
        }
    }

    fn kind(_: &Probe) -> MessageKind {
        Self::message_kind(0)
    }

    fn msg_bytes(_: &Probe, p: &PathProbeParams) -> u32 {
        p.probe_bytes
    }

    fn rides_data_queue(p: &Probe) -> bool {
        p.rides_data_queue()
    }

    fn for_reaction_point(p: &Probe) -> bool {
        p.returned
    }

    fn new_cp(_: &PathProbeParams, _cpid: u32, _: f64, _: &mut SimRng) -> PathProbeCp {
        PathProbeCp
    }

    /// Stamps a forward probe with the queue it joined.
    fn on_enqueue(
        cp: &mut PathProbeCp,
        frame: CpFrame<'_, Probe>,
        queue_bytes: u64,
        _cpid: u32,
        _: &mut SimRng,
    ) -> Option<Probe> {
        if let Carried::Msg(probe) = frame.payload {
            cp.on_probe(probe, queue_bytes);
        }
        None
    }

    /// The RP acts from the first frame: it probes.
    fn for_new_destination(p: &PathProbeParams, line_rate_bps: f64) -> Option<PathProbeRp> {
        Some(PathProbeRp::new(p, line_rate_bps))
    }

    fn on_feedback(rp: &mut PathProbeRp, p: &Probe, _: SimTime, _: &mut SimRng) {
        rp.on_returned(p);
    }

    fn rate_bps(rp: &PathProbeRp) -> f64 {
        rp.rate_bps()
    }

    fn feedback(rp: &PathProbeRp) -> Option<f64> {
        rp.path_queue_bytes()
    }

    /// Counts bytes to the next probe: neither rate, release nor timer moves.
    fn on_transmit(
        rp: &mut PathProbeRp,
        frame_bytes: u32,
        _: SimTime,
        _: &mut SimRng,
    ) -> (Option<Probe>, bool) {
        (rp.on_transmit(frame_bytes), false)
    }

    /// It never limits, so it is never released.
    fn is_released(_: &PathProbeRp) -> bool {
        false
    }

    fn new_np(_: &PathProbeParams) -> Option<PathProbeNp> {
        Some(PathProbeNp)
    }

    /// Returns every probe to its source.
    fn on_receive(np: &mut PathProbeNp, frame: NpFrame<'_, Probe>, _: SimTime) -> Option<Probe> {
        match frame.payload {
            Carried::Msg(p) => Some(np.on_probe(p)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_every_interval_stamped_with_the_longest_queue() {
        let p = PathProbeParams {
            interval_bytes: 3000,
            probe_bytes: 64,
        };
        let mut rp = PathProbeRp::new(&p, 10e9);
        assert_eq!(rp.on_transmit(1500), None);
        let mut probe = rp.on_transmit(1500).expect("3000 B sent");
        assert_eq!(rp.on_transmit(1000), None);
        let mut cp = PathProbeCp;
        cp.on_probe(&mut probe, 9_000);
        cp.on_probe(&mut probe, 4_000);
        let back = PathProbeNp.on_probe(&probe);
        assert_eq!(
            back,
            Probe {
                max_queue_bytes: 9_000,
                returned: true
            }
        );
        // A returned probe passing a queue is not restamped.
        let mut again = back;
        cp.on_probe(&mut again, 50_000);
        assert_eq!(again, back);
        rp.on_returned(&back);
        assert_eq!(rp.path_queue_bytes(), Some(9_000.0));
    }
}
