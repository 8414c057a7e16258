//! Link-level flow control as pure state machines: IEEE 802.3x PAUSE (one lane per port, all
//! data) and IEEE 802.1Qbb PFC (one lane per priority class), each a [`lane::PauseLane`] that
//! takes inputs and returns what its port must do, as the `cc/` schemes do. Nothing here
//! queues a frame or schedules an event: `net/link_pause.rs` wires the lanes to ports, and the
//! triggers that decide when to pause the peer live with the element whose buffer they watch
//! (`net/switch_pause.rs`, `net/switch_pfc.rs`, the host's receiver).

pub(crate) mod lane;
pub(crate) mod pfc;

pub(crate) use lane::{hysteresis, Lane};
