//! What a scheme implements ([`CcScheme`]) and what its hooks see of a frame.
//!
//! `cc` names no network type: a frame reaches a hook as a [`CpFrame`] or an [`NpFrame`], the
//! few fields a scheme reads (and the ECN bit a CP may set) with the frame's payload narrowed to
//! the scheme's own message. `net::frame::Frame` makes these views ([`HookFrame`]), so `net`
//! depends on `cc` and never the other way round.

use std::fmt::Debug;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{CcMsg, CongestionSpec, MessageKind, Telemetry};
use crate::error::{Check, ConfigError, MAX_FRAME_BYTES};
use crate::rng::SimRng;
use crate::time::SimTime;

/// A host's index as frames carry it (the same type as `net::frame::HostId`).
pub(crate) type HostId = u32;

/// "No rate-limiter tag" (BCN): the frame did not pass a limiter installed by a CP.
pub(crate) const NO_TAG: u32 = u32::MAX;

/// The notification point of a scheme that has none: no value of it exists, so its hooks are
/// never called and its arms compile away.
pub(crate) type NoNp = std::convert::Infallible;

/// The sender controller of a scheme that has none (as [`NoNp`]).
pub(crate) type NoSender = std::convert::Infallible;

/// What a frame carries, as a scheme sees it.
#[derive(Debug, PartialEq)]
pub(crate) enum Carried<M> {
    /// A data frame.
    Data,
    /// A message of this scheme.
    Msg(M),
    /// Anything else (PAUSE, PFC).
    Other,
}

/// A frame at a congestion point (an output queue): what the CP hooks read, the ECN bit they
/// may set, and the frame's message, which a CP may stamp.
pub(crate) struct CpFrame<'a, M> {
    /// Originating host of a data frame (for a message, the host it is about).
    pub(crate) src: HostId,
    /// The data's destination (the RP's key at the source).
    pub(crate) flow: HostId,
    pub(crate) bytes: u32,
    /// The rate limiter's tag (BCN: its CPID), or [`NO_TAG`].
    pub(crate) rl_tag: u32,
    /// ECN Congestion Experienced: a CP may set it (DCQCN).
    pub(crate) ecn_ce: &'a mut bool,
    pub(crate) payload: Carried<&'a mut M>,
}

/// A frame that reached a host's notification point.
pub(crate) struct NpFrame<'a, M> {
    /// The host that sent the data (or that the message is about).
    pub(crate) src: HostId,
    /// The queue pair (flow id) of a transported flow's data, whose reaction point is per flow;
    /// None for open-loop data, whose reaction point is per source-destination pair.
    pub(crate) qp: Option<u32>,
    pub(crate) ecn_ce: bool,
    pub(crate) payload: Carried<&'a M>,
}

/// A frame as the hooks see it; implemented by `net::frame::Frame`. `own` picks one scheme's
/// message out of a [`CcMsg`] (the registry's arm passes its scheme's), so the frame's payload
/// is matched once: data, that scheme's message, or anything else.
pub(crate) trait HookFrame {
    /// The frame at a congestion point.
    fn at_cp<M>(&mut self, own: impl FnOnce(&mut CcMsg) -> Option<&mut M>) -> CpFrame<'_, M>;
    /// The frame at a notification point.
    fn at_np<M>(&self, own: impl FnOnce(&CcMsg) -> Option<&M>) -> NpFrame<'_, M>;
}

/// A scheme's frame (CNM, BCN) is a real frame: between the Ethernet minimum and a jumbo frame.
pub(crate) fn check_frame_bytes(c: &Check, field: &str, bytes: u32) -> Result<(), ConfigError> {
    if (64..=MAX_FRAME_BYTES).contains(&bytes) {
        Ok(())
    } else {
        Err(c.fail(
            field,
            format!("must be in [64, {MAX_FRAME_BYTES}] (an Ethernet frame; got {bytes})"),
        ))
    }
}

/// A `scheme = "..."` name of the scenario, with its documentation (the JSON Schema's).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Named {
    pub(crate) name: &'static str,
    /// Empty: undocumented.
    pub(crate) doc: &'static str,
}

