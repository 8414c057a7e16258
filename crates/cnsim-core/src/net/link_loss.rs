//! Loss on a link direction, for studies and tests: a random frame loss rate
//! (`links[*].loss_rate`, drawn from the link's own seeded stream, so a run repeats exactly
//! and adding a link shifts no other draw) and an explicit list of frames to lose (`[transport]
//! drop`: the first transmission of packet `psn` of flow `flow`, on its sender's link).
//!
//! Only data frames and transport ACKs/NACKs are lost: PAUSE, PFC and scheme messages at
//! control priority are never dropped in cnsim's model (docs/transport.md). A lost frame has
//! crossed the link (it took its serialisation time) and vanishes on arrival.

use rand::Rng;

use crate::ids::FlowId;
use crate::net::frame::Frame;
use crate::rng::SimRng;

pub(crate) struct LinkLoss {
    /// Probability of losing each eligible frame.
    pub(crate) rate: f64,
    rng: SimRng,
    /// (flow, PSN) of data frames to lose once.
    drops: Vec<(FlowId, u32)>,
}

impl LinkLoss {
    pub(crate) fn new(rate: f64, rng: SimRng) -> LinkLoss {
        LinkLoss {
            rate,
            rng,
            drops: Vec::new(),
        }
    }

    /// Loses the first transmission of packet `psn` of flow `flow`.
    pub(crate) fn drop_once(&mut self, flow: FlowId, psn: u32) {
        self.drops.push((flow, psn));
    }

    /// Whether the link loses `frame` (one draw per eligible frame when the rate is above 0).
    pub(crate) fn loses(&mut self, frame: &Frame) -> bool {
        if !(frame.is_data() || frame.payload.is_transport_ack()) {
            return false;
        }
        if frame.is_data() {
            let listed = self
                .drops
                .iter()
                .position(|&(f, psn)| f == frame.flow_id && psn == frame.seq);
            if let Some(i) = listed {
                self.drops.swap_remove(i);
                return true;
            }
        }
        self.rate > 0.0 && self.rng.random::<f64>() < self.rate
    }
}
