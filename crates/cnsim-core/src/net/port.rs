//! One direction of a link, seen from the sending node: its output queues (strict priority for
//! control frames, then the data's class queues and their scheduler), the transmitter, PAUSE
//! and //! PFC state, and the pipe that carries frames across the link to the peer. A frame leaves the
//! queue when its transmission starts, crosses the pipe in `delay`, and is handed to the peer
//! node.

use std::collections::VecDeque;

use crate::flow_control::pfc::PfcPortState;
use crate::net::frame::Frame;
use crate::net::scheduler::ClassQueues;
use crate::time::{pause_quanta_time, SimTime, TxTimer};

#[derive(Clone, Debug, Default)]
pub struct PortStats {
    pub tx_frames: u64,
    pub tx_bytes: u64,
    pub data_tx_bytes: u64,
    pub peak_queue_bytes: u64,
    /// Peak since the report window opened (reset at the window's start).
    pub window_peak_queue_bytes: u64,
    /// Integral of the data queue over time, in byte-picoseconds (for the mean queue).
    pub queue_area: f64,
    pub last_queue_change: SimTime,
    pub dropped_frames: u64,
    /// Time data was held by a PAUSE from the peer, and when the current pause started.
    pub paused_total: SimTime,
    pub paused_since: Option<SimTime>,
}

/// What a pause timer event means when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseTimer {
    /// A newer event replaced this one.
    Stale,
    /// The pause was renewed: fire again at this time.
    Rearm(SimTime),
    /// The pause is over: data may flow.
    Expired,
}

pub struct Port {
    /// "node->peer": how this port appears in outputs.
    pub name: String,
    pub peer_node: u32,
    pub peer_port: u16,
    /// Physical rate: PAUSE quanta are 512 bit times at this rate.
    pub line_rate_bps: f64,
    /// Current service rate (a schedule may lower it below the line rate).
    pub rate_bps: f64,
    /// One-way delay to the peer's processing: propagation + delay line + peer latency.
    pub delay: SimTime,
    pub wire_overhead_bytes: u32,
    pub ctrl_q: VecDeque<Frame>,
    /// Output queues of a switch, one per class (hosts keep their data in VOQs instead).
    pub data_q: ClassQueues,
    pub data_bytes: u64,
    /// The transmitter is serialising the pipe's last frame.
    transmitting: bool,
    /// Frames on the link with their arrival times, in order. A frame enters when its
    /// transmission starts, so it is copied once per hop (a separate "sending" slot cost two
    /// more copies of the frame and a store-forwarding stall); only frames whose last bit has
    /// left (all but the last one while `transmitting`) have an arrival event.
    pipe: VecDeque<(SimTime, Frame)>,
    /// Data may not start before this time (PAUSE received from the peer).
    pub paused_until: SimTime,
    /// Time of the PauseExpire event that counts, if one is pending. Timers are lazy: a
    /// renewed (longer) pause only moves `paused_until` and the pending event re-arms itself
    /// when it fires, so a storm of PAUSE frames does not fill the event queue; a shorter
    /// replacing pause schedules an earlier event and the later one becomes stale.
    pub pause_timer_at: Option<SimTime>,
    /// This node has told the peer to pause (XOFF outstanding).
    pub xoff_sent: bool,
    /// When the outstanding XOFF must be re-sent, and whether a refresh event is pending.
    pub xoff_refresh_due: SimTime,
    pub xoff_timer_pending: bool,
    /// PFC state (per-class pauses from the peer, XOFF sent to it); None until PFC touches it.
    pub pfc: Option<Box<PfcPortState>>,
    pub stats: PortStats,
    /// Serialisation times at `rate_bps` (a schedule may change it at any time).
    tx_timer: TxTimer,
}

