//! RoCEv2 reliable connection with go-back-N, as the DCQCN paper (Zhu et al., SIGCOMM 2015,
//! section 3) and the IRN paper (Mittal et al., SIGCOMM 2018, section 2) model it, from the
//! InfiniBand RC rules (vol. 1: PSN, ACK/NAK, local ACK timeout; annex A17 for RoCEv2).
//! Pure state machines: they take what arrived and say what to do; `mod.rs` makes the frames
//! and events (docs/transport.md, "roce").
//!
//! - [`GoBackN`], the sender: PSNs from 0; no window (the NIC and its rate limiter pace it); a
//!   cumulative ACK moves the first unacknowledged PSN; a NACK for PSN e goes back to e; a
//!   timeout goes back to the first unacknowledged packet.
//! - [`InOrder`], the receiver: accepts only the expected PSN, ACKs every `ack_every` accepted
//!   packets and the flow's last, sends one NACK per gap, answers a duplicate with an ACK.

use super::{AckOutcome, AckSeen, LossSignal, Reply, ReplyKind, RxOutcome, Sent};

/// The sender's half of a go-back-N queue pair.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GoBackN {
    /// The flow's packet count.
    packets: u32,
    /// The next PSN to send.
    next_psn: u32,
    /// Packets acknowledged (cumulatively): the first unacknowledged PSN.
    acked: u32,
    /// One past the highest PSN ever sent: a PSN below it is a retransmission.
    high_psn: u32,
}

impl GoBackN {
    pub(crate) fn new(packets: u32) -> GoBackN {
        GoBackN {
            packets,
            next_psn: 0,
            acked: 0,
            high_psn: 0,
        }
    }

    /// The packet to send now, if any.
    pub(crate) fn next_packet(&mut self) -> Option<Sent> {
        if self.next_psn >= self.packets {
            return None;
        }
        let psn = self.next_psn;
        self.next_psn += 1;
        let retransmission = psn < self.high_psn;
        self.high_psn = self.high_psn.max(self.next_psn);
        Some(Sent {
            psn,
            retransmission,
        })
    }

    /// A long flow's application wrote more, or stopped writing: the flow has `packets`
    /// packets now (never fewer than were sent: `app.rs`).
    pub(crate) fn set_packets(&mut self, packets: u32) {
        debug_assert!(
            packets >= self.high_psn,
            "a flow cannot shrink below what was sent"
        );
        self.packets = packets;
    }

    /// Something is left to send now.
    pub(crate) fn has_more(&self) -> bool {
        self.next_psn < self.packets
    }

    /// Packets sent and not yet acknowledged.
    pub(crate) fn in_flight(&self) -> u32 {
        self.next_psn.max(self.acked) - self.acked
    }

    pub(crate) fn is_complete(&self) -> bool {
        self.acked >= self.packets
    }

    /// An ACK or NACK. A NACK for the first unacknowledged packet goes back to it (a loss);
    /// a stale one (an ACK has passed it) is an ACK.
    pub(crate) fn on_ack(&mut self, ack: &AckSeen) -> AckOutcome {
        let newly = ack.cumulative.saturating_sub(self.acked);
        self.acked += newly;
        let go_back = ack.kind == ReplyKind::Nack && ack.cumulative == self.acked;
        self.next_psn = if go_back {
            ack.cumulative
        } else {
            self.next_psn.max(self.acked)
        };
        AckOutcome {
            newly_acked: newly,
            newly_sacked: 0,
            loss: go_back.then_some(LossSignal::Nack),
        }
    }

    /// The retransmission timer expired: go back to the first unacknowledged packet.
    pub(crate) fn on_timeout(&mut self) {
        self.next_psn = self.acked;
    }
}

/// The receiver's half of a go-back-N queue pair.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct InOrder {
    /// The next PSN the receiver accepts (every packet before it is held, in order).
    expected: u32,
    /// Accepted packets since the last ACK.
    since_ack: u32,
    /// A NACK was sent for the current gap (one per gap).
    nacked: bool,
}

