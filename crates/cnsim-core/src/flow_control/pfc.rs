//! IEEE 802.1Qbb priority-based flow control on one port: the pause timers per class that the
//! peer's PFC frames set (the transmit side), and the XOFF/XON frames this node sends the peer
//! per class (the trigger side).
//!
//! As 802.3x PAUSE (protocols.md section 1), per class: pause_time is in quanta of 512 bit times
//! at the link's line rate; a new frame replaces the class's running timer; pause_time 0 (XON)
//! resumes at once. A paused class stops after the frame in progress and other classes keep
//! sending; control frames are never paused. XOFF carries a long pause_time and is re-sent
//! every half pause_time while the condition holds. A port keeps this state only once PFC has
//! touched it (`Port::pfc` is None before), so runs without PFC do not carry it.

use crate::engine::{EventKind, NodeIdx, PortIdx};
use crate::net::frame::{Frame, Payload};
use crate::net::port::{PauseTimer, Port};
use crate::net::Ctx;
use crate::scenario::N_CLASSES;
use crate::stats::ControlKind;
use crate::time::{pause_quanta_time, SimTime};

#[derive(Clone, Debug, Default)]
pub struct PfcPortState {
    /// Transmit side: class c may not start data before `paused_until[c]`.
    pub paused_until: [SimTime; N_CLASSES],
    /// The class's pending PfcExpire event (lazy timers, as `Port::pause_timer_at`).
    pub timer_at: [Option<SimTime>; N_CLASSES],
    /// Classes with a pause that may still run (bit c): the others need no time comparison.
    maybe_paused: u8,
    paused_since: [Option<SimTime>; N_CLASSES],
    paused_total: [SimTime; N_CLASSES],
    /// PFC frames (XOFF and XON) received per class.
    pub frames_received: [u64; N_CLASSES],
    /// Trigger side: XOFF outstanding towards the peer (bit c = class c).
    pub xoff_sent: u8,
    /// When class c's outstanding XOFF must be re-sent; bit c of `refresh_pending` = an event
    /// is scheduled.
    pub refresh_due: [SimTime; N_CLASSES],
    refresh_pending: u8,
    pub xoff_frames_sent: [u64; N_CLASSES],
    pub xon_frames_sent: [u64; N_CLASSES],
}

impl PfcPortState {
    /// Classes paused at `now` (bit c = class c).
    pub fn paused_mask(&self, now: SimTime) -> u8 {
        let mut mask = 0;
        let mut bits = self.maybe_paused;
        while bits != 0 {
            let c = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if now < self.paused_until[c] {
                mask |= 1 << c;
            }
        }
        mask
    }

    /// A PFC frame for `class` arrived. Returns the time of a timer event the caller must
    /// schedule (None when one is already pending or on XON).
    pub fn receive(
        &mut self,
        class: usize,
        quanta: u16,
        line_rate_bps: f64,
        now: SimTime,
    ) -> Option<SimTime> {
        self.frames_received[class] += 1;
        if quanta == 0 {
            self.paused_until[class] = now;
            self.note_unpaused(class, now);
            return None;
        }
        let until = now + pause_quanta_time(quanta, line_rate_bps);
        self.paused_until[class] = until;
        self.maybe_paused |= 1 << class;
        if self.paused_since[class].is_none() {
            self.paused_since[class] = Some(now);
        }
        if self.timer_at[class].is_some_and(|t| t <= until) {
            return None;
        }
        self.timer_at[class] = Some(until);
        Some(until)
    }

    /// Class `class`'s timer event fired at `now`.
    pub fn on_timer(&mut self, class: usize, now: SimTime) -> PauseTimer {
        if self.timer_at[class] != Some(now) {
            return PauseTimer::Stale;
        }
        self.timer_at[class] = None;
        if now < self.paused_until[class] {
            self.timer_at[class] = Some(self.paused_until[class]);
            return PauseTimer::Rearm(self.paused_until[class]);
        }
        self.note_unpaused(class, now);
        PauseTimer::Expired
    }

    fn note_unpaused(&mut self, class: usize, now: SimTime) {
        self.maybe_paused &= !(1 << class);
        if let Some(since) = self.paused_since[class].take() {
            self.paused_total[class] += now - since;
        }
    }

    /// Time class `class` was paused so far, including a pause still running at `now`.
    pub fn paused_time(&self, class: usize, now: SimTime) -> SimTime {
        let running = self.paused_since[class].map_or(SimTime::ZERO, |s| now.saturating_sub(s));
        self.paused_total[class] + running
    }
}

/// A PFC frame for `class` arrived on `port` (port `at.1` of node `at.0`): applies it and
/// schedules the class's timer event when one is needed. The caller then kicks the transmitter.
pub fn receive_pfc(
    port: &mut Port,
    class: usize,
    quanta: u16,
    at: (NodeIdx, PortIdx),
    ctx: &mut Ctx,
) {
    let rate = port.line_rate_bps;
    if let Some(until) = port.pfc_state().receive(class, quanta, rate, ctx.q.now()) {
        schedule_expire(until, class, at, ctx);
    }
}

