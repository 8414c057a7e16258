//! IRN, the improved RoCE NIC of Mittal et al., "Revisiting Network Support for RDMA",
//! SIGCOMM 2018 (section 3): selective repeat instead of go-back-N, so a lossy network (no
//! PFC) costs a flow only the packets it lost. Pure state machines: they take what arrived
//! and say what to do; `mod.rs` makes the frames and events (docs/transport.md, "irn").
//!
//! - [`SelectiveRepeat`], the sender (section 3.1): a scoreboard of the packets the receiver
//!   holds out of order, built from the `sacked` PSN every NACK carries with its cumulative
//!   ack. A NACK starts loss recovery: the first unacknowledged packet is resent, then every
//!   packet the scoreboard shows lost (unacknowledged below the highest sacked PSN), in order,
//!   each once, before any new packet; recovery ends when the cumulative ack passes the
//!   recovery sequence (the last new packet sent before it began). A timeout starts recovery
//!   too. New packets only while fewer than the BDP cap are in flight (BDP-FC, section 3.2:
//!   in flight = the next new PSN minus the cumulative ack). The timeout is RTO_low while
//!   fewer than N packets are in flight, else RTO_high (section 3.1).
//! - [`SackReceiver`], the receiver: holds out-of-order packets in a bitmap; when the expected
//!   packet arrives it and every consecutive held packet go to the application (in order,
//!   once); an ACK (cumulative) for in-order packets, a NACK (cumulative and the packet's own
//!   PSN) for every out-of-order one.

use std::collections::VecDeque;

use super::{AckOutcome, AckSeen, LossSignal, Reply, ReplyKind, RxOutcome, Sent};
use crate::time::SimTime;

/// A set of PSNs at or above a moving floor: one bit per PSN, in 64-bit words from `base` (a
/// multiple of 64). It spans the packets between the cumulative ack and the highest one
/// marked, at most the BDP cap in IRN, so it stays small.
#[derive(Clone, Debug, Default)]
struct PsnBits {
    base: u32,
    words: VecDeque<u64>,
}

impl PsnBits {
    fn contains(&self, psn: u32) -> bool {
        let Some(off) = psn.checked_sub(self.base) else {
            return false;
        };
        let word = self.words.get((off / 64) as usize).copied().unwrap_or(0);
        word >> (off % 64) & 1 == 1
    }

    /// Marks `psn` (at or above the floor); false if it was marked already.
    fn insert(&mut self, psn: u32) -> bool {
        let off = psn - self.base;
        let i = (off / 64) as usize;
        if self.words.len() <= i {
            self.words.resize(i + 1, 0);
        }
        let bit = 1u64 << (off % 64);
        let new = self.words[i] & bit == 0;
        self.words[i] |= bit;
        new
    }

    /// Forgets every PSN below `floor` (whole words only: bits below the floor in the first
    /// word stay, and callers never ask about them).
    fn raise_floor(&mut self, floor: u32) {
        while floor - self.base >= 64 {
            if self.words.pop_front().is_none() {
                self.base = floor - floor % 64;
                return;
            }
            self.base += 64;
        }
    }
}

/// The sender's half of an IRN queue pair.
#[derive(Clone, Debug)]
pub(crate) struct SelectiveRepeat {
    /// The flow's packet count.
    packets: u32,
    /// Packets acknowledged cumulatively: the first unacknowledged PSN.
    acked: u32,
    /// The next PSN never sent (one past the highest sent).
    next_new: u32,
    /// BDP-FC: a new packet only while `next_new - acked` is below this.
    bdp_cap: u32,
    /// RTO_low applies while fewer than this many packets are in flight.
    rto_low_below: u32,
    rto_low: SimTime,
    rto_high: SimTime,
    /// In loss recovery (entered on a NACK or a timeout).
    recovery: bool,
    /// Recovery ends when `acked` reaches this: one past the recovery sequence, the last new
    /// packet sent before recovery began.
    recovery_end: u32,
    /// The first unacknowledged packet when recovery began: resent first whatever the
    /// scoreboard says (`u32::MAX`: already resent, or no recovery).
    resend_first: u32,
    /// The loss scan's cursor: no PSN below it is resent again in this recovery.
    scan: u32,
    /// One past the highest PSN selectively acknowledged (0: none).
    sack_end: u32,
    /// Packets the receiver holds out of order (from the NACKs' `sacked`).
    sacked: PsnBits,
}

/// `resend_first` when there is nothing to resend first.
const NONE: u32 = u32::MAX;

