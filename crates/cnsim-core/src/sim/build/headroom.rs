//! `[pfc] headroom_bytes`: each switch ingress port's headroom, the one given or, with "auto",
//! its own link's (`Headroom::auto_bytes`: the two directions' line rates and one-way delays,
//! the largest frame the traffic sends and a PFC frame per lossless class, wire overhead
//! included).

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
    let overhead = sc.model.wire_overhead_bytes;
    let largest_frame = sc.traffic.iter().map(|t| t.frame_bytes).max().unwrap_or(0);
    let max_frame_bytes = largest_frame.max(sc.model.control_frame_bytes) + overhead;
    let control_frame_bytes = sc.model.control_frame_bytes + overhead;
    let control_frames = pfc.lossless_mask().count_ones().max(1);
    switches
        .iter()
        .map(|switch_ports| {
            switch_ports
                .iter()
                .map(|out| {
                    let upstream = &ports[out.peer_node as usize][out.peer_port as usize];
                    let link = HeadroomLink {
                        in_rate_bps: upstream.line_rate_bps,
                        in_delay_s: upstream.delay.as_secs_f64(),
                        out_rate_bps: out.line_rate_bps,
                        out_delay_s: out.delay.as_secs_f64(),
                    };
                    Headroom::auto_bytes(link, max_frame_bytes, control_frame_bytes, control_frames)
                })
                .collect()
        })
        .collect()
}
