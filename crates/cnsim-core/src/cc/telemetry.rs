//! In-band network telemetry (INT) as the sender hooks see it: what each switch egress a data
//! frame left through stamped on it, copied by the receiver into the frame's ACK.
//!
//! HPCC (Li et al., SIGCOMM 2019) section 3.2 and Figure 4: per hop the egress queue length,
//! the bytes the port has transmitted, a timestamp and the link's rate (its `B`), for up to
//! five hops (the INT header's fixed size; a frame past its fifth switch keeps the first five
//! stamps, as the HPCC ns-3 simulator's `IntHeader::PushHop` does). The switch stamps when the
//! frame starts leaving the port, with the queue it leaves behind.
//!
//! A switch stamps transported data frames only, and only when the running scheme asks for it
//! ([`super::CcScheme::stamps_telemetry`]): otherwise no frame carries any.

use crate::time::SimTime;

/// Hops an INT header holds.
pub(crate) const MAX_HOPS: usize = 5;

/// One switch egress's stamp.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct HopTelemetry {
    /// Data bytes queued at the port once the frame has left the queue (HPCC's `qLen`).
    pub(crate) queue_bytes: u64,
    /// Bytes the port has transmitted, this frame included (HPCC's `txBytes`).
    pub(crate) tx_bytes: u64,
    /// When the frame started leaving (HPCC's `ts`).
    pub(crate) at: SimTime,
    /// The port's rate (HPCC's `B`).
    pub(crate) rate_bps: f64,
}

/// The stamps of the switches a data frame crossed, in path order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Telemetry {
    hops: [HopTelemetry; MAX_HOPS],
    n_hops: u8,
}

impl Telemetry {
    /// The stamps, first hop first.
    pub(crate) fn hops(&self) -> &[HopTelemetry] {
        &self.hops[..self.n_hops as usize]
    }

    /// Adds a hop's stamp; a full header keeps what it has.
    pub(crate) fn push(&mut self, hop: HopTelemetry) {
        if let Some(free) = self.hops.get_mut(self.n_hops as usize) {
            *free = hop;
            self.n_hops += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(queue_bytes: u64) -> HopTelemetry {
        HopTelemetry {
            queue_bytes,
            tx_bytes: 1500,
            at: SimTime::from_micros(1),
            rate_bps: 100e9,
        }
    }

    #[test]
    fn a_header_keeps_its_first_five_hops() {
        let mut t = Telemetry::default();
        assert!(t.hops().is_empty());
        for q in 0..7 {
            t.push(hop(q * 1000));
        }
        let queues: Vec<u64> = t.hops().iter().map(|h| h.queue_bytes).collect();
        assert_eq!(queues, [0, 1000, 2000, 3000, 4000]);
    }
}
