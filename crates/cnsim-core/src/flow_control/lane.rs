//! One pause lane of a port, as a pure state machine: IEEE 802.3x PAUSE has one lane per port
//! (it holds all data), IEEE 802.1Qbb PFC one per priority class. Both sides of the link's
//! flow control meet here:
//!
//! - **held by the peer** (the transmit side): a PAUSE/PFC frame from the peer sets the lane's
//!   timer to pause_time quanta of 512 bit times at the line rate; a new frame replaces the
//!   running timer; pause_time 0 (XON) resumes at once (802.3x annex 31B, 802.1Qbb clause 36).
//!   The port finishes the frame in progress, then holds the lane's data until the timer ends.
//! - **holding the peer** (the trigger side): the node's trigger (a buffer level with
//!   hysteresis) asks for XOFF or XON. XOFF carries a long pause_time and is re-sent every half
//!   pause_time while the condition holds, so the peer never resumes on its own; XON is a frame
//!   with pause_time 0 (the common practice, protocols.md section 1).
//!
//! The lane takes inputs (a frame from the peer, a timer event, the trigger's wish) and returns
//! what its port must do (schedule an event at a time, send a frame with these quanta), as the
//! `cc/` schemes do: it queues no frame and schedules no event itself (`net/link_pause.rs`
//! does). Timers are lazy: a renewed, longer pause only moves `paused_until` and the pending
//! event re-arms itself when it fires, so a storm of PAUSE frames does not fill the event queue;
//! a shorter replacing pause asks for an earlier event and the later one becomes stale. The
//! refresh timer keeps at most one pending event the same way.

use crate::time::{pause_quanta_time, SimTime};

/// Which lane of a port: 802.3x's (all data) or one PFC class's. One byte, so events that name
/// a lane stay 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lane(u8);

impl Lane {
    /// IEEE 802.3x PAUSE: the whole link.
    pub(crate) const LINK: Lane = Lane(u8::MAX);

    /// IEEE 802.1Qbb PFC for priority class `class` (0..8).
    pub(crate) fn class(class: usize) -> Lane {
        debug_assert!(class < 8, "PFC class {class}");
        Lane(class as u8)
    }

    /// The PFC class, or None for the 802.3x lane.
    pub(crate) fn pfc_class(self) -> Option<usize> {
        (self != Lane::LINK).then_some(self.0 as usize)
    }
}

/// Hysteresis of a watermark pair: a condition that is on stays on until the level falls below
/// `xon`; one that is off turns on when the level rises above `xoff`.
pub(crate) fn hysteresis(on: bool, level: u64, xoff_bytes: u64, xon_bytes: u64) -> bool {
    if on {
        level >= xon_bytes
    } else {
        level > xoff_bytes
    }
}

/// What a lane's timer event means when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// A newer event replaced this one.
    Stale,
    /// The pause was renewed: fire again at this time.
    Rearm(SimTime),
    /// The pause is over: the lane's data may flow.
    Expired,
}

/// A PAUSE/PFC frame the lane asks its port to send to the peer, and the time of the refresh
/// event to schedule with it (None when one is pending or on XON).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PauseFrame {
    /// pause_time in quanta; 0 = XON.
    pub(crate) quanta: u16,
    pub(crate) refresh_at: Option<SimTime>,
}

/// What a lane's refresh event asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refresh {
    /// The XOFF was withdrawn since: nothing to do.
    Idle,
    /// The XOFF was re-sent since: fire again at this time.
    Rearm(SimTime),
    /// Re-send XOFF now.
    Send(PauseFrame),
}

// `repr(C)`, `paused_until` first: it is all a frame leaving the port reads of the lane, and
// the prefetcher loads a port's fields only up to it (`net/port.rs`, `OUTPUT_FIELDS_BYTES`).
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub(crate) struct PauseLane {
    /// Held by the peer: the lane's data may not start before this time.
    paused_until: SimTime,
    /// The pending expiry event that counts, if any.
    timer_at: Option<SimTime>,
    paused_since: Option<SimTime>,
    paused_total: SimTime,
    frames_received: u64,
    /// Holding the peer: XOFF outstanding.
    xoff_sent: bool,
    /// When the outstanding XOFF must be re-sent, and whether a refresh event is pending.
    refresh_due: SimTime,
    refresh_pending: bool,
    xoff_frames_sent: u64,
    xon_frames_sent: u64,
}

