//! The summary's `pfc` section: per priority class, what PFC did over the run (frames sent and
//! received, time paused, headroom used and overrun) and one plain line saying why it did or
//! did not fire, so a user never has to guess from the counters.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::net::switch_pfc::PfcClassStats;
use crate::net::Node;
use crate::scenario::pfc::Headroom;
use crate::scenario::{PfcSpec, PfcThreshold, N_CLASSES};
use crate::time::SimTime;

/// `summary.pfc`: null without `[pfc]`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PfcSummary {
    /// The class-enable vector that ran.
    pub(crate) lossless_classes: Vec<u8>,
    /// `static` or `dynamic`.
    pub(crate) threshold: PfcThreshold,
    /// True when `headroom_bytes = "auto"` sized each ingress port's headroom from its link
    /// (absent otherwise).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) headroom_auto: bool,
    /// Per class ("0".."7"): the lossless classes and every class that carried traffic.
    pub(crate) classes: BTreeMap<String, PfcClassSummary>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PfcClassSummary {
    pub(crate) lossless: bool,
    /// Frames of the class that arrived at a switch, dropped ones included: data, and the
    /// transports' ACKs and NACKs, which ride the class of the data they answer.
    pub(crate) frames_at_switches: u64,
    /// PFC frames sent for the class (by switches, and by hosts with `host_rx`), refreshes
    /// included; a frame that a newer one replaced before it left is not counted.
    pub(crate) xoff_sent: u64,
    pub(crate) xon_sent: u64,
    /// PFC frames for the class that reached a port (switches and hosts).
    pub(crate) frames_received: u64,
    /// Time the class was paused, summed over all ports that sent it.
    pub(crate) paused_s: f64,
    /// Time paused per transmitting port ("node->peer"), ports never paused left out.
    pub(crate) paused_s_by_port: BTreeMap<String, f64>,
    /// The largest byte count of one (ingress port, class) outside headroom, and the XOFF in
    /// force at that moment (dynamic thresholds move).
    pub(crate) peak_ingress_bytes: u64,
    pub(crate) xoff_at_peak_bytes: u64,
    /// Most headroom one (ingress port, class) used, and the configured headroom (with
    /// `headroom_auto`, the largest any switch ingress port was given).
    pub(crate) max_headroom_bytes: u64,
    pub(crate) headroom_bytes: u64,
    /// The headroom of the (ingress port, class) that used `max_headroom_bytes` (the one the
    /// "why" line compares it with; not in the summary, where `headroom_bytes` says it unless
    /// it is "auto").
    #[serde(skip)]
    pub(crate) headroom_at_max_bytes: u64,
    /// A link ("upstream->switch") whose frames overran a headroom, for the "why" line: the
    /// first to overflow at the first switch, in scenario order, where one did (not
    /// necessarily the first in time when several switches overflowed).
    #[serde(skip)]
    pub(crate) first_overflow_port: Option<String>,
    /// Frames dropped because the headroom was overrun (lossless classes; in
    /// `frames.dropped.ingress`).
    pub(crate) headroom_overflow_drops: u64,
    /// Frames dropped at the switches' buffer limits (lossy classes).
    pub(crate) lossy_drops: u64,
    /// Frames of the class dropped at hosts' receive queues for want of room (in
    /// `frames.dropped.rx`): for a lossless class, losses PFC did not prevent.
    pub(crate) rx_drops: u64,
    /// The first host in scenario order that dropped frames of the class, for the "why" line.
    #[serde(skip)]
    pub(crate) first_rx_drop: Option<RxDropHost>,
    /// Why PFC did or did not fire for the class, in one line.
    pub(crate) why: String,
}

/// A host whose receive queue dropped frames of a class, and what its buffer holds against
/// what PFC needs of it.
#[derive(Clone, Debug)]
pub(crate) struct RxDropHost {
    name: String,
    rx_buffer_bytes: u64,
    /// With `host_rx`: its XOFF and the most that can arrive after it (`ReceiverPfc`).
    xoff: Option<(u64, u64)>,
}

/// Per class: frames dropped at hosts' receive queues, and the first host that dropped some.
fn rx_drops(nodes: &[Node]) -> [(u64, Option<RxDropHost>); N_CLASSES] {
    let mut drops: [(u64, Option<RxDropHost>); N_CLASSES] = Default::default();
    for node in nodes {
        let Node::Host(h) = node else { continue };
        let Some(by_class) = &h.rx.dropped_by_class else {
            continue;
        };
        for ((total, first), &n) in drops.iter_mut().zip(by_class.iter()) {
            *total += n;
            if n > 0 && first.is_none() {
                *first = Some(RxDropHost {
                    name: h.name.clone(),
                    rx_buffer_bytes: h.rx.limit_bytes.unwrap_or(u64::MAX),
                    xoff: (h.rx.pfc.as_ref()).map(|p| (p.xoff_bytes, p.arriving_after_xoff_bytes)),
                });
            }
        }
    }
    drops
}

