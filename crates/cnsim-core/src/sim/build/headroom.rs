//! `[pfc] headroom_bytes`: each switch ingress port's headroom, the one given or, with "auto",
//! its own link's (`Headroom::auto_bytes`: the two directions' line rates and one-way delays,
//! the largest frame the traffic sends and a PFC frame per lossless class, wire overhead
//! included). The same bound for a host's receive queue (`host_rx`), which has no headroom of
//! its own: what its `rx_buffer_bytes` must hold above XOFF.

use crate::net::port::Port;
use crate::scenario::pfc::{Headroom, HeadroomLink};
use crate::scenario::{PfcSpec, Scenario};

/// Per switch (in scenario order), per port: its headroom. `ports` holds every node's ports,
/// hosts first, linked both ways.
pub(super) fn port_headrooms(sc: &Scenario, pfc: &PfcSpec, ports: &[Vec<Port>]) -> Vec<Vec<u64>> {
    let switches = &ports[sc.hosts.len()..];
    if let Headroom::Bytes(bytes) = pfc.headroom_bytes {
        let bytes = bytes.round() as u64;
        return switches.iter().map(|p| vec![bytes; p.len()]).collect();
    }
    let bound = ArrivingAfterXoff::new(sc, pfc);
    switches
        .iter()
        .map(|switch_ports| {
            switch_ports
                .iter()
                .map(|out| bound.at(out, ports))
                .collect()
        })
        .collect()
}

/// Per host (in scenario order): the most that can reach its receive queue after it queues an
/// XOFF on its one port.
pub(super) fn host_rx_headrooms(sc: &Scenario, pfc: &PfcSpec, ports: &[Vec<Port>]) -> Vec<u64> {
    let bound = ArrivingAfterXoff::new(sc, pfc);
    let hosts = &ports[..sc.hosts.len()];
    hosts.iter().map(|host| bound.at(&host[0], ports)).collect()
}

/// `Headroom::auto_bytes` with the scenario's frames: the largest `frame_bytes` of the traffic
/// (or a control frame, if larger) and a PFC frame per lossless class, wire overhead included.
struct ArrivingAfterXoff {
    max_frame_bytes: u32,
    control_frame_bytes: u32,
    control_frames: u32,
}

impl ArrivingAfterXoff {
    fn new(sc: &Scenario, pfc: &PfcSpec) -> ArrivingAfterXoff {
        let overhead = sc.model.wire_overhead_bytes;
        let largest_frame = sc.traffic.iter().map(|t| t.frame_bytes).max().unwrap_or(0);
        ArrivingAfterXoff {
            max_frame_bytes: largest_frame.max(sc.model.control_frame_bytes) + overhead,
            control_frame_bytes: sc.model.control_frame_bytes + overhead,
            control_frames: pfc.lossless_mask().count_ones().max(1),
        }
    }

    /// The bound for the ingress side of the node that sends its XOFF on `out`.
    fn at(&self, out: &Port, ports: &[Vec<Port>]) -> u64 {
        let upstream = &ports[out.peer_node as usize][out.peer_port as usize];
        let link = HeadroomLink {
            in_rate_bps: upstream.line_rate_bps,
            in_delay_s: upstream.delay.as_secs_f64(),
            out_rate_bps: out.line_rate_bps,
            out_delay_s: out.delay.as_secs_f64(),
        };
        let Self {
            max_frame_bytes,
            control_frame_bytes,
            control_frames,
        } = *self;
        Headroom::auto_bytes(link, max_frame_bytes, control_frame_bytes, control_frames)
    }
}
