//! Link-level flow control: IEEE 802.3x PAUSE (and, per priority, 802.1Qbb PFC).

pub mod pause;