/// How a limiter lets its next data frame go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Pacing {
    /// The rate the frame is paced at (`Limiter::rate_bps`).
    pub(crate) rate_bps: f64,
    /// The frame's rate-limiter tag (BCN: the CPID of the limiter's tag; else `NO_TAG`).
    pub(crate) tag: u32,
    /// Token-bucket depth: bytes the limiter may accrue at its rate while it waits (seed 004's
    /// paused RP keeps adding tokens); 0 = none beyond the frame being paced.
    pub(crate) bucket_bytes: f64,
}

/// What a data frame leaving through a limiter did to it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Transmitted {
    /// A frame of the RP's own to send (a probe), if any.
    pub(crate) msg: Option<CcMsg>,
    /// The rate, and so whether the limiter is released, or its timer may have changed: the
    /// host must look at them again. False lets it skip that look on most frames (the byte
    /// counters end a cycle every many frames).
    pub(crate) changed: bool,
}

/// A transported flow that starts, as its sender's congestion controller sees it.
#[derive(Clone, Copy, Debug)]
#[expect(
    dead_code,
    reason = "fields the registered schemes (DCTCP, TIMELY, Swift) do not read yet, for the schemes to come"
)]
pub(crate) struct FlowStart {
    /// The sending host's link rate.
    pub(crate) line_rate_bps: f64,
    /// The flow's packet size (its MSS; the last packet may be smaller).
    pub(crate) mss_bytes: u32,
    pub(crate) size_bytes: u64,
    pub(crate) now: SimTime,
    /// Switches on the flow's path (static routes, when it starts): Swift's per-hop scaling.
    pub(crate) hops: u32,
}

/// An ACK at the sender, as its congestion controller sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckEvent {
    pub(crate) now: SimTime,
    /// Bytes newly acknowledged cumulatively by this ACK.
    pub(crate) newly_acked_bytes: u64,
    /// Round-trip time from the echoed send time of the data frame that triggered the ACK
    /// (valid for a retransmission too: it is that transmission's time).
    pub(crate) rtt: SimTime,
    /// The part of `rtt` the receiver held the ACK for (delayed ACKs; 0 when it answered at
    /// once): Swift's endpoint delay, the rest being the fabric's.
    pub(crate) endpoint_delay: SimTime,
    /// ECN-Echo: the data frame that triggered it arrived marked.
    pub(crate) ece: bool,
    /// Bytes in flight after this ACK.
    pub(crate) in_flight_bytes: u64,
    /// What the switches stamped on the data frame that triggered it (None unless the scheme
    /// asks for telemetry, [`CcScheme::stamps_telemetry`]).
    pub(crate) telemetry: Option<Telemetry>,
}

/// A loss the transport inferred, as the sender's congestion controller hears it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LossSignal {
    /// The receiver reported a gap (RoCE's and IRN's NACK).
    Nack,
    /// Duplicate ACKs or the SACK scoreboard revealed a loss (TCP's fast retransmit).
    FastRetransmit,
    /// The retransmission timer expired.
    Timeout,
}

/// A congestion-management scheme: its scenario table and the state machines behind the hooks
/// (`docs/hooks.md`). Implemented by a unit type in the scheme's own file
/// and registered with one line in `cc/mod.rs`; the registry generates the enums the network
/// elements dispatch on ([`super::Scheme`], [`CcMsg`], [`super::CpState`], [`super::Limiter`],
/// [`super::NotificationPoint`], [`super::Variant`]) and their match arms, one per scheme,
/// each calling the functions below.
///
/// Every hook but the CP's and RP's constructors and the RP's rate and release has a default
/// that does nothing: a scheme writes only what it needs.
pub(crate) trait CcScheme {
    /// `[congestion.<module>]`: the scheme's table (`deny_unknown_fields`, every field with a
    /// default).
    type Params: Clone + Debug + Default + PartialEq + Serialize + DeserializeOwned + JsonSchema;
    /// What runs (`Scheme::<Variant>(Config)`), resolved from the scenario.
    type Config: Clone + Debug;
    /// The scheme's message (`CcMsg::<its variant>`), carried by control frames.
    type Msg: Copy + Debug + PartialEq;
    /// The congestion point on a switch output queue.
    type Cp;
    /// The reaction point: the rate limiter of one destination at the source.
    type Rp;
    /// The notification point of a receiving host ([`NoNp`]: none).
    type Np;
    /// A transported flow's congestion controller at its sender: window- and ACK-driven
    /// schemes ([`NoSender`]: none, the transport keeps its own).
    type Sender;
    /// What the summary says ran (`summary.variant`, tagged with the scheme's name).
    type Variant: Clone + Debug + Serialize + DeserializeOwned + JsonSchema;