pub(crate) fn summarize(spec: &PfcSpec, nodes: &[Node], now: SimTime) -> PfcSummary {
    let mut stats = [PfcClassStats::default(); N_CLASSES];
    let mut xoff_sent = [0u64; N_CLASSES];
    let mut xon_sent = [0u64; N_CLASSES];
    let mut received = [0u64; N_CLASSES];
    let mut paused: [BTreeMap<String, f64>; N_CLASSES] = Default::default();
    let mut largest_headroom = 0u64;
    let mut first_overflow: [Option<String>; N_CLASSES] = Default::default();
    for node in nodes {
        if let Node::Switch(sw) = node {
            if let Some(pfc) = &sw.pfc {
                for (total, s) in stats.iter_mut().zip(&pfc.stats) {
                    merge(total, s);
                }
                for (first, s) in first_overflow.iter_mut().zip(&pfc.stats) {
                    if first.is_none() {
                        *first = s.first_overflow_port.map(|p| upstream_name(nodes, sw, p));
                    }
                }
                let largest = pfc.headroom_bytes.iter().max();
                largest_headroom = largest_headroom.max(largest.copied().unwrap_or(0));
            }
        }
        for port in node.ports() {
            let Some(state) = &port.pfc else { continue };
            for c in 0..N_CLASSES {
                let lane = state.lane(c);
                let (xoff, xon) = lane.frames_sent();
                xoff_sent[c] += xoff;
                xon_sent[c] += xon;
                received[c] += lane.frames_received();
                let t = lane.paused_time(now);
                if t > SimTime::ZERO {
                    paused[c].insert(port.name.clone(), t.as_secs_f64());
                }
            }
        }
    }
    let headroom_bytes = match spec.headroom_bytes {
        Headroom::Bytes(bytes) => bytes.round() as u64,
        Headroom::Auto(_) => largest_headroom,
    };
    let lossless = spec.lossless_mask();
    let mut rx_drops = rx_drops(nodes);
    let mut classes = BTreeMap::new();
    for c in 0..N_CLASSES {
        let is_lossless = lossless & (1 << c) != 0;
        let s = &stats[c];
        if !is_lossless && s.arrived_frames == 0 {
            continue;
        }
        let mut class = PfcClassSummary {
            lossless: is_lossless,
            frames_at_switches: s.arrived_frames,
            xoff_sent: xoff_sent[c],
            xon_sent: xon_sent[c],
            frames_received: received[c],
            paused_s: paused[c].values().fold(0.0, |sum, t| sum + t),
            paused_s_by_port: std::mem::take(&mut paused[c]),
            peak_ingress_bytes: s.peak_ingress_bytes,
            xoff_at_peak_bytes: s.xoff_at_peak_bytes,
            max_headroom_bytes: s.max_headroom_bytes,
            headroom_bytes,
            headroom_at_max_bytes: s.headroom_at_max_bytes,
            first_overflow_port: first_overflow[c].take(),
            headroom_overflow_drops: s.headroom_overflow_drops,
            lossy_drops: s.lossy_drops,
            rx_drops: rx_drops[c].0,
            first_rx_drop: rx_drops[c].1.take(),
            why: String::new(),
        };
        class.why = why(c, &class, spec.threshold);
        classes.insert(c.to_string(), class);
    }
    PfcSummary {
        lossless_classes: spec.lossless_classes.clone(),
        threshold: spec.threshold,
        headroom_auto: spec.headroom_bytes.is_auto(),
        classes,
    }
}

/// The name of the port that sends into `sw`'s port `port` ("upstream->switch").
fn upstream_name(nodes: &[Node], sw: &crate::net::switch::Switch, port: u16) -> String {
    let p = &sw.ports[port as usize];
    nodes[p.peer_node as usize].ports()[p.peer_port as usize]
        .name
        .clone()
}

fn merge(total: &mut PfcClassStats, s: &PfcClassStats) {
    total.arrived_frames += s.arrived_frames;
    if s.peak_ingress_bytes > total.peak_ingress_bytes {
        total.peak_ingress_bytes = s.peak_ingress_bytes;
        total.xoff_at_peak_bytes = s.xoff_at_peak_bytes;
    }
    total.peak_fraction_of_xoff = total.peak_fraction_of_xoff.max(s.peak_fraction_of_xoff);
    if s.max_headroom_bytes > total.max_headroom_bytes {
        total.max_headroom_bytes = s.max_headroom_bytes;
        total.headroom_at_max_bytes = s.headroom_at_max_bytes;
    }
    total.headroom_overflow_drops += s.headroom_overflow_drops;
    total.lossy_drops += s.lossy_drops;
}

