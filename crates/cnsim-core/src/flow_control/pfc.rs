//! IEEE 802.1Qbb priority-based flow control on one port: eight pause lanes, one per priority
//! class, as 802.3x PAUSE per class (`lane.rs`). A paused class stops after the frame in
//! progress and other classes keep sending; control frames are never paused. A port keeps these
//! lanes only once PFC has touched it (`Port::pfc` is None before), so runs without PFC do not
//! carry them.

use crate::flow_control::lane::{Expiry, PauseLane};
use crate::scenario::N_CLASSES;
use crate::time::SimTime;

#[derive(Clone, Debug, Default)]
pub(crate) struct ClassLanes {
    lanes: [PauseLane; N_CLASSES],
    /// Classes with a pause that may still run (bit c): the others need no time comparison.
    maybe_paused: u8,
}

impl ClassLanes {
    /// Classes paused at `now` (bit c = class c).
    pub(crate) fn paused_mask(&self, now: SimTime) -> u8 {
        let mut mask = 0;
        let mut bits = self.maybe_paused;
        while bits != 0 {
            let c = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if self.lanes[c].is_paused(now) {
                mask |= 1 << c;
            }
        }
        mask
    }

    /// A PFC frame for `class` arrived: `PauseLane::receive` for that class.
    pub(crate) fn receive(
        &mut self,
        class: usize,
        quanta: u16,
        line_rate_bps: f64,
        now: SimTime,
    ) -> Option<SimTime> {
        if quanta == 0 {
            self.maybe_paused &= !(1 << class);
        } else {
            self.maybe_paused |= 1 << class;
        }
        self.lanes[class].receive(quanta, line_rate_bps, now)
    }

    /// Class `class`'s expiry event fired at `now`.
    pub(crate) fn on_expire(&mut self, class: usize, now: SimTime) -> Expiry {
        let expiry = self.lanes[class].on_expire(now);
        if expiry == Expiry::Expired {
            self.maybe_paused &= !(1 << class);
        }
        expiry
    }

    /// Classes with a pause that may still run (bit c): `paused_mask` is 0 when this is.
    pub(crate) fn maybe_paused(&self) -> u8 {
        self.maybe_paused
    }

    pub(crate) fn lane(&self, class: usize) -> &PauseLane {
        &self.lanes[class]
    }

    /// For the trigger side (XOFF/XON towards the peer); the held side goes through `receive`
    /// and `on_expire`, which keep the paused-class mask.
    pub(crate) fn lane_mut(&mut self, class: usize) -> &mut PauseLane {
        &mut self.lanes[class]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_timers_are_independent() {
        let mut s = ClassLanes::default();
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
            s.lane(5).paused_time(SimTime::from_micros(9)),
            SimTime::from_micros(1)
        );
        let end = t0 + SimTime(1_280_000);
        assert_eq!(s.paused_mask(end), 0);
        assert_eq!(s.on_expire(3, end), Expiry::Expired);
        assert_eq!(
            s.lane(3).paused_time(SimTime::from_micros(9)),
            SimTime(1_280_000)
        );
        assert_eq!(s.lane(3).frames_received(), 1);
    }
}