/// IRN's constants for one sender (`[transport.irn]`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct IrnConfig {
    pub(crate) bdp_cap: u32,
    pub(crate) rto_low_below: u32,
    pub(crate) rto_low: SimTime,
    pub(crate) rto_high: SimTime,
}

impl SelectiveRepeat {
    pub(crate) fn new(packets: u32, c: IrnConfig) -> SelectiveRepeat {
        SelectiveRepeat {
            packets,
            acked: 0,
            next_new: 0,
            bdp_cap: c.bdp_cap.max(1),
            rto_low_below: c.rto_low_below,
            rto_low: c.rto_low,
            rto_high: c.rto_high,
            recovery: false,
            recovery_end: 0,
            resend_first: NONE,
            scan: 0,
            sack_end: 0,
            sacked: PsnBits::default(),
        }
    }

    /// Packets in flight as BDP-FC counts them: sent and not cumulatively acknowledged.
    pub(crate) fn in_flight(&self) -> u32 {
        self.next_new - self.acked
    }

    /// The retransmission timeout the timer uses now: RTO_low with fewer than N in flight.
    pub(crate) fn rto(&self) -> SimTime {
        if self.in_flight() < self.rto_low_below {
            self.rto_low
        } else {
            self.rto_high
        }
    }

    /// The packet loss recovery resends next, if any.
    fn lost(&self) -> Option<u32> {
        if !self.recovery {
            return None;
        }
        let first = self.resend_first;
        if first != NONE && first >= self.acked && !self.sacked.contains(first) {
            return Some(first);
        }
        (self.scan < self.sack_end).then_some(self.scan)
    }

    fn may_send_new(&self) -> bool {
        self.next_new < self.packets && self.in_flight() < self.bdp_cap
    }

    /// Moves the loss scan to the first PSN at or above it (and the cumulative ack) that the
    /// receiver does not hold. Each PSN is passed once per recovery: amortised O(1).
    fn settle(&mut self) {
        self.scan = self.scan.max(self.acked);
        while self.scan < self.sack_end && self.sacked.contains(self.scan) {
            self.scan += 1;
        }
    }

    /// The packet to send now, if any: a lost one first, else a new one within the cap.
    pub(crate) fn next_packet(&mut self) -> Option<Sent> {
        if let Some(psn) = self.lost() {
            if psn == self.resend_first {
                self.resend_first = NONE;
            }
            self.scan = self.scan.max(psn + 1);
            self.settle();
            return Some(Sent {
                psn,
                retransmission: true,
            });
        }
        if !self.may_send_new() {
            return None;
        }
        let psn = self.next_new;
        self.next_new += 1;
        Some(Sent {
            psn,
            retransmission: false,
        })
    }

    /// A long flow's application wrote more, or stopped writing: the flow has `packets`
    /// packets now (never fewer than were sent: `app.rs`).
    pub(crate) fn set_packets(&mut self, packets: u32) {
        debug_assert!(
            packets >= self.next_new,
            "a flow cannot shrink below what was sent"
        );
        self.packets = packets;
    }

    /// Loss recovery has a packet to resend. BDP-FC gates new packets only (section 3.2), and
    /// so does a scheme's congestion window over IRN (`mod.rs`, `SenderQp::has_forced`): the
    /// in-flight count both read (next new PSN - cumulative ack) includes the packets the
    /// receiver holds beyond a hole, so a window cut below it by the loss would hold the hole's
    /// retransmission, and with it the cumulative ack that opens the window, for ever.
    pub(crate) fn has_retransmission(&self) -> bool {
        self.lost().is_some()
    }

    /// Something may be sent now.
    pub(crate) fn has_more(&self) -> bool {
        self.lost().is_some() || self.may_send_new()
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.acked >= self.packets
    }

    /// Loss recovery begins: the first unacknowledged packet is resent first, then the
    /// scoreboard's holes.
    fn enter_recovery(&mut self) {
        self.recovery = true;
        self.recovery_end = self.next_new;
        self.resend_first = self.acked;
        self.scan = self.acked;
    }

    /// An ACK or NACK: the cumulative ack moves, the `sacked` PSN (a NACK's trigger) goes on
    /// the scoreboard; a NACK outside recovery starts it (the loss signal, once per episode).
    pub(crate) fn on_ack(&mut self, ack: &AckSeen) -> AckOutcome {
        let newly = ack.cumulative.min(self.next_new).saturating_sub(self.acked);
        self.acked += newly;
        self.sacked.raise_floor(self.acked);
        let s = ack.sacked;
        let mut newly_sacked = 0;
        if ack.kind == ReplyKind::Nack && s >= self.acked && s < self.next_new {
            newly_sacked = u32::from(self.sacked.insert(s));
            self.sack_end = self.sack_end.max(s + 1);
        }
        if self.recovery && self.acked >= self.recovery_end {
            self.recovery = false;
            self.resend_first = NONE;
        }
        let starts = ack.kind == ReplyKind::Nack && !self.recovery && !self.is_complete();
        if starts {
            self.enter_recovery();
        }
        self.settle();
        AckOutcome {
            newly_acked: newly,
            newly_sacked,
            loss: starts.then_some(LossSignal::Nack),
        }
    }

