//! Simulated time and transmission arithmetic.
//!
//! Time is an integer count of picoseconds (`SimTime`), so event ordering is exact and runs are
//! bit-identical across machines. One bit at 10 Gb/s lasts 100 ps; a 1500 B frame 1.2 us.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// Picoseconds per second.
pub(crate) const PS_PER_S: u64 = 1_000_000_000_000;

/// The clock's resolution: durations a scenario gives must be 0 or at least this (anything
/// shorter would round to 0 ps and stall time at one instant).
pub(crate) const MIN_TIME_S: f64 = 1e-12;

/// Longest time a scenario field may give (about 11.6 days). u64 picoseconds reach 1.8e7 s;
/// keeping each input 18x below that lets a run's start, duration, delays and timers be added
/// without reaching the end of the clock (and the clock saturates rather than wraps if they do).
pub const MAX_TIME_S: f64 = 1e6;

/// Fastest rate a scenario may give: one bit per picosecond, so a bit time is representable.
pub const MAX_RATE_BPS: f64 = 1e12;

/// Slowest service rate (links, receivers, CBR sources): 1 kb/s, at which a 9216 B frame takes
/// 74 s and a full PAUSE (65535 quanta) 9.3 hours, both inside `MAX_TIME_S`.
pub const MIN_RATE_BPS: f64 = 1e3;

/// A point in simulated time, or a duration, in integer picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct SimTime(pub u64);

impl SimTime {
    pub(crate) const ZERO: SimTime = SimTime(0);
    pub(crate) const MAX: SimTime = SimTime(u64::MAX);

    /// Converts seconds to the nearest picosecond. Negative or non-finite input maps to 0
    /// (validation rejects such values before they get here).
    pub(crate) fn from_secs_f64(seconds: f64) -> SimTime {
        if !seconds.is_finite() || seconds <= 0.0 {
            return SimTime::ZERO;
        }
        SimTime((seconds * PS_PER_S as f64).round() as u64)
    }

    #[cfg(test)]
    pub(crate) fn from_micros(us: u64) -> SimTime {
        SimTime(us * 1_000_000)
    }

    #[cfg(test)]
    pub(crate) fn from_nanos(ns: u64) -> SimTime {
        SimTime(ns * 1_000)
    }

    pub(crate) fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_S as f64
    }

    pub(crate) fn ps(self) -> u64 {
        self.0
    }

    pub(crate) fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

/// Addition saturates at `SimTime::MAX` ("never"): a deadline beyond the end of the clock must
/// stay in the future, not wrap around to the start of the run.
impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

/// A duration times a count (slots of a Bernoulli gap), saturating at `SimTime::MAX`.
impl Mul<u64> for SimTime {
    type Output = SimTime;
    fn mul(self, rhs: u64) -> SimTime {
        SimTime(self.0.saturating_mul(rhs))
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    /// A later time minus an earlier one. Checked in release builds too: a negative
    /// difference is a simulator bug, and a wrapped one would silently schedule an event some
    /// 213 days ahead. Always inline: once or more per frame, and the compiler's own choice
    /// flipped when the event loop grew (docs/performance.md).
    #[inline(always)]
    fn sub(self, rhs: SimTime) -> SimTime {
        match self.0.checked_sub(rhs.0) {
            Some(ps) => SimTime(ps),
            None => panic!("time went backwards: {self} - {rhs}"),
        }
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9} s", self.as_secs_f64())
    }
}

/// Time to put `bytes` on a wire at `rate_bps`, rounded up to the next picosecond so a frame
/// never finishes early. Returns `SimTime::MAX` for a zero rate (a stopped server).
pub(crate) fn serialization_time(bytes: u64, rate_bps: f64) -> SimTime {
    if rate_bps <= 0.0 {
        return SimTime::MAX;
    }
    let bits = (bytes * 8) as f64;
    SimTime(ceil_to_u64(bits * PS_PER_S as f64 / rate_bps))
}

