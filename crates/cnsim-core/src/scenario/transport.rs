//! End-host transports in the scenario: `transport = "none" | "roce" | "irn" | "tcp"` on a
//! flow, saturate or cbr entry, the `[transport]` table (each transport's parameters, and the
//! explicit drop list for tests).
//! The run-time state machines are in `net/host/transport/`; the reference is docs/transport.md.

use std::collections::{HashMap, HashSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Scenario, TrafficKind, TrafficSpec};
use crate::error::{Check, ConfigError};

/// What carries a flow's bytes.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Transport {
    /// Open loop (raw Ethernet): frames are cut and sent once; nothing comes back; a flow that
    /// loses a frame never completes.
    #[default]
    None,
    /// RoCEv2 reliable connection: per-flow packet sequence numbers, ACK every `ack_every`
    /// packets, one NACK per gap, go-back-N, a retransmission timeout
    /// (`[transport.roce]`, docs/transport.md).
    Roce,
    /// TCP with NewReno congestion control: cumulative ACKs, fast retransmit and recovery,
    /// optional one-block SACK, an RTO from SRTT/RTTVAR, optional delayed ACKs
    /// (`[transport.tcp]`, docs/transport.md).
    Tcp,
    /// IRN (Mittal et al., SIGCOMM 2018): selective repeat with a SACK bitmap, RTO_low /
    /// RTO_high, and the BDP cap on packets in flight (`[transport.irn]`, docs/transport.md).
    Irn,
}

impl Transport {
    pub(crate) fn is_none(&self) -> bool {
        *self == Transport::None
    }
}

/// `[transport]`: every transport's parameters, and frames to drop on purpose (tests).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TransportSpec {
    /// RoCE's parameters; filled with the defaults when a traffic entry uses roce, so the
    /// resolved scenario shows the constants that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) roce: Option<RoceParams>,
    /// TCP's parameters; filled with the defaults when a traffic entry uses tcp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tcp: Option<TcpParams>,
    /// IRN's parameters; filled with the defaults (and the computed BDP cap) when a traffic
    /// entry uses irn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) irn: Option<IrnParams>,
    /// Data frames lost on purpose on their sender's link: the first transmission of packet
    /// `psn` of flow `flow` (a transported flow's id, its index in start order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) drop: Vec<DropSpec>,
}

/// One frame the sender's link loses (its first transmission only).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DropSpec {
    pub(crate) flow: u32,
    /// Packet sequence number (0-based: the flow's first frame is 0).
    pub(crate) psn: u32,
}

/// `[transport.roce]` (docs/transport.md gives each default's source).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RoceParams {
    /// The receiver ACKs every this many in-order packets (and always the flow's last one).
    pub(crate) ack_every: u32,
    /// Retransmission timeout: with no ACK progress for this long, the sender goes back to the
    /// first unacknowledged packet.
    pub(crate) rto_s: f64,
    /// Size of ACK and NACK frames on the wire.
    pub(crate) ack_bytes: u32,
}

impl Default for RoceParams {
    fn default() -> Self {
        RoceParams {
            ack_every: 1,
            rto_s: 320e-6,
            ack_bytes: 64,
        }
    }
}

/// `[transport.tcp]` (docs/transport.md gives each default's source). Counts are in packets
/// of the flow's `frame_bytes` (its MSS).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct TcpParams {
    /// The RTO's floor (Linux: 200 ms; data-center studies use about 1 ms or less).
    pub(crate) min_rto_s: f64,
    /// The RTO's ceiling after exponential backoff (RFC 6298 2.5: at least 60 s).
    pub(crate) max_rto_s: f64,
    /// The RTO before the first RTT sample (RFC 6298 2.1: 1 s).
    pub(crate) initial_rto_s: f64,
    /// The congestion window at the start, in packets (RFC 6928: 10).
    pub(crate) initial_cwnd_packets: u32,
    /// The longest an in-order ACK waits for a second packet; 0: ACK every packet.
    pub(crate) delayed_ack_s: f64,
    /// The receiver reports the packet that triggered each ACK and the sender keeps a SACK
    /// scoreboard (RFC 2018, RFC 6675); false: NewReno from duplicate ACKs alone (RFC 6582).
    pub(crate) sack: bool,
    /// Size of ACK frames on the wire.
    pub(crate) ack_bytes: u32,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681: 3).
    pub(crate) dupack_threshold: u32,
}