    /// The `scheme = "..."` names that select this scheme, in the schema's order.
    const NAMES: &'static [Named];
    /// The description of the `[congestion.<module>]` table in the JSON Schema ("": none).
    const TABLE_DOC: &'static str = "";
    /// The control-frame counters of the scheme's messages (`summary.control_frames`), with
    /// their descriptions ("": none); [`CcScheme::kind`] indexes them.
    const CONTROL_KINDS: &'static [Named];

    // --- The scenario ---

    /// Before the scenario is parsed, `[congestion]` as TOML: lay a table over the defaults a
    /// name stands for (ECM's under `scheme = "ecm"`, a named parameter set), so a partial
    /// table keeps those defaults. `selected` is the `scheme` key as written.
    fn prepare(_congestion: &mut toml::Table, _selected: &str) -> Result<(), ConfigError> {
        Ok(())
    }

    /// The scheme is selected (as `selected`): fill its tables' defaults, so the resolved
    /// scenario shows every constant that ran.
    fn fill_defaults(spec: &mut CongestionSpec, selected: &str);

    /// Checks the scheme's table (present whether or not the scheme runs); errors name the
    /// field as `<path>.<field>`. `spec` gives the other tables.
    fn validate(
        params: &Self::Params,
        spec: &CongestionSpec,
        path: &str,
    ) -> Result<(), ConfigError>;

    /// The scheme selected (as `selected`) as it runs.
    fn resolve(spec: &CongestionSpec, selected: &str) -> Self::Config;

    /// What the summary says ran.
    fn variant(config: &Self::Config) -> Self::Variant;

    // --- Messages ---

    /// The counter a message is added to.
    fn kind(msg: &Self::Msg) -> MessageKind;
    /// A message's frame size.
    fn msg_bytes(msg: &Self::Msg, config: &Self::Config) -> u32;
    /// True: it queues with the data (and CPs see it); false: control priority.
    fn rides_data_queue(_msg: &Self::Msg) -> bool {
        false
    }
    /// True: for the RP at its destination; false: for the NP.
    fn for_reaction_point(_msg: &Self::Msg) -> bool {
        true
    }

    // --- Congestion point ---

    /// The CP of one output queue: `cpid` its id, `port_rate_bps` the port's line rate (for
    /// thresholds that scale with it).
    fn new_cp(config: &Self::Config, cpid: u32, port_rate_bps: f64, rng: &mut SimRng) -> Self::Cp;
    /// A frame entered the queue (`queue_bytes` includes it): a message for its source, if any.
    fn on_enqueue(
        _cp: &mut Self::Cp,
        _frame: CpFrame<'_, Self::Msg>,
        _queue_bytes: u64,
        _cpid: u32,
        _rng: &mut SimRng,
    ) -> Option<Self::Msg> {
        None
    }
    /// A frame left the queue (`queue_bytes` without it).
    fn on_dequeue(
        _cp: &mut Self::Cp,
        _frame: CpFrame<'_, Self::Msg>,
        _queue_bytes: u64,
        _rng: &mut SimRng,
    ) {
    }
    /// Data frames this CP marked with ECN CE, if it marks.
    fn ecn_marked(_cp: &Self::Cp) -> Option<u64> {
        None
    }
    /// Last computed feedback (for probes).
    fn last_fb(_cp: &Self::Cp) -> f64 {
        0.0
    }

