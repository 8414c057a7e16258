//! `[pfc]`: IEEE 802.1Qbb priority-based flow control and the per-class output scheduler.
//!
//! Every switch output port has eight class queues (802.1Q priorities 0-7) served by the
//! scheduler given here, strict priority by default (class 7 first). With `[pfc]` in the
//! scenario, every switch counts the bytes each ingress port holds per class, and pauses the
//! upstream sender of a lossless class (one in `lossless_classes`, the class-enable vector) with
//! a PFC frame when that count passes XOFF: a static byte count, or dynamic, a fraction `alpha`
//! of the switch's free shared buffer (protocols.md section 5). Frames that keep arriving while
//! the pause takes effect go to the (port, class)'s headroom; lossless classes never drop unless
//! that headroom is overrun (a headroom overflow, counted). Lossy classes drop at the switch's
//! buffer limits as before. Without `[pfc]` nothing is paused per class and every class is
//! lossy (the switch's own limits and 802.3x PAUSE apply, as they always did).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Check, ConfigError, MAX_BYTES};
use crate::scenario::flows::MAX_PRIORITY;
use crate::scenario::DEFAULT_XOFF_QUANTA;

/// Number of priority classes (802.1Q).
pub(crate) const N_CLASSES: usize = 8;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct PfcSpec {
    /// The class-enable vector: classes that are paused per class and never dropped (the
    /// others are lossy). RoCE deployments commonly use class 3.
    pub(crate) lossless_classes: Vec<u8>,
    /// How XOFF is set per (ingress port, class).
    pub(crate) threshold: PfcThreshold,
    /// Static threshold: send XOFF when the (ingress port, class) holds more than this.
    pub(crate) xoff_bytes: f64,
    /// Static threshold: send XON when it holds less than this (and no headroom is in use).
    pub(crate) xon_bytes: f64,
    /// Dynamic threshold: XOFF = alpha x (shared_buffer_bytes - bytes buffered outside
    /// headroom), re-evaluated at every arrival and departure.
    pub(crate) alpha: f64,
    /// Dynamic threshold: XON when the count falls this far below the current XOFF.
    pub(crate) xon_offset_bytes: f64,
    /// Buffer per (ingress port, lossless class) for the bytes that arrive after XOFF: at least
    /// one link round trip x rate + 2 MTU (protocols.md section 1).
    pub(crate) headroom_bytes: f64,
    /// pause_time carried by XOFF, in quanta of 512 bit times (802.3x / 802.1Qbb); XOFF is
    /// re-sent every half pause_time while the condition holds; XON is pause_time 0.
    pub(crate) quanta: u16,
    /// How an output port picks the class to send next.
    pub(crate) scheduler: Scheduler,
    /// DWRR: bytes of credit per round for each class 0-7 (its weight).
    pub(crate) dwrr_quantum_bytes: Vec<u32>,
    /// Hosts with a receive queue (`rx_rate_bps`) send PFC too: XOFF for a lossless class when
    /// its bytes in the receive queue pass `xoff_bytes`, XON below `xon_bytes` (static
    /// thresholds; no headroom: size `rx_buffer_bytes` for what arrives after XOFF).
    pub(crate) host_rx: bool,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PfcThreshold {
    #[default]
    Static,
    /// A fraction `alpha` of the free shared buffer (needs `shared_buffer_bytes` on every switch).
    Dynamic,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Scheduler {
    /// The highest class with a frame it may send goes first (7 before 0).
    #[default]
    Strict,
    /// Deficit weighted round robin over the classes, `dwrr_quantum_bytes` per round.
    Dwrr,
}

impl Default for PfcSpec {
    fn default() -> Self {
        PfcSpec {
            lossless_classes: vec![3],
            threshold: PfcThreshold::Static,
            xoff_bytes: 40_000.0,
            xon_bytes: 20_000.0,
            alpha: 0.125,
            xon_offset_bytes: 3_000.0,
            headroom_bytes: 30_000.0,
            quanta: DEFAULT_XOFF_QUANTA,
            scheduler: Scheduler::Strict,
            dwrr_quantum_bytes: vec![1500; N_CLASSES],
            host_rx: false,
        }
    }
}

impl PfcSpec {
    /// The class-enable vector as a bit mask (bit c = class c is lossless).
    pub(crate) fn lossless_mask(&self) -> u8 {
        self.lossless_classes
            .iter()
            .fold(0u8, |m, &c| m | 1u8.checked_shl(c as u32).unwrap_or(0))
    }

    /// `shared_buffer_ok`: every switch has `shared_buffer_bytes` (dynamic thresholds need it).
    pub(crate) fn validate(&self, path: &str, shared_buffer_ok: bool) -> Result<(), ConfigError> {
        let c = Check { path };
        let mut seen = 0u8;
        for &class in &self.lossless_classes {
            if class > MAX_PRIORITY {
                return Err(c.fail(
                    "lossless_classes",
                    format!("must list classes in 0-{MAX_PRIORITY} (got {class})"),
                ));
            }
            if seen & (1 << class) != 0 {
                return Err(c.fail("lossless_classes", format!("class {class} is listed twice")));
            }
            seen |= 1 << class;
        }
        c.in_closed("headroom_bytes", self.headroom_bytes, 0.0, MAX_BYTES)?;
        c.bytes_positive("xoff_bytes", self.xoff_bytes)?;
        c.in_closed("xon_bytes", self.xon_bytes, 0.0, MAX_BYTES)?;
        if self.xon_bytes > self.xoff_bytes {
            return Err(c.fail(
                "xon_bytes",
                format!(
                    "must not exceed xoff_bytes ({} > {})",
                    self.xon_bytes, self.xoff_bytes
                ),
            ));
        }
        c.in_open_closed("alpha", self.alpha, 0.0, 64.0)?;
        c.in_closed("xon_offset_bytes", self.xon_offset_bytes, 0.0, MAX_BYTES)?;
        if self.threshold == PfcThreshold::Dynamic && !shared_buffer_ok {
            return Err(c.fail(
                "threshold",
                "\"dynamic\" needs shared_buffer_bytes on every switch \
                 (XOFF is a fraction of the free shared buffer)",
            ));
        }
        if self.quanta == 0 {
            return Err(c.fail("quanta", "must be at least 1 (0 is XON)"));
        }
        if self.dwrr_quantum_bytes.len() != N_CLASSES {
            return Err(c.fail(
                "dwrr_quantum_bytes",
                format!(
                    "must give one quantum per class, {N_CLASSES} (got {})",
                    self.dwrr_quantum_bytes.len()
                ),
            ));
        }
        if let Some(i) = self.dwrr_quantum_bytes.iter().position(|&q| q == 0) {
            return Err(ConfigError::field(
                format!("{path}.dwrr_quantum_bytes[{i}]"),
                "must be at least 1 byte",
            ));
        }
        Ok(())
    }
}