impl Default for TcpParams {
    fn default() -> Self {
        TcpParams {
            min_rto_s: 200e-3,
            max_rto_s: 60.0,
            initial_rto_s: 1.0,
            initial_cwnd_packets: 10,
            delayed_ack_s: 0.0,
            sack: true,
            ack_bytes: 64,
            dupack_threshold: 3,
        }
    }
}

/// `[transport.irn]` (docs/transport.md gives each default's source: the IRN paper, Mittal et
/// al., SIGCOMM 2018, sections 3.1-3.3 and its evaluation's settings).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct IrnParams {
    /// The timeout while fewer than `rto_low_packets` packets are in flight.
    pub(crate) rto_low_s: f64,
    /// The timeout otherwise.
    pub(crate) rto_high_s: f64,
    /// N: RTO_low applies while fewer than N packets are in flight.
    pub(crate) rto_low_packets: u32,
    /// BDP-FC: a new packet is sent only while fewer than this many are in flight (PSN of the
    /// next new packet minus the cumulative ack). None in the input: computed from the
    /// topology (the longest path's round trip at the fastest link rate, in packets), and
    /// written in the resolved scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) bdp_cap_packets: Option<u32>,
    /// Size of ACK and NACK frames on the wire.
    pub(crate) ack_bytes: u32,
    /// The receiver ACKs every this many in-order packets (and the last; a NACK per
    /// out-of-order packet regardless).
    pub(crate) ack_every: u32,
}

impl Default for IrnParams {
    fn default() -> Self {
        IrnParams {
            rto_low_s: 100e-6,
            rto_high_s: 320e-6,
            rto_low_packets: 3,
            bdp_cap_packets: None,
            ack_bytes: 64,
            ack_every: 1,
        }
    }
}

impl TcpParams {
    fn validate(&self) -> Result<(), ConfigError> {
        let c = Check {
            path: "transport.tcp",
        };
        c.time_positive("min_rto_s", self.min_rto_s)?;
        c.time_positive("initial_rto_s", self.initial_rto_s)?;
        c.time_positive("max_rto_s", self.max_rto_s)?;
        if self.max_rto_s < self.min_rto_s {
            return Err(c.fail(
                "max_rto_s",
                format!(
                    "must be >= min_rto_s = {} (got {})",
                    self.min_rto_s, self.max_rto_s
                ),
            ));
        }
        if self.initial_cwnd_packets == 0 {
            return Err(c.fail("initial_cwnd_packets", "must be >= 1 (got 0)"));
        }
        c.time_non_negative("delayed_ack_s", self.delayed_ack_s)?;
        if self.delayed_ack_s > 0.5 {
            return Err(c.fail(
                "delayed_ack_s",
                format!(
                    "must be at most 0.5 (RFC 1122: an ACK is delayed less than 500 ms; got {})",
                    self.delayed_ack_s
                ),
            ));
        }
        if !(64..=9216).contains(&self.ack_bytes) {
            return Err(c.fail(
                "ack_bytes",
                format!("must be in [64, 9216] (got {})", self.ack_bytes),
            ));
        }
        if self.dupack_threshold == 0 {
            return Err(c.fail("dupack_threshold", "must be >= 1 (got 0)"));
        }
        Ok(())
    }
}

impl Scenario {
    /// Shows each used transport's defaults in the resolved scenario; IRN's BDP cap and HPCC's
    /// T, when not given, are computed here from the topology ([`Scenario::irn_bdp_cap`],
    /// [`Scenario::hpcc_base_rtt_s`]).
    pub(crate) fn fill_transport_defaults(&mut self) {
        self.transport.fill_defaults(&self.traffic);
        if self
            .transport
            .irn
            .is_some_and(|p| p.bdp_cap_packets.is_none())
        {
            let cap = self.irn_bdp_cap();
            if let Some(p) = self.transport.irn.as_mut() {
                p.bdp_cap_packets = Some(cap);
            }
        }
        if self
            .congestion
            .hpcc
            .as_ref()
            .is_some_and(|h| h.base_rtt_s == 0.0)
        {
            let base_rtt_s = self.hpcc_base_rtt_s();
            if let (Some(h), Some(t)) = (self.congestion.hpcc.as_mut(), base_rtt_s) {
                h.base_rtt_s = t;
            }
        }
    }