impl Port {
    pub fn new(
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
            paused_until: SimTime::ZERO,
            pause_timer_at: None,
            xoff_sent: false,
            xoff_refresh_due: SimTime::ZERO,
            xoff_timer_pending: false,
            pfc: None,
            stats: PortStats::default(),
            tx_timer: TxTimer::new(rate_bps),
        }
    }

    pub fn is_busy(&self) -> bool {
        self.transmitting
    }

    pub fn is_paused(&self, now: SimTime) -> bool {
        now < self.paused_until
    }

    /// Classes PFC has paused at `now` (bit c = class c).
    pub fn paused_classes(&self, now: SimTime) -> u8 {
        self.pfc.as_ref().map_or(0, |p| p.paused_mask(now))
    }

    /// The port's PFC state, made on first use.
    pub fn pfc_state(&mut self) -> &mut PfcPortState {
        self.pfc.get_or_insert_with(Box::default)
    }

    /// Starts sending `frame`; returns when its last bit leaves.
    pub fn begin_tx(&mut self, frame: Frame, now: SimTime) -> SimTime {
        debug_assert!(!self.transmitting, "{}: transmitter busy", self.name);
        let wire_bytes = frame.bytes as u64 + self.wire_overhead_bytes as u64;
        let done = now + self.tx_timer.time(wire_bytes, self.rate_bps);
        self.pipe.push_back((done + self.delay, frame));
        self.transmitting = true;
        done
    }

    /// The current frame has left: it enters the pipe. Returns `Some(arrival)` when the pipe
    /// was empty, i.e. the caller must schedule the pipe's next arrival.
    pub fn end_tx(&mut self, now: SimTime) -> Option<SimTime> {
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
    pub fn pop_arrival(&mut self) -> (Frame, Option<SimTime>) {
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
    pub fn sending(&self) -> Option<&Frame> {
        self.pipe
            .back()
            .filter(|_| self.transmitting)
            .map(|(_, f)| f)
    }

    /// The frame being serialised, to mark on its way out.
    pub fn sending_mut(&mut self) -> Option<&mut Frame> {
        let transmitting = self.transmitting;
        self.pipe
            .back_mut()
            .filter(|_| transmitting)
            .map(|(_, f)| f)
    }

    /// The frame that arrives next, if any is on the link or being sent.
    pub fn pipe_head(&self) -> Option<&Frame> {
        self.pipe.front().map(|(_, f)| f)
    }

    /// Sends `frame` in one step (hosts): it enters the pipe at once with its arrival time, and
    /// the port is free again at the returned time, when the caller decides what to send next.
    /// Saves the transmit-done event when nothing needs the port at that moment. Returns (end
    /// of transmission, `Some(arrival)` when the caller must schedule the pipe's next arrival).
    pub fn send_whole(&mut self, frame: Frame, now: SimTime) -> (SimTime, Option<SimTime>) {
        let done = self.begin_tx(frame, now);
        (done, self.end_tx(done))
    }

    /// Adds or removes `delta` bytes of data queue, keeping the peak and the time integral.
    pub fn change_queue(&mut self, now: SimTime, added: bool, bytes: u64) {
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

    /// A PAUSE frame from the peer arrived: a new PAUSE replaces the running timer; quanta 0
    /// (XON) resumes at once (802.3x annex 31B). Returns the time of a timer event the caller
    /// must schedule (None when one is already pending or on XON).
    pub fn receive_pause(&mut self, quanta: u16, now: SimTime) -> Option<SimTime> {
        if quanta == 0 {
            self.paused_until = now;
            self.note_unpaused(now);
            return None;
        }
        self.paused_until = now + pause_quanta_time(quanta, self.line_rate_bps);
        if self.stats.paused_since.is_none() {
            self.stats.paused_since = Some(now);
        }
        if self.pause_timer_at.is_some_and(|t| t <= self.paused_until) {
            return None;
        }
        self.pause_timer_at = Some(self.paused_until);
        Some(self.paused_until)
    }

    /// A pause timer event fired at `now`.
    pub fn on_pause_timer(&mut self, now: SimTime) -> PauseTimer {
        if self.pause_timer_at != Some(now) {
            return PauseTimer::Stale;
        }
        self.pause_timer_at = None;
        if self.is_paused(now) {
            self.pause_timer_at = Some(self.paused_until);
            return PauseTimer::Rearm(self.paused_until);
        }
        self.note_unpaused(now);
        PauseTimer::Expired
    }

    /// Closes the current paused interval (at XON or timer expiry).
    pub fn note_unpaused(&mut self, now: SimTime) {
        if let Some(since) = self.stats.paused_since.take() {
            self.stats.paused_total += now - since;
        }
    }

    /// Time paused so far, including a pause still running at `now`.
    pub fn paused_time(&self, now: SimTime) -> SimTime {
        let running = self
            .stats
            .paused_since
            .map_or(SimTime::ZERO, |s| now.saturating_sub(s));
        self.stats.paused_total + running
    }

    /// Data frames held here: queued, being sent, or on the wire.
    pub fn data_frames_held(&self) -> u64 {
        // The frame being sent is already in the pipe.
        let piped = self.pipe.iter().filter(|(_, f)| f.is_data()).count() as u64;
        // Probes riding the data queue are not data.
        let queued = self.data_q.iter().filter(|f| f.is_data()).count() as u64;
        queued + piped
    }

    /// Mean data queue from time 0 to `now`, in bytes.
    pub fn mean_queue_bytes(&self, now: SimTime) -> f64 {
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
    fn pause_quanta_and_xon() {
        let mut p = port();
        let t0 = SimTime::from_micros(10);
        let until = p.receive_pause(1000, t0).unwrap();
        // 1000 quanta x 512 bit times at 10 Gb/s = 51.2 us.
        assert_eq!(until, t0 + SimTime::from_nanos(51_200));
        assert!(p.is_paused(t0 + SimTime::from_micros(51)));
        assert!(!p.is_paused(until));
        // A new PAUSE replaces the timer; XON ends it at once.
        let t1 = t0 + SimTime::from_micros(20);
        // Shorter than the pending timer: it needs an earlier event of its own.
        let short = t1 + SimTime::from_nanos(512);
        assert_eq!(p.receive_pause(10, t1), Some(short));
        assert_eq!(p.receive_pause(0, t1), None);
        assert!(!p.is_paused(t1));
        assert_eq!(p.paused_time(t1), SimTime::from_micros(20));
        // Both events fire after XON: the current one finds the pause over, the old is stale.
        assert_eq!(p.on_pause_timer(short), PauseTimer::Expired);
        assert_eq!(p.on_pause_timer(until), PauseTimer::Stale);
        assert_eq!(p.pause_timer_at, None);
    }

    #[test]
    fn scheduled_rate_is_used_but_quanta_use_line_rate() {
        let mut p = port();
        p.rate_bps = 2e9;
        let done = p.begin_tx(Frame::data(0, 1, 1500, SimTime::ZERO), SimTime::ZERO);
        assert_eq!(done, SimTime::from_micros(6));
        assert_eq!(p.receive_pause(1, SimTime::ZERO), Some(SimTime(51_200)));
        // Renewed before it ends: the pending timer re-arms at the new expiry.
        assert_eq!(p.receive_pause(2, SimTime(51_000)), None);
        assert_eq!(
            p.on_pause_timer(SimTime(51_200)),
            PauseTimer::Rearm(SimTime(153_400))
        );
        assert_eq!(p.on_pause_timer(SimTime(153_400)), PauseTimer::Expired);
    }

    #[test]
    fn shorter_replacing_pause_gets_its_own_timer() {
        let mut p = port();
        assert_eq!(
            p.receive_pause(1000, SimTime::ZERO),
            Some(SimTime(51_200_000))
        );
        // 1 quantum at 1 us: ends at 1.0512 us, long before the pending event.
        let short = SimTime(1_051_200);
        assert_eq!(p.receive_pause(1, SimTime::from_micros(1)), Some(short));
        assert_eq!(p.on_pause_timer(short), PauseTimer::Expired);
        assert_eq!(p.on_pause_timer(SimTime(51_200_000)), PauseTimer::Stale);
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
