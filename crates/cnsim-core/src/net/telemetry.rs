//! Where in-band telemetry lives while its frame travels: a frame is a small `Copy` value
//! copied once per hop, and five hops of telemetry (`cc::Telemetry`, 168 bytes) would more
//! than triple it. So a stamped data frame carries a [`TelemetrySlot`], an index into this
//! store; its ACK takes the slot over, and the sender reads the telemetry and frees the slot.
//! Every place a frame that may hold a slot ends (a drop, a receiver that does not answer, a
//! late ACK) frees it, so the store holds what is in flight (tested in transport's tests).

use crate::cc::{HopTelemetry, Telemetry};

/// A data frame's or ACK's telemetry: an index into the store, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TelemetrySlot(u32);

impl TelemetrySlot {
    pub(crate) const NONE: TelemetrySlot = TelemetrySlot(u32::MAX);

    pub(crate) fn is_none(self) -> bool {
        self == TelemetrySlot::NONE
    }
}

/// The telemetry of every stamped frame in flight. Switches stamp when the scheme asks for it
/// (`CcScheme::stamps_telemetry`, `Switch::stamps_telemetry`).
#[derive(Debug, Default)]
pub(crate) struct TelemetryStore {
    stacks: Vec<Telemetry>,
    free: Vec<u32>,
}

impl TelemetryStore {
    /// Adds a hop's stamp to the frame's telemetry, giving the frame a slot on its first hop.
    pub(crate) fn stamp(&mut self, slot: &mut TelemetrySlot, hop: HopTelemetry) {
        if slot.is_none() {
            *slot = self.allocate();
        }
        self.stacks[slot.0 as usize].push(hop);
    }

    fn allocate(&mut self) -> TelemetrySlot {
        let index = self.free.pop().unwrap_or_else(|| {
            self.stacks.push(Telemetry::default());
            (self.stacks.len() - 1) as u32
        });
        self.stacks[index as usize] = Telemetry::default();
        TelemetrySlot(index)
    }

    /// The telemetry in `slot` (None: the frame carries none), freeing the slot.
    pub(crate) fn take(&mut self, slot: TelemetrySlot) -> Option<Telemetry> {
        if slot.is_none() {
            return None;
        }
        self.free.push(slot.0);
        Some(self.stacks[slot.0 as usize])
    }

    /// Frees `slot`: its frame ended without anyone reading its telemetry.
    pub(crate) fn release(&mut self, slot: TelemetrySlot) {
        self.take(slot);
    }

    /// Slots held by frames in flight.
    #[cfg(test)]
    pub(crate) fn live(&self) -> usize {
        self.stacks.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Node;
    use crate::scenario::Scenario;
    use crate::sim::{FinishedRun, Simulation};
    use crate::time::SimTime;

    fn hop(queue_bytes: u64) -> HopTelemetry {
        HopTelemetry {
            queue_bytes,
            tx_bytes: 0,
            at: SimTime::ZERO,
            rate_bps: 1e9,
        }
    }

    #[test]
    fn slots_are_reused_and_a_reused_slot_starts_empty() {
        let mut store = TelemetryStore::default();
        let (mut a, mut b) = (TelemetrySlot::NONE, TelemetrySlot::NONE);
        store.stamp(&mut a, hop(1));
        store.stamp(&mut a, hop(2));
        store.stamp(&mut b, hop(3));
        assert_eq!(store.live(), 2);
        let got = store.take(a).expect("a holds telemetry");
        assert_eq!(got.hops().len(), 2);
        assert_eq!(store.live(), 1);
        let mut c = TelemetrySlot::NONE;
        store.stamp(&mut c, hop(4));
        assert_eq!(c, a, "the freed slot is reused");
        assert_eq!(store.take(c).map(|t| t.hops().len()), Some(1));
        store.release(b);
        assert_eq!(store.live(), 0);
        assert_eq!(store.take(TelemetrySlot::NONE), None);
    }

    /// a - s1 - s2 - b at 10 Gb/s (s1 - s2 at 40 Gb/s), HPCC over roce: `flows` flows of
    /// `size_bytes` from a to b at 10 us intervals; the fabric link loses `loss_rate` of frames.
    fn line(flows: usize, size_bytes: u64, loss_rate: f64, duration_s: f64) -> FinishedRun {
        let list: Vec<String> = (0..flows)
            .map(|i| {
                let start = i as f64 * 1e-5;
                format!(
                    "{{ start_s = {start}, src = \"a\", dst = \"b\", size_bytes = {size_bytes} }}"
                )
            })
            .collect();
        let toml = format!(
            r#"name = "int"
duration_s = {duration_s}
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s1"
[[switches]]
name = "s2"
[[links]]
ends = ["a", "s1"]
rate_bps = 1e10
delay_s = 1e-6
[[links]]
ends = ["s1", "s2"]
rate_bps = 4e10
delay_s = 1e-6
loss_rate = {loss_rate}
[[links]]
ends = ["s2", "b"]
rate_bps = 1e10
delay_s = 1e-6
[[traffic]]
kind = "flow_trace"
transport = "roce"
flows = [{list}]
[congestion]
scheme = "hpcc"
"#,
            list = list.join(", ")
        );
        let scenario = Scenario::from_toml(&toml, &[]).expect("valid");
        Simulation::new(scenario)
            .expect("builds")
            .run(&mut |_| true)
    }

    #[test]
    fn each_switch_egress_stamps_its_hop_and_the_ack_brings_them_back() {
        let run = line(1, 1_000_000_000, 0.0, 2e-4);
        let Node::Host(a) = &run.net.nodes[0] else {
            panic!("a is host 0");
        };
        let tp = a.transports.as_deref().expect("a sends");
        let Some(crate::cc::SenderCc::Hpcc(s)) = tp.controller(0) else {
            panic!("flow 0 has an HPCC controller");
        };
        let hops = s.last_telemetry().hops();
        // Two switches: s1's egress to s2 (40 Gb/s), then s2's to b (10 Gb/s); s2 stamps later.
        assert_eq!(hops.len(), 2);
        assert_eq!(hops[0].rate_bps, 4e10);
        assert_eq!(hops[1].rate_bps, 1e10);
        assert!(hops[0].at < hops[1].at);
        // Every data byte s2 sent to b is this flow's, the stamped frame's included.
        assert!(hops[1].tx_bytes > 0 && hops[1].tx_bytes.is_multiple_of(1500));
    }

    #[test]
    fn every_slot_is_freed_when_frames_end_lost_unanswered_or_read() {
        // 1 % loss on the fabric link loses data and ACKs (with their telemetry); every flow
        // completes, its last ACK arrives, so nothing holds a slot at the end.
        let run = line(20, 60_000, 0.01, 0.05);
        let completed = run
            .net
            .ctx
            .flows
            .flows
            .iter()
            .filter(|f| f.sender_end.is_some());
        assert_eq!(completed.count(), 20);
        assert!(
            run.net.ctx.counters.dropped_total() > 0,
            "the link lost frames"
        );
        assert_eq!(run.net.ctx.telemetry.live(), 0);
    }
}