    /// IRN's BDP cap: ceil(R x RTT / MTU), the bandwidth-delay product of the longest path in
    /// packets (IRN section 3.2 caps packets in flight at the BDP of the network), with R, RTT
    /// and MTU as [`Scenario::base_rtt_bound`] finds them for the irn entries. At least 1.
    pub(crate) fn irn_bdp_cap(&self) -> u32 {
        let ack_bytes = self.transport.irn.map_or(64, |p| p.ack_bytes);
        let bound = self.base_rtt_bound(|t| t.transport == Transport::Irn, ack_bytes);
        if bound.rate_bps <= 0.0 || !bound.rate_bps.is_finite() {
            return 1;
        }
        (bound.rate_bps * bound.rtt_s / bound.mtu_bits)
            .ceil()
            .clamp(1.0, f64::from(u32::MAX / 2)) as u32
    }

    /// HPCC's T when not given: [`Scenario::base_rtt_bound`] over every transported entry, with
    /// the roce ACK size (the paper's T is the network's base RTT; the ns-3 code's GLOBAL_T
    /// takes the largest). None without a host link.
    pub(crate) fn hpcc_base_rtt_s(&self) -> Option<f64> {
        let ack_bytes = self.transport.roce.map_or(64, |p| p.ack_bytes);
        let bound = self.base_rtt_bound(|t| !t.transport.is_none(), ack_bytes);
        (bound.rate_bps > 0.0 && bound.rate_bps.is_finite() && bound.rtt_s > 0.0)
            .then_some(bound.rtt_s)
    }

    /// An upper bound on the unloaded round trip of the longest path of the `entries` that
    /// match: H links (the most from the entry's first sender, or its first inline flow's, or
    /// the first host for a trace file, to any node, by breadth-first search; the diameter in
    /// a symmetric fabric), H x (the largest link delay plus an MTU's serialisation at R) out,
    /// H x (the delay plus an ACK of `ack_bytes` serialised) back, and the largest switch
    /// latency at each of the 2(H - 1) switches passed. R is the fastest host link's rate (a
    /// flow leaves its NIC at most at its rate); MTU the largest `frame_bytes` of a matching
    /// entry, with `model.wire_overhead_bytes`.
    fn base_rtt_bound(&self, entries: impl Fn(&TrafficSpec) -> bool, ack_bytes: u32) -> RttBound {
        let matching = || self.traffic.iter().filter(|t| entries(t));
        let hops = matching()
            .filter_map(|t| {
                let first_flow = t.flows.first().map(|f| &f.src);
                t.hosts
                    .first()
                    .or(first_flow)
                    .or(self.hosts.first().map(|h| &h.name))
            })
            .map(|src| self.eccentricity(src))
            .max()
            .unwrap_or(1)
            .max(1) as f64;
        let hosts: HashSet<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
        let rate_bps = (self.links.iter())
            .filter(|l| l.ends.iter().any(|e| hosts.contains(e.as_str())))
            .map(|l| l.rate_bps)
            .fold(0.0, f64::max);
        let delay = (self.links.iter())
            .map(|l| l.delay_s + l.delay_line_s)
            .fold(0.0, f64::max);
        let latency = self
            .switches
            .iter()
            .map(|s| s.latency_s)
            .fold(0.0, f64::max);
        let overhead = self.model.wire_overhead_bytes;
        let mtu_bits =
            8.0 * f64::from(matching().map(|t| t.frame_bytes).max().unwrap_or(1500) + overhead);
        let ack_bits = 8.0 * f64::from(ack_bytes + overhead);
        let rtt_s =
            hops * (2.0 * delay + (mtu_bits + ack_bits) / rate_bps) + 2.0 * (hops - 1.0) * latency;
        RttBound {
            rate_bps,
            rtt_s,
            mtu_bits,
        }
    }
}

