//! A switch's PFC (IEEE 802.1Qbb) ingress accounting: the bytes each (ingress port, class)
//! holds in the buffer, its XOFF/XON triggers and its headroom.
//!
//! A frame of a lossless class is counted against its (ingress port, class). If it would take
//! the count past XOFF, or XOFF is already outstanding, it goes to the headroom instead, and the
//! upstream sender is paused for that class: the headroom absorbs what is still in flight (one
//! round trip and up to a frame on each side). A frame that does not fit the headroom either is
//! dropped and counted as a headroom overflow (the headroom is too small for the link). XON
//! goes out once the headroom is empty and the count is below XON (static) or `xon_offset_bytes`
//! below the current XOFF (dynamic). Departures release headroom first (as the public ns-3
//! PFC switches do). XOFF is a fixed byte count, or dynamic: `alpha` x the shared buffer not
//! yet used outside headroom, re-evaluated for every (port, class) as the buffer fills.
//!
//! A dynamic XOFF moves with every frame in or out of the switch, for every (port, class) at
//! once, but only two kinds of lane can change: the paused ones (XON) and those whose count
//! passes XOFF (XOFF). The switch keeps which lanes are paused and a bound on the largest count
//! of the others (`unpaused_bound_bytes`), and visits every lane only when that bound is above
//! XOFF; otherwise the paused lanes and the arriving or leaving frame's own lane (`Switch::
//! update_pfc_lanes`). Scanning all of them at every frame was O(ports) per frame: half the
//! time of a 6,144-host fabric with 72-port switches (docs/performance.md, "Session 21").
//!
//! Lossless frames are not subject to the switch's other buffer limits (`shared_buffer_bytes`,
//! `output_buffer_bytes`, `input_buffer_bytes`): PFC bounds them. Lossy classes obey those limits
//! and are counted here only for the summary.

use crate::scenario::{PfcSpec, PfcThreshold, N_CLASSES};

/// What the summary reports per class, over all ingress ports of a switch.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PfcClassStats {
    /// Frames of the class that arrived at the switch, dropped ones included.
    pub(crate) arrived_frames: u64,
    /// The largest count outside headroom of one (ingress port, class), and the XOFF in force
    /// then (dynamic thresholds move).
    pub(crate) peak_ingress_bytes: u64,
    pub(crate) xoff_at_peak_bytes: u64,
    /// Highest count relative to its XOFF (1.0 = at XOFF).
    pub(crate) peak_fraction_of_xoff: f64,
    /// The most headroom one (ingress port, class) used, and that port's headroom.
    pub(crate) max_headroom_bytes: u64,
    pub(crate) headroom_at_max_bytes: u64,
    pub(crate) headroom_overflow_drops: u64,
    /// The ingress port of the first headroom overflow, if any.
    pub(crate) first_overflow_port: Option<u16>,
    /// Lossy classes: frames dropped at the switch's buffer limits.
    pub(crate) lossy_drops: u64,
}

// `repr(C)`: the fields in the order written, so that what a frame's admission reads of the
// struct is its first cache line (the compiler had put the mask and the threshold 711 bytes
// in, past the statistics: half of `admit`'s samples on the 100 Gb/s RoCE fat tree,
// docs/performance.md "Session 29"); the settings the triggers read, the headrooms and the
// statistics follow.
#[repr(C)]
pub(crate) struct SwitchPfc {
    lossless_mask: u8,
    threshold: PfcThreshold,
    pub(crate) quanta: u16,
    /// How many lanes `paused` holds.
    paused_lanes: u32,
    xoff_bytes: u64,
    headroom_total: u64,
    /// At least the largest count of a lossless lane that is not paused: no such lane
    /// can pass XOFF while XOFF is at or above it.
    unpaused_bound_bytes: u64,
    /// Per ingress port and class: bytes counted against XOFF, and bytes in headroom.
    lanes: Box<[PortLanes]>,
    /// Per ingress port: the lossless classes whose upstream sender this switch holds (XOFF
    /// outstanding).
    paused: Box<[u8]>,
    xon_bytes: u64,
    alpha: f64,
    xon_offset_bytes: u64,
    shared_buffer_bytes: u64,
    /// Per ingress port: its headroom per lossless class (`headroom_bytes`: one value for
    /// every port, or each port's own with "auto": `sim/build/headroom.rs`).
    pub(crate) headroom_bytes: Vec<u64>,
    pub(crate) stats: [PfcClassStats; N_CLASSES],
}

