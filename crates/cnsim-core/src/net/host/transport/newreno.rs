//! NewReno congestion control, TCP's default window (RFC 5681: slow start, congestion
//! avoidance; RFC 6582: the window during and after fast recovery), counted in packets of the
//! flow's MSS. A pure state machine: the glue (`mod.rs`) tells it what the ACKs and the
//! loss detection of the sender (`tcp.rs`) found, and gates the sender on its window.

use super::LossSignal;

/// The congestion window and slow-start threshold of one flow, in packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct NewReno {
    /// The congestion window (RFC 5681 cwnd).
    cwnd: u32,
    /// Packets acknowledged in congestion avoidance since cwnd last grew: cwnd grows by one
    /// when a window's worth has been acknowledged (eq. 3 in whole packets, as Linux does).
    avoidance_acked: u32,
    /// The slow-start threshold (RFC 5681 ssthresh); unbounded at the start.
    ssthresh: u32,
    /// Between a fast retransmit and the ACK that ends recovery: the window is ssthresh
    /// (the sender counts duplicate ACKs out of its pipe instead of inflating cwnd).
    in_recovery: bool,
    /// No ACK progress since the last timeout: a repeated timeout keeps ssthresh
    /// (RFC 5681 3.1, after equation 4).
    after_timeout: bool,
}

impl NewReno {
    pub(crate) fn new(initial_cwnd_packets: u32) -> NewReno {
        NewReno {
            cwnd: initial_cwnd_packets,
            avoidance_acked: 0,
            ssthresh: u32::MAX,
            in_recovery: false,
            after_timeout: false,
        }
    }

    /// Packets the sender may have in flight.
    pub(crate) fn window_packets(&self) -> u32 {
        self.cwnd
    }

    /// `newly_acked` packets were acknowledged cumulatively (outside recovery): slow start
    /// adds one packet per packet acknowledged while cwnd < ssthresh (RFC 5681 eq. 2, with
    /// RFC 3465's byte counting at L = the packets acknowledged), congestion avoidance
    /// 1/cwnd per packet (eq. 3: about one packet per window).
    pub(crate) fn on_ack(&mut self, newly_acked: u32) {
        if newly_acked == 0 || self.in_recovery {
            return;
        }
        self.after_timeout = false;
        let mut left = newly_acked;
        if self.cwnd < self.ssthresh {
            let grow = left.min(self.ssthresh - self.cwnd);
            self.cwnd += grow;
            left -= grow;
        }
        self.avoidance_acked += left;
        while self.avoidance_acked >= self.cwnd {
            self.avoidance_acked -= self.cwnd;
            self.cwnd += 1;
        }
    }

    /// A loss: `flight_size` is the packets sent and not yet cumulatively acknowledged
    /// (RFC 5681's FlightSize, not cwnd). Fast retransmit: ssthresh = max(FlightSize / 2, 2),
    /// cwnd = ssthresh for the recovery (eq. 4; RFC 6582). Timeout: the same ssthresh (held on
    /// a repeated timeout) and cwnd = 1, the loss window.
    pub(crate) fn on_loss(&mut self, signal: LossSignal, flight_size: u32) {
        let half = (flight_size / 2).max(2);
        self.avoidance_acked = 0;
        match signal {
            LossSignal::FastRetransmit => {
                self.ssthresh = half;
                self.cwnd = half;
                self.in_recovery = true;
            }
            LossSignal::Timeout => {
                if !self.after_timeout {
                    self.ssthresh = half;
                }
                self.cwnd = 1;
                self.in_recovery = false;
                self.after_timeout = true;
            }
            LossSignal::Nack => {}
        }
    }

    /// The ACK that covers the recovery point arrived: cwnd = ssthresh (RFC 6582 3.2 step 3,
    /// the second option, "deflate the window").
    pub(crate) fn on_recovery_end(&mut self) {
        if self.in_recovery {
            self.in_recovery = false;
            self.cwnd = self.ssthresh;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_doubles_per_round_then_avoidance_adds_one_per_window() {
        let mut cc = NewReno::new(10);
        // One round: 10 packets acknowledged, one by one: 10 -> 20.
        for _ in 0..10 {
            cc.on_ack(1);
        }
        assert_eq!(cc.window_packets(), 20);
        // Loss with 20 in flight: ssthresh = cwnd = 10 during recovery; ACKs do not grow it.
        cc.on_loss(LossSignal::FastRetransmit, 20);
        cc.on_ack(5);
        assert_eq!(cc.window_packets(), 10);
        cc.on_recovery_end();
        assert_eq!(cc.window_packets(), 10);
        // Congestion avoidance: 10 packets acknowledged add 1 (10 x 1/10).
        for _ in 0..10 {
            cc.on_ack(1);
        }
        assert_eq!(cc.window_packets(), 11);
        // Slow start stops at ssthresh exactly: from 1 with ssthresh 5 (flight 11).
        cc.on_loss(LossSignal::Timeout, 11);
        assert_eq!(cc.window_packets(), 1);
        cc.on_ack(4);
        assert_eq!(cc.window_packets(), 5);
        cc.on_ack(5);
        assert_eq!(cc.window_packets(), 6);
    }

    #[test]
    fn a_repeated_timeout_keeps_ssthresh_and_the_floor_is_two() {
        let mut cc = NewReno::new(10);
        cc.on_loss(LossSignal::Timeout, 40);
        // Backed-off timeout before any progress: flight is still 40, ssthresh stays 20.
        cc.on_loss(LossSignal::Timeout, 40);
        cc.on_ack(100);
        // 1 + 19 in slow start up to 20, then 81 in avoidance: 20 -> 21 -> 22 -> 23 takes
        // 20 + 21 + 22 = 63 of them, 18 left over.
        assert_eq!(cc.window_packets(), 23);
        cc.on_loss(LossSignal::FastRetransmit, 3);
        assert_eq!(cc.window_packets(), 2);
    }
}
