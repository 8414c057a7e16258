//! Simulated time and transmission arithmetic.
//!
//! Time is an integer count of picoseconds (`SimTime`), so event ordering is exact and runs are
//! bit-identical across machines. One bit at 10 Gb/s lasts 100 ps; a 1500 B frame 1.2 us.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// A point in simulated time, or a duration, in integer picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Converts seconds to the nearest picosecond. Negative or non-finite input maps to 0
    /// (validation rejects such values before they get here).
    pub fn from_secs_f64(seconds: f64) -> SimTime {
        if !seconds.is_finite() || seconds <= 0.0 {
            return SimTime::ZERO;
        }
        SimTime((seconds * PS_PER_S as f64).round() as u64)
    }

    pub fn from_micros(us: u64) -> SimTime {
        SimTime(us * 1_000_000)
    }

    pub fn from_nanos(ns: u64) -> SimTime {
        SimTime(ns * 1_000)
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }

    pub fn ps(self) -> u64 {
        self.0
    }

    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 += rhs.0;
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9} s", self.as_secs_f64())
    }
}

/// Time to put `bytes` on a wire at `rate_bps`, rounded up to the next picosecond so a frame
/// never finishes early. Returns `SimTime::MAX` for a zero rate (a stopped server).
pub fn serialization_time(bytes: u64, rate_bps: f64) -> SimTime {
    if rate_bps <= 0.0 {
        return SimTime::MAX;
    }
    let bits = (bytes * 8) as f64;
    SimTime((bits * PS_PER_S as f64 / rate_bps).ceil() as u64)
}

/// Duration of one PAUSE quantum (512 bit times) at `rate_bps`: 51.2 ns at 10 Gb/s.
pub fn pause_quanta_time(quanta: u16, rate_bps: f64) -> SimTime {
    if rate_bps <= 0.0 {
        return SimTime::MAX;
    }
    SimTime((quanta as f64 * 512.0 * PS_PER_S as f64 / rate_bps).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bit_at_10g_is_100ps() {
        assert_eq!(serialization_time(1, 10e9).ps(), 800);
        assert_eq!(pause_quanta_time(1, 10e9).ps(), 51_200);
    }

    #[test]
    fn full_frame_at_10g_is_1_2_us() {
        assert_eq!(serialization_time(1500, 10e9), SimTime::from_nanos(1200));
        assert_eq!(serialization_time(64, 10e9), SimTime(51_200));
    }

    #[test]
    fn serialization_rounds_up() {
        // 1500 B at 3 Gb/s = 4 us exactly; at 7 Gb/s = 1714.2857 ns -> rounded up.
        assert_eq!(serialization_time(1500, 3e9), SimTime::from_micros(4));
        assert_eq!(serialization_time(1500, 7e9).ps(), 1_714_286);
    }

    #[test]
    fn zero_rate_never_finishes() {
        assert_eq!(serialization_time(1500, 0.0), SimTime::MAX);
    }

    #[test]
    fn max_pause_is_3_355_ms_at_10g() {
        let t = pause_quanta_time(u16::MAX, 10e9);
        assert_eq!(t.ps(), 3_355_392_000);
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(SimTime::from_secs_f64(1.5e-6), SimTime::from_nanos(1500));
        assert!((SimTime::from_micros(250).as_secs_f64() - 250e-6).abs() < 1e-15);
        assert_eq!(SimTime::from_secs_f64(-1.0), SimTime::ZERO);
    }
}