/// One class's bytes at one ingress port: counted against XOFF, and in headroom. Side by
/// side, since admission, departure and the trigger read both.
#[derive(Clone, Copy, Debug, Default)]
struct LaneBytes {
    counted: u64,
    headroom: u64,
}

/// An ingress port's eight classes, aligned to a cache line so that classes 0-3 share one
/// line and 4-7 the next: a frame's admission and departure each read one line of PFC state
/// (two, in separate arrays for the counts and the headroom, before: docs/performance.md,
/// "Session 21").
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct PortLanes([LaneBytes; N_CLASSES]);

/// Where an admitted lossless frame was put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    Counted,
    Headroom,
    /// The headroom is full: drop the frame.
    Overflow,
}

impl SwitchPfc {
    /// The PFC state of a switch whose ingress ports have the headrooms `headroom_bytes`.
    pub(crate) fn new(
        spec: &PfcSpec,
        headroom_bytes: Vec<u64>,
        shared_buffer_bytes: Option<u64>,
    ) -> SwitchPfc {
        let n_ports = headroom_bytes.len();
        SwitchPfc {
            lossless_mask: spec.lossless_mask(),
            threshold: spec.threshold,
            xoff_bytes: spec.xoff_bytes.round() as u64,
            xon_bytes: spec.xon_bytes.round() as u64,
            alpha: spec.alpha,
            xon_offset_bytes: spec.xon_offset_bytes.round() as u64,
            headroom_bytes,
            quanta: spec.quanta,
            shared_buffer_bytes: shared_buffer_bytes.unwrap_or(u64::MAX),
            lanes: vec![PortLanes::default(); n_ports].into_boxed_slice(),
            headroom_total: 0,
            paused: vec![0; n_ports].into_boxed_slice(),
            paused_lanes: 0,
            unpaused_bound_bytes: 0,
            stats: [PfcClassStats::default(); N_CLASSES],
        }
    }

    /// What admitting a frame of `class` from `port` reads beyond the struct's first line, as
    /// (address, bytes): the port's lanes, its paused classes, the class's statistics. Hints
    /// for the prefetcher (`sim/prefetch.rs`); any address when out of range.
    pub(crate) fn admission_lines(&self, port: usize, class: usize) -> [(*const u8, usize); 3] {
        [
            (self.lanes.as_ptr().wrapping_add(port).cast(), 64),
            (self.paused.as_ptr().wrapping_add(port), 1),
            (
                self.stats.as_ptr().wrapping_add(class).cast(),
                std::mem::size_of::<PfcClassStats>(),
            ),
        ]
    }

    pub(crate) fn is_lossless(&self, class: usize) -> bool {
        self.lossless_mask & (1 << class) != 0
    }

    pub(crate) fn is_dynamic(&self) -> bool {
        self.threshold == PfcThreshold::Dynamic
    }

    /// XOFF now, given the switch's buffered bytes (`memory_bytes`, headroom included).
    pub(crate) fn xoff_now(&self, memory_bytes: u64) -> u64 {
        match self.threshold {
            PfcThreshold::Static => self.xoff_bytes,
            PfcThreshold::Dynamic => {
                let outside_headroom = memory_bytes.saturating_sub(self.headroom_total);
                let free = self.shared_buffer_bytes.saturating_sub(outside_headroom);
                (self.alpha * free as f64) as u64
            }
        }
    }

