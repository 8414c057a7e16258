//! TCP's loss recovery, counted in packets (PSN = segment index; MSS = the flow's
//! `frame_bytes`): pure state machines that take what arrived and say what to do; `mod.rs`
//! makes the frames and events, and its congestion controller (`newreno.rs` by default) sets
//! the window that gates the sender (docs/transport.md, "tcp").
//!
//! - [`TcpSender`]: cumulative ACKs, duplicate-ACK counting, fast retransmit after
//!   `dupack_threshold` duplicates and NewReno recovery with its recover point and partial
//!   ACKs (RFC 5681, RFC 6582); with SACK, a scoreboard fed by the one packet each ACK names
//!   (`AckFields::sacked`) and RFC 6675's loss marking and pipe; the RTO from SRTT/RTTVAR
//!   (RFC 6298) with a floor, exponential backoff and a ceiling, sampled from every ACK's
//!   timestamp echo (valid for retransmissions too, as with RFC 7323 timestamps).
//! - [`TcpReceiver`]: an out-of-order buffer (accepting the expected packet releases every
//!   buffered packet after it, in order), a cumulative ACK per packet, or delayed by the
//!   RFC 1122 / RFC 5681 4.2 rules (at least every second packet, at once on out-of-order or
//!   gap-filling data).

use std::collections::VecDeque;

use super::{AckOutcome, LossSignal, Reply, Sent};
use crate::time::SimTime;

/// A set of PSNs at or above a moving floor, as a bitmap of 64-packet words from the floor's
/// word: its size follows the span of the window, not the flow.
#[derive(Clone, Debug, Default)]
struct PsnSet {
    /// The PSN of the first word's bit 0 (a multiple of 64).
    base: u32,
    words: VecDeque<u64>,
    count: u32,
}

impl PsnSet {
    fn contains(&self, psn: u32) -> bool {
        if psn < self.base {
            return false;
        }
        let i = ((psn - self.base) / 64) as usize;
        self.words
            .get(i)
            .is_some_and(|w| w & (1 << ((psn - self.base) % 64)) != 0)
    }

    /// Adds `psn` (at or above the floor); true if it was not there.
    fn insert(&mut self, psn: u32) -> bool {
        if self.words.is_empty() {
            self.base = psn - psn % 64;
        }
        let i = ((psn - self.base) / 64) as usize;
        if i >= self.words.len() {
            self.words.resize(i + 1, 0);
        }
        let bit = 1 << ((psn - self.base) % 64);
        let new = self.words[i] & bit == 0;
        self.words[i] |= bit;
        self.count += new as u32;
        new
    }

    /// Forgets every PSN below `floor`.
    fn advance(&mut self, floor: u32) {
        while let Some(&w) = self.words.front() {
            if floor < self.base + 64 {
                let below = (1u64 << (floor.saturating_sub(self.base))) - 1;
                let gone = w & below;
                self.count -= gone.count_ones();
                self.words[0] = w & !below;
                break;
            }
            self.count -= w.count_ones();
            self.words.pop_front();
            self.base += 64;
        }
        if self.count == 0 {
            self.words.clear();
        }
    }

    /// The `n`-th highest PSN in the set (n = 1: the highest).
    fn nth_highest(&self, n: u32) -> Option<u32> {
        let mut seen = 0;
        for (i, &w) in self.words.iter().enumerate().rev() {
            let ones = w.count_ones();
            if seen + ones >= n {
                let mut w = w;
                for _ in 0..(n - seen - 1) {
                    w &= !(1u64 << (63 - w.leading_zeros()));
                }
                return Some(self.base + 64 * i as u32 + 63 - w.leading_zeros());
            }
            seen += ones;
        }
        None
    }
}

/// The RTO's bounds, as the scenario sets them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RtoBounds {
    pub(crate) initial: SimTime,
    pub(crate) min: SimTime,
    pub(crate) max: SimTime,
}

/// The retransmission timeout of RFC 6298, in picoseconds.
#[derive(Clone, Copy, Debug)]
struct Rto {
    bounds: RtoBounds,
    /// Smoothed RTT and its variation (ps); `srtt == 0`: no sample yet.
    srtt: u64,
    rttvar: u64,
    /// Timeouts since the last RTT sample: the RTO doubles for each (RFC 6298 5.5).
    backoff: u32,
}