/// `x.ceil() as u64` for `x >= 0` (or NaN), without the library `ceil` (a function call on the
/// baseline x86-64 target): truncate, then add one if something was cut off. Identical for
/// every such `x`, including values past 2^53 (already whole), past `u64::MAX` and infinity
/// (both saturate).
fn ceil_to_u64(x: f64) -> u64 {
    let whole = x as u64;
    if (whole as f64) < x {
        whole.saturating_add(1)
    } else {
        whole
    }
}

/// Largest frame for which `exact_ps_per_byte` may be used: below it `bytes * 8 * 1e12` is
/// an exact double (its odd part `bytes * 5^12` stays under 2^53).
pub(crate) const EXACT_TX_MAX_BYTES: u64 = 1 << 24;

/// Picoseconds per byte at `rate_bps` when that is a whole number (8e12 / rate: 800 at 10 Gb/s,
/// 80 at 100 Gb/s), else None. For such a rate `serialization_time(bytes, rate)` is exactly
/// `bytes * k` for every `bytes <= EXACT_TX_MAX_BYTES`: the dividend `bytes * 8 * 1e12` and the
/// rate are exact doubles and their quotient is an integer below 2^53, so the IEEE division
/// returns it exactly and `ceil` leaves it. Ports precompute it once per rate and multiply
/// instead of dividing (bit-identical, tested against the float formula).
pub(crate) fn exact_ps_per_byte(rate_bps: f64) -> Option<u64> {
    if !(1.0..=MAX_RATE_BPS).contains(&rate_bps) || rate_bps.fract() != 0.0 {
        return None;
    }
    let rate = rate_bps as u64;
    let bits_ps = 8 * PS_PER_S;
    // The product `bytes * k` must stay below 2^53 too (exact as a double): k <= 2^29, i.e.
    // rates from about 15 kb/s up.
    let k = bits_ps / rate;
    (bits_ps.is_multiple_of(rate) && k <= (1 << 53) / EXACT_TX_MAX_BYTES).then_some(k)
}

/// `serialization_time` for a transmitter whose rate changes now and then (a port's schedule,
/// a rate limiter's pacing clock), cheap and bit-identical: one multiplication when the
/// picoseconds per byte are whole (`exact_ps_per_byte`), else the last result for the same
/// size (a run's frames are mostly of one size; at 9.5 Gb/s the divide and `ceil` were 8% of
/// `seed004-qcn`'s cycles).
#[derive(Clone, Debug)]
pub(crate) struct TxTimer {
    /// The rate (as bits) the fields below were computed for.
    rate_bits: u64,
    ps_per_byte: Option<u64>,
    /// The last (bytes, time) the float formula gave at this rate; bytes `u64::MAX` = none.
    last: (u64, SimTime),
}

impl Default for TxTimer {
    /// At rate 0 (a transmitter that never sends until a rate is given).
    fn default() -> Self {
        TxTimer::new(0.0)
    }
}

impl TxTimer {
    pub(crate) fn new(rate_bps: f64) -> TxTimer {
        TxTimer {
            rate_bits: rate_bps.to_bits(),
            ps_per_byte: exact_ps_per_byte(rate_bps),
            last: (u64::MAX, SimTime::ZERO),
        }
    }

    /// Exactly `serialization_time(bytes, rate_bps)`.
    pub(crate) fn time(&mut self, bytes: u64, rate_bps: f64) -> SimTime {
        if rate_bps.to_bits() != self.rate_bits {
            *self = TxTimer::new(rate_bps);
        }
        match self.ps_per_byte {
            Some(k) if bytes <= EXACT_TX_MAX_BYTES => SimTime(bytes * k),
            _ => {
                if self.last.0 != bytes {
                    self.last = (bytes, serialization_time(bytes, rate_bps));
                }
                self.last.1
            }
        }
    }
}