impl PauseLane {
    /// A PAUSE/PFC frame from the peer arrived. Returns the time of an expiry event the port
    /// must schedule (None when one is already pending by then, or on XON).
    pub(crate) fn receive(
        &mut self,
        quanta: u16,
        line_rate_bps: f64,
        now: SimTime,
    ) -> Option<SimTime> {
        self.frames_received += 1;
        if quanta == 0 {
            self.paused_until = now;
            self.note_unpaused(now);
            return None;
        }
        self.paused_until = now + pause_quanta_time(quanta, line_rate_bps);
        if self.paused_since.is_none() {
            self.paused_since = Some(now);
        }
        if self.timer_at.is_some_and(|t| t <= self.paused_until) {
            return None;
        }
        self.timer_at = Some(self.paused_until);
        Some(self.paused_until)
    }

    /// An expiry event fired at `now`.
    pub(crate) fn on_expire(&mut self, now: SimTime) -> Expiry {
        if self.timer_at != Some(now) {
            return Expiry::Stale;
        }
        self.timer_at = None;
        if self.is_paused(now) {
            self.timer_at = Some(self.paused_until);
            return Expiry::Rearm(self.paused_until);
        }
        self.note_unpaused(now);
        Expiry::Expired
    }

    /// Closes the current paused interval (at XON or expiry).
    fn note_unpaused(&mut self, now: SimTime) {
        if let Some(since) = self.paused_since.take() {
            self.paused_total += now - since;
        }
    }

    #[inline]
    pub(crate) fn is_paused(&self, now: SimTime) -> bool {
        now < self.paused_until
    }

    #[cfg(test)]
    pub(crate) fn paused_until(&self) -> SimTime {
        self.paused_until
    }

    /// Time paused so far, including a pause still running at `now`.
    pub(crate) fn paused_time(&self, now: SimTime) -> SimTime {
        let running = self
            .paused_since
            .map_or(SimTime::ZERO, |s| now.saturating_sub(s));
        self.paused_total + running
    }

    /// PAUSE/PFC frames (XOFF and XON) received from the peer.
    pub(crate) fn frames_received(&self) -> u64 {
        self.frames_received
    }

    /// This node holds the peer (XOFF outstanding).
    pub(crate) fn xoff_sent(&self) -> bool {
        self.xoff_sent
    }

    /// XOFF frames sent (refreshes included) and XON frames sent.
    pub(crate) fn frames_sent(&self) -> (u64, u64) {
        (self.xoff_frames_sent, self.xon_frames_sent)
    }

    /// The lane's previous frame, an XOFF (`xoff`) or an XON, had not left when a newer one
    /// took its place in the port's queue (`Port::queue_pause_frame`): it is not counted sent.
    pub(crate) fn frame_superseded(&mut self, xoff: bool) {
        let sent = if xoff {
            &mut self.xoff_frames_sent
        } else {
            &mut self.xon_frames_sent
        };
        *sent -= 1;
    }

    /// The trigger wants the peer paused (`want`) or not. Returns the frame to send when that
    /// changes the lane's state.
    pub(crate) fn set_xoff(
        &mut self,
        want: bool,
        quanta: u16,
        line_rate_bps: f64,
        now: SimTime,
    ) -> Option<PauseFrame> {
        if want == self.xoff_sent {
            return None;
        }
        self.xoff_sent = want;
        if !want {
            self.xon_frames_sent += 1;
            return Some(PauseFrame {
                quanta: 0,
                refresh_at: None,
            });
        }
        Some(self.send_xoff(quanta, line_rate_bps, now))
    }

    /// The refresh event fired: re-send XOFF when it is due, or re-arm for a later due time.
    pub(crate) fn on_refresh(&mut self, quanta: u16, line_rate_bps: f64, now: SimTime) -> Refresh {
        self.refresh_pending = false;
        if !self.xoff_sent {
            return Refresh::Idle;
        }
        if now < self.refresh_due {
            self.refresh_pending = true;
            return Refresh::Rearm(self.refresh_due);
        }
        Refresh::Send(self.send_xoff(quanta, line_rate_bps, now))
    }

