//! One direction of a link, seen from the sending node: its output queues (strict priority for
//! control frames, then the data's class queues and their scheduler), the transmitter, its
//! pause lanes (802.3x, and PFC's per class; wired to frames and events in `link_pause.rs`),
//! and the pipe that carries frames across the link to the peer. A frame leaves the queue when
//! its transmission starts, crosses the pipe in `delay`, and is handed to the peer node.
//!
//! One event per frame per hop: a frame is handed to the link whole when its transmission
//! starts (it enters the pipe with its arrival time), so its arrival at the peer is the only
//! event it costs here. The transmitter is busy until `free_at`; a switch port asks for a
//! `PortFree` event only when frames wait behind the one leaving (`switch_tx.rs`), a host
//! decides its next frame in its own wake-up (`host/nic.rs`). A switch port counts a frame in
//! its statistics when its last bit leaves, as a transmit-done event did: lazily, at the next
//! start or when the counters are read (`settle`).

use std::collections::VecDeque;

use crate::cc::HopTelemetry;
use crate::engine::{EventKind, NodeIdx, PortIdx};
use crate::flow_control::lane::PauseLane;
use crate::flow_control::pfc::ClassLanes;
use crate::net::frame::{Frame, Payload, NO_SEQ};
use crate::net::frame_store::{FrameSlot, FrameStore};
use crate::net::link_loss::LinkLoss;
use crate::net::pipe::{InFlight, Pipe};
use crate::net::scheduler::ClassQueues;
use crate::net::telemetry::TelemetryStore;
use crate::time::{SimTime, TxTimer};

#[derive(Clone, Debug, Default)]
pub(crate) struct PortStats {
    pub(crate) tx_frames: u64,
    pub(crate) tx_bytes: u64,
    pub(crate) data_tx_bytes: u64,
    pub(crate) peak_queue_bytes: u64,
    /// Peak since the report window opened (reset at the window's start).
    pub(crate) window_peak_queue_bytes: u64,
    /// Integral of the data queue over time, in byte-picoseconds (for the mean queue).
    pub(crate) queue_area: f64,
    pub(crate) last_queue_change: SimTime,
    pub(crate) dropped_frames: u64,
}

// `repr(C)`: the fields in the order written, so that what an arrival reads at the sending
// port (the pipe, the loss model, the peer) is the struct's first 64 bytes, all the prefetcher
// loads for an `Arrive` (`sim/prefetch.rs`); the transmitter's fields follow, the names and
// rarely used lanes last.
#[repr(C)]
pub(crate) struct Port {
    /// Frames on the link with their arrival times, in order (their slots in the network's
    /// `FrameStore`). A frame enters when its transmission starts (a separate "sending" slot
    /// cost two more copies of the frame and a store-forwarding stall); the head has an
    /// arrival event.
    pipe: Pipe,
    /// Frame loss on this direction of the link (`link_loss.rs`); None = lossless.
    pub(crate) loss: Option<Box<LinkLoss>>,
    pub(crate) peer_node: u32,
    pub(crate) peer_port: u16,
    /// The PFC classes whose pause may still run (`ClassLanes::maybe_paused`, copied here
    /// whenever the lanes change it; `link_pause.rs`), so a frame's start looks at no lane
    /// while none is paused: the lanes are a box away, and on a lossless fabric reading them
    /// for every frame missed the cache (perf: 5% of the 100 Gb/s RoCE fat tree's loop, at
    /// `start_next`). In the padding before `free_at`.
    pfc_maybe_paused: u8,
    /// The transmitter is busy until then (the last bit of the pipe's last frame leaves).
    pub(crate) free_at: SimTime,
    /// A `PortFree` event is due at this time (MAX: none); switch ports only.
    pub(crate) free_event_at: SimTime,
    /// A switch port's frame in transmission until `free_at`, not yet in `stats` (see
    /// `settle`).
    leaving: Leaving,
    pub(crate) data_bytes: u64,
    pub(crate) ctrl_q: VecDeque<Frame>,
    /// Output queues of a switch, one per class (hosts keep their data in VOQs instead).
    pub(crate) data_q: ClassQueues,
    /// One-way delay to the peer's processing: propagation + delay line + peer latency.
    pub(crate) delay: SimTime,
    /// Current service rate (a schedule may lower it below the line rate).
    pub(crate) rate_bps: f64,
    pub(crate) wire_overhead_bytes: u32,
    /// Serialisation times at `rate_bps` (a schedule may change it at any time).
    tx_timer: TxTimer,
    pub(crate) stats: PortStats,
    /// PFC's lanes, one per class; None until PFC touches the port.
    pub(crate) pfc: Option<Box<ClassLanes>>,
    /// IEEE 802.3x PAUSE: the peer holding all data, and this node holding the peer.
    pub(crate) pause: PauseLane,
    /// Physical rate: PAUSE quanta are 512 bit times at this rate.
    pub(crate) line_rate_bps: f64,
    /// "node->peer": how this port appears in outputs.
    pub(crate) name: String,
}

