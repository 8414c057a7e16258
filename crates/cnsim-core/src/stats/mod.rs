//! Counters kept while the simulation runs, and the periodic-probe recorder.

mod recorder;

pub use recorder::{Recorder, TimeSeries};

/// Where a frame was dropped. Every drop is counted at its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropPlace {
    /// Host transmit buffer of a flow without a rate limiter.
    Nic = 0,
    /// Rate-limiter queue (RLQ) of a flow with an active rate limiter (the seeds' "drops at RP").
    Rp = 1,
    /// A switch input partition was full (seed 003 without PAUSE).
    Ingress = 2,
    /// Switch shared memory was full.
    Shared = 3,
    /// A switch output queue limit (at a congestion point: the seeds' "drops at CP").
    Egress = 4,
    /// Host receive buffer.
    Rx = 5,
}

pub const DROP_PLACES: [(DropPlace, &str); 6] = [
    (DropPlace::Nic, "nic"),
    (DropPlace::Rp, "rp"),
    (DropPlace::Ingress, "ingress"),
    (DropPlace::Shared, "shared"),
    (DropPlace::Egress, "egress"),
    (DropPlace::Rx, "rx"),
];

/// Control frame kinds, for counting control traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlKind {
    Xoff = 0,
    Xon = 1,
    Cnm = 2,
    BcnNegative = 3,
    BcnPositive = 4,
    BcnMax = 5,
    Bcn00 = 6,
    PathProbe = 7,
    Cnp = 8,
    PfcXoff = 9,
    PfcXon = 10,
    E2cmProbe = 11,
}

pub const CONTROL_KINDS: [(ControlKind, &str); 12] = [
    (ControlKind::Xoff, "pause_xoff"),
    (ControlKind::Xon, "pause_xon"),
    (ControlKind::Cnm, "qcn_cnm"),
    (ControlKind::BcnNegative, "bcn_negative"),
    (ControlKind::BcnPositive, "bcn_positive"),
    (ControlKind::BcnMax, "bcn_max"),
    (ControlKind::Bcn00, "bcn_00"),
    (ControlKind::PathProbe, "path_probe"),
    (ControlKind::Cnp, "dcqcn_cnp"),
    (ControlKind::PfcXoff, "pfc_xoff"),
    (ControlKind::PfcXon, "pfc_xon"),
    (ControlKind::E2cmProbe, "e2cm_probe"),
];

/// Whole-network counters.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    pub generated: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub dropped: [u64; 6],
    pub control_sent: [u64; 12],
    /// Scheme messages riding the data queue that a full buffer turned away.
    pub control_dropped: u64,
    pub control_bytes: u64,
    /// A frame crossing one link is one hop.
    pub frame_hops: u64,
    /// Sum of delivered frames' end-to-end latency, seconds.
    pub latency_sum_s: f64,
    pub latency_max_s: f64,
}

impl Counters {
    pub fn drop(&mut self, place: DropPlace) {
        self.dropped[place as usize] += 1;
    }

    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }

    pub fn control(&mut self, kind: ControlKind, bytes: u32) {
        self.control_sent[kind as usize] += 1;
        self.control_bytes += bytes as u64;
    }
}

/// Per-host traffic counters (as a source and as a sink).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostCounters {
    pub generated_frames: u64,
    pub generated_bytes: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub dropped_frames: u64,
    pub rx_frames: u64,
    pub rx_bytes: u64,
}

impl HostCounters {
    pub fn minus(&self, earlier: &HostCounters) -> HostCounters {
        HostCounters {
            generated_frames: self.generated_frames - earlier.generated_frames,
            generated_bytes: self.generated_bytes - earlier.generated_bytes,
            tx_frames: self.tx_frames - earlier.tx_frames,
            tx_bytes: self.tx_bytes - earlier.tx_bytes,
            dropped_frames: self.dropped_frames - earlier.dropped_frames,
            rx_frames: self.rx_frames - earlier.rx_frames,
            rx_bytes: self.rx_bytes - earlier.rx_bytes,
        }
    }
}

/// Jain's fairness index (sum x)^2 / (n * sum x^2); 1 when all equal. None for no values.
pub fn jain_fairness(values: &[f64]) -> Option<f64> {
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    let sum_sq: f64 = values.iter().map(|x| x * x).sum();
    if values.is_empty() || sum_sq == 0.0 {
        return None;
    }
    Some(sum * sum / (n * sum_sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain_fairness(&[1.0, 1.0, 1.0, 1.0]), Some(1.0));
        assert!((jain_fairness(&[1.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        // seed 002's table: 2.44, 3.54, 1.44, 2.58 Gb/s
        let j = jain_fairness(&[2.44, 3.54, 1.44, 2.58]).unwrap();
        // 10^2 / (4 x 27.2152) = 0.91860
        assert!((j - 0.91860).abs() < 1e-4, "{j}");
        assert_eq!(jain_fairness(&[]), None);
    }
}
