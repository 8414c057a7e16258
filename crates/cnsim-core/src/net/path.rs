//! A flow's path through the network as the flow table's idle-network FCT needs it: the stages
//! (a link's line rate, its wire overhead and delay; the receiver's service) along the routes.

use crate::flows::Stage;
use crate::ids::{FlowId, HostId};
use crate::net::Node;
use crate::time::SimTime;

/// The stages from `src` to `dst` along the static routes: every link at its line rate with
/// its delay (propagation, delay line, the next node's latency), then the receiver's service
/// if it has a rate.
pub(crate) fn path_stages(nodes: &[Node], src: HostId, dst: HostId, flow_id: FlowId) -> Vec<Stage> {
    let mut stages = Vec::new();
    let mut port = &nodes[src as usize].ports()[0];
    loop {
        stages.push(Stage {
            rate_bps: port.line_rate_bps,
            overhead_bytes: port.wire_overhead_bytes,
            delay: port.delay,
        });
        match &nodes[port.peer_node as usize] {
            Node::Switch(sw) => port = &sw.ports[sw.route.port_for(src, dst, flow_id) as usize],
            Node::Host(h) => {
                if let Some(rate_bps) = h.rx.rate_bps {
                    stages.push(Stage {
                        rate_bps,
                        overhead_bytes: 0,
                        delay: SimTime::ZERO,
                    });
                }
                return stages;
            }
        }
    }
}

/// The switches a frame of flow `flow_id` from `src` to `dst` crosses along the static routes
/// (what an IP TTL counts down), at most 255; at most one walk of every node (a route loop
/// cannot hold it).
pub(crate) fn switches_on_path(nodes: &[Node], src: HostId, dst: HostId, flow_id: FlowId) -> u8 {
    let mut switches = 0u8;
    let mut port = &nodes[src as usize].ports()[0];
    for _ in 0..nodes.len() {
        match &nodes[port.peer_node as usize] {
            Node::Switch(sw) => {
                switches = switches.saturating_add(1);
                port = &sw.ports[sw.route.port_for(src, dst, flow_id) as usize];
            }
            Node::Host(_) => break,
        }
    }
    switches
}

/// Whether any switch hashes flows (not only pairs) onto equal-cost paths: then each flow has a
/// path of its own.
pub(crate) fn paths_per_flow(nodes: &[Node]) -> bool {
    nodes.iter().any(|n| match n {
        Node::Switch(sw) => sw.route.keys_by_flow(),
        Node::Host(_) => false,
    })
}