/// The bytes at the start of a `Port` that an arrival reads at the sending port.
pub(crate) const ARRIVAL_FIELDS_BYTES: usize = 64;

/// The bytes at the start of a `Port` that a frame leaving by it reads and writes, up to the
/// peer's 802.3x pause (`PauseLane`'s first field): what the prefetcher loads of an output port.
/// The rest of the pause lane, the line rate and the name (112 bytes) are not on that path.
pub(crate) const OUTPUT_FIELDS_BYTES: usize =
    std::mem::offset_of!(Port, pause) + std::mem::size_of::<SimTime>();

/// A frame in transmission on a switch port, counted in the port's statistics once its last
/// bit has left (at the port's `free_at`).
#[derive(Clone, Copy, Debug, Default)]
struct Leaving {
    pending: bool,
    is_data: bool,
    bytes: u32,
}

impl Port {
    pub(crate) fn new(
        name: String,
        peer_node: u32,
        peer_port: u16,
        rate_bps: f64,
        delay: SimTime,
    ) -> Port {
        Port {
            name,
            peer_node,
            peer_port,
            line_rate_bps: rate_bps,
            rate_bps,
            delay,
            wire_overhead_bytes: 0,
            ctrl_q: VecDeque::new(),
            data_q: ClassQueues::default(),
            data_bytes: 0,
            free_at: SimTime::ZERO,
            free_event_at: SimTime::MAX,
            leaving: Leaving::default(),
            pipe: Pipe::default(),
            pause: PauseLane::default(),
            pfc: None,
            pfc_maybe_paused: 0,
            stats: PortStats::default(),
            loss: None,
            tx_timer: TxTimer::new(rate_bps),
        }
    }

    /// The transmitter is serialising a frame at `now`.
    #[inline]
    pub(crate) fn is_busy(&self, now: SimTime) -> bool {
        now < self.free_at
    }

    /// Frames wait in the control or data queues (paused or not).
    #[inline]
    pub(crate) fn has_waiting(&self) -> bool {
        !self.ctrl_q.is_empty() || !self.data_q.is_empty()
    }

    /// 802.3x PAUSE from the peer holds all data.
    #[inline]
    pub(crate) fn is_paused(&self, now: SimTime) -> bool {
        self.pause.is_paused(now)
    }

    /// Classes PFC has paused at `now` (bit c = class c).
    #[inline]
    pub(crate) fn paused_classes(&self, now: SimTime) -> u8 {
        debug_assert_eq!(
            self.pfc_maybe_paused,
            self.pfc.as_ref().map_or(0, |p| p.maybe_paused()),
            "port {}: the copy of the PFC lanes' paused classes",
            self.name
        );
        if self.pfc_maybe_paused == 0 {
            return 0;
        }
        self.pfc.as_ref().map_or(0, |p| p.paused_mask(now))
    }

    /// After a PFC lane's pause changed: the copy of the classes that may be paused.
    pub(super) fn note_pfc_pauses(&mut self) {
        self.pfc_maybe_paused = self.pfc.as_ref().map_or(0, |p| p.maybe_paused());
    }

