//! IEEE 802.3x PAUSE, the sending side: turning a pause condition into XOFF / XON frames.
//!
//! XOFF carries a long pause_time (default 65535 quanta) and is re-sent every half pause_time
//! while the condition holds, so the peer never resumes on its own; XON is a PAUSE with
//! pause_time 0 (the common practice, protocols.md section 1). The receiving side is
//! `Port::receive_pause`: the peer finishes its current frame, then holds data until the timer
//! ends or XON arrives. PAUSE frames go out at control priority and are never paused.

use crate::engine::{EventKind, NodeIdx, PortIdx};
use crate::net::frame::{Frame, Payload};
use crate::net::port::Port;
use crate::net::Ctx;
use crate::stats::ControlKind;
use crate::time::{pause_quanta_time, SimTime};

/// Hysteresis of a watermark pair: a condition that is on stays on until the level falls below
/// `xon`; one that is off turns on when the level rises above `xoff`.
pub fn hysteresis(on: bool, level: u64, xoff_bytes: u64, xon_bytes: u64) -> bool {
    if on {
        level >= xon_bytes
    } else {
        level > xoff_bytes
    }
}

/// Makes `port`'s peer paused (`want`) or not; queues the XOFF/XON frame. Returns true when a
/// frame was queued (the caller then kicks the transmitter).
pub fn set_xoff(
    port: &mut Port,
    want: bool,
    quanta: u16,
    at: (NodeIdx, PortIdx),
    ctx: &mut Ctx,
) -> bool {
    if want == port.xoff_sent {
        return false;
    }
    port.xoff_sent = want;
    if want {
        queue_pause(port, quanta, ctx);
        arm_refresh(port, quanta, at, ctx);
    } else {
        queue_pause(port, 0, ctx);
    }
    true
}

/// The refresh timer fired: re-send XOFF when it is due, or re-arm for a later due time (the
/// XOFF was re-asserted since the event was scheduled). One pending event per port at most.
pub fn refresh_xoff(port: &mut Port, quanta: u16, at: (NodeIdx, PortIdx), ctx: &mut Ctx) -> bool {
    port.xoff_timer_pending = false;
    if !port.xoff_sent {
        return false;
    }
    if ctx.q.now() < port.xoff_refresh_due {
        schedule_refresh_event(port, at, ctx);
        return false;
    }
    queue_pause(port, quanta, ctx);
    arm_refresh(port, quanta, at, ctx);
    true
}

fn queue_pause(port: &mut Port, quanta: u16, ctx: &mut Ctx) {
    let bytes = ctx.control_bytes;
    let now = ctx.q.now();
    port.ctrl_q.push_back(Frame::control(
        Payload::Pause { quanta },
        u32::MAX,
        u32::MAX,
        u32::MAX,
        bytes,
        now,
    ));
    let kind = if quanta == 0 {
        ControlKind::Xon
    } else {
        ControlKind::Xoff
    };
    ctx.counters.control(kind, bytes);
}

/// The next XOFF is due half a pause_time from now, so the peer never resumes on its own.
fn arm_refresh(port: &mut Port, quanta: u16, at: (NodeIdx, PortIdx), ctx: &mut Ctx) {
    let half = SimTime(pause_quanta_time(quanta, port.line_rate_bps).ps() / 2).max(SimTime(1));
    port.xoff_refresh_due = ctx.q.now() + half;
    if !port.xoff_timer_pending {
        schedule_refresh_event(port, at, ctx);
    }
}

fn schedule_refresh_event(port: &mut Port, (node, idx): (NodeIdx, PortIdx), ctx: &mut Ctx) {
    port.xoff_timer_pending = true;
    ctx.q.schedule(
        port.xoff_refresh_due,
        EventKind::XoffRefresh { node, port: idx },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hysteresis_uses_strict_thresholds() {
        // seed 004: pause above 130 KB, unpause below 110 KB
        assert!(!hysteresis(false, 130_000, 130_000, 110_000));
        assert!(hysteresis(false, 130_001, 130_000, 110_000));
        assert!(hysteresis(true, 110_000, 130_000, 110_000));
        assert!(!hysteresis(true, 109_999, 130_000, 110_000));
    }
}
