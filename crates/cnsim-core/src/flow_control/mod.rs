//! Link-level flow control: IEEE 802.3x PAUSE (all classes) and IEEE 802.1Qbb PFC (per
//! priority class).

pub mod pause;
pub mod pfc;
pub mod pfc_summary;