    /// Hands `frame` to the link whole at `now`: it goes into `frames` and enters the pipe
    /// with its arrival time, and the transmitter is busy until its last bit leaves. Returns
    /// the entry when the pipe was empty, i.e. the caller must schedule its arrival.
    #[inline(always)]
    fn put_on_link(
        &mut self,
        frame: &Frame,
        now: SimTime,
        frames: &mut FrameStore,
    ) -> Option<InFlight> {
        let slot = frames.put(frame);
        self.link(slot, frame.bytes, now)
    }

    /// The frame of `bytes` in `slot` enters the pipe at `now` (`put_on_link`).
    #[inline(always)]
    fn link(&mut self, slot: FrameSlot, bytes: u32, now: SimTime) -> Option<InFlight> {
        debug_assert!(!self.is_busy(now), "{}: transmitter busy", self.name);
        let wire_bytes = bytes as u64 + self.wire_overhead_bytes as u64;
        self.free_at = now + self.tx_timer.time(wire_bytes, self.rate_bps);
        let arrival = self.free_at + self.delay;
        self.pipe.push_back(slot, arrival);
        (self.pipe.len() == 1).then_some(InFlight { arrival, slot })
    }

    fn count_sent(&mut self, bytes: u32, is_data: bool) {
        self.stats.tx_frames += 1;
        self.stats.tx_bytes += bytes as u64;
        if is_data {
            self.stats.data_tx_bytes += bytes as u64;
        }
    }

    /// Sends `frame` in one step (hosts): it enters the pipe at once with its arrival time,
    /// and is counted at once; the port is free again at the returned time, when the caller
    /// decides what to send next. Returns (end of transmission, the entry whose arrival the
    /// caller must schedule, if the pipe was empty).
    pub(crate) fn send_whole(
        &mut self,
        frame: Frame,
        now: SimTime,
        frames: &mut FrameStore,
    ) -> (SimTime, Option<InFlight>) {
        let (bytes, is_data) = (frame.bytes, frame.is_data());
        let arrival = self.put_on_link(&frame, now, frames);
        self.count_sent(bytes, is_data);
        (self.free_at, arrival)
    }

    /// Starts `frame` on a switch port: as `send_whole`, but the frame is counted when its last
    /// bit leaves (at the next start, or when the counters are read: `settle`). Returns
    /// (the previous frame was counted now: one more frame-hop, the entry to schedule as
    /// `send_whole`).
    #[inline(always)]
    pub(crate) fn start_whole(
        &mut self,
        frame: &Frame,
        now: SimTime,
        frames: &mut FrameStore,
    ) -> (bool, Option<InFlight>) {
        let slot = frames.put(frame);
        self.start_stored(slot, frame.bytes, frame.is_data(), now)
    }

    /// As `start_whole`, for a frame of `bytes` already in the store at `slot` (one that
    /// waited in the output queue, or arrived at the switch and leaves at once): it becomes
    /// the store's last put.
    #[inline(always)]
    pub(crate) fn start_in_store(
        &mut self,
        slot: FrameSlot,
        bytes: u32,
        is_data: bool,
        now: SimTime,
        frames: &mut FrameStore,
    ) -> (bool, Option<InFlight>) {
        frames.mark_last(slot);
        self.start_stored(slot, bytes, is_data, now)
    }

    /// Starts the frame of `bytes` in `slot` (`start_whole`, `start_in_store`).
    #[inline(always)]
    fn start_stored(
        &mut self,
        slot: FrameSlot,
        bytes: u32,
        is_data: bool,
        now: SimTime,
    ) -> (bool, Option<InFlight>) {
        let counted = self.settle(now);
        self.leaving = Leaving {
            pending: true,
            is_data,
            bytes,
        };
        (counted, self.link(slot, bytes, now))
    }

    /// Counts the switch port's frame in transmission if its last bit has left by `by`.
    /// Returns true when it did (one frame-hop done).
    pub(crate) fn settle(&mut self, by: SimTime) -> bool {
        let Leaving {
            pending,
            is_data,
            bytes,
        } = self.leaving;
        if !pending || self.free_at > by {
            return false;
        }
        self.leaving.pending = false;
        self.count_sent(bytes, is_data);
        true
    }

    /// The event of `entry`'s arrival at the peer (this is port `port` of node `node`).
    pub(crate) fn arrival_event(&self, node: NodeIdx, port: PortIdx, entry: InFlight) -> EventKind {
        EventKind::Arrive {
            node,
            port,
            slot: entry.slot,
            peer: self.peer_node,
        }
    }