impl Rto {
    fn sample(&mut self, rtt: SimTime) {
        let r = rtt.ps().max(1);
        if self.srtt == 0 {
            // RFC 6298 2.2: SRTT = R, RTTVAR = R/2.
            self.srtt = r;
            self.rttvar = r / 2;
        } else {
            // RFC 6298 2.3, alpha = 1/8, beta = 1/4.
            self.rttvar = (3 * self.rttvar + self.srtt.abs_diff(r)) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        }
        self.backoff = 0;
    }

    /// RTO = max(min, SRTT + 4 RTTVAR) (2.2-2.4; the clock granularity G is 0 here), or
    /// max(min, the initial RTO) before a sample, doubled per backoff, at most `max`.
    fn current(&self) -> SimTime {
        let base = if self.srtt == 0 {
            self.bounds.initial
        } else {
            SimTime(self.srtt + 4 * self.rttvar)
        }
        .max(self.bounds.min);
        let backed = base.ps().saturating_mul(1u64 << self.backoff.min(40));
        SimTime(backed).min(self.bounds.max)
    }
}

/// An ACK as TCP's sender reads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TcpAck {
    /// Every packet before this one is held at the receiver.
    pub(crate) cumulative: u32,
    /// The data packet that triggered the ACK (the one-block SACK when above `cumulative`).
    pub(crate) sacked: u32,
    /// Now minus the triggering packet's send time (its timestamp echo).
    pub(crate) rtt: SimTime,
}

/// TCP's sender half: which packets to send, loss detection and the RTO.
#[derive(Clone, Debug)]
pub(crate) struct TcpSender {
    packets: u32,
    /// The first unacknowledged packet (RFC 793 SND.UNA).
    una: u32,
    /// The next new packet (SND.NXT); one past the highest ever sent.
    nxt: u32,
    /// Duplicate ACKs since the last cumulative progress.
    dupacks: u32,
    /// Between a fast retransmit and the ACK of `recover`.
    in_recovery: bool,
    /// `nxt` when the last recovery or timeout began: a fast retransmit needs the cumulative
    /// ACK at or past it (RFC 6582 3.2, "covers more than recover").
    recover: u32,
    /// Without SACK: the packets the duplicate ACKs of this recovery say have left the
    /// network, less the partial ACKs' deflation (RFC 6582's window inflation, counted out of
    /// the pipe instead of into cwnd).
    dup_left: u32,
    /// Unsacked packets below this are marked lost.
    lost_end: u32,
    /// Lost packets at or above this are not yet retransmitted (RFC 6675 HighRxt + 1).
    rtx_next: u32,
    /// The next retransmission goes regardless of the window (RFC 6582 / RFC 6675: the fast
    /// retransmit itself, and NewReno's retransmission on a partial ACK).
    force: bool,
    sack: bool,
    dupack_threshold: u32,
    /// Packets the receiver holds out of order (from the ACKs' `sacked`).
    sacked: PsnSet,
    rto: Rto,
}

impl TcpSender {
    pub(crate) fn new(
        packets: u32,
        sack: bool,
        dupack_threshold: u32,
        bounds: RtoBounds,
    ) -> TcpSender {
        TcpSender {
            packets,
            una: 0,
            nxt: 0,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            dup_left: 0,
            lost_end: 0,
            rtx_next: 0,
            force: false,
            sack,
            dupack_threshold,
            sacked: PsnSet::default(),
            rto: Rto {
                bounds,
                srtt: 0,
                rttvar: 0,
                backoff: 0,
            },
        }
    }

    /// The first lost packet not yet retransmitted (moves `rtx_next` past sacked ones).
    fn next_lost(&mut self) -> Option<u32> {
        self.rtx_next = self.rtx_next.max(self.una);
        while self.rtx_next < self.lost_end && self.sacked.contains(self.rtx_next) {
            self.rtx_next += 1;
        }
        (self.rtx_next < self.lost_end).then_some(self.rtx_next)
    }