    /// An XOFF goes out now; the next is due half a pause_time later, so the peer never resumes
    /// on its own.
    fn send_xoff(&mut self, quanta: u16, line_rate_bps: f64, now: SimTime) -> PauseFrame {
        self.xoff_frames_sent += 1;
        let half = SimTime(pause_quanta_time(quanta, line_rate_bps).ps() / 2).max(SimTime(1));
        self.refresh_due = now + half;
        let refresh_at = (!self.refresh_pending).then_some(self.refresh_due);
        self.refresh_pending = true;
        PauseFrame { quanta, refresh_at }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peers_pause_is_the_lanes_first_field() {
        // What the prefetcher loads of an output port ends there (`Port`'s OUTPUT_FIELDS_BYTES).
        assert_eq!(std::mem::offset_of!(PauseLane, paused_until), 0);
    }

    const G10: f64 = 10e9;

    #[test]
    fn hysteresis_uses_strict_thresholds() {
        // seed 004: pause above 130 KB, unpause below 110 KB
        assert!(!hysteresis(false, 130_000, 130_000, 110_000));
        assert!(hysteresis(false, 130_001, 130_000, 110_000));
        assert!(hysteresis(true, 110_000, 130_000, 110_000));
        assert!(!hysteresis(true, 109_999, 130_000, 110_000));
    }

    #[test]
    fn lanes_are_one_byte_and_know_their_class() {
        assert_eq!(Lane::LINK.pfc_class(), None);
        assert_eq!(Lane::class(3).pfc_class(), Some(3));
        assert_eq!(std::mem::size_of::<Lane>(), 1);
    }

    #[test]
    fn pause_quanta_and_xon() {
        let mut lane = PauseLane::default();
        let t0 = SimTime::from_micros(10);
        let until = lane.receive(1000, G10, t0).unwrap();
        // 1000 quanta x 512 bit times at 10 Gb/s = 51.2 us.
        assert_eq!(until, t0 + SimTime::from_nanos(51_200));
        assert!(lane.is_paused(t0 + SimTime::from_micros(51)));
        assert!(!lane.is_paused(until));
        // A new PAUSE replaces the timer; XON ends it at once.
        let t1 = t0 + SimTime::from_micros(20);
        // Shorter than the pending timer: it needs an earlier event of its own.
        let short = t1 + SimTime::from_nanos(512);
        assert_eq!(lane.receive(10, G10, t1), Some(short));
        assert_eq!(lane.receive(0, G10, t1), None);
        assert!(!lane.is_paused(t1));
        assert_eq!(lane.paused_time(t1), SimTime::from_micros(20));
        assert_eq!(lane.frames_received(), 3);
        // Both events fire after XON: the current one finds the pause over, the old is stale.
        assert_eq!(lane.on_expire(short), Expiry::Expired);
        assert_eq!(lane.on_expire(until), Expiry::Stale);
    }

    #[test]
    fn max_pause_is_65535_quanta_of_512_bit_times_at_the_line_rate() {
        // 65535 x 512 bit x 100 ps = 3,355,392,000 ps at 10 Gb/s; 10x that at 1 Gb/s.
        for (rate, want_ps) in [(G10, 3_355_392_000u64), (1e9, 33_553_920_000)] {
            let mut lane = PauseLane::default();
            let t0 = SimTime::from_micros(7);
            lane.receive(u16::MAX, rate, t0);
            let until = t0 + SimTime(want_ps);
            assert_eq!(lane.paused_until(), until, "rate {rate}");
            assert!(lane.is_paused(t0) && lane.is_paused(until - SimTime(1)));
            assert!(
                !lane.is_paused(until),
                "the pause ends exactly at the timer"
            );
        }
    }

    #[test]
    fn a_new_pause_replaces_the_timer_rather_than_extending_it() {
        let us = |x: f64| SimTime::from_secs_f64(x * 1e-6);
        let mut lane = PauseLane::default();
        // A shorter pause replaces a longer one (it is not max(old, new)): XOFF(65535) at
        // 10 us, XOFF(10) at 11 us -> ends at 11 us + 512 ns.
        lane.receive(u16::MAX, G10, us(10.0));
        lane.receive(10, G10, us(11.0));
        assert_eq!(lane.paused_until(), us(11.512));
        // A longer one extends: XOFF(10) at 20 us, XOFF(100) at 20.2 us -> ends at 25.32 us.
        lane.receive(10, G10, us(20.0));
        lane.receive(100, G10, us(20.2));
        assert_eq!(lane.paused_until(), us(25.32));
    }

    #[test]
    fn a_renewed_pause_rearms_the_pending_timer() {
        let mut lane = PauseLane::default();
        // 1 quantum at 10 Gb/s = 51.2 ns; 2 quanta renewed at 51.0 ns end at 153.4 ns.
        assert_eq!(lane.receive(1, G10, SimTime::ZERO), Some(SimTime(51_200)));
        assert_eq!(lane.receive(2, G10, SimTime(51_000)), None);
        assert_eq!(
            lane.on_expire(SimTime(51_200)),
            Expiry::Rearm(SimTime(153_400))
        );
        assert_eq!(lane.on_expire(SimTime(153_400)), Expiry::Expired);
        assert_eq!(lane.paused_time(SimTime(200_000)), SimTime(153_400));
    }

    #[test]
    fn quanta_use_the_given_line_rate() {
        let mut lane = PauseLane::default();
        // 100 quanta at 40 Gb/s: 100 x 512 bits / 40e9 = 1.28 us.
        let t0 = SimTime::from_micros(1);
        assert_eq!(lane.receive(100, 40e9, t0), Some(t0 + SimTime(1_280_000)));
    }

    #[test]
    fn xoff_is_refreshed_every_half_pause_time_until_xon() {
        let mut lane = PauseLane::default();
        let t0 = SimTime::from_micros(1);
        // 65535 quanta at 10 Gb/s = 3.355 ms; the refresh is due half of it later.
        let half = SimTime(pause_quanta_time(0xffff, G10).ps() / 2);
        let xoff = lane.set_xoff(true, 0xffff, G10, t0).expect("XOFF goes out");
        assert_eq!(
            xoff,
            PauseFrame {
                quanta: 0xffff,
                refresh_at: Some(t0 + half)
            }
        );
        // Asking again changes nothing.
        assert_eq!(lane.set_xoff(true, 0xffff, G10, t0), None);
        assert_eq!(
            lane.on_refresh(0xffff, G10, t0 + half),
            Refresh::Send(PauseFrame {
                quanta: 0xffff,
                refresh_at: Some(t0 + half + half)
            })
        );
        // XON withdraws it: the pending refresh then finds nothing to do.
        let xon = lane.set_xoff(false, 0xffff, G10, t0 + half + SimTime(1));
        assert_eq!(
            xon,
            Some(PauseFrame {
                quanta: 0,
                refresh_at: None
            })
        );
        assert_eq!(
            lane.on_refresh(0xffff, G10, t0 + half + half),
            Refresh::Idle
        );
        assert_eq!(lane.frames_sent(), (2, 1));
    }

    #[test]
    fn an_xoff_reasserted_before_its_refresh_rearms_it_once() {
        let mut lane = PauseLane::default();
        let q = 1000; // 51.2 us at 10 Gb/s: refresh after 25.6 us
        let first = lane.set_xoff(true, q, G10, SimTime::ZERO).unwrap();
        assert_eq!(first.refresh_at, Some(SimTime::from_nanos(25_600)));
        lane.set_xoff(false, q, G10, SimTime::from_micros(1));
        // Re-asserted at 10 us: due at 35.6 us, but the event for 25.6 us is still pending.
        let again = lane
            .set_xoff(true, q, G10, SimTime::from_micros(10))
            .unwrap();
        assert_eq!(again.refresh_at, None);
        assert_eq!(
            lane.on_refresh(q, G10, SimTime::from_nanos(25_600)),
            Refresh::Rearm(SimTime::from_nanos(35_600))
        );
        assert!(matches!(
            lane.on_refresh(q, G10, SimTime::from_nanos(35_600)),
            Refresh::Send(_)
        ));
    }
}