/// Class `class`'s timer event fired on `port`: re-arms it when the pause was renewed.
/// Returns true when the class may send again.
pub fn on_pfc_expire(port: &mut Port, class: usize, at: (NodeIdx, PortIdx), ctx: &mut Ctx) -> bool {
    match port.pfc_state().on_timer(class, ctx.q.now()) {
        PauseTimer::Stale => false,
        PauseTimer::Rearm(until) => {
            schedule_expire(until, class, at, ctx);
            false
        }
        PauseTimer::Expired => true,
    }
}

fn schedule_expire(until: SimTime, class: usize, (node, port): (NodeIdx, PortIdx), ctx: &mut Ctx) {
    let class = class as u8;
    ctx.q
        .schedule(until, EventKind::PfcExpire { node, port, class });
}

/// Makes `port`'s peer pause `class` (`want`) or resume it; queues the PFC frame. Returns true
/// when a frame was queued (the caller then kicks the transmitter).
pub fn set_class_xoff(
    port: &mut Port,
    class: usize,
    want: bool,
    quanta: u16,
    at: (NodeIdx, PortIdx),
    ctx: &mut Ctx,
) -> bool {
    let state = port.pfc_state();
    if want == (state.xoff_sent & (1 << class) != 0) {
        return false;
    }
    state.xoff_sent ^= 1 << class;
    if want {
        queue_pfc(port, class, quanta, ctx);
        arm_refresh(port, class, quanta, at, ctx);
    } else {
        queue_pfc(port, class, 0, ctx);
    }
    true
}

/// Class `class`'s refresh event fired: re-send XOFF when it is due, or re-arm for a later
/// due time. One pending event per (port, class) at most.
pub fn refresh_class_xoff(
    port: &mut Port,
    class: usize,
    quanta: u16,
    at: (NodeIdx, PortIdx),
    ctx: &mut Ctx,
) -> bool {
    let state = port.pfc_state();
    state.refresh_pending &= !(1 << class);
    if state.xoff_sent & (1 << class) == 0 {
        return false;
    }
    if ctx.q.now() < state.refresh_due[class] {
        schedule_refresh(port, class, at, ctx);
        return false;
    }
    queue_pfc(port, class, quanta, ctx);
    arm_refresh(port, class, quanta, at, ctx);
    true
}

fn queue_pfc(port: &mut Port, class: usize, quanta: u16, ctx: &mut Ctx) {
    let bytes = ctx.control_bytes;
    let payload = Payload::Pfc {
        class: class as u8,
        quanta,
    };
    let frame = Frame::control(payload, u32::MAX, u32::MAX, u32::MAX, bytes, ctx.q.now());
    port.ctrl_q.push_back(frame);
    let state = port.pfc_state();
    let kind = if quanta == 0 {
        state.xon_frames_sent[class] += 1;
        ControlKind::PfcXon
    } else {
        state.xoff_frames_sent[class] += 1;
        ControlKind::PfcXoff
    };
    ctx.counters.control(kind, bytes);
}

fn arm_refresh(port: &mut Port, class: usize, quanta: u16, at: (NodeIdx, PortIdx), ctx: &mut Ctx) {
    let half = SimTime(pause_quanta_time(quanta, port.line_rate_bps).ps() / 2).max(SimTime(1));
    let state = port.pfc_state();
    state.refresh_due[class] = ctx.q.now() + half;
    if state.refresh_pending & (1 << class) == 0 {
        schedule_refresh(port, class, at, ctx);
    }
}

fn schedule_refresh(port: &mut Port, class: usize, (node, idx): (NodeIdx, PortIdx), ctx: &mut Ctx) {
    let state = port.pfc_state();
    state.refresh_pending |= 1 << class;
    ctx.q.schedule(
        state.refresh_due[class],
        EventKind::PfcRefresh {
            node,
            port: idx,
            class: class as u8,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_timers_are_independent() {
        let mut s = PfcPortState::default();
        let t0 = SimTime::from_micros(1);
        // 100 quanta at 40 Gb/s: 100 x 512 bits / 40e9 = 1.28 us.
        assert_eq!(s.receive(3, 100, 40e9, t0), Some(t0 + SimTime(1_280_000)));
        assert_eq!(s.paused_mask(t0), 1 << 3);
        s.receive(5, 0xffff, 40e9, t0);
        assert_eq!(s.paused_mask(t0), (1 << 3) | (1 << 5));
        // XON for class 5 leaves class 3 paused.
        assert_eq!(s.receive(5, 0, 40e9, SimTime::from_micros(2)), None);
        assert_eq!(s.paused_mask(SimTime::from_micros(2)), 1 << 3);
        assert_eq!(
            s.paused_time(5, SimTime::from_micros(9)),
            SimTime::from_micros(1)
        );
        let end = t0 + SimTime(1_280_000);
        assert_eq!(s.paused_mask(end), 0);
        assert_eq!(s.on_timer(3, end), PauseTimer::Expired);
        assert_eq!(
            s.paused_time(3, SimTime::from_micros(9)),
            SimTime(1_280_000)
        );
    }
}
