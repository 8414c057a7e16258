//! A window- and pacing-based scheme written only against the sender hooks, for their test and
//! as docs/hooks.md's example (`scheme = "fixed_window"`, registered for tests only): each
//! transported flow keeps at most `window_packets` packets in flight and paces its frames at
//! `pacing_bps` (0: unpaced); it counts the ACKs, ECN echoes and losses it hears and keeps the
//! smallest RTT sample. It has no CP, RP or NP.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    AckEvent, CcScheme, CongestionSpec, FlowStart, LossSignal, MessageKind, Named, NoNp,
};
use crate::error::ConfigError;
use crate::rng::SimRng;
use crate::time::SimTime;

/// `[congestion.fixed_window]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct FixedWindowParams {
    pub(crate) window_packets: u32,
    /// 0: unpaced.
    pub(crate) pacing_bps: f64,
}

impl Default for FixedWindowParams {
    fn default() -> Self {
        FixedWindowParams {
            window_packets: 2,
            pacing_bps: 0.0,
        }
    }
}

/// No message of its own (the counters need a type).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum NoMsg {}

/// One flow's controller: a fixed window and rate, and what it heard.
#[derive(Debug)]
pub(crate) struct Window {
    window_bytes: f64,
    pacing_bps: Option<f64>,
    pub(crate) acks: u64,
    pub(crate) eces: u64,
    pub(crate) losses: Vec<LossSignal>,
    pub(crate) min_rtt: SimTime,
}

pub(crate) struct FixedWindow;

impl CcScheme for FixedWindow {
    type Params = FixedWindowParams;
    type Config = FixedWindowParams;
    type Msg = NoMsg;
    type Cp = ();
    type Rp = std::convert::Infallible;
    type Np = NoNp;
    type Sender = Window;
    type Variant = FixedWindowParams;

    const NAMES: &'static [Named] = &[Named {
        name: "fixed_window",
        doc: "",
    }];
    const CONTROL_KINDS: &'static [Named] = &[];

    fn fill_defaults(spec: &mut CongestionSpec, _: &str) {
        spec.fixed_window.get_or_insert_with(FixedWindowParams::default);
    }
    fn validate(p: &FixedWindowParams, _: &CongestionSpec, path: &str) -> Result<(), ConfigError> {
        if p.window_packets == 0 {
            return Err(ConfigError::field(
                format!("{path}.window_packets"),
                "must be >= 1",
            ));
        }
        Ok(())
    }
    fn resolve(spec: &CongestionSpec, _: &str) -> FixedWindowParams {
        spec.fixed_window.clone().unwrap_or_default()
    }
    fn variant(c: &FixedWindowParams) -> FixedWindowParams {
        c.clone()
    }
    fn kind(m: &NoMsg) -> MessageKind {
        match *m {}
    }
    fn msg_bytes(m: &NoMsg, _: &FixedWindowParams) -> u32 {
        match *m {}
    }
    fn new_cp(_: &FixedWindowParams, _: u32, _: f64, _: &mut SimRng) {}
    fn rate_bps(rp: &Self::Rp) -> f64 {
        match *rp {}
    }
    fn is_released(rp: &Self::Rp) -> bool {
        match *rp {}
    }

    fn new_sender(c: &FixedWindowParams, flow: &FlowStart) -> Option<Window> {
        Some(Window {
            window_bytes: c.window_packets as f64 * flow.mss_bytes as f64,
            pacing_bps: (c.pacing_bps > 0.0).then_some(c.pacing_bps),
            acks: 0,
            eces: 0,
            losses: Vec::new(),
            min_rtt: SimTime::MAX,
        })
    }
    fn on_ack(w: &mut Window, ack: &AckEvent) {
        w.acks += 1;
        w.eces += ack.ece as u64;
        w.min_rtt = w.min_rtt.min(ack.rtt);
    }
    fn on_loss(w: &mut Window, loss: LossSignal, _: SimTime) {
        w.losses.push(loss);
    }
    fn window_bytes(w: &Window) -> Option<f64> {
        Some(w.window_bytes)
    }
    fn pacing_bps(w: &Window) -> Option<f64> {
        w.pacing_bps
    }
}

#[cfg(test)]
mod tests {
    /// a - s - b, 10 Gb/s links of 1 us, one roce flow of ten 1500 B packets at 0 under
    /// `[congestion.fixed_window]` `table`.
    fn scenario(table: &str) -> String {
        format!(
            r#"
            name = "window"
            duration_s = 0.001
            hosts = [{{ name = "a" }}, {{ name = "b" }}]
            switches = [{{ name = "s" }}]
            links = [
                {{ ends = ["a", "s"], rate_bps = 10e9, delay_s = 1e-6 }},
                {{ ends = ["s", "b"], rate_bps = 10e9, delay_s = 1e-6 }},
            ]
            [[traffic]]
            kind = "flow_trace"
            transport = "roce"
            flows = [{{ start_s = 0.0, src = "a", dst = "b", size_bytes = 15000 }}]
            [congestion]
            scheme = "fixed_window"
            fixed_window = {{ {table} }}
            "#
        )
    }

    fn fct_us(table: &str) -> f64 {
        let report = crate::run_toml(&scenario(table), &[], None, &mut |_| true).expect("runs");
        assert!(report.flows.completed[0]);
        report.flows.fct_s[0] * 1e6
    }

    // A data frame takes 1.2 us per hop and 1 us per link: 4.4 us to b. Its 64 B ACK takes
    // 0.0512 + 1 us per hop back: the round trip of a packet sent into an idle path is
    // 4.4 + 2.1024 = 6.5024 us.
    const ONE_WAY_US: f64 = 4.4;
    const RTT_US: f64 = 6.5024;

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-6, "{got} us vs {want} us");
    }

    #[test]
    fn the_window_holds_the_flow_to_its_packets_per_round_trip() {
        // One packet per round trip: packet k leaves at k RTT; the last (9) arrives 4.4 us on.
        close(fct_us("window_packets = 1"), 9.0 * RTT_US + ONE_WAY_US);
        // Two: packets 2j and 2j+1 leave at j RTT and j RTT + 1.2 us (behind the first on
        // the NIC), each clocked out by the ACK of the packet two before it.
        close(fct_us("window_packets = 2"), 4.0 * RTT_US + 1.2 + ONE_WAY_US);
        // A window above the bandwidth-delay product (6.5 us x 10 Gb/s = 5.4 packets): the
        // flow is sent back to back, as without a scheme (store and forward adds one frame).
        close(fct_us("window_packets = 6"), 10.0 * 1.2 + 1.2 + 2.0);
    }

    #[test]
    fn pacing_spaces_the_frames_at_the_rate() {
        // 1 Gb/s: a 1500 B frame every 12 us.
        close(
            fct_us("window_packets = 100, pacing_bps = 1e9"),
            9.0 * 12.0 + ONE_WAY_US,
        );
    }
}
