//! The registry's machinery: from the list of schemes in `cc/mod.rs`, [`schemes!`] generates
//! the enums the network elements dispatch on, one variant per scheme, with their match arms
//! (each the call a hand-written arm would make, to the scheme's
//! [`CcScheme`](super::CcScheme) function, which inlines into it: dispatch stays by enum, no
//! trait objects on the per-frame path), the `[congestion]` table, and the table of entries the
//! scenario's parsing walks.

use super::{CcScheme, CongestionSpec, Named, Scheme};
use crate::error::ConfigError;

/// A scheme message's counter: its place among the registered schemes' `CONTROL_KINDS`, in
/// registry order (`stats::ControlKind` places these among the link's own kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MessageKind(pub u8);

/// What registering adds to a scheme: its table's key and where its counters start.
pub(crate) trait Registered: CcScheme {
    /// `[congestion.<TABLE>]`: the scheme's module name.
    const TABLE: &'static str;
    /// The place of its first control kind among all schemes' ([`MessageKind`]).
    const FIRST_KIND: u8;

    /// The counter of the scheme's `i`-th control kind (`CONTROL_KINDS[i]`).
    #[inline(always)]
    fn message_kind(i: usize) -> MessageKind {
        debug_assert!(i < Self::CONTROL_KINDS.len());
        MessageKind(Self::FIRST_KIND + i as u8)
    }
}

/// One registered scheme, for the scenario's parsing (cold paths, so plain function pointers).
pub(super) struct Entry {
    pub(crate) names: &'static [Named],
    pub(crate) control_kinds: &'static [Named],
    pub(crate) prepare: fn(&mut toml::Table, &str) -> Result<(), ConfigError>,
    pub(crate) fill_defaults: fn(&mut CongestionSpec, &str),
    /// Checks the scheme's table if it is given.
    pub(crate) validate: fn(&CongestionSpec) -> Result<(), ConfigError>,
    pub(crate) resolve: fn(&CongestionSpec, &str) -> Scheme,
}

/// The first control kind of the scheme at `position` in `entries`.
pub(super) const fn first_kind(entries: &[Entry], position: usize) -> u8 {
    let mut kinds = 0;
    let mut i = 0;
    while i < position {
        kinds += entries[i].control_kinds.len();
        i += 1;
    }
    assert!(kinds <= u8::MAX as usize, "control kinds fit a u8");
    kinds as u8
}