    fn has_lost(&self) -> bool {
        let from = self.rtx_next.max(self.una);
        (from..self.lost_end).any(|p| !self.sacked.contains(p))
    }

    /// The packet to send now, if any: a lost one first, then new data (RFC 6675 NextSeg,
    /// rules 1 and 2). The window is the glue's: it calls this only when
    /// `has_forced() || (has_data() && in_flight() < window)`.
    pub(crate) fn next_packet(&mut self) -> Option<Sent> {
        if let Some(psn) = self.next_lost() {
            self.rtx_next = psn + 1;
            self.force = false;
            return Some(Sent {
                psn,
                retransmission: true,
            });
        }
        (self.nxt < self.packets).then(|| {
            self.nxt += 1;
            Sent {
                psn: self.nxt - 1,
                retransmission: false,
            }
        })
    }

    /// A long flow's application wrote more, or stopped writing: the flow has `packets`
    /// packets now (never fewer than were sent: `app.rs`).
    pub(crate) fn set_packets(&mut self, packets: u32) {
        debug_assert!(
            packets >= self.nxt,
            "a flow cannot shrink below what was sent"
        );
        self.packets = packets;
    }

    /// Something is left to send (window permitting).
    pub(crate) fn has_data(&self) -> bool {
        self.nxt < self.packets || self.has_lost()
    }

    /// A retransmission is due that the window does not gate.
    pub(crate) fn has_forced(&self) -> bool {
        self.force && self.has_lost()
    }

    /// Packets sent and not cumulatively acknowledged (RFC 5681 FlightSize).
    pub(crate) fn flight_size(&self) -> u32 {
        self.nxt - self.una
    }

    /// Packets in the network as the window counts them (RFC 6675's pipe): the flight less
    /// the sacked, less the lost ones not yet sent again, less (without SACK) the packets the
    /// duplicate ACKs of this recovery report as arrived.
    pub(crate) fn in_flight(&self) -> u32 {
        let from = self.rtx_next.max(self.una);
        let lost = (from..self.lost_end)
            .filter(|&p| !self.sacked.contains(p))
            .count() as u32;
        self.flight_size()
            .saturating_sub(self.sacked.count + lost + self.dup_left)
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.una >= self.packets
    }

    pub(crate) fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// The RTO now (backed off after timeouts).
    pub(crate) fn rto(&self) -> SimTime {
        self.rto.current()
    }

    /// Marks lost every unsacked packet with at least `dupack_threshold` sacked packets above
    /// it (RFC 6675 IsLost, in packets).
    fn mark_sack_losses(&mut self) {
        if let Some(edge) = self.sacked.nth_highest(self.dupack_threshold) {
            self.lost_end = self.lost_end.max(edge);
        }
    }

    /// An ACK. Returns the packets newly acknowledged and sacked, and `FastRetransmit` when it
    /// starts a recovery (the congestion controller then takes FlightSize from `flight_size`
    /// as it was before this ACK: the caller reads it first).
    pub(crate) fn on_ack(&mut self, ack: &TcpAck) -> AckOutcome {
        let newly = ack.cumulative.min(self.nxt).saturating_sub(self.una);
        let mut newly_sacked = 0;
        if newly > 0 {
            self.una += newly;
            self.sacked.advance(self.una);
            self.dupacks = 0;
            self.lost_end = self.lost_end.max(self.una);
        }
        if self.sack && ack.sacked > self.una && ack.sacked < self.nxt {
            newly_sacked = self.sacked.insert(ack.sacked) as u32;
        }
        if newly > 0 || newly_sacked > 0 {
            self.rto.sample(ack.rtt);
        }
        let mut loss = None;
        if self.in_recovery && newly > 0 {
            if self.una >= self.recover {
                self.in_recovery = false;
                self.dup_left = 0;
            } else if !self.sack {
                // RFC 6582 3.2 step 5: a partial ACK: retransmit the first unacknowledged
                // packet, deflate the window by what was acknowledged and add one back.
                self.dup_left = (self.dup_left + 1).saturating_sub(newly);
                self.lost_end = self.lost_end.max(self.una + 1);
                self.rtx_next = self.una;
                self.force = true;
            }
        }
        let outstanding = self.una < self.nxt;
        let duplicate = newly == 0 && outstanding && (!self.sack || newly_sacked > 0);
        if duplicate {
            self.dupacks += 1;
            if self.in_recovery && !self.sack {
                self.dup_left += 1;
            }
        }
        if self.sack {
            self.mark_sack_losses();
        }
        let una_lost = self.sack && self.lost_end > self.una && !self.sacked.contains(self.una);
        let triggered = self.dupacks >= self.dupack_threshold || una_lost;
        if !self.in_recovery && outstanding && triggered && self.una >= self.recover {
            self.enter_recovery();
            loss = Some(LossSignal::FastRetransmit);
        }
        AckOutcome {
            newly_acked: newly,
            newly_sacked,
            loss,
        }
    }