/// What [`Scenario::base_rtt_bound`] finds.
struct RttBound {
    rate_bps: f64,
    rtt_s: f64,
    mtu_bits: f64,
}

impl Scenario {
    /// Links from `src` to the node farthest from it (breadth-first search).
    fn eccentricity(&self, src: &str) -> usize {
        let mut adjacent: HashMap<&str, Vec<&str>> = HashMap::new();
        for l in &self.links {
            adjacent.entry(&l.ends[0]).or_default().push(&l.ends[1]);
            adjacent.entry(&l.ends[1]).or_default().push(&l.ends[0]);
        }
        let mut seen: HashSet<&str> = HashSet::from([src]);
        let (mut frontier, mut depth) = (vec![src], 0);
        loop {
            let next: Vec<&str> = (frontier.iter())
                .flat_map(|n| adjacent.get(n).into_iter().flatten().copied())
                .filter(|n| seen.insert(n))
                .collect();
            if next.is_empty() {
                return depth;
            }
            frontier = next;
            depth += 1;
        }
    }
}

impl TransportSpec {
    pub(crate) fn is_default(&self) -> bool {
        *self == TransportSpec::default()
    }

    /// Shows RoCE's and TCP's defaults in the resolved scenario when a traffic entry uses roce.
    pub(crate) fn fill_defaults(&mut self, traffic: &[TrafficSpec]) {
        if traffic.iter().any(|t| t.transport == Transport::Roce) {
            self.roce.get_or_insert_with(RoceParams::default);
        }
        if traffic.iter().any(|t| t.transport == Transport::Tcp) {
            self.tcp.get_or_insert_with(TcpParams::default);
        }
        if traffic.iter().any(|t| t.transport == Transport::Irn) {
            self.irn.get_or_insert_with(IrnParams::default);
        }
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if let Some(r) = &self.roce {
            let c = Check {
                path: "transport.roce",
            };
            if r.ack_every == 0 {
                return Err(c.fail("ack_every", "must be >= 1 (got 0)"));
            }
            c.time_positive("rto_s", r.rto_s)?;
            if !(64..=9216).contains(&r.ack_bytes) {
                return Err(c.fail(
                    "ack_bytes",
                    format!("must be in [64, 9216] (got {})", r.ack_bytes),
                ));
            }
        }
        if let Some(t) = &self.tcp {
            t.validate()?;
        }
        if let Some(p) = &self.irn {
            p.validate()?;
        }
        Ok(())
    }
}

impl IrnParams {
    fn validate(&self) -> Result<(), ConfigError> {
        let c = Check {
            path: "transport.irn",
        };
        c.time_positive("rto_low_s", self.rto_low_s)?;
        c.time_positive("rto_high_s", self.rto_high_s)?;
        if self.rto_low_s > self.rto_high_s {
            return Err(c.fail(
                "rto_low_s",
                format!(
                    "must be <= rto_high_s (got {} > {})",
                    self.rto_low_s, self.rto_high_s
                ),
            ));
        }
        if self.bdp_cap_packets == Some(0) {
            return Err(c.fail("bdp_cap_packets", "must be >= 1 (got 0)"));
        }
        if self.ack_every == 0 {
            return Err(c.fail("ack_every", "must be >= 1 (got 0)"));
        }
        if !(64..=9216).contains(&self.ack_bytes) {
            return Err(c.fail(
                "ack_bytes",
                format!("must be in [64, 9216] (got {})", self.ack_bytes),
            ));
        }
        Ok(())
    }
}

/// `traffic[i].transport`: flow entries carry a transport (incasts' flows too), and `saturate`
/// and `cbr` sources (one long flow per sending host, docs/transport.md "Long flows"); a
/// Bernoulli source's frames are no flow.
pub(crate) fn check_entry(t: &TrafficSpec, path: &str) -> Result<(), ConfigError> {
    if !t.transport.is_none() && t.kind == TrafficKind::Bernoulli {
        return Err(Check { path }.fail(
            "transport",
            "applies to kind = \"flows\", \"flow_trace\", \"incast\", \"saturate\" and \"cbr\" \
             (got kind = \"bernoulli\": its frames are independent arrivals, not a flow)",
        ));
    }
    Ok(())
}