/// The registry: `$Variant($module::$Type) sends $Msg` per scheme, where `$module` is the
/// scheme's file under `cc/` (and its `[congestion.$module]` table), `$Type` implements
/// [`CcScheme`](super::CcScheme), `$Variant` names it in the dispatch enums and `$Msg` names its
/// message in `CcMsg`. Attributes before an entry (`#[cfg(test)]`) apply to everything
/// generated for it.
macro_rules! schemes {
    ($( $(#[$attr:meta])* $V:ident($module:ident :: $T:ident) sends $M:ident ),+ $(,)?) => {
        $( $(#[$attr])* pub(crate) mod $module; )+

        /// The scheme configuration a simulation runs with (resolved from the scenario).
        #[derive(Clone, Debug, Default)]
        pub(crate) enum Scheme {
            #[default]
            None,
            $( $(#[$attr])* $V(<$module::$T as CcScheme>::Config), )+
        }

        /// A scheme's message, carried by a control frame (`Payload::Cc`).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub(crate) enum CcMsg {
            $( $(#[$attr])* $M(<$module::$T as CcScheme>::Msg), )+
        }

        /// `repr(u8)` for the reason given at [`Limiter`]: matched on every frame a CP's queue
        /// takes in and lets out.
        #[repr(u8)]
        pub(crate) enum CpState {
            $( $(#[$attr])* $V(<$module::$T as CcScheme>::Cp), )+
        }

        /// A reaction point's rate limiter for one destination.
        ///
        /// `repr(u8)`: an explicit tag byte. Without it the compiler hides the tag in a niche
        /// of a variant's field, and each of the several matches per frame (stamp, rate, stop,
        /// byte counter) decoded it with a subtract and a conditional move before branching.
        #[repr(u8)]
        pub(crate) enum Limiter {
            $( $(#[$attr])* $V(<$module::$T as CcScheme>::Rp), )+
        }

        /// A receiving host's notification point.
        pub(crate) enum NotificationPoint {
            $( $(#[$attr])* $V(<$module::$T as CcScheme>::Np), )+
        }

        /// The scheme that ran and the choices that make it a variant (protocols.md).
        #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "scheme", rename_all = "snake_case", deny_unknown_fields)]
        pub(crate) enum Variant {
            None,
            $( $(#[$attr])* $V(<$module::$T as CcScheme>::Variant), )+
        }

        // `[congestion]`: the scheme to run and every scheme's table (each checked when given,
        // whichever scheme runs). A comment, not a doc comment: the schema has no description.
        #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct CongestionSpec {
            #[serde(default)]
            pub(crate) scheme: SchemeName,
            $(
                $(#[$attr])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                #[schemars(description = <$module::$T as CcScheme>::TABLE_DOC)]
                pub $module: Option<<$module::$T as CcScheme>::Params>,
            )+
        }

        /// The registered schemes, in registry order, for the scenario's parsing.
        const ENTRIES: &[registry::Entry] = &[$(
            $(#[$attr])*
            registry::Entry {
                names: <$module::$T as CcScheme>::NAMES,
                control_kinds: <$module::$T as CcScheme>::CONTROL_KINDS,
                prepare: <$module::$T as CcScheme>::prepare,
                fill_defaults: <$module::$T as CcScheme>::fill_defaults,
                validate: |spec| match &spec.$module {
                    Some(p) => <$module::$T as CcScheme>::validate(
                        p,
                        spec,
                        concat!("congestion.", stringify!($module)),
                    ),
                    None => Ok(()),
                },
                resolve: |spec, name| {
                    Scheme::$V(<$module::$T as CcScheme>::resolve(spec, name))
                },
            },
        )+];

        /// Each scheme's place in the registry.
        #[allow(dead_code)]
        enum Position {
            $( $(#[$attr])* $V, )+
        }

        $(
            $(#[$attr])*
            impl Registered for $module::$T {
                const TABLE: &'static str = stringify!($module);
                const FIRST_KIND: u8 = registry::first_kind(ENTRIES, Position::$V as usize);
            }
        )+

        impl Scheme {
            /// What the summary says ran.
            pub(crate) fn variant(&self) -> Variant {
                match self {
                    Scheme::None => Variant::None,
                    $( $(#[$attr])* Scheme::$V(c) => Variant::$V(<$module::$T as CcScheme>::variant(c)), )+
                }
            }

            /// Switches stamp in-band telemetry on transported data frames.
            pub(crate) fn stamps_telemetry(&self) -> bool {
                match self {
                    Scheme::None => false,
                    $( $(#[$attr])* Scheme::$V(c) => <$module::$T as CcScheme>::stamps_telemetry(c), )+
                }
            }
        }

        impl CcMsg {
            /// The counter it is added to (`summary.control_frames`).
            #[inline]
            pub(crate) fn kind(&self) -> MessageKind {
                match self {
                    $( $(#[$attr])* CcMsg::$M(m) => <$module::$T as CcScheme>::kind(m), )+
                }
            }

            /// True: it queues with the data (and is measured by CPs); false: control priority.
            #[inline]
            pub(crate) fn rides_data_queue(&self) -> bool {
                match self {
                    $( $(#[$attr])* CcMsg::$M(m) => <$module::$T as CcScheme>::rides_data_queue(m), )+
                }
            }

            /// True: for the reaction point at its destination; false: for the notification
            /// point.
            #[inline]
            pub(crate) fn for_reaction_point(&self) -> bool {
                match self {
                    $( $(#[$attr])* CcMsg::$M(m) => <$module::$T as CcScheme>::for_reaction_point(m), )+
                }
            }

            /// Frame size, from the scheme's parameters.
            #[inline]
            pub(crate) fn bytes(&self, scheme: &Scheme) -> u32 {
                #[allow(unreachable_patterns)]
                match (self, scheme) {
                    $( $(#[$attr])* (CcMsg::$M(m), Scheme::$V(c)) => <$module::$T as CcScheme>::msg_bytes(m, c), )+
                    _ => 64,
                }
            }
        }

        impl CongestionPoint {
            pub(crate) fn new(scheme: &Scheme, cpid: u32, port_rate_bps: f64, mut rng: SimRng) -> Option<CongestionPoint> {
                let state = match scheme {
                    Scheme::None => return None,
                    $( $(#[$attr])* Scheme::$V(c) => CpState::$V(<$module::$T as CcScheme>::new_cp(c, cpid, port_rate_bps, &mut rng)), )+
                };
                Some(CongestionPoint {
                    cpid,
                    rng,
                    state,
                    messages: 0,
                })
            }

            /// Hook: `frame` was enqueued (`queue_bytes` includes it). Returns a message for the
            /// frame's source, if any.
            #[inline]
            pub(crate) fn on_enqueue(&mut self, frame: &mut impl HookFrame, queue_bytes: u64) -> Option<CcMsg> {
                let cpid = self.cpid;
                let msg = match &mut self.state {
                    $( $(#[$attr])* CpState::$V(cp) => {
                        #[allow(unreachable_patterns)]
                        let frame = frame.at_cp(|m| match m {
                            CcMsg::$M(own) => Some(own),
                            _ => None,
                        });
                        <$module::$T as CcScheme>::on_enqueue(cp, frame, queue_bytes, cpid, &mut self.rng)
                            .map(CcMsg::$M)
                    } )+
                };
                self.messages += msg.is_some() as u64;
                msg
            }

            /// Hook: `frame` left the queue (`queue_bytes` no longer includes it).
            #[inline]
            pub(crate) fn on_dequeue(&mut self, frame: &mut impl HookFrame, queue_bytes: u64) -> Option<CcMsg> {
                match &mut self.state {
                    $( $(#[$attr])* CpState::$V(cp) => {
                        #[allow(unreachable_patterns)]
                        let frame = frame.at_cp(|m| match m {
                            CcMsg::$M(own) => Some(own),
                            _ => None,
                        });
                        <$module::$T as CcScheme>::on_dequeue(cp, frame, queue_bytes, &mut self.rng)
                    } )+
                }
                None
            }

            /// The bytes from the CP's start to the end of its scheme's state: what a frame's
            /// hooks may read (the CP's layout test, `cc/tests.rs`).
            #[cfg(test)]
            pub(crate) fn hot_bytes(&self) -> usize {
                let end = match &self.state {
                    $( $(#[$attr])* CpState::$V(cp) => {
                        cp as *const _ as usize + std::mem::size_of_val(cp)
                    } )+
                };
                end - (self as *const CongestionPoint as usize)
            }

            /// Data frames this CP marked with ECN CE (DCQCN), if it marks.
            pub(crate) fn ecn_marked(&self) -> Option<u64> {
                match &self.state {
                    $( $(#[$attr])* CpState::$V(cp) => <$module::$T as CcScheme>::ecn_marked(cp), )+
                }
            }

            /// Last computed feedback (for probes).
            pub(crate) fn last_fb(&self) -> f64 {
                match &self.state {
                    $( $(#[$attr])* CpState::$V(cp) => <$module::$T as CcScheme>::last_fb(cp), )+
                }
            }
        }

        impl Limiter {
            /// Installs a limiter for a destination that just got its first message, if that
            /// message installs one (QCN: any CNM; BCN: negative feedback only).
            pub(crate) fn install(
                scheme: &Scheme,
                msg: &CcMsg,
                line_rate_bps: f64,
                now: SimTime,
                rng: &mut SimRng,
            ) -> Option<Limiter> {
                #[allow(unreachable_patterns)]
                match (scheme, msg) {
                    $( $(#[$attr])* (Scheme::$V(c), CcMsg::$M(m)) => {
                        <$module::$T as CcScheme>::install(c, m, line_rate_bps, now, rng).map(Limiter::$V)
                    } )+
                    _ => None,
                }
            }

            /// The RP of a destination the host has just got work for, for schemes whose RP
            /// acts before any feedback (probing schemes); None for the others.
            pub(crate) fn for_new_destination(scheme: &Scheme, line_rate_bps: f64) -> Option<Limiter> {
                match scheme {
                    Scheme::None => None,
                    $( $(#[$attr])* Scheme::$V(c) => {
                        <$module::$T as CcScheme>::for_new_destination(c, line_rate_bps).map(Limiter::$V)
                    } )+
                }
            }

            /// Applies a message addressed to the RP.
            pub(crate) fn on_feedback(&mut self, msg: &CcMsg, now: SimTime, rng: &mut SimRng) {
                #[allow(unreachable_patterns)]
                match (self, msg) {
                    $( $(#[$attr])* (Limiter::$V(rp), CcMsg::$M(m)) => {
                        <$module::$T as CcScheme>::on_feedback(rp, m, now, rng)
                    } )+
                    _ => {}
                }
            }

            #[inline]
            pub(crate) fn rate_bps(&self) -> f64 {
                match self {
                    $( $(#[$attr])* Limiter::$V(rp) => <$module::$T as CcScheme>::rate_bps(rp), )+
                }
            }

            pub(crate) fn target_rate_bps(&self) -> Option<f64> {
                match self {
                    $( $(#[$attr])* Limiter::$V(rp) => <$module::$T as CcScheme>::target_rate_bps(rp), )+
                }
            }

            /// The scheme's last feedback as the RP sees it (probes record it as `rp_feedback`).
            pub(crate) fn feedback(&self) -> Option<f64> {
                match self {
                    $( $(#[$attr])* Limiter::$V(rp) => <$module::$T as CcScheme>::feedback(rp), )+
                }
            }

            /// Earliest time the limiter lets a frame go regardless of rate (BCN(0,0) stop).
            #[inline]
            pub(crate) fn stopped_until(&self) -> SimTime {
                match self {
                    $( $(#[$attr])* Limiter::$V(rp) => <$module::$T as CcScheme>::stopped_until(rp), )+
                }
            }

            /// How the limiter lets the next data frame go (one match, not one per field: it
            /// is asked for every frame).
            #[inline]
            pub(crate) fn pacing(&self) -> Pacing {
                match self {
                    $( $(#[$attr])* Limiter::$V(rp) => <$module::$T as CcScheme>::pacing(rp), )+
                }
            }

            /// A data frame of `frame_bytes` left through the limiter: what that did to it.
            #[inline]
            pub(crate) fn on_transmit(&mut self, frame_bytes: u32, now: SimTime, rng: &mut SimRng) -> Transmitted {
                let (msg, changed) = match self {
                    $( $(#[$attr])* Limiter::$V(rp) => {
                        let (msg, changed) = <$module::$T as CcScheme>::on_transmit(rp, frame_bytes, now, rng);
                        (msg.map(CcMsg::$M), changed)
                    } )+
                };
                Transmitted { msg, changed }
            }

            /// The limiter's timer (QCN timer, BCN drift): when and with which generation to
            /// fire.
            #[inline]
            pub(crate) fn timer(&self) -> Option<(SimTime, u32)> {
                match self {
                    $( $(#[$attr])* Limiter::$V(rp) => <$module::$T as CcScheme>::timer(rp), )+
                }
            }

            pub(crate) fn on_timer(&mut self, generation: u32, now: SimTime, rng: &mut SimRng) {
                match self {
                    $( $(#[$attr])* Limiter::$V(rp) => <$module::$T as CcScheme>::on_timer(rp, generation, now, rng), )+
                }
            }

            /// PAUSE on the host's link (QCN: timer frozen while paused, seed 004).
            pub(crate) fn set_paused(&mut self, paused: bool, now: SimTime) {
                match self {
                    $( $(#[$attr])* Limiter::$V(rp) => <$module::$T as CcScheme>::set_paused(rp, paused, now), )+
                }
            }

            /// The limiter has returned to line rate and can be removed.
            #[inline]
            pub(crate) fn is_released(&self) -> bool {
                match self {
                    $( $(#[$attr])* Limiter::$V(rp) => <$module::$T as CcScheme>::is_released(rp), )+
                }
            }
        }

        /// A transported flow's congestion controller at its sender.
        pub(crate) enum SenderCc {
            $( $(#[$attr])* $V(<$module::$T as CcScheme>::Sender), )+
        }

        impl SenderCc {
            pub(crate) fn new(scheme: &Scheme, flow: &FlowStart) -> Option<SenderCc> {
                match scheme {
                    Scheme::None => None,
                    $( $(#[$attr])* Scheme::$V(c) => <$module::$T as CcScheme>::new_sender(c, flow).map(SenderCc::$V), )+
                }
            }

            pub(crate) fn on_ack(&mut self, ack: &AckEvent) {
                match self {
                    $( $(#[$attr])* SenderCc::$V(s) => <$module::$T as CcScheme>::on_ack(s, ack), )+
                }
            }

            pub(crate) fn on_loss(&mut self, loss: LossSignal, now: SimTime) {
                match self {
                    $( $(#[$attr])* SenderCc::$V(s) => <$module::$T as CcScheme>::on_loss(s, loss, now), )+
                }
            }

            pub(crate) fn window_bytes(&self) -> Option<f64> {
                match self {
                    $( $(#[$attr])* SenderCc::$V(s) => <$module::$T as CcScheme>::window_bytes(s), )+
                }
            }

            pub(crate) fn pacing_bps(&self) -> Option<f64> {
                match self {
                    $( $(#[$attr])* SenderCc::$V(s) => <$module::$T as CcScheme>::pacing_bps(s), )+
                }
            }
        }

        impl NotificationPoint {
            pub(crate) fn new(scheme: &Scheme) -> Option<NotificationPoint> {
                match scheme {
                    Scheme::None => None,
                    $( $(#[$attr])* Scheme::$V(c) => <$module::$T as CcScheme>::new_np(c).map(NotificationPoint::$V), )+
                }
            }

            /// Hook: a data frame, or a message for the NP, reached this host. Returns the
            /// answer to send to the frame's source, if any.
            #[inline]
            pub(crate) fn on_receive(&mut self, frame: &impl HookFrame, now: SimTime) -> Option<CcMsg> {
                match self {
                    $( $(#[$attr])* NotificationPoint::$V(np) => {
                        #[allow(unreachable_patterns)]
                        let frame = frame.at_np(|m| match m {
                            CcMsg::$M(own) => Some(own),
                            _ => None,
                        });
                        <$module::$T as CcScheme>::on_receive(np, frame, now).map(CcMsg::$M)
                    } )+
                }
            }
        }
    };
}

pub(super) use schemes;