/// Duration of one PAUSE quantum (512 bit times) at `rate_bps`: 51.2 ns at 10 Gb/s.
pub(crate) fn pause_quanta_time(quanta: u16, rate_bps: f64) -> SimTime {
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
    fn clock_saturates_instead_of_wrapping() {
        let late = SimTime(u64::MAX - 5);
        assert_eq!(late + SimTime(10), SimTime::MAX);
        let mut t = late;
        t += SimTime(10);
        assert_eq!(t, SimTime::MAX);
        assert_eq!(SimTime(1 << 40) * (1 << 40), SimTime::MAX);
        assert_eq!(SimTime(1_200_000) * 3, SimTime(3_600_000));
    }

    #[test]
    #[should_panic(expected = "time went backwards")]
    fn a_negative_difference_is_a_bug_not_a_wrap() {
        let _ = SimTime(5) - SimTime(6);
    }

    #[test]
    fn input_bounds_stay_inside_the_clock() {
        // The slowest rate's longest frame and PAUSE, and the longest input time, all fit.
        assert!(serialization_time(9216 + 9216, MIN_RATE_BPS) < SimTime::from_secs_f64(MAX_TIME_S));
        assert!(pause_quanta_time(u16::MAX, MIN_RATE_BPS).as_secs_f64() < MAX_TIME_S);
        assert!(MAX_TIME_S * 18.0 < SimTime::MAX.as_secs_f64());
        // One bit at the fastest rate is exactly one picosecond.
        assert_eq!(serialization_time(1, MAX_RATE_BPS).ps(), 8);
        assert_eq!(SimTime::from_secs_f64(MIN_TIME_S).ps(), 1);
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(SimTime::from_secs_f64(1.5e-6), SimTime::from_nanos(1500));
        assert!((SimTime::from_micros(250).as_secs_f64() - 250e-6).abs() < 1e-15);
        assert_eq!(SimTime::from_secs_f64(-1.0), SimTime::ZERO);
    }

    #[test]
    fn integer_serialisation_matches_the_float_formula() {
        for rate in [1e5, 1e9, 2e9, 2.5e9, 10e9, 25e9, 40e9, 100e9, 400e9, 1e12] {
            let k = exact_ps_per_byte(rate).expect("8e12 / rate is whole");
            for bytes in (0..20_000).chain([EXACT_TX_MAX_BYTES - 1, EXACT_TX_MAX_BYTES]) {
                assert_eq!(
                    SimTime(bytes * k),
                    serialization_time(bytes, rate),
                    "{bytes} B {rate}"
                );
            }
        }
        assert_eq!(exact_ps_per_byte(10e9), Some(800));
        // Not whole: these keep the float formula (and its rounding up).
        for rate in [9.5e9, 3e9, 7e9, 1e3, 0.0, -1.0, 1.5, f64::NAN, 2e12] {
            assert_eq!(exact_ps_per_byte(rate), None, "{rate}");
        }
    }

    #[test]
    fn hand_made_ceil_matches_the_library() {
        let mut x: u64 = 12345;
        let specials = [
            0.0,
            0.5,
            1.0,
            1.0 + f64::EPSILON,
            2f64.powi(53) + 2.0,
            1e19,
            2e19,
        ];
        let randoms = (0..200_000).map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            // Quotients of frame sizes by rates as serialisation forms them.
            ((x >> 40) % 80_000) as f64 * 1e12 / (1e3 + (x >> 20) as f64 % 1e12)
        });
        for v in specials
            .into_iter()
            .chain(randoms)
            .chain([f64::INFINITY, f64::NAN])
        {
            assert_eq!(ceil_to_u64(v), v.ceil() as u64, "{v}");
        }
    }

    proptest::proptest! {
        /// Whatever the sequence of rates and sizes, the timer gives the float formula's result.
        #[test]
        fn tx_timer_is_serialization_time(
            steps in proptest::collection::vec(
                (proptest::sample::select(vec![10e9, 9.5e9, 2e9, 3e9, 1e3, 0.0, 100e9, 7.77e9]),
                 proptest::sample::select(vec![64u64, 84, 1500, 1538, 9000, 0, 1 << 24, (1 << 24) + 1])),
                1..40,
            )
        ) {
            let mut timer = TxTimer::new(10e9);
            for (rate, bytes) in steps {
                proptest::prop_assert_eq!(timer.time(bytes, rate), serialization_time(bytes, rate));
            }
        }
    }
}