    // --- Reaction point ---

    /// The RP a destination's first message installs, if that message installs one.
    fn install(
        _config: &Self::Config,
        _msg: &Self::Msg,
        _line_rate_bps: f64,
        _now: SimTime,
        _rng: &mut SimRng,
    ) -> Option<Self::Rp> {
        None
    }
    /// The RP of a destination the host has just got work for (schemes whose RP acts before
    /// any feedback).
    fn for_new_destination(_config: &Self::Config, _line_rate_bps: f64) -> Option<Self::Rp> {
        None
    }
    fn on_feedback(_rp: &mut Self::Rp, _msg: &Self::Msg, _now: SimTime, _rng: &mut SimRng) {}
    fn rate_bps(rp: &Self::Rp) -> f64;
    fn target_rate_bps(_rp: &Self::Rp) -> Option<f64> {
        None
    }
    /// The scheme's last feedback as the RP sees it (probes record it as `rp_feedback`).
    fn feedback(_rp: &Self::Rp) -> Option<f64> {
        None
    }
    /// Earliest time the limiter lets a frame go regardless of rate.
    fn stopped_until(_rp: &Self::Rp) -> SimTime {
        SimTime::ZERO
    }
    /// How the limiter lets the next data frame go.
    fn pacing(rp: &Self::Rp) -> Pacing {
        Pacing {
            rate_bps: Self::rate_bps(rp),
            tag: NO_TAG,
            bucket_bytes: 0.0,
        }
    }
    /// A data frame of `frame_bytes` left through the limiter: a message of the RP's own, and
    /// whether rate, release or timer may have changed.
    fn on_transmit(
        _rp: &mut Self::Rp,
        _frame_bytes: u32,
        _now: SimTime,
        _rng: &mut SimRng,
    ) -> (Option<Self::Msg>, bool) {
        (None, false)
    }
    /// The limiter's timer: when and with which generation to fire.
    fn timer(_rp: &Self::Rp) -> Option<(SimTime, u32)> {
        None
    }
    fn on_timer(_rp: &mut Self::Rp, _generation: u32, _now: SimTime, _rng: &mut SimRng) {}
    /// PAUSE on the host's link.
    fn set_paused(_rp: &mut Self::Rp, _paused: bool, _now: SimTime) {}
    /// The limiter no longer limits and can be removed.
    fn is_released(rp: &Self::Rp) -> bool;

    // --- Notification point ---

    fn new_np(_config: &Self::Config) -> Option<Self::Np> {
        None
    }
    /// A data frame, or a message for the NP, reached the host: the answer to its source.
    fn on_receive(
        _np: &mut Self::Np,
        _frame: NpFrame<'_, Self::Msg>,
        _now: SimTime,
    ) -> Option<Self::Msg> {
        None
    }

    // --- Sender: a transported flow's congestion controller (docs/hooks.md) ---

    /// The controller of a transported flow that starts now; None leaves the transport's own
    /// (NewReno for tcp, no window for roce and irn).
    fn new_sender(_config: &Self::Config, _flow: &FlowStart) -> Option<Self::Sender> {
        None
    }
    /// Every ACK of the flow (after the transport has acted on it).
    fn on_ack(_sender: &mut Self::Sender, _ack: &AckEvent) {}
    /// A loss the transport inferred.
    fn on_loss(_sender: &mut Self::Sender, _loss: LossSignal, _now: SimTime) {}
    /// The congestion window: the transport sends while its bytes in flight are below it
    /// (None: no window).
    fn window_bytes(_sender: &Self::Sender) -> Option<f64> {
        None
    }
    /// The pacing rate of the flow's data frames (None: as fast as the NIC serves the flow).
    fn pacing_bps(_sender: &Self::Sender) -> Option<f64> {
        None
    }
    /// Switches stamp in-band telemetry on every transported data frame at each egress, and
    /// ACKs carry it back to [`CcScheme::on_ack`] (HPCC's INT).
    fn stamps_telemetry(_config: &Self::Config) -> bool {
        false
    }
}
