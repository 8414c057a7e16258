//! A switch's IEEE 802.3x PAUSE triggers (protocols.md section 1): when to hold the peers
//! upstream, from the buffer's levels with XOFF/XON hysteresis.
//!
//! - `global`: the shared memory over XOFF holds every input;
//! - `ingress`: an input port's bytes in the buffer over XOFF hold that input;
//! - `egress`: an output queue over XOFF holds every input but the congested output itself.
//!
//! Only ports data has arrived on are inputs: no PAUSE frames take bandwidth from a port that
//! only sends (the congested downlink). The triggers decide which ports to look at again; the
//! switch then asks each port's 802.3x lane to hold or release its peer (`link_pause.rs`).

use crate::flow_control::hysteresis;
use crate::scenario::{PauseTrigger, SwitchPause};

/// Which ports' wish may have changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reconsider {
    None,
    Port(usize),
    All,
}

pub(crate) struct PauseTriggers {
    pub(crate) cfg: SwitchPause,
    global_over: bool,
    ingress_over: Vec<bool>,
    egress_over: Vec<bool>,
    egress_over_count: u32,
    active_input: Vec<bool>,
}

impl PauseTriggers {
    pub(crate) fn new(cfg: SwitchPause, n_ports: usize) -> PauseTriggers {
        PauseTriggers {
            cfg,
            global_over: false,
            ingress_over: vec![false; n_ports],
            egress_over: vec![false; n_ports],
            egress_over_count: 0,
            active_input: vec![false; n_ports],
        }
    }

    /// Data arrived on `input`. True the first time: the port is an input from now on.
    pub(crate) fn note_input(&mut self, input: usize) -> bool {
        !std::mem::replace(&mut self.active_input[input], true)
    }

    /// A frame entered or left the buffer at (input, output), leaving the level the trigger
    /// watches at `level_bytes`: the shared memory (global), the input's bytes (ingress) or
    /// the output's queue (egress). Inline: it runs on every enqueue and dequeue and most
    /// calls change nothing.
    #[inline]
    pub(crate) fn update(&mut self, input: usize, output: usize, level_bytes: u64) -> Reconsider {
        let (xoff, xon) = (self.cfg.xoff_bytes as u64, self.cfg.xon_bytes as u64);
        match self.cfg.trigger {
            PauseTrigger::Global => {
                let over = hysteresis(self.global_over, level_bytes, xoff, xon);
                if over == self.global_over {
                    return Reconsider::None;
                }
                self.global_over = over;
                Reconsider::All
            }
            PauseTrigger::Ingress => {
                let was = self.ingress_over[input];
                let over = hysteresis(was, level_bytes, xoff, xon);
                if over == was {
                    return Reconsider::None;
                }
                self.ingress_over[input] = over;
                Reconsider::Port(input)
            }
            PauseTrigger::Egress => {
                let was = self.egress_over[output];
                let over = hysteresis(was, level_bytes, xoff, xon);
                if over == was {
                    return Reconsider::None;
                }
                self.egress_over[output] = over;
                if over {
                    self.egress_over_count += 1;
                } else {
                    self.egress_over_count -= 1;
                }
                Reconsider::All
            }
        }
    }

    /// Should the peer on port `p` be held?
    pub(crate) fn wants_pause(&self, p: usize) -> bool {
        if !self.active_input[p] {
            return false;
        }
        let others_congested = self.egress_over_count - self.egress_over[p] as u32;
        self.global_over || self.ingress_over[p] || others_congested > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn triggers(trigger: PauseTrigger) -> PauseTriggers {
        let cfg = SwitchPause {
            enabled: true,
            trigger,
            xoff_bytes: 130_000.0,
            xon_bytes: 110_000.0,
            quanta: 0xffff,
        };
        PauseTriggers::new(cfg, 3)
    }

    #[test]
    fn egress_holds_every_input_but_the_congested_output() {
        let mut t = triggers(PauseTrigger::Egress);
        assert!(t.note_input(0) && t.note_input(1) && t.note_input(2));
        assert!(!t.note_input(0), "an input is noted once");
        assert_eq!(t.update(0, 2, 130_001), Reconsider::All);
        assert_eq!((t.wants_pause(0), t.wants_pause(1)), (true, true));
        assert!(!t.wants_pause(2), "the congested output itself is not held");
        // Hysteresis: still over at 110 KB, released below it.
        assert_eq!(t.update(0, 2, 110_000), Reconsider::None);
        assert_eq!(t.update(0, 2, 109_999), Reconsider::All);
        assert!(!t.wants_pause(0));
    }

    #[test]
    fn ingress_holds_only_its_input_and_ports_that_only_send_are_never_held() {
        let mut t = triggers(PauseTrigger::Ingress);
        t.note_input(1);
        assert_eq!(t.update(1, 0, 200_000), Reconsider::Port(1));
        assert!(t.wants_pause(1) && !t.wants_pause(0));
        let mut g = triggers(PauseTrigger::Global);
        g.note_input(0);
        assert_eq!(g.update(0, 1, 130_001), Reconsider::All);
        assert!(g.wants_pause(0));
        assert!(
            !g.wants_pause(1),
            "no data arrived on port 1: it only sends"
        );
    }
}
