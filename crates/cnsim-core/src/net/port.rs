//! One direction of a link, seen from the sending node: its output queues (strict priority for
//! control frames, then the data's class queues and their scheduler), the transmitter, its
//! pause lanes (802.3x, and PFC's per class; wired to frames and events in `link_pause.rs`),
//! and the pipe that carries frames across the link to the peer. A frame leaves the queue when
//! its transmission starts, crosses the pipe in `delay`, and is handed to the peer node.

use std::collections::VecDeque;

use crate::cc::HopTelemetry;
use crate::flow_control::lane::PauseLane;
use crate::flow_control::pfc::ClassLanes;
use crate::net::frame::{Frame, Payload, NO_SEQ};
use crate::net::link_loss::LinkLoss;
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

pub(crate) struct Port {
    /// "node->peer": how this port appears in outputs.
    pub(crate) name: String,
    pub(crate) peer_node: u32,
    pub(crate) peer_port: u16,
    /// Physical rate: PAUSE quanta are 512 bit times at this rate.
    pub(crate) line_rate_bps: f64,
    /// Current service rate (a schedule may lower it below the line rate).
    pub(crate) rate_bps: f64,
    /// One-way delay to the peer's processing: propagation + delay line + peer latency.
    pub(crate) delay: SimTime,
    pub(crate) wire_overhead_bytes: u32,
    pub(crate) ctrl_q: VecDeque<Frame>,
    /// Output queues of a switch, one per class (hosts keep their data in VOQs instead).
    pub(crate) data_q: ClassQueues,
    pub(crate) data_bytes: u64,
    /// The transmitter is serialising the pipe's last frame.
    transmitting: bool,
    /// Frames on the link with their arrival times, in order. A frame enters when its
    /// transmission starts, so it is copied once per hop (a separate "sending" slot cost two
    /// more copies of the frame and a store-forwarding stall); only frames whose last bit has
    /// left (all but the last one while `transmitting`) have an arrival event.
    pipe: VecDeque<(SimTime, Frame)>,
    /// IEEE 802.3x PAUSE: the peer holding all data, and this node holding the peer.
    pub(crate) pause: PauseLane,
    /// PFC's lanes, one per class; None until PFC touches the port.
    pub(crate) pfc: Option<Box<ClassLanes>>,
    pub(crate) stats: PortStats,
    /// Frame loss on this direction of the link (`link_loss.rs`); None = lossless.
    pub(crate) loss: Option<Box<LinkLoss>>,
    /// Serialisation times at `rate_bps` (a schedule may change it at any time).
    tx_timer: TxTimer,
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
            transmitting: false,
            pipe: VecDeque::new(),
            pause: PauseLane::default(),
            pfc: None,
            stats: PortStats::default(),
            loss: None,
            tx_timer: TxTimer::new(rate_bps),
        }
    }

    pub(crate) fn is_busy(&self) -> bool {
        self.transmitting
    }

    /// 802.3x PAUSE from the peer holds all data.
    #[inline]
    pub(crate) fn is_paused(&self, now: SimTime) -> bool {
        self.pause.is_paused(now)
    }

    /// Classes PFC has paused at `now` (bit c = class c).
    pub(crate) fn paused_classes(&self, now: SimTime) -> u8 {
        self.pfc.as_ref().map_or(0, |p| p.paused_mask(now))
    }

    /// Starts sending `frame`; returns when its last bit leaves.
    pub(crate) fn begin_tx(&mut self, frame: Frame, now: SimTime) -> SimTime {
        debug_assert!(!self.transmitting, "{}: transmitter busy", self.name);
        let wire_bytes = frame.bytes as u64 + self.wire_overhead_bytes as u64;
        let done = now + self.tx_timer.time(wire_bytes, self.rate_bps);
        self.pipe.push_back((done + self.delay, frame));
        self.transmitting = true;
        done
    }

    /// The current frame has left: it enters the pipe. Returns `Some(arrival)` when the pipe
    /// was empty, i.e. the caller must schedule the pipe's next arrival.
    pub(crate) fn end_tx(&mut self, now: SimTime) -> Option<SimTime> {
        assert!(self.transmitting, "{}: TxDone on an idle port", self.name);
        self.transmitting = false;
        let (arrival, frame) = self
            .pipe
            .back()
            .expect("the frame being sent is in the pipe");
        debug_assert_eq!(*arrival, now + self.delay);
        self.stats.tx_frames += 1;
        self.stats.tx_bytes += frame.bytes as u64;
        if frame.is_data() {
            self.stats.data_tx_bytes += frame.bytes as u64;
        }
        (self.pipe.len() == 1).then_some(*arrival)
    }

    /// The pipe's head frame reaches the peer: returns it, and the arrival time of the next
    /// frame when the caller must schedule it (it has left the transmitter).
    pub(crate) fn pop_arrival(&mut self) -> (Frame, Option<SimTime>) {
        let (_, frame) = self.pipe.pop_front().expect("Arrive on an empty pipe");
        let next_has_left = !(self.transmitting && self.pipe.len() == 1);
        let next = self
            .pipe
            .front()
            .filter(|_| next_has_left)
            .map(|&(at, _)| at);
        (frame, next)
    }

    /// The frame being serialised, if any.
    #[cfg(test)]
    pub(crate) fn sending(&self) -> Option<&Frame> {
        self.pipe
            .back()
            .filter(|_| self.transmitting)
            .map(|(_, f)| f)
    }

    /// The frame being serialised, to mark on its way out.
    /// Stamps the data frame just started with this egress's in-band telemetry (the queue it
    /// leaves behind, the bytes sent with it, the time, the rate: `cc/telemetry.rs`) if it
    /// belongs to a transported flow. Out of line: only schemes that ask for telemetry call it.
    #[inline(never)]
    pub(crate) fn stamp_telemetry(&mut self, now: SimTime, store: &mut TelemetryStore) {
        let (queue_bytes, sent_bytes, rate_bps) =
            (self.data_bytes, self.stats.tx_bytes, self.rate_bps);
        let Some(frame) = self.sending_mut().filter(|f| f.seq != NO_SEQ) else {
            return;
        };
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

    pub(crate) fn sending_mut(&mut self) -> Option<&mut Frame> {
        let transmitting = self.transmitting;
        self.pipe
            .back_mut()
            .filter(|_| transmitting)
            .map(|(_, f)| f)
    }

    /// The frame that arrives next, if any is on the link or being sent.
    pub(crate) fn pipe_head(&self) -> Option<&Frame> {
        self.pipe.front().map(|(_, f)| f)
    }

    /// Sends `frame` in one step (hosts): it enters the pipe at once with its arrival time, and
    /// the port is free again at the returned time, when the caller decides what to send next.
    /// Saves the transmit-done event when nothing needs the port at that moment. Returns (end
    /// of transmission, `Some(arrival)` when the caller must schedule the pipe's next arrival).
    pub(crate) fn send_whole(&mut self, frame: Frame, now: SimTime) -> (SimTime, Option<SimTime>) {
        let done = self.begin_tx(frame, now);
        (done, self.end_tx(done))
    }

    /// Adds or removes `delta` bytes of data queue, keeping the peak and the time integral.
    pub(crate) fn change_queue(&mut self, now: SimTime, added: bool, bytes: u64) {
        let dt = (now - self.stats.last_queue_change).ps() as f64;
        self.stats.queue_area += self.data_bytes as f64 * dt;
        self.stats.last_queue_change = now;
        if added {
            self.data_bytes += bytes;
            self.stats.peak_queue_bytes = self.stats.peak_queue_bytes.max(self.data_bytes);
            self.stats.window_peak_queue_bytes =
                self.stats.window_peak_queue_bytes.max(self.data_bytes);
        } else {
            self.data_bytes -= bytes;
        }
    }

    /// Data frames held here: queued, being sent, or on the wire.
    pub(crate) fn data_frames_held(&self) -> u64 {
        // The frame being sent is already in the pipe.
        let piped = self.pipe.iter().filter(|(_, f)| f.is_data()).count() as u64;
        // Probes riding the data queue are not data.
        let queued = self.data_q.iter().filter(|f| f.is_data()).count() as u64;
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

    #[test]
    fn frame_takes_serialisation_plus_delay() {
        let mut p = port();
        let done = p.begin_tx(Frame::data(0, 1, 1500, SimTime::ZERO), SimTime::ZERO);
        assert_eq!(done, SimTime::from_nanos(1200));
        assert_eq!(p.end_tx(done), Some(SimTime::from_nanos(2200)));
        // A second frame behind it in the pipe needs no new arrival event.
        p.begin_tx(Frame::data(0, 1, 1500, SimTime::ZERO), done);
        assert_eq!(p.end_tx(SimTime::from_nanos(2400)), None);
    }

    #[test]
    fn only_frames_that_have_left_get_an_arrival() {
        let frame = Frame::data(0, 1, 1500, SimTime::ZERO);
        let mut p = port();
        let done = p.begin_tx(frame, SimTime::ZERO);
        assert_eq!(p.end_tx(done), Some(SimTime::from_nanos(2200)));
        let done2 = p.begin_tx(frame, done);
        // The first frame arrives while the second is still being serialised: no event yet.
        assert_eq!(p.pop_arrival().1, None);
        assert!(p.sending().is_some());
        // When its last bit leaves it is alone on the link and gets its own event.
        assert_eq!(p.end_tx(done2), Some(SimTime::from_nanos(3400)));
        assert!(p.sending().is_none());

        // A long link: both frames have left, the first arrival names the second's.
        let mut long = Port::new("a->b".into(), 1, 0, 10e9, SimTime::from_micros(10));
        let done = long.begin_tx(frame, SimTime::ZERO);
        assert!(long.end_tx(done).is_some());
        let done2 = long.begin_tx(frame, done);
        assert_eq!(long.end_tx(done2), None);
        assert_eq!(long.pop_arrival().1, Some(SimTime::from_nanos(12_400)));
        assert_eq!(long.data_frames_held(), 1);
    }

    #[test]
    fn a_scheduled_rate_sets_the_serialisation_time() {
        let mut p = port();
        p.rate_bps = 2e9;
        let done = p.begin_tx(Frame::data(0, 1, 1500, SimTime::ZERO), SimTime::ZERO);
        assert_eq!(done, SimTime::from_micros(6));
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
