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

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
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
    /// one link round trip x rate + 2 MTU (protocols.md section 1). A number of bytes for every
    /// port, or "auto": each port's own worst case from its link (`Headroom::auto_bytes`).
    pub(crate) headroom_bytes: Headroom,
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

/// `headroom_bytes`: one size for every (ingress port, lossless class), or each port's own.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged, expecting = "a number of bytes or \"auto\"")]
pub(crate) enum Headroom {
    Bytes(f64),
    /// "auto": each port's worst case from its link (`Headroom::auto_bytes`).
    Auto(AutoKeyword),
}

/// The keyword "auto".
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AutoKeyword {
    Auto,
}

/// Inline in the property (not a `$ref`), so that the property's schema is the number, the
/// keyword and, added with every byte field's (`units.rs`), the unit string.
impl JsonSchema for Headroom {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Headroom".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "number", "minimum": 0 },
                { "type": "string", "enum": ["auto"] }
            ]
        })
    }
}

/// The two directions of the link behind a switch's ingress port, as `Headroom::auto_bytes`
/// reads them: the upstream sender's (`in_`) and the switch's own back to it (`out`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeadroomLink {
    pub(crate) in_rate_bps: f64,
    pub(crate) in_delay_s: f64,
    pub(crate) out_rate_bps: f64,
    pub(crate) out_delay_s: f64,
}

impl Headroom {
    pub(crate) fn is_auto(&self) -> bool {
        matches!(self, Headroom::Auto(_))
    }

    /// The headroom of an ingress port: the fixed size, or (auto) the most that can arrive
    /// after the frame that crosses XOFF, in cnsim's model of the pause (docs/pfc.md):
    /// - that frame itself (it goes to the headroom: at most `max_frame_bytes`);
    /// - what the upstream sends until the PFC frame stops it: the PFC frame waits for the frame
    ///   the switch's port is sending and for up to one PFC frame per lossless class ahead of
    ///   it (`control_frames`), is sent, and crosses the link back (`out_delay_s`, the
    ///   upstream's ingress latency included), all at `in_rate_bps`;
    /// - what was already on the link towards the switch (`in_delay_s` at `in_rate_bps`);
    /// - the frame the upstream had started when the pause reached it (a paused class stops
    ///   after the frame in progress).
    ///
    /// `max_frame_bytes` and `control_frame_bytes` include the wire overhead; rates are line
    /// rates (a lower scheduled rate only shortens the bound).
    pub(crate) fn auto_bytes(
        link: HeadroomLink,
        max_frame_bytes: u32,
        control_frame_bytes: u32,
        control_frames: u32,
    ) -> u64 {
        let ahead_bits = 8.0 * f64::from(max_frame_bytes + control_frames * control_frame_bytes);
        let reaction_s = ahead_bits / link.out_rate_bps + link.out_delay_s + link.in_delay_s;
        // Rounded up, less a millionth of a byte of floating-point error (1 us is not exact in
        // binary: 40 Gb/s over 1 us links with 1 KB frames computes 11,064.000000000002 B).
        let arriving_bytes = (link.in_rate_bps * reaction_s / 8.0 - 1e-6).ceil() as u64;
        arriving_bytes + 2 * u64::from(max_frame_bytes)
    }
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
            headroom_bytes: Headroom::Bytes(30_000.0),
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
        if let Headroom::Bytes(bytes) = self.headroom_bytes {
            c.in_closed("headroom_bytes", bytes, 0.0, MAX_BYTES)?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn link(in_rate_bps: f64, out_rate_bps: f64, delay_s: f64) -> HeadroomLink {
        HeadroomLink {
            in_rate_bps,
            in_delay_s: delay_s,
            out_rate_bps,
            out_delay_s: delay_s,
        }
    }

    #[test]
    fn auto_headroom_is_the_reaction_time_at_the_upstream_rate_plus_two_frames() {
        // 10 Gb/s, 1 us each way, 1500 B frames, one 64 B PFC frame: the switch's frame in
        // progress and the PFC frame (1,564 B: 1.2512 us) plus 2 us of links = 3.2512 us at
        // 1.25 GB/s = 4,064 B, plus the frame that crossed XOFF and the upstream's frame in
        // progress (3,000 B).
        assert_eq!(
            Headroom::auto_bytes(link(10e9, 10e9, 1e-6), 1500, 64, 1),
            7_064
        );
        // 400 Gb/s, 1 KB frames: 1,064 B take 21.28 ns; 2.02128 us at 50 GB/s = 101,064 B. The
        // default 30 KB holds under a third of it.
        assert_eq!(
            Headroom::auto_bytes(link(400e9, 400e9, 1e-6), 1000, 64, 1),
            103_064
        );
        // A 40 Gb/s upstream behind a 10 Gb/s port, two lossless classes (two PFC frames may
        // wait): 1,628 B at 10 Gb/s = 1.3024 us, + 2 us, at 5 GB/s = 16,512 B; + 3,000 B.
        assert_eq!(
            Headroom::auto_bytes(link(40e9, 10e9, 1e-6), 1500, 64, 2),
            19_512
        );
    }

    #[test]
    fn headroom_reads_a_number_or_auto() {
        let read = |text: &str| toml::from_str::<PfcSpec>(text).map(|s| s.headroom_bytes);
        assert_eq!(
            read("headroom_bytes = 5000").unwrap(),
            Headroom::Bytes(5000.0)
        );
        assert!(read("headroom_bytes = \"auto\"").unwrap().is_auto());
        let err = read("headroom_bytes = \"automatic\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("a number of bytes or \"auto\""), "{err}");
    }
}
