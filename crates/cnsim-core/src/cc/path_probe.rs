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

use crate::error::{Check, ConfigError};

/// `[congestion.path_probe]`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PathProbeParams {
    /// Data bytes sent to a destination between two probes.
    pub interval_bytes: u64,
    /// Size of a probe frame.
    pub probe_bytes: u32,
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
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.in_closed("interval_bytes", self.interval_bytes as f64, 64.0, 1e12)?;
        c.in_closed("probe_bytes", self.probe_bytes as f64, 64.0, 9216.0)
    }
}

/// The probe: forward (riding the data queue, stamped by CPs) or returned (to the RP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Longest queue met so far, bytes.
    pub max_queue_bytes: u64,
    pub returned: bool,
}

impl Probe {
    pub fn rides_data_queue(&self) -> bool {
        !self.returned
    }
}

pub struct PathProbeCp;

impl PathProbeCp {
    pub fn on_probe(&mut self, probe: &mut Probe, queue_bytes: u64) {
        if !probe.returned {
            probe.max_queue_bytes = probe.max_queue_bytes.max(queue_bytes);
        }
    }
}

pub struct PathProbeNp;

impl PathProbeNp {
    pub fn on_probe(&mut self, probe: &Probe) -> Probe {
        Probe {
            returned: true,
            ..*probe
        }
    }
}

pub struct PathProbeRp {
    line_rate_bps: f64,
    interval_bytes: u64,
    bytes_to_probe: u64,
    last_queue_bytes: Option<u64>,
    pub probes_returned: u64,
}

impl PathProbeRp {
    pub fn new(params: &PathProbeParams, line_rate_bps: f64) -> PathProbeRp {
        PathProbeRp {
            line_rate_bps,
            interval_bytes: params.interval_bytes,
            bytes_to_probe: params.interval_bytes,
            last_queue_bytes: None,
            probes_returned: 0,
        }
    }

    /// A data frame left: a probe follows every `interval_bytes`.
    pub fn on_transmit(&mut self, frame_bytes: u32) -> Option<Probe> {
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

    pub fn on_returned(&mut self, probe: &Probe) {
        self.last_queue_bytes = Some(probe.max_queue_bytes);
        self.probes_returned += 1;
    }

    pub fn rate_bps(&self) -> f64 {
        self.line_rate_bps
    }

    pub fn path_queue_bytes(&self) -> Option<f64> {
        self.last_queue_bytes.map(|b| b as f64)
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