    /// Fast retransmit (RFC 5681 3.2 step 2-4, RFC 6582, RFC 6675 4): the first unacknowledged
    /// packet is lost and goes now, whatever the window.
    fn enter_recovery(&mut self) {
        self.in_recovery = true;
        self.recover = self.nxt;
        self.lost_end = self.lost_end.max(self.una + 1);
        self.rtx_next = self.una;
        self.force = true;
        self.dup_left = if self.sack { 0 } else { self.dupacks };
    }

    /// The retransmission timer expired (RFC 6298 5.5-5.6, RFC 5681 3.1, RFC 6582 3.2 step
    /// 1 on the recover point): every unsacked packet in flight is lost and is sent again in
    /// order, under the window of one packet the controller sets; the RTO doubles.
    pub(crate) fn on_timeout(&mut self) {
        self.rto.backoff += 1;
        self.in_recovery = false;
        self.dup_left = 0;
        self.dupacks = 0;
        self.force = false;
        self.recover = self.nxt;
        self.lost_end = self.nxt;
        self.rtx_next = self.una;
    }
}

/// What TCP's receiver did with a data packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TcpRx {
    /// Packets released to the application in order, from the one that arrived (0 if it
    /// was out of order or a duplicate).
    pub(crate) released: u32,
    /// Every packet of the flow is now held.
    pub(crate) complete: bool,
    /// The ACK to send now.
    pub(crate) reply: Option<Reply>,
    /// A delayed ACK is pending: set the ACK timer for this time.
    pub(crate) arm_timer: Option<SimTime>,
}

/// A delayed ACK going out: the reply, its echo (the first pending packet's send time, RFC
/// 7323 3.4) and how long the receiver held it (from that packet's arrival: Swift's endpoint
/// delay, which the sender takes out of the RTT).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DelayedAck {
    pub(crate) reply: Reply,
    pub(crate) echo: SimTime,
    pub(crate) held: SimTime,
}

/// TCP's receiver half.
#[derive(Clone, Debug, Default)]
pub(crate) struct TcpReceiver {
    /// The next packet in order (RCV.NXT).
    expected: u32,
    /// Packets held out of order, above `expected`.
    buffered: PsnSet,
    /// In-order packets accepted since the last ACK (delayed ACKs only).
    unacked: u32,
    /// The last such packet, and the send time of the first (the echo a timer's ACK carries,
    /// RFC 7323 3.4: the earliest unacknowledged segment's).
    last_psn: u32,
    first_echo: SimTime,
    /// When the first pending packet arrived (the ACK's hold time, Swift's endpoint delay).
    first_arrival: SimTime,
    /// When the pending ACK is due (`SimTime::MAX`: none).
    ack_due: SimTime,
    /// The time of the ACK timer event in the queue (`SimTime::MAX`: none).
    timer_at: SimTime,
    /// The CE mark of the last data packet (DCTCP's ECN-echo state, [`TcpReceiver::on_ce`]).
    ce_state: bool,
}

impl TcpReceiver {
    pub(crate) fn new() -> TcpReceiver {
        TcpReceiver {
            ack_due: SimTime::MAX,
            timer_at: SimTime::MAX,
            ..TcpReceiver::default()
        }
    }