impl InOrder {
    /// Data packet `psn` of a flow of `packets` arrived.
    pub(crate) fn on_data(&mut self, psn: u32, packets: u32, ack_every: u32) -> RxOutcome {
        if psn == self.expected {
            self.expected += 1;
            self.since_ack += 1;
            self.nacked = false;
            let complete = self.expected == packets;
            let ack = self.since_ack >= ack_every || complete;
            if ack {
                self.since_ack = 0;
            }
            RxOutcome {
                accepted: true,
                complete,
                reply: ack.then(|| Reply::ack(self.expected, psn)),
                released_from: psn,
                released: 1,
            }
        } else if psn > self.expected {
            let first_of_gap = !self.nacked;
            self.nacked = true;
            let nack = first_of_gap.then(|| Reply::nack(self.expected, psn));
            RxOutcome::releasing_nothing(false, self.expected, nack)
        } else {
            RxOutcome::releasing_nothing(false, self.expected, Some(Reply::ack(self.expected, psn)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(kind: ReplyKind, cumulative: u32) -> AckSeen {
        AckSeen {
            kind,
            cumulative,
            sacked: 0,
        }
    }

    fn sent_psns(tx: &mut GoBackN, n: usize) -> Vec<u32> {
        (0..n)
            .filter_map(|_| tx.next_packet())
            .map(|s| s.psn)
            .collect()
    }

    #[test]
    fn a_nack_goes_back_and_a_stale_one_is_an_ack() {
        let mut tx = GoBackN::new(5);
        assert_eq!(sent_psns(&mut tx, 4), [0, 1, 2, 3]);
        assert_eq!(tx.on_ack(&ack(ReplyKind::Ack, 1)).newly_acked, 1);
        assert_eq!(tx.in_flight(), 3);
        let nack = tx.on_ack(&ack(ReplyKind::Nack, 1));
        assert_eq!((nack.newly_acked, nack.loss), (0, Some(LossSignal::Nack)));
        assert_eq!(
            tx.in_flight(),
            0,
            "going back to 1 takes 1..3 out of flight"
        );
        let again = tx.next_packet().expect("packet 1 again");
        assert_eq!((again.psn, again.retransmission), (1, true));
        // A NACK for 1 arriving after an ACK for 3: stale, only the ACK part counts.
        assert_eq!(tx.on_ack(&ack(ReplyKind::Ack, 3)).newly_acked, 2);
        assert_eq!(tx.on_ack(&ack(ReplyKind::Nack, 1)), AckOutcome::default());
        assert_eq!(tx.next_packet().map(|s| s.psn), Some(3));
        tx.on_timeout();
        assert_eq!(sent_psns(&mut tx, 9), [3, 4]);
        assert!(!tx.has_more() && !tx.is_complete());
        tx.on_ack(&ack(ReplyKind::Ack, 5));
        assert!(tx.is_complete());
    }

    #[test]
    fn the_receiver_nacks_once_per_gap_and_acks_duplicates() {
        let mut rx = InOrder::default();
        let reply = |o: RxOutcome| o.reply.map(|r| (r.kind, r.cumulative));
        assert_eq!(reply(rx.on_data(0, 4, 1)), Some((ReplyKind::Ack, 1)));
        assert_eq!(reply(rx.on_data(2, 4, 1)), Some((ReplyKind::Nack, 1)));
        assert_eq!(reply(rx.on_data(3, 4, 1)), None);
        assert_eq!(reply(rx.on_data(0, 4, 1)), Some((ReplyKind::Ack, 1)));
        let o = rx.on_data(1, 4, 2);
        assert!(o.accepted && !o.complete && o.reply.is_none());
        assert_eq!(reply(rx.on_data(2, 4, 2)), Some((ReplyKind::Ack, 3)));
        let last = rx.on_data(3, 4, 2);
        assert!(last.complete);
        assert_eq!(reply(last), Some((ReplyKind::Ack, 4)));
    }
}
