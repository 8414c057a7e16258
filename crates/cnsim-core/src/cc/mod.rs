//! Congestion management schemes, plugged into the network elements at fixed hooks. This file
//! is the scheme registry: each scheme lives in its own file, implements [`CcScheme`] (its
//! `[congestion.<file>]` table with its defaults, checks and named sets, its resolution, and
//! its state machines behind the hooks) and is registered with one line below.
//!
//! The hooks (every one has a no-op default: a scheme implements only what it needs):
//! - **CP**, a congestion point on each switch output queue ([`CongestionPoint`]): called when
//!   a frame is enqueued and when it is dequeued, with the queue length. It may mark the frame
//!   (its ECN bit), stamp a probe riding the data queue, or return a message for the frame's
//!   source.
//! - **RP**, a reaction point in the sending host, one per destination ([`Limiter`]): created by
//!   the first message that installs it (or, for schemes that probe before any feedback, when
//!   the host first has work for a destination); it paces the destination's frames, stamps them
//!   on the way out, reacts to messages, timers and PAUSE, may send frames of its own, and is
//!   released when it no longer limits.
//! - **NP**, a notification point in the receiving host ([`NotificationPoint`]): sees every
//!   data frame and every message addressed to it, and may answer the frame's source.
//! - **Sender**, a transported flow's congestion controller at its source ([`SenderCc`]): hears
//!   every ACK (bytes acknowledged, an RTT sample, the ECN echo) and every loss the transport
//!   infers, and sets the flow's window and pacing rate (window- and ACK-driven schemes). A
//!   scheme may ask switches to stamp in-band telemetry on transported data frames
//!   ([`Telemetry`]: per hop the queue, bytes sent, time and rate), which the ACK carries back.
//!
//! Messages ([`CcMsg`]) are the scheme's own payload: switches and hosts route, queue and count
//! them without knowing what they mean. Each says whether it rides the control priority (strict
//! priority over data, never paused or dropped) or the data queue (so that a probe measures the
//! queue the data sees), and whether it is for the RP or the NP at its destination.
//!
//! `cc` imports nothing from `net`: a frame reaches the hooks through [`HookFrame`], which
//! `net::frame::Frame` implements, and the frame carries a [`CcMsg`].

mod registry;
mod scheme;
mod table;
mod telemetry;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::rng::SimRng;
use crate::time::SimTime;
use registry::{schemes, Registered};

pub(crate) use registry::MessageKind;
use scheme::check_frame_bytes;
pub(crate) use scheme::{
    AckEvent, Carried, CcScheme, CpFrame, FlowStart, HookFrame, HostId, LossSignal, Named, NoNp,
    NoSender, NpFrame, Pacing, Transmitted, NO_TAG,
};
pub(crate) use table::{lay_named_set, lay_table_over, SchemeName};
pub(crate) use telemetry::{HopTelemetry, Telemetry};

// The registry. Adding a scheme: its file under `cc/` and one line here (docs/hooks.md).
// `Variant(module::Type) sends Message`: the dispatch enums' variant, the scheme's file (and
// its `[congestion.<module>]` table) with the type implementing `CcScheme`, and its message's
// variant in `CcMsg`. The order is the schema's and the summary's.
schemes! {
    Qcn(qcn::Qcn) sends Cnm,
    Bcn(bcn::Bcn) sends Bcn,
    PathProbe(path_probe::PathProbe) sends PathProbe,
    Dcqcn(dcqcn::Dcqcn) sends Cnp,
    E2cm(e2cm::E2cm) sends E2cm,
    Dctcp(dctcp::Dctcp) sends Dctcp,
    Timely(timely::Timely) sends Timely,
    Hpcc(hpcc::Hpcc) sends Hpcc,
    Swift(swift::Swift) sends Swift,
    #[cfg(test)]
    MarkAll(mark_all::MarkAll) sends Mark,
    #[cfg(test)]
    FixedWindow(fixed_window::FixedWindow) sends FixedWindow,
}

/// The registered schemes' message kinds (the counters [`CcMsg::kind`] indexes).
pub(crate) const N_MESSAGE_KINDS: usize = registry::first_kind(ENTRIES, ENTRIES.len()) as usize;

/// Each registered scheme's control kinds ([`CcScheme::CONTROL_KINDS`]), in registry order.
pub(crate) fn control_kinds_by_scheme() -> impl Iterator<Item = &'static [Named]> {
    ENTRIES.iter().map(|e| e.control_kinds)
}

/// The factor by which a CP's queue thresholds, given for a link of `reference_rate_bps`, are
/// scaled on a port of `port_rate_bps` (1 without a reference): thresholds in proportion to
/// C x RTT, the DCTCP paper's guideline (section 3.4), as HPCC's ns-3 simulator's per-rate
/// ECN maps (DCTCP's and DCQCN's `k_reference_rate_bps`).
pub(crate) fn rate_scale(reference_rate_bps: Option<f64>, port_rate_bps: f64) -> f64 {
    reference_rate_bps.map_or(1.0, |reference| port_rate_bps / reference)
}

/// A congestion point on one output queue.
///
/// `repr(C)`: the fields in the order written, so that what every frame's hooks read (the id,
/// the message count, then the scheme's state) is the first lines (the first is the one the
/// prefetcher loads, `sim/prefetch.rs`); the generator, drawn from by randomised marking
/// only, last. Laid out by the compiler, the id and the count came after the largest scheme's
/// state, 400 bytes in: a line of their own, missed at every frame on a loaded fabric
/// (docs/performance.md, "Session 22").
#[repr(C)]
pub(crate) struct CongestionPoint {
    pub(crate) cpid: u32,
    pub(crate) messages: u64,
    pub(crate) state: CpState,
    pub(crate) rng: SimRng,
}

#[cfg(test)]
mod tests;