    /// DCTCP's ECN-echo state machine with delayed ACKs (Alizadeh et al., SIGCOMM 2010,
    /// section 3.1 and Figure 10; RFC 8257 section 3.2), called with each data packet's CE mark
    /// before `on_data`: when the mark differs from the last packet's and a delayed ACK is
    /// pending, the pending packets are ACKed at once, echoing the old mark, so every ACK's ECE
    /// covers packets with one mark and the sender counts marked bytes exactly. Returns that
    /// ACK. Every other ACK echoes the last mark ([`TcpReceiver::ce_state`]).
    pub(crate) fn on_ce(&mut self, ce: bool, now: SimTime) -> Option<DelayedAck> {
        let changed = ce != self.ce_state;
        self.ce_state = ce;
        if !changed || self.unacked == 0 {
            return None;
        }
        Some(self.take_pending(now))
    }

    /// The pending ACK, sent now.
    fn take_pending(&mut self, now: SimTime) -> DelayedAck {
        self.unacked = 0;
        self.ack_due = SimTime::MAX;
        DelayedAck {
            reply: Reply::ack(self.expected, self.last_psn),
            echo: self.first_echo,
            held: now.saturating_sub(self.first_arrival),
        }
    }

    /// The ECE bit of an ACK sent now: the last data packet's CE mark.
    pub(crate) fn ce_state(&self) -> bool {
        self.ce_state
    }

    /// Data packet `psn` (sent at `echo`) of a flow of `packets` arrived at `now`; `delay`
    /// is the delayed-ACK time (0: an ACK per packet).
    pub(crate) fn on_data(
        &mut self,
        psn: u32,
        packets: u32,
        echo: SimTime,
        now: SimTime,
        delay: SimTime,
    ) -> TcpRx {
        let mut rx = TcpRx {
            released: 0,
            complete: false,
            reply: None,
            arm_timer: None,
        };
        if psn == self.expected {
            let filled_gap = self.buffered.count > 0;
            self.expected += 1;
            while self.buffered.contains(self.expected) {
                self.expected += 1;
            }
            self.buffered.advance(self.expected);
            rx.released = self.expected - psn;
            rx.complete = self.expected >= packets;
            self.unacked += 1;
            let at_once = delay == SimTime::ZERO || filled_gap || rx.complete || self.unacked >= 2;
            if !at_once {
                if self.unacked == 1 {
                    self.first_echo = echo;
                    self.first_arrival = now;
                    self.ack_due = now + delay;
                }
                self.last_psn = psn;
                if self.timer_at == SimTime::MAX {
                    self.timer_at = self.ack_due;
                    rx.arm_timer = Some(self.ack_due);
                }
                return rx;
            }
        } else if psn > self.expected {
            self.buffered.insert(psn);
        }
        // In order and due, out of order (a duplicate ACK naming it) or a duplicate: now.
        self.unacked = 0;
        self.ack_due = SimTime::MAX;
        rx.reply = Some(Reply::ack(self.expected, psn));
        rx
    }