    /// The retransmission timer expired: loss recovery from the first unacknowledged packet.
    pub(crate) fn on_timeout(&mut self) {
        self.enter_recovery();
        self.settle();
    }
}

/// The receiver's half of an IRN queue pair.
#[derive(Clone, Debug, Default)]
pub(crate) struct SackReceiver {
    /// The next PSN the application needs; every packet before it has gone to it.
    expected: u32,
    /// In-order packets since the last ACK.
    since_ack: u32,
    /// Packets held out of order (above `expected`).
    held: PsnBits,
}

impl SackReceiver {
    /// Data packet `psn` of a flow of `packets` arrived.
    pub(crate) fn on_data(&mut self, psn: u32, packets: u32, ack_every: u32) -> RxOutcome {
        if psn == self.expected {
            let from = self.expected;
            let mut next = psn + 1;
            while self.held.contains(next) {
                next += 1;
            }
            self.expected = next;
            self.held.raise_floor(next);
            let released = next - from;
            self.since_ack += released;
            let complete = next == packets;
            // A packet that fills a hole is acknowledged at once (the sender is recovering).
            let ack = self.since_ack >= ack_every || complete || released > 1;
            if ack {
                self.since_ack = 0;
            }
            RxOutcome {
                accepted: true,
                complete,
                reply: ack.then(|| Reply::ack(next, psn)),
                released_from: from,
                released,
            }
        } else if psn > self.expected {
            let new = self.held.insert(psn);
            RxOutcome::releasing_nothing(new, self.expected, Some(Reply::nack(self.expected, psn)))
        } else {
            RxOutcome::releasing_nothing(false, self.expected, Some(Reply::ack(self.expected, psn)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(bdp_cap: u32) -> IrnConfig {
        IrnConfig {
            bdp_cap,
            rto_low_below: 3,
            rto_low: SimTime::from_micros(100),
            rto_high: SimTime::from_micros(320),
        }
    }

    fn ack(cumulative: u32, sacked: u32) -> AckSeen {
        AckSeen {
            kind: ReplyKind::Ack,
            cumulative,
            sacked,
        }
    }

    fn nack(cumulative: u32, sacked: u32) -> AckSeen {
        AckSeen {
            kind: ReplyKind::Nack,
            cumulative,
            sacked,
        }
    }

    /// (psn, retransmission) of everything the sender may send now.
    fn drain(tx: &mut SelectiveRepeat) -> Vec<(u32, bool)> {
        std::iter::from_fn(|| tx.next_packet())
            .map(|s| (s.psn, s.retransmission))
            .collect()
    }

    #[test]
    fn the_bdp_cap_bounds_new_packets_in_flight() {
        let mut tx = SelectiveRepeat::new(10, config(4));
        assert_eq!(
            drain(&mut tx),
            [(0, false), (1, false), (2, false), (3, false)]
        );
        assert!(!tx.has_more());
        assert_eq!(tx.in_flight(), 4);
        // Two packets acknowledged: two more may go (in flight 4 - 2 + 2 = 4).
        assert_eq!(tx.on_ack(&ack(2, 1)).newly_acked, 2);
        assert_eq!(drain(&mut tx), [(4, false), (5, false)]);
        assert_eq!(tx.in_flight(), 4);
    }

    #[test]
    fn a_nack_resends_only_the_holes_below_the_highest_sacked_then_new_packets() {
        // 10 packets, cap 8: 0..7 sent; 2 and 5 lost. The receiver sends ACK 1, ACK 2,
        // NACK(2, 3), NACK(2, 4), NACK(2, 6), NACK(2, 7).
        let mut tx = SelectiveRepeat::new(10, config(8));
        assert_eq!(drain(&mut tx).len(), 8);
        tx.on_ack(&ack(1, 0));
        tx.on_ack(&ack(2, 1));
        let first = tx.on_ack(&nack(2, 3));
        assert_eq!(first.loss, Some(LossSignal::Nack));
        assert_eq!(first.newly_sacked, 1);
        // Recovery: 2 (the cumulative ack) goes first; nothing else is known lost yet, and
        // new packets stay within the cap (in flight 8 - 2 = 6: 8 and 9 may go).
        assert_eq!(drain(&mut tx), [(2, true), (8, false), (9, false)]);
        let again = tx.on_ack(&nack(2, 4));
        assert_eq!((again.loss, again.newly_sacked), (None, 1));
        assert!(!tx.has_more());
        // 6 sacked: 5 is below it and unsacked: lost. Resent once, in order.
        tx.on_ack(&nack(2, 6));
        assert_eq!(drain(&mut tx), [(5, true)]);
        tx.on_ack(&nack(2, 7));
        assert!(!tx.has_more());
        // The retransmitted 2 arrives: the receiver releases 2, 3, 4 and ACKs 5.
        assert_eq!(tx.on_ack(&ack(5, 2)).newly_acked, 3);
        assert!(!tx.has_more(), "5 was resent already in this recovery");
        // 5 arrives: 5, 6, 7 released; 8 and 9 had arrived too: ACK 10 ends the flow.
        tx.on_ack(&ack(10, 5));
        assert!(tx.is_complete() && !tx.has_more());
    }

    #[test]
    fn recovery_ends_past_the_recovery_sequence_and_a_later_nack_starts_another() {
        let mut tx = SelectiveRepeat::new(20, config(6));
        assert_eq!(drain(&mut tx).len(), 6); // 0..5; 1 lost
        tx.on_ack(&ack(1, 0));
        assert!(tx.on_ack(&nack(1, 2)).loss.is_some());
        // 1 resent first; then in flight 6 - 1 = 5 < 6: one new packet.
        assert_eq!(drain(&mut tx), [(1, true), (6, false)]);
        // Recovery sequence 5 (the last new packet before recovery): ACK 5 keeps recovery.
        tx.on_ack(&ack(5, 1));
        assert_eq!(
            drain(&mut tx),
            [(7, false), (8, false), (9, false), (10, false)]
        );
        assert!(tx.recovery);
        tx.on_ack(&ack(6, 5));
        assert!(!tx.recovery, "cumulative ack 6 > recovery sequence 5");
        assert_eq!(drain(&mut tx), [(11, false)]);
        // 7 lost: a NACK starts a second recovery (the loss signal again).
        assert_eq!(tx.on_ack(&nack(7, 8)).loss, Some(LossSignal::Nack));
        assert_eq!(drain(&mut tx), [(7, true), (12, false)]);
    }

    #[test]
    fn a_timeout_resends_the_first_unacked_and_the_rto_follows_packets_in_flight() {
        let mut tx = SelectiveRepeat::new(4, config(8));
        assert_eq!(drain(&mut tx).len(), 4);
        // 4 in flight >= N = 3: RTO_high.
        assert_eq!(tx.rto(), SimTime::from_micros(320));
        tx.on_ack(&ack(2, 1));
        // 2 and 3 lost at the tail: nothing comes back; 2 in flight < 3: RTO_low.
        assert_eq!(tx.rto(), SimTime::from_micros(100));
        tx.on_timeout();
        // Nothing is sacked above 2: only 2 is known lost.
        assert_eq!(drain(&mut tx), [(2, true)]);
        tx.on_ack(&ack(3, 2));
        assert!(!tx.has_more());
        tx.on_timeout();
        assert_eq!(drain(&mut tx), [(3, true)]);
        tx.on_ack(&ack(4, 3));
        assert!(tx.is_complete());
    }

    #[test]
    fn a_timeout_in_recovery_resends_the_holes_again() {
        let mut tx = SelectiveRepeat::new(6, config(8));
        assert_eq!(drain(&mut tx).len(), 6); // 0 and 2 lost
        tx.on_ack(&nack(0, 1));
        tx.on_ack(&nack(0, 3));
        assert_eq!(drain(&mut tx), [(0, true), (2, true)]);
        // Both retransmissions lost too: the timeout resends 0 and 2 (1, 3 are held).
        tx.on_timeout();
        assert_eq!(drain(&mut tx), [(0, true), (2, true)]);
    }

    #[test]
    fn the_receiver_holds_out_of_order_packets_and_releases_them_in_order_once() {
        let mut rx = SackReceiver::default();
        let r = |o: &RxOutcome| o.reply.map(|r| (r.kind, r.cumulative, r.sacked));
        let o = rx.on_data(0, 6, 1);
        assert_eq!((o.released_from, o.released), (0, 1));
        assert_eq!(r(&o), Some((ReplyKind::Ack, 1, 0)));
        // 1 lost: 2 and 3 held; a NACK for each, with the cumulative ack and its PSN.
        let o = rx.on_data(2, 6, 1);
        assert!(o.accepted && o.released == 0);
        assert_eq!(r(&o), Some((ReplyKind::Nack, 1, 2)));
        assert_eq!(r(&rx.on_data(3, 6, 1)), Some((ReplyKind::Nack, 1, 3)));
        // A duplicate of a held packet: not accepted again, NACKed again.
        let dup = rx.on_data(3, 6, 1);
        assert!(!dup.accepted);
        assert_eq!(r(&dup), Some((ReplyKind::Nack, 1, 3)));
        // 1 arrives: 1, 2, 3 go to the application.
        let o = rx.on_data(1, 6, 1);
        assert_eq!((o.released_from, o.released), (1, 3));
        assert_eq!(r(&o), Some((ReplyKind::Ack, 4, 1)));
        // A duplicate of a released packet: ACK with the cumulative ack.
        let o = rx.on_data(2, 6, 1);
        assert!(!o.accepted && o.released == 0);
        assert_eq!(r(&o), Some((ReplyKind::Ack, 4, 2)));
        rx.on_data(5, 6, 1);
        let last = rx.on_data(4, 6, 1);
        assert!(last.complete);
        assert_eq!((last.released_from, last.released), (4, 2));
    }

    #[test]
    fn ack_every_counts_released_packets_and_a_filled_hole_is_acked_at_once() {
        let mut rx = SackReceiver::default();
        assert!(rx.on_data(0, 9, 4).reply.is_none());
        assert!(rx.on_data(2, 9, 4).reply.is_some()); // NACK
        let fill = rx.on_data(1, 9, 4);
        assert_eq!(fill.reply.map(|r| r.cumulative), Some(3));
        assert!(rx.on_data(3, 9, 4).reply.is_none());
    }

    #[test]
    fn the_bitmap_moves_its_floor_by_words() {
        let mut b = PsnBits::default();
        assert!(b.insert(130) && !b.insert(130));
        assert!(b.contains(130) && !b.contains(129));
        b.raise_floor(129);
        assert_eq!((b.base, b.words.len()), (128, 1));
        assert!(b.contains(130));
        b.raise_floor(1000);
        assert_eq!((b.base, b.words.len()), (960, 0));
        assert!(!b.contains(130) && !b.contains(1000));
    }
}

/// Through the glue (`mod.rs`): what crosses the link, frame by frame.
#[cfg(test)]
mod glue_tests {
    use super::super::tests::single_drop;
    use super::super::{ReplyKind, Transports};
    use crate::scenario::{IrnParams, RoceParams, Transport};

    /// Host a sends one irn flow of 8 full frames to b (10 Gb/s, 1 us); a's link loses the
    /// first transmission of packet 1. Frame time 1.2 us: packet 2 reaches b at 4.6 us and
    /// its NACK (cumulative 1, sacked 2) is back at 5.65 us, while a sends packet 4 (4.8 to
    /// 6.0 us); a resends 1 next, then goes on with 5, 6, 7. Go-back-N on the same drop
    /// (`transport/mod.rs`'s test) resends 1, 2, 3, 4.
    #[test]
    fn a_drop_is_resent_alone_after_the_frame_in_progress() {
        let irn = IrnParams {
            bdp_cap_packets: Some(100),
            ..IrnParams::default()
        };
        let room = || Transports::new(RoceParams::default()).with_irn(irn);
        let (mut tn, from_a, from_b) = single_drop(Transport::Irn, 8, 1, room, 100);
        let psns: Vec<u32> = from_a.iter().map(|&(_, s, _)| s).collect();
        assert_eq!(psns, [0, 1, 2, 3, 4, 1, 5, 6, 7]);
        let ack = |c, s| (Some(ReplyKind::Ack), c, s);
        let nack = |c, s| (Some(ReplyKind::Nack), c, s);
        // The resent 1 releases 1..4 at once: ACK 5.
        let want = [
            ack(1, 0),
            nack(1, 2),
            nack(1, 3),
            nack(1, 4),
            ack(5, 1),
            ack(6, 5),
            ack(7, 6),
            ack(8, 7),
        ];
        assert_eq!(from_b, want);
        let f = &tn.net.ctx.flows.flows[0];
        assert_eq!(f.delivered_bytes, 8 * 1500);
        assert_eq!((f.retransmitted_frames, f.timeouts), (1, 0));
        assert!(f.end.is_some() && f.sender_end > f.end);
        for node in 0..2 {
            let tp = tn.host(node).transports.as_ref().expect("made above");
            assert_eq!(tp.active(), (0, 0));
        }
    }
}