/// Bytes as a short human figure to three digits: "19.5 KB", "40 KB", "1.2 MB", "800 B".
fn kb(bytes: u64) -> String {
    let (value, unit) = match bytes {
        b if b >= 1_000_000 => (b as f64 / 1e6, "MB"),
        b if b >= 1_000 => (b as f64 / 1e3, "KB"),
        b => return format!("{b} B"),
    };
    let digits = if value >= 100.0 { 0 } else { 1 };
    let text = format!("{value:.digits$}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {unit}")
}

/// The headroom of the lane that used the most of its own; before any lane used headroom, the
/// configured one (with "auto", the largest).
fn headroom_of_busiest_lane(s: &PfcClassSummary) -> u64 {
    if s.max_headroom_bytes > 0 {
        s.headroom_at_max_bytes
    } else {
        s.headroom_bytes
    }
}

fn why(c: usize, s: &PfcClassSummary, threshold: PfcThreshold) -> String {
    if !s.lossless {
        return format!(
            "lossy: class {c} is not in lossless_classes, so PFC never pauses it; {} frames \
             dropped at the switches' buffer limits",
            s.lossy_drops
        );
    }
    let mut line = fired_or_not(c, s, threshold);
    if s.headroom_overflow_drops > 0 {
        let first = (s.first_overflow_port.as_deref()).map_or(String::new(), |link| {
            format!(", among them frames from {link}")
        });
        line.push_str(&format!(
            "; {} frames overran the headroom and were dropped{first} (headroom_bytes is below \
             what arrives in the pause's reaction time: link rate x round trip + 2 MTU; \
             headroom_bytes = \"auto\" sizes each port's for its link)",
            s.headroom_overflow_drops
        ));
    }
    if let Some(host) = &s.first_rx_drop {
        line.push_str(&rx_losses(s.rx_drops, host));
    } else if s.xoff_sent > 0 && s.headroom_overflow_drops == 0 {
        line.push_str("; no frame lost");
    }
    line
}

/// The first part of the "why" line: whether PFC fired for the lossless class `c`, and why.
fn fired_or_not(c: usize, s: &PfcClassSummary, threshold: PfcThreshold) -> String {
    if s.frames_at_switches == 0 {
        return format!("never fired: no frame of class {c} entered a switch");
    }
    let peak = kb(s.peak_ingress_bytes);
    let xoff = kb(s.xoff_at_peak_bytes);
    if s.xoff_sent == 0 {
        return match threshold {
            PfcThreshold::Static => {
                format!("never fired: peak ingress bytes of class {c} were {peak} < XOFF {xoff}")
            }
            PfcThreshold::Dynamic => format!(
                "never fired: peak ingress bytes of class {c} were {peak}, below the dynamic \
                 XOFF ({xoff} at that moment)"
            ),
        };
    }
    format!(
        "fired: {} XOFF sent; ingress bytes of class {c} reached XOFF (peak {peak}, XOFF {xoff} \
         then); headroom used up to {} of {}",
        s.xoff_sent,
        kb(s.max_headroom_bytes),
        kb(headroom_of_busiest_lane(s))
    )
}

/// The "why" line's account of a lossless class's frames lost at hosts' receive queues, and
/// what the first host's buffer lacks: a host has no headroom, so with `host_rx` its
/// `rx_buffer_bytes` must hold its XOFF and what arrives after it.
fn rx_losses(drops: u64, host: &RxDropHost) -> String {
    let RxDropHost {
        name,
        rx_buffer_bytes,
        xoff,
    } = host;
    let reason = match *xoff {
        None => "hosts send no PFC: host_rx = false".to_string(),
        Some((xoff_bytes, arriving)) if *rx_buffer_bytes < xoff_bytes + arriving => format!(
            "its rx_buffer_bytes of {} hold less than xoff_bytes {} and the {} that can arrive \
             after its XOFF: rx_buffer_bytes >= {}",
            kb(*rx_buffer_bytes),
            kb(xoff_bytes),
            kb(arriving),
            xoff_bytes + arriving
        ),
        // The bound says this cannot happen: say so rather than blame the buffer.
        Some((xoff_bytes, arriving)) => format!(
            "its rx_buffer_bytes of {} hold xoff_bytes {} and the {} that can arrive after its \
             XOFF, yet it dropped",
            kb(*rx_buffer_bytes),
            kb(xoff_bytes),
            kb(arriving)
        ),
    };
    format!("; {drops} frames dropped at hosts' receive queues, among them at {name} ({reason})")
}

#[cfg(test)]
mod tests {
    use super::kb;

    #[test]
    fn byte_figures_keep_three_digits() {
        assert_eq!(kb(800), "800 B");
        assert_eq!(kb(1_500), "1.5 KB");
        assert_eq!(kb(19_500), "19.5 KB");
        assert_eq!(kb(40_000), "40 KB");
        assert_eq!(kb(123_456), "123 KB");
        assert_eq!(kb(12_000_000), "12 MB");
    }
}