    /// The delayed-ACK timer set for `now` fired: the pending ACK if it is due (with the echo
    /// it carries), or the time to set the timer again.
    pub(crate) fn on_ack_timer(&mut self, now: SimTime) -> (Option<DelayedAck>, Option<SimTime>) {
        if self.timer_at != now {
            return (None, None);
        }
        self.timer_at = SimTime::MAX;
        if self.ack_due == SimTime::MAX {
            return (None, None);
        }
        if now < self.ack_due {
            self.timer_at = self.ack_due;
            return (None, Some(self.ack_due));
        }
        (Some(self.take_pending(now)), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000_000;

    fn bounds(min_us: u64) -> RtoBounds {
        RtoBounds {
            initial: SimTime(1_000_000 * US),
            min: SimTime(min_us * US),
            max: SimTime(60_000_000 * US),
        }
    }

    fn ack(cumulative: u32, sacked: u32) -> TcpAck {
        TcpAck {
            cumulative,
            sacked,
            rtt: SimTime(100 * US),
        }
    }

    fn send(tx: &mut TcpSender, n: usize) -> Vec<(u32, bool)> {
        (0..n)
            .filter_map(|_| tx.next_packet())
            .map(|s| (s.psn, s.retransmission))
            .collect()
    }

    /// The per-flow memory docs/transport.md states (a 64-bit target).
    #[test]
    fn state_sizes() {
        assert_eq!(std::mem::size_of::<TcpSender>(), 128, "sender");
        assert_eq!(std::mem::size_of::<TcpReceiver>(), 88, "receiver");
    }

    #[test]
    fn psn_set_slides_and_counts() {
        let mut s = PsnSet::default();
        for p in [70, 71, 130, 200] {
            assert!(s.insert(p));
        }
        assert!(!s.insert(71));
        assert_eq!(
            (s.count, s.nth_highest(1), s.nth_highest(3)),
            (4, Some(200), Some(71))
        );
        assert_eq!(s.nth_highest(5), None);
        s.advance(71);
        assert!(!s.contains(70) && s.contains(71) && s.count == 3);
        s.advance(150);
        assert_eq!(
            (s.count, s.nth_highest(1), s.words.len()),
            (1, Some(200), 2)
        );
        s.advance(201);
        assert_eq!((s.count, s.words.len()), (0, 0));
    }

    /// NewReno without SACK: 10 packets out, packet 2 lost. ACKs 1, 2, then 2 three more
    /// times (for 3, 4, 5): the third duplicate retransmits 2 at once; the window stays the
    /// glue's, but the pipe drops by one per duplicate (RFC 6582's inflation).
    #[test]
    fn newreno_fast_retransmit_and_partial_ack() {
        let mut tx = TcpSender::new(20, false, 3, bounds(200_000));
        assert_eq!(send(&mut tx, 10).len(), 10);
        assert_eq!(tx.on_ack(&ack(1, 0)).newly_acked, 1);
        assert_eq!(tx.on_ack(&ack(2, 1)).newly_acked, 1);
        assert_eq!(tx.in_flight(), 8);
        assert_eq!(tx.on_ack(&ack(2, 3)).loss, None);
        assert_eq!(tx.on_ack(&ack(2, 4)).loss, None);
        let third = tx.on_ack(&ack(2, 5));
        assert_eq!(third.loss, Some(LossSignal::FastRetransmit));
        assert!(tx.in_recovery() && tx.has_forced());
        // 8 outstanding, 3 reported arrived, 1 lost and not yet resent: 4 in the pipe.
        assert_eq!(tx.in_flight(), 4);
        assert_eq!(send(&mut tx, 1), [(2, true)]);
        assert!(!tx.has_forced());
        assert_eq!(tx.in_flight(), 5);
        // A fourth duplicate: one more left the network.
        tx.on_ack(&ack(2, 6));
        assert_eq!(tx.in_flight(), 4);
        assert_eq!(send(&mut tx, 1), [(10, false)]);
        // Packet 7 was lost too: the retransmission of 2 brings ACK 7, a partial ACK (the
        // recover point is 10, SND.NXT at the fast retransmit): 7 goes at once; the
        // inflation was 4 duplicates, deflated by the 5 acknowledged, plus 1: 0.
        let partial = tx.on_ack(&ack(7, 2));
        assert_eq!((partial.newly_acked, partial.loss), (5, None));
        assert!(tx.in_recovery() && tx.has_forced());
        assert_eq!(send(&mut tx, 1), [(7, true)]);
        assert_eq!(tx.in_flight(), 4);
        // ACK 11 covers the recover point: recovery ends.
        tx.on_ack(&ack(11, 7));
        assert!(!tx.in_recovery() && tx.in_flight() == 0);
    }

    /// With SACK, each duplicate ACK names its packet; a hole with 3 sacked packets above
    /// it is lost (RFC 6675 IsLost), and is sent again once.
    #[test]
    fn sack_scoreboard_marks_and_resends_holes_once() {
        let mut tx = TcpSender::new(20, true, 3, bounds(200_000));
        send(&mut tx, 10);
        tx.on_ack(&ack(1, 0));
        // 1 and 3 lost: ACKs 1 sack 2, 4, 5, then 6.
        tx.on_ack(&ack(1, 2));
        tx.on_ack(&ack(1, 4));
        assert!(!tx.in_recovery());
        let o = tx.on_ack(&ack(1, 5));
        assert_eq!(
            (o.newly_sacked, o.loss),
            (1, Some(LossSignal::FastRetransmit))
        );
        // 9 outstanding, 3 sacked, 1 lost (3 has only 2 sacked above it): pipe 5.
        assert_eq!(tx.in_flight(), 5);
        assert_eq!(send(&mut tx, 1), [(1, true)]);
        assert_eq!(tx.in_flight(), 6);
        // The sack of 6 puts 3 sacked above 3: lost; pipe 9 - 4 - 1 = 4.
        tx.on_ack(&ack(1, 6));
        assert_eq!(tx.in_flight(), 4);
        assert_eq!(send(&mut tx, 1), [(3, true)]);
        // A repeated sack of 5 is no duplicate ACK and marks nothing new.
        assert_eq!(tx.on_ack(&ack(1, 5)).newly_sacked, 0);
        assert_eq!(send(&mut tx, 1), [(10, false)]);
        tx.on_ack(&ack(3, 1));
        assert!(tx.in_recovery());
        tx.on_ack(&ack(11, 3));
        assert!(!tx.in_recovery() && tx.in_flight() == 0);
    }

    /// RFC 6298: first sample R = 100 us: SRTT 100, RTTVAR 50, RTO 300 us above a 200 us
    /// floor; the second R = 20 us: RTTVAR = (150 + 80) / 4 = 57.5, SRTT = 90, RTO 320 us;
    /// timeouts double it up to the ceiling (1 ms here); the next sample clears the backoff.
    #[test]
    fn rto_from_srtt_and_rttvar_with_backoff() {
        let mut b = bounds(200);
        b.max = SimTime(1_000 * US);
        let mut tx = TcpSender::new(10, true, 3, b);
        assert_eq!(tx.rto(), SimTime(1_000 * US)); // initial 1 s, capped at max
        send(&mut tx, 3);
        tx.on_ack(&ack(1, 0));
        assert_eq!(tx.rto(), SimTime(300 * US));
        tx.on_ack(&TcpAck {
            cumulative: 2,
            sacked: 1,
            rtt: SimTime(20 * US),
        });
        assert_eq!(tx.rto(), SimTime(320 * US));
        tx.on_timeout();
        assert_eq!(tx.rto(), SimTime(640 * US));
        // After the timeout, packet 2 is lost and sent again; nothing is in flight.
        assert_eq!(tx.in_flight(), 0);
        assert_eq!(send(&mut tx, 1), [(2, true)]);
        tx.on_timeout();
        assert_eq!(tx.rto(), SimTime(1_000 * US));
        tx.on_ack(&ack(3, 2));
        // RTTVAR = (3 x 57.5 + 10) / 4 = 45.625, SRTT = (7 x 90 + 100) / 8 = 91.25 us.
        assert_eq!(tx.rto(), SimTime(273_750_000));
    }

    /// After a timeout without SACK the sender goes back to the first unacknowledged packet
    /// and sends every outstanding one again, in order; duplicate ACKs for data sent before
    /// the timeout start no fast retransmit (RFC 6582's recover point).
    #[test]
    fn timeout_goes_back_and_old_dupacks_do_not_retransmit() {
        let mut tx = TcpSender::new(6, false, 3, bounds(200));
        send(&mut tx, 6);
        tx.on_timeout();
        assert_eq!(send(&mut tx, 2), [(0, true), (1, true)]);
        for s in [3, 4, 5] {
            assert_eq!(tx.on_ack(&ack(0, s)).loss, None);
        }
        tx.on_ack(&ack(6, 0));
        assert!(tx.is_complete());
    }

    #[test]
    fn receiver_releases_buffered_packets_in_order() {
        let mut rx = TcpReceiver::new();
        let t = SimTime(5 * US);
        let z = SimTime::ZERO;
        let on = |rx: &mut TcpReceiver, psn| {
            let o = rx.on_data(psn, 6, t, t, z);
            (o.released, o.reply.map(|r| (r.cumulative, r.sacked)))
        };
        assert_eq!(on(&mut rx, 0), (1, Some((1, 0))));
        assert_eq!(on(&mut rx, 2), (0, Some((1, 2))));
        assert_eq!(on(&mut rx, 3), (0, Some((1, 3))));
        assert_eq!(on(&mut rx, 3), (0, Some((1, 3))));
        assert_eq!(on(&mut rx, 1), (3, Some((4, 1))));
        assert_eq!(on(&mut rx, 0), (0, Some((4, 0))));
        assert_eq!(on(&mut rx, 5), (0, Some((4, 5))));
        let last = rx.on_data(4, 6, t, t, z);
        assert_eq!((last.released, last.complete), (2, true));
    }

    /// Delayed ACKs (40 us): the first in-order packet waits, the second is ACKed at once;
    /// a lone packet is ACKed by the timer with the first packet's echo; out-of-order and
    /// gap-filling packets are ACKed at once.
    #[test]
    fn delayed_acks_follow_rfc_5681() {
        let mut rx = TcpReceiver::new();
        let d = SimTime(40 * US);
        let at = |us| SimTime(us * US);
        let o = rx.on_data(0, 10, at(0), at(1), d);
        assert_eq!((o.reply, o.arm_timer), (None, Some(at(41))));
        let o = rx.on_data(1, 10, at(1), at(2), d);
        assert_eq!(o.reply, Some(Reply::ack(2, 1)));
        let o = rx.on_data(2, 10, at(3), at(50), d);
        assert_eq!((o.reply, o.arm_timer), (None, None)); // the timer at 41 is pending
        assert_eq!(rx.on_ack_timer(at(41)), (None, Some(at(90))));
        let delayed = DelayedAck {
            reply: Reply::ack(3, 2),
            echo: at(3),
            held: at(40), // packet 2 arrived at 50
        };
        assert_eq!(rx.on_ack_timer(at(90)), (Some(delayed), None));
        let o = rx.on_data(4, 10, at(91), at(92), d);
        assert_eq!(o.reply, Some(Reply::ack(3, 4)));
        let o = rx.on_data(3, 10, at(93), at(94), d);
        assert_eq!((o.released, o.reply), (2, Some(Reply::ack(5, 3))));
    }

    /// DCTCP's echo state machine with delayed ACKs (40 us): a packet whose CE mark differs
    /// from the last one's flushes the pending ACK with the old mark; marks that do not change
    /// leave delayed ACKs as they are.
    #[test]
    fn a_change_of_ce_mark_flushes_the_pending_ack_with_the_old_mark() {
        let mut rx = TcpReceiver::new();
        let d = SimTime(40 * US);
        let at = |us| SimTime(us * US);
        assert_eq!(rx.on_ce(false, at(1)), None);
        let o = rx.on_data(0, 10, at(0), at(1), d);
        assert_eq!((o.reply, o.arm_timer), (None, Some(at(41))));
        // Packet 1 arrives marked: packet 0's ACK goes now, echoing no mark (the caller
        // sends it with ECE = the old state), then packet 1 waits for a pair of its own.
        let flushed = DelayedAck {
            reply: Reply::ack(1, 0),
            echo: at(0),
            held: at(2), // packet 0 arrived at 1, packet 1 at 3
        };
        assert_eq!(rx.on_ce(true, at(3)), Some(flushed));
        assert!(rx.ce_state());
        let o = rx.on_data(1, 10, at(2), at(3), d);
        assert_eq!((o.reply, o.arm_timer), (None, None)); // the timer at 41 is pending
                                                          // Packet 2, marked too: no flush; the second of the pair is ACKed at once (ECE 1).
        assert_eq!(rx.on_ce(true, at(5)), None);
        let o = rx.on_data(2, 10, at(4), at(5), d);
        assert_eq!(o.reply, Some(Reply::ack(3, 2)));
        // Packet 3 unmarked with nothing pending: the state changes, nothing to flush.
        assert_eq!(rx.on_ce(false, at(7)), None);
        assert!(!rx.ce_state());
        // The timer at 41 finds nothing due.
        assert_eq!(rx.on_ack_timer(at(41)), (None, None));
    }
}