    /// The pipe's head frame reaches the peer: returns its slot, and the next entry, whose
    /// arrival the caller must schedule.
    pub(crate) fn pop_arrival(&mut self) -> (FrameSlot, Option<InFlight>) {
        let slot = self.pipe.pop_front().expect("Arrive on an empty pipe");
        (slot, self.pipe.front().copied())
    }

    /// The slot of the frame being serialised, if any.
    #[cfg(test)]
    pub(crate) fn sending(&self, now: SimTime) -> Option<FrameSlot> {
        self.pipe
            .back()
            .filter(|_| self.is_busy(now))
            .map(|e| e.slot)
    }

    /// Stamps the data frame just started with this egress's in-band telemetry (the queue it
    /// leaves behind, the bytes sent with it, the time, the rate: `cc/telemetry.rs`) if it
    /// belongs to a transported flow. Out of line: only schemes that ask for telemetry call it.
    #[inline(never)]
    pub(crate) fn stamp_telemetry(
        &mut self,
        now: SimTime,
        store: &mut TelemetryStore,
        frames: &mut FrameStore,
    ) {
        let (queue_bytes, sent_bytes, rate_bps) =
            (self.data_bytes, self.stats.tx_bytes, self.rate_bps);
        let Some(slot) = self.just_started() else {
            return;
        };
        let frame = frames.get_mut(slot);
        if frame.seq == NO_SEQ {
            return;
        }
        let hop = HopTelemetry {
            queue_bytes,
            tx_bytes: sent_bytes + frame.bytes as u64,
            at: now,
            rate_bps,
        };
        if let Payload::Data { telemetry } = &mut frame.payload {
            store.stamp(telemetry, hop);
        }
    }

    /// The slot of the frame whose transmission just started (the pipe's last), to stamp or
    /// mark it on its way out.
    pub(crate) fn just_started(&self) -> Option<FrameSlot> {
        self.pipe.back().map(|e| e.slot)
    }

    /// The slot of the frame that arrives next, if any is on the link or being sent.
    #[cfg(test)]
    pub(crate) fn pipe_head(&self) -> Option<FrameSlot> {
        self.pipe.front().map(|e| e.slot)
    }

    /// What `pop_arrival` reads: the pipe's first entry, the second beside it (a prefetch
    /// hint's target, `sim/prefetch.rs`).
    pub(crate) fn pipe_front(&self) -> Option<&InFlight> {
        self.pipe.front()
    }

    /// Where the next frame started here will be written: a prefetch hint's target.
    pub(crate) fn pipe_next_slot(&self) -> Option<&InFlight> {
        self.pipe.next_slot()
    }

    /// Adds or removes `delta` bytes of data queue, keeping the peak and the time integral.
    pub(crate) fn change_queue(&mut self, now: SimTime, added: bool, bytes: u64) {
        self.integrate_queue(now);
        if added {
            self.data_bytes += bytes;
            self.note_queue_peak(self.data_bytes);
        } else {
            self.data_bytes -= bytes;
        }
    }

    /// A frame of `bytes` passes the queue at `now` without waiting (`Switch::pass_through`):
    /// what `change_queue` adding and then removing it records (its bytes in the peaks, no
    /// time in the integral), in one step.
    pub(crate) fn pass_queue(&mut self, now: SimTime, bytes: u64) {
        self.integrate_queue(now);
        self.note_queue_peak(self.data_bytes + bytes);
    }

    /// Brings the queue's time integral up to `now` at its present level. Both factors are
    /// converted through `i64` (the same value: an interval of a run and a queue's bytes are
    /// far below 2^63): x86-64 converts a signed integer in one instruction and an unsigned
    /// one in a branchy sequence, and this runs twice per frame a switch queues.
    #[inline(always)]
    fn integrate_queue(&mut self, now: SimTime) {
        let dt = (now - self.stats.last_queue_change).ps();
        debug_assert!(dt < 1 << 63 && self.data_bytes < 1 << 63);
        self.stats.queue_area += self.data_bytes as i64 as f64 * dt as i64 as f64;
        self.stats.last_queue_change = now;
    }