    /// A frame of `class` from `port` enters the buffer: to the headroom while this switch
    /// holds that lane's sender (XOFF outstanding, as `note_lane` recorded) or past XOFF.
    /// Lossy classes are only counted.
    pub(crate) fn admit(
        &mut self,
        port: usize,
        class: usize,
        bytes: u64,
        memory_bytes: u64,
    ) -> Admission {
        self.stats[class].arrived_frames += 1;
        let xoff = self.xoff_now(memory_bytes);
        let lossless = self.is_lossless(class);
        let xoff_out = self.holds(port, class);
        let lane = &mut self.lanes[port].0[class];
        let counted = lane.counted;
        if lossless && (xoff_out || counted + bytes > xoff) {
            let used = lane.headroom;
            let headroom = self.headroom_bytes[port];
            if used + bytes > headroom {
                let s = &mut self.stats[class];
                s.headroom_overflow_drops += 1;
                s.first_overflow_port.get_or_insert(port as u16);
                return Admission::Overflow;
            }
            lane.headroom = used + bytes;
            self.headroom_total += bytes;
            let s = &mut self.stats[class];
            if used + bytes > s.max_headroom_bytes {
                s.max_headroom_bytes = used + bytes;
                s.headroom_at_max_bytes = headroom;
            }
            return Admission::Headroom;
        }
        lane.counted = counted + bytes;
        if lossless {
            // Counted, so not paused (`xoff_out` is false).
            self.unpaused_bound_bytes = self.unpaused_bound_bytes.max(counted + bytes);
        }
        self.note_peak(class, counted + bytes, xoff);
        Admission::Counted
    }

    /// A frame of a lossy class was dropped at the switch's buffer limits.
    pub(crate) fn count_lossy_drop(&mut self, class: usize) {
        self.stats[class].arrived_frames += 1;
        self.stats[class].lossy_drops += 1;
    }

    fn note_peak(&mut self, class: usize, level: u64, xoff: u64) {
        let s = &mut self.stats[class];
        if level > s.peak_ingress_bytes {
            s.peak_ingress_bytes = level;
            s.xoff_at_peak_bytes = xoff;
        }
        let fraction = level as f64 / xoff.max(1) as f64;
        s.peak_fraction_of_xoff = s.peak_fraction_of_xoff.max(fraction);
    }

    /// A frame of `class` that came in by `port` leaves the buffer: headroom empties first.
    pub(crate) fn release(&mut self, port: usize, class: usize, bytes: u64) {
        let lane = &mut self.lanes[port].0[class];
        let from_headroom = bytes.min(lane.headroom);
        lane.headroom -= from_headroom;
        lane.counted -= bytes - from_headroom;
        self.headroom_total -= from_headroom;
    }

    /// Should the sender on `port` be paused for lossless `class`? `on`: it is now.
    pub(crate) fn wants_pause(
        &self,
        port: usize,
        class: usize,
        on: bool,
        memory_bytes: u64,
    ) -> bool {
        self.wants_pause_under(port, class, on, self.xoff_now(memory_bytes))
    }

    /// `wants_pause` with XOFF known (`xoff_now`), for a caller that has it already.
    pub(crate) fn wants_pause_under(&self, port: usize, class: usize, on: bool, xoff: u64) -> bool {
        let lane = self.lanes[port].0[class];
        if lane.headroom > 0 {
            return true;
        }
        let level = lane.counted;
        match (self.threshold, on) {
            (PfcThreshold::Static, true) => level >= self.xon_bytes,
            (PfcThreshold::Dynamic, true) => level + self.xon_offset_bytes > xoff,
            (_, false) => level > xoff,
        }
    }

    /// The class-enable vector (bit c = class c is lossless).
    pub(crate) fn lossless_mask(&self) -> u8 {
        self.lossless_mask
    }

    /// The lane of lossless `class` on `port` is now paused (XOFF sent) or not (XON sent).
    pub(crate) fn note_lane(&mut self, port: usize, class: usize, paused: bool) {
        let bit = 1u8 << class;
        if paused {
            self.paused[port] |= bit;
            self.paused_lanes += 1;
        } else {
            self.paused[port] &= !bit;
            self.paused_lanes -= 1;
            let counted = self.lanes[port].0[class].counted;
            self.unpaused_bound_bytes = self.unpaused_bound_bytes.max(counted);
        }
    }

    /// Whether the lane of `class` on `port` is paused, as recorded by `note_lane`.
    pub(crate) fn holds(&self, port: usize, class: usize) -> bool {
        self.paused[port] & (1 << class) != 0
    }

    /// Whether a lane of `port` is paused.
    pub(crate) fn holds_any(&self, port: usize) -> bool {
        self.paused[port] != 0
    }

    /// Whether any lane is paused.
    pub(crate) fn holds_none(&self) -> bool {
        self.paused_lanes == 0
    }

    /// Whether a lane that is not paused may be past `xoff` (`xoff_now`): then every lane must
    /// be looked at (`Switch::update_pfc_lanes`).
    pub(crate) fn may_pass(&self, xoff: u64) -> bool {
        self.unpaused_bound_bytes > xoff
    }