    #[inline(always)]
    fn note_queue_peak(&mut self, level_bytes: u64) {
        self.stats.peak_queue_bytes = self.stats.peak_queue_bytes.max(level_bytes);
        self.stats.window_peak_queue_bytes = self.stats.window_peak_queue_bytes.max(level_bytes);
    }

    /// Data frames held here: queued, being sent, or on the wire (stored in `frames`).
    pub(crate) fn data_frames_held(&self, frames: &FrameStore) -> u64 {
        // The frame being sent is already in the pipe.
        let piped = (self.pipe.iter())
            .filter(|e| frames.get(e.slot).is_data())
            .count() as u64;
        // Probes riding the data queue are not data.
        let queued = self.data_q.iter().filter(|q| q.data).count() as u64;
        queued + piped
    }

    /// Mean data queue from time 0 to `now`, in bytes.
    pub(crate) fn mean_queue_bytes(&self, now: SimTime) -> f64 {
        if now.ps() == 0 {
            return 0.0;
        }
        let dt = (now - self.stats.last_queue_change).ps() as f64;
        (self.stats.queue_area + self.data_bytes as f64 * dt) / now.ps() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::frame::Frame;

    fn port() -> Port {
        Port::new("a->b".into(), 1, 0, 10e9, SimTime::from_micros(1))
    }

    /// The arrival time of an entry to schedule.
    fn at(entry: Option<InFlight>) -> Option<SimTime> {
        entry.map(|e| e.arrival)
    }

    #[test]
    fn what_an_arrival_reads_is_in_the_first_bytes() {
        use std::mem::offset_of;
        let end = |offset: usize, size: usize| offset + size;
        for field_end in [
            end(offset_of!(Port, pipe), std::mem::size_of::<Pipe>()),
            end(offset_of!(Port, loss), 8),
            end(offset_of!(Port, peer_node), 4),
            end(offset_of!(Port, peer_port), 2),
        ] {
            assert!(field_end <= ARRIVAL_FIELDS_BYTES, "{field_end}");
        }
    }

    #[test]
    fn what_a_leaving_frame_touches_is_in_the_first_bytes() {
        use std::mem::{offset_of, size_of};
        let end = |offset: usize, size: usize| offset + size;
        for field_end in [
            end(offset_of!(Port, free_event_at), 8),
            end(offset_of!(Port, leaving), size_of::<Leaving>()),
            end(offset_of!(Port, ctrl_q), size_of::<VecDeque<Frame>>()),
            end(offset_of!(Port, data_q), size_of::<ClassQueues>()),
            end(offset_of!(Port, tx_timer), size_of::<TxTimer>()),
            end(offset_of!(Port, stats), size_of::<PortStats>()),
            end(offset_of!(Port, pfc), 8),
            end(offset_of!(Port, pfc_maybe_paused), 1),
            // The lane's `paused_until`, its first field (`lane.rs`).
            end(offset_of!(Port, pause), 8),
        ] {
            assert!(field_end <= OUTPUT_FIELDS_BYTES, "{field_end}");
        }
        assert!(OUTPUT_FIELDS_BYTES + 100 <= size_of::<Port>());
        // The copy of PFC's paused classes sits in the padding before `free_at`.
        assert_eq!(offset_of!(Port, free_at), offset_of!(Port, peer_port) + 4);
    }

    #[test]
    fn frame_takes_serialisation_plus_delay() {
        let (mut p, mut fs) = (port(), FrameStore::default());
        let frame = Frame::data(0, 1, 1500, SimTime::ZERO);
        let (done, arrival) = p.send_whole(frame, SimTime::ZERO, &mut fs);
        assert_eq!(done, SimTime::from_nanos(1200));
        assert_eq!(at(arrival), Some(SimTime::from_nanos(2200)));
        assert!(p.is_busy(SimTime::from_nanos(1199)) && !p.is_busy(done));
        // A second frame behind it in the pipe needs no new arrival event.
        assert!(p.send_whole(frame, done, &mut fs).1.is_none());
        assert_eq!(at(p.pop_arrival().1), Some(SimTime::from_nanos(3400)));
        assert_eq!(p.stats.tx_frames, 2);
    }

    #[test]
    fn a_switch_port_counts_a_frame_when_its_last_bit_leaves() {
        let frame = Frame::data(0, 1, 1500, SimTime::ZERO);
        let (mut p, mut fs) = (port(), FrameStore::default());
        let (counted, arrival) = p.start_whole(&frame, SimTime::ZERO, &mut fs);
        assert!(!counted);
        assert_eq!(at(arrival), Some(SimTime::from_nanos(2200)));
        assert!(p.sending(SimTime::from_nanos(600)).is_some());
        // Still leaving at 1199 ns: not counted; counted once its last bit left at 1200 ns.
        assert!(!p.settle(SimTime::from_nanos(1199)));
        assert_eq!(p.stats.tx_bytes, 0);
        assert!(p.settle(SimTime::from_nanos(1200)));
        assert_eq!((p.stats.tx_frames, p.stats.data_tx_bytes), (1, 1500));
        assert!(!p.settle(SimTime::from_nanos(5000)), "counted once");
        // The next start counts the frame before it, if nothing read the counters meanwhile.
        let (counted, arrival) = p.start_whole(&frame, SimTime::from_nanos(1200), &mut fs);
        assert!(!counted && arrival.is_none());
        let (counted, _) = p.start_whole(&frame, SimTime::from_nanos(2400), &mut fs);
        assert!(counted);
        assert_eq!(p.stats.tx_frames, 2);
        assert_eq!(p.data_frames_held(&fs), 3);

        // A long link: every frame has left; each arrival names the next one's.
        let mut long = Port::new("a->b".into(), 1, 0, 10e9, SimTime::from_micros(10));
        let mut fs = FrameStore::default();
        assert!(long.start_whole(&frame, SimTime::ZERO, &mut fs).1.is_some());
        let later = SimTime::from_nanos(1200);
        assert!(long.start_whole(&frame, later, &mut fs).1.is_none());
        let (arrived, next) = long.pop_arrival();
        fs.take(arrived);
        assert_eq!(at(next), Some(SimTime::from_nanos(12_400)));
        assert_eq!(long.data_frames_held(&fs), 1);
    }

    #[test]
    fn a_scheduled_rate_sets_the_serialisation_time() {
        let (mut p, mut fs) = (port(), FrameStore::default());
        p.rate_bps = 2e9;
        let frame = Frame::data(0, 1, 1500, SimTime::ZERO);
        let (done, _) = p.send_whole(frame, SimTime::ZERO, &mut fs);
        assert_eq!(done, SimTime::from_micros(6));
    }

    #[test]
    fn passing_the_queue_records_what_adding_and_removing_the_frame_would() {
        let (mut passed, mut queued) = (port(), port());
        for p in [&mut passed, &mut queued] {
            p.change_queue(SimTime::ZERO, true, 700);
            p.change_queue(SimTime::from_nanos(300), false, 700);
        }
        let at = SimTime::from_nanos(1100);
        passed.pass_queue(at, 1500);
        queued.change_queue(at, true, 1500);
        queued.change_queue(at, false, 1500);
        let stats = |p: &Port| {
            let s = &p.stats;
            let area = s.queue_area.to_bits();
            (
                p.data_bytes,
                s.peak_queue_bytes,
                s.window_peak_queue_bytes,
                area,
                s.last_queue_change,
            )
        };
        assert_eq!(stats(&passed), stats(&queued));
        assert_eq!(
            (passed.data_bytes, passed.stats.peak_queue_bytes),
            (0, 1500)
        );
    }

    #[test]
    fn queue_mean_and_peak() {
        let mut p = port();
        p.change_queue(SimTime::ZERO, true, 1000);
        p.change_queue(SimTime::from_micros(1), true, 1000);
        p.change_queue(SimTime::from_micros(2), false, 2000);
        assert_eq!(p.stats.peak_queue_bytes, 2000);
        // 1000 B for 1 us, 2000 B for 1 us, 0 for 2 us -> mean 750 B over 4 us.
        assert!((p.mean_queue_bytes(SimTime::from_micros(4)) - 750.0).abs() < 1e-9);
    }
}