    /// After every lane was looked at: the bound becomes the largest count of a lossless lane
    /// not paused.
    pub(crate) fn tighten_bound(&mut self) {
        let lossless = self.lossless_mask;
        let unpaused = |(lanes, paused): (&PortLanes, &u8)| {
            (0..N_CLASSES)
                .filter(|&c| (lossless & !paused) & (1 << c) != 0)
                .map(|c| lanes.0[c].counted)
                .max()
                .unwrap_or(0)
        };
        self.unpaused_bound_bytes = (self.lanes.iter().zip(&self.paused))
            .map(unpaused)
            .max()
            .unwrap_or(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(threshold: PfcThreshold) -> PfcSpec {
        PfcSpec {
            lossless_classes: vec![3],
            threshold,
            xoff_bytes: 3000.0,
            xon_bytes: 1500.0,
            alpha: 0.5,
            xon_offset_bytes: 1000.0,
            ..PfcSpec::default()
        }
    }

    #[test]
    fn a_port_with_its_own_headroom_overflows_at_its_own_size() {
        // "auto" gives each ingress port its own headroom: port 0 3000 B, port 1 4500 B.
        let mut pfc = SwitchPfc::new(&spec(PfcThreshold::Static), vec![3000, 4500], None);
        for port in [0, 1] {
            let at = 4500 * port as u64;
            assert_eq!(pfc.admit(port, 3, 1500, at), Admission::Counted);
            assert_eq!(pfc.admit(port, 3, 1500, at + 1500), Admission::Counted);
            pfc.note_lane(port, 3, true);
            assert_eq!(pfc.admit(port, 3, 1500, at + 3000), Admission::Headroom);
            assert_eq!(pfc.admit(port, 3, 1500, at + 4500), Admission::Headroom);
        }
        assert_eq!(
            pfc.admit(0, 3, 1500, 12000),
            Admission::Overflow,
            "3000 B full"
        );
        assert_eq!(pfc.admit(1, 3, 1500, 12000), Admission::Headroom, "4500 B");
        assert_eq!(pfc.admit(1, 3, 1500, 13500), Admission::Overflow);
        let s = pfc.stats[3];
        assert_eq!(
            (s.max_headroom_bytes, s.headroom_at_max_bytes),
            (4500, 4500)
        );
        assert_eq!(s.headroom_overflow_drops, 2);
        assert_eq!(s.first_overflow_port, Some(0), "port 0 overflowed first");
    }

    #[test]
    fn frames_past_xoff_go_to_headroom_then_overflow() {
        let mut pfc = SwitchPfc::new(&spec(PfcThreshold::Static), vec![3000; 2], None);
        assert_eq!(pfc.admit(0, 3, 1500, 0), Admission::Counted);
        assert_eq!(pfc.admit(0, 3, 1500, 1500), Admission::Counted);
        assert!(
            !pfc.wants_pause(0, 3, false, 3000),
            "3000 B is not above XOFF"
        );
        assert_eq!(pfc.admit(0, 3, 1500, 3000), Admission::Headroom);
        assert!(pfc.wants_pause(0, 3, false, 4500));
        // The switch sends XOFF and records it; the lane's frames go to the headroom.
        pfc.note_lane(0, 3, true);
        assert_eq!(pfc.admit(0, 3, 1500, 4500), Admission::Headroom);
        assert_eq!(pfc.admit(0, 3, 1500, 6000), Admission::Overflow);
        assert_eq!(pfc.stats[3].max_headroom_bytes, 3000);
        assert_eq!(pfc.stats[3].headroom_overflow_drops, 1);
        // Departures empty the headroom first; XON below 1500 B with no headroom in use.
        pfc.release(0, 3, 1500);
        pfc.release(0, 3, 1500);
        assert_eq!(pfc.lanes[0].0[3].headroom, 0);
        assert!(pfc.wants_pause(0, 3, true, 3000), "3000 B >= XON");
        pfc.release(0, 3, 1500);
        assert!(pfc.wants_pause(0, 3, true, 1500), "1500 B is not below XON");
        // Below XOFF by its count, but the sender is held until XON: the next frame still
        // goes to the headroom, and leaves it first.
        assert_eq!(pfc.admit(0, 3, 1500, 1500), Admission::Headroom);
        pfc.release(0, 3, 1500);
        assert_eq!(pfc.lanes[0].0[3].headroom, 0);
        pfc.release(0, 3, 1500);
        assert!(!pfc.wants_pause(0, 3, true, 0));
        // Lossy classes never go to headroom.
        assert_eq!(pfc.admit(1, 0, 9000, 0), Admission::Counted);
    }

    #[test]
    fn a_ports_count_and_headroom_of_a_class_share_a_cache_line() {
        assert_eq!(std::mem::align_of::<PortLanes>(), 64);
        assert_eq!(std::mem::size_of::<PortLanes>(), 128);
        // What admission reads of the record is its first line.
        let end = std::mem::offset_of!(SwitchPfc, paused) + std::mem::size_of::<Box<[u8]>>();
        assert!(end <= 64, "{end}");
        let pfc = SwitchPfc::new(&spec(PfcThreshold::Static), vec![3000; 3], None);
        for port in &pfc.lanes {
            let start = port as *const PortLanes as usize;
            assert_eq!(start % 64, 0);
            for lane in &port.0 {
                let at = lane as *const LaneBytes as usize - start;
                assert_eq!(at / 64, (at + 15) / 64, "a lane within one line");
            }
        }
    }

    #[test]
    fn dynamic_xoff_is_alpha_times_free_shared_buffer() {
        let mut pfc = SwitchPfc::new(&spec(PfcThreshold::Dynamic), vec![3000; 2], Some(100_000));
        // alpha 0.5 x (100,000 - 40,000) = 30,000 B.
        assert_eq!(pfc.xoff_now(40_000), 30_000);
        assert_eq!(pfc.admit(0, 3, 1500, 0), Admission::Counted);
        // The other traffic fills the buffer: XOFF = 0.5 x (100,000 - 98,000) = 1,000 < 1,500.
        assert!(pfc.wants_pause(0, 3, false, 98_000));
        // XON when 1,500 + 1,000 <= XOFF, i.e. free >= 5,000: at 95,000 B buffered.
        assert!(pfc.wants_pause(0, 3, true, 95_001));
        assert!(!pfc.wants_pause(0, 3, true, 95_000));
    }

    #[test]
    fn the_bound_says_when_a_lane_not_paused_may_pass_a_dynamic_xoff() {
        // alpha 0.5 of a 100,000 B buffer: XOFF = 0.5 x (100,000 - buffered).
        let mut pfc = SwitchPfc::new(&spec(PfcThreshold::Dynamic), vec![3000; 2], Some(100_000));
        assert_eq!(pfc.admit(0, 3, 20_000, 0), Admission::Counted);
        assert_eq!(pfc.admit(1, 3, 5_000, 20_000), Admission::Counted);
        // The largest count is 20,000 B: XOFF 20,000 at 60,000 B buffered is not passed (a
        // lane pauses above XOFF), 19,999 at 60,002 B may be.
        assert!(!pfc.may_pass(pfc.xoff_now(60_000)));
        assert!(pfc.may_pass(pfc.xoff_now(60_002)));
        // Port 0 paused: once the lanes are looked at, the bound is port 1's 5,000 B.
        pfc.note_lane(0, 3, true);
        assert!(pfc.holds(0, 3) && pfc.holds_any(0) && !pfc.holds_any(1));
        assert!(!pfc.holds_none());
        pfc.tighten_bound();
        assert!(!pfc.may_pass(pfc.xoff_now(60_002)));
        // XOFF 4,999 at 90,001 B buffered: below 5,000.
        assert!(pfc.may_pass(pfc.xoff_now(90_001)));
        // XON on port 0 with 12,000 B counted: the bound takes it back; XOFF 10,000 at 80,000 B.
        pfc.release(0, 3, 8_000);
        pfc.note_lane(0, 3, false);
        assert!(pfc.holds_none());
        assert!(pfc.may_pass(pfc.xoff_now(80_000)));
        pfc.tighten_bound();
        assert!(
            pfc.may_pass(pfc.xoff_now(80_000)),
            "port 0's 12,000 B are not paused"
        );
        assert!(!pfc.may_pass(pfc.xoff_now(76_000)), "XOFF 12,000");
    }
}
