//! Builds a runnable network from a validated scenario: nodes and ports, routes, congestion
//! points, sources and scheduled rate changes. Every step is linear in the scenario's size
//! (names are looked up in hash maps, routes searched once per edge switch, `routes.rs`), but
//! for filling the forwarding tables, one entry per (switch, host).

mod headroom;
mod link_load;
mod routes;

use std::collections::HashMap;

use crate::cc::{CongestionPoint, NotificationPoint, Scheme};
use crate::error::ConfigError;
use crate::flows::OPEN_PACKETS;
use crate::net::frame::NO_SEQ;
use crate::net::host::{Host, ReceiverPfc, Transports};
use crate::net::link_loss::LinkLoss;
use crate::net::port::Port;
use crate::net::switch::{BufferLimits, Switch};
use crate::net::switch_pfc::SwitchPfc;
use crate::net::Node;
use crate::rng::{stream, StreamKind};
use crate::scenario::{self, DstSpec, Scenario, TrafficKind, N_CLASSES};
use crate::time::{serialization_time, SimTime};
use crate::traffic::flows::{workload, AppWrites, FlowRow, Workload};
use crate::traffic::{Destinations, Pattern, Source};
use routes::{compute_routes, Reach};

/// What the flow workload asked for and gave (its rows go to the flow table).
pub(crate) type WorkloadFacts = Workload;

/// What a scheduled rate change applies to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RateTarget {
    Port { node: u32, port: u16 },
    Receiver { node: u32 },
}

pub(crate) struct Built {
    pub(crate) nodes: Vec<Node>,
    pub(crate) sources: Vec<Source>,
    pub(crate) rate_changes: Vec<(SimTime, RateTarget, f64)>,
    pub(crate) scheme: Scheme,
    pub(crate) flows: Vec<FlowRow>,
    pub(crate) workload: WorkloadFacts,
}

fn bytes(v: Option<f64>) -> Option<u64> {
    v.map(|b| b.round() as u64)
}

pub(crate) fn build(sc: &Scenario) -> Result<Built, ConfigError> {
    let n_hosts = sc.hosts.len();
    let index: HashMap<&str, u32> = sc
        .hosts
        .iter()
        .map(|h| h.name.as_str())
        .chain(sc.switches.iter().map(|s| s.name.as_str()))
        .enumerate()
        .map(|(i, n)| (n, i as u32))
        .collect();
    let scheme = sc.congestion.resolve();
    let mut ports: Vec<Vec<Port>> = (0..n_hosts + sc.switches.len())
        .map(|_| Vec::new())
        .collect();
    let mut rate_changes = Vec::new();
    let latency = ingress_latencies(sc);
    for (li, link) in sc.links.iter().enumerate() {
        attach_link(
            sc,
            li,
            link,
            &index,
            &latency,
            &mut ports,
            &mut rate_changes,
        );
    }
    // Per switch, its ports' PFC headrooms (read from the ports before they go to their nodes).
    let mut headrooms = (sc.pfc.as_ref())
        .map(|p| headroom::port_headrooms(sc, p, &ports))
        .unwrap_or_default()
        .into_iter();
    let host_rx_headrooms = (sc.pfc.as_ref().filter(|p| p.host_rx))
        .map(|p| headroom::host_rx_headrooms(sc, p, &ports))
        .unwrap_or_default();
    let mut nodes = Vec::with_capacity(ports.len());
    let mut port_iter = ports.into_iter();
    for (i, h) in sc.hosts.iter().enumerate() {
        let port = port_iter.next().expect("one port list per node").remove(0);
        let mut host = Host::new(
            i as u32,
            h.name.clone(),
            port,
            stream(sc.seed, StreamKind::ReactionPoint, i as u64),
        );
        host.flow_service = sc.model.flow_service;
        host.np = NotificationPoint::new(&scheme);
        host.nic_limit_bytes = bytes(h.nic_buffer_bytes);
        host.rx.rate_bps = h.rx_rate_bps;
        host.rx.limit_bytes = bytes(h.rx_buffer_bytes);
        host.rx.pause = h.rx_pause.clone();
        if let Some(pfc) = sc.pfc.as_ref().filter(|p| p.host_rx) {
            host.rx.pfc = Some(Box::new(ReceiverPfc {
                lossless_mask: pfc.lossless_mask(),
                xoff_bytes: pfc.xoff_bytes.round() as u64,
                xon_bytes: pfc.xon_bytes.round() as u64,
                quanta: pfc.quanta,
                class_bytes: [0; N_CLASSES],
                arriving_after_xoff_bytes: host_rx_headrooms[i],
            }));
        }
        for step in &h.rx_schedule {
            rate_changes.push((
                SimTime::from_secs_f64(step.at_s),
                RateTarget::Receiver { node: i as u32 },
                step.rate_bps,
            ));
        }
        nodes.push(Node::Host(Box::new(host)));
    }
    let mut cpid = 0u32;
    for s in &sc.switches {
        let limits = BufferLimits {
            shared_bytes: bytes(s.shared_buffer_bytes),
            shared_alpha: s.shared_buffer_alpha,
            output_bytes: bytes(s.output_buffer_bytes),
            input_bytes: bytes(s.input_buffer_bytes),
        };
        let mut sw = Switch::new(s.name.clone(), limits, s.pause.filter(|p| p.enabled));
        sw.ports = port_iter.next().expect("one port list per node");
        sw.finish_ports();
        if let Some(pfc) = &sc.pfc {
            let quanta: [u32; N_CLASSES] = std::array::from_fn(|c| pfc.dwrr_quantum_bytes[c]);
            for port in sw.ports.iter_mut() {
                port.data_q.set_scheduler(pfc.scheduler, quanta);
            }
            let headroom = headrooms.next().expect("one headroom list per switch");
            sw.pfc = Some(Box::new(SwitchPfc::new(pfc, headroom, limits.shared_bytes)));
        }
        if s.cp {
            sw.cps.resize_with(sw.ports.len(), || None);
            for (cp, port) in sw.cps.iter_mut().zip(&sw.ports) {
                *cp = CongestionPoint::new(
                    &scheme,
                    cpid,
                    port.line_rate_bps,
                    stream(sc.seed, StreamKind::CongestionPoint, cpid as u64),
                );
                cpid += 1;
            }
            if sw.cps.iter().all(Option::is_none) {
                sw.cps.clear();
            }
        }
        nodes.push(Node::Switch(Box::new(sw)));
    }
    let reach = compute_routes(&mut nodes, n_hosts, &sc.routing, sc.seed);
    // From here on the hosts' loads: `busiest_link` entries' scaled (`link_load.rs`).
    let (scaled, load_scaling) = link_load::host_loads(sc, &index, &nodes, &reach)?;
    if let Some(scaled) = &scaled {
        // The `[limits]` caps, checked before the build without these entries' traffic (their
        // hosts' load was not known), now with it, before the workload is made.
        scaled.validate_resources()?;
    }
    let sc = scaled.as_ref().unwrap_or(sc);
    let (sources, long_flows) = build_sources(sc, &index, &nodes, &reach)?;
    let line_rates: Vec<f64> = nodes[..n_hosts]
        .iter()
        .map(|n| n.ports()[0].line_rate_bps)
        .collect();
    let mut workload = workload(sc, &index, &line_rates)?;
    workload.load_scaling = load_scaling;
    if !long_flows.is_empty() {
        // Long flows take their ids in start order with the others (a stable sort: at equal
        // start times the flow entries' flows first, then the long flows in entry order).
        let end_s = sc.duration_s;
        (workload.flows).extend(long_flows.into_iter().filter(|f| f.start_s < end_s));
        (workload.flows).sort_by(|a, b| a.start_s.partial_cmp(&b.start_s).expect("finite"));
    }
    check_flow_routes(sc, &nodes, &workload.flows)?;
    let flows = std::mem::take(&mut workload.flows);
    attach_transports(sc, &mut nodes, &flows)?;
    rate_changes.sort_by_key(|(t, _, _)| *t);
    Ok(Built {
        nodes,
        sources,
        rate_changes,
        scheme,
        flows,
        workload,
    })
}

/// Per node (hosts, then switches): the delay added to every frame arriving at it, a switch's
/// forwarding latency or a host's response delay.
fn ingress_latencies(sc: &Scenario) -> Vec<f64> {
    (sc.hosts.iter().map(|h| h.response_delay_s))
        .chain(sc.switches.iter().map(|s| s.latency_s))
        .collect()
}

fn attach_link(
    sc: &Scenario,
    link_index: usize,
    link: &scenario::LinkSpec,
    index: &HashMap<&str, u32>,
    latency: &[f64],
    ports: &mut [Vec<Port>],
    rate_changes: &mut Vec<(SimTime, RateTarget, f64)>,
) {
    let [a, b] = [&link.ends[0], &link.ends[1]];
    let (ia, ib) = (index[a.as_str()], index[b.as_str()]);
    let (pa, pb) = (
        ports[ia as usize].len() as u16,
        ports[ib as usize].len() as u16,
    );
    for (direction, (from, to, i_from, i_to, p_to)) in [(a, b, ia, ib, pb), (b, a, ib, ia, pa)]
        .into_iter()
        .enumerate()
    {
        let delay =
            SimTime::from_secs_f64(link.delay_s + link.delay_line_s + latency[i_to as usize]);
        let mut port = Port::new(format!("{from}->{to}"), i_to, p_to, link.rate_bps, delay);
        port.wire_overhead_bytes = sc.model.wire_overhead_bytes;
        if link.loss_rate > 0.0 {
            let rng = stream(
                sc.seed,
                StreamKind::LinkLoss,
                (2 * link_index + direction) as u64,
            );
            port.loss = Some(Box::new(LinkLoss::new(link.loss_rate, rng)));
        }
        let p_from = ports[i_from as usize].len() as u16;
        ports[i_from as usize].push(port);
        for step in link.schedule.iter().filter(|s| &s.from == from) {
            let target = RateTarget::Port {
                node: i_from,
                port: p_from,
            };
            rate_changes.push((SimTime::from_secs_f64(step.at_s), target, step.rate_bps));
        }
    }
}

/// With transported flows: every host gets its transport room, and the `[transport] drop`
/// list goes to the sending hosts' links (each entry checked against the workload).
fn attach_transports(
    sc: &Scenario,
    nodes: &mut [Node],
    flows: &[FlowRow],
) -> Result<(), ConfigError> {
    let end = SimTime::from_secs_f64(sc.duration_s);
    for (i, f) in flows.iter().enumerate() {
        let packets = flow_packets(f, nodes, end);
        if !f.transport.is_none() && packets >= NO_SEQ as u64 {
            return Err(ConfigError::field(
                "traffic",
                format!("flow {i} has {packets} packets: a transported flow has under 2^32 - 1"),
            ));
        }
    }
    for (i, d) in sc.transport.drop.iter().enumerate() {
        let path = format!("transport.drop[{i}]");
        let Some(f) = flows
            .get(d.flow as usize)
            .filter(|f| !f.transport.is_none())
        else {
            return Err(ConfigError::field(
                format!("{path}.flow"),
                format!("no transported flow with id {} in the workload", d.flow),
            ));
        };
        if d.psn as u64 >= flow_packets(f, nodes, end) {
            return Err(ConfigError::field(
                format!("{path}.psn"),
                format!("flow {} has no packet {}", d.flow, d.psn),
            ));
        }
        let port = nodes[f.src as usize].port_mut(0);
        let loss = port.loss.get_or_insert_with(|| {
            // The list alone draws nothing: a rate of 0 never consults the stream.
            Box::new(LinkLoss::new(
                0.0,
                stream(sc.seed, StreamKind::LinkLoss, u64::MAX),
            ))
        });
        loss.drop_once(d.flow, d.psn);
    }
    if flows.iter().all(|f| f.transport.is_none()) {
        return Ok(());
    }
    let roce = sc.transport.roce.unwrap_or_default();
    let tcp = sc.transport.tcp.unwrap_or_default();
    let irn = sc.transport.irn.unwrap_or_default();
    for node in nodes.iter_mut() {
        if let Node::Host(h) = node {
            let transports = Transports::new(roce).with_tcp(tcp).with_irn(irn);
            h.transports = Some(Box::new(transports));
        }
    }
    Ok(())
}

/// The packets flow `f` has, or for a long flow can have by the run's `end` (the bound its
/// entry is checked against, `long_flow`).
fn flow_packets(f: &FlowRow, nodes: &[Node], end: SimTime) -> u64 {
    match f.writes.as_deref() {
        Some(w) => {
            let line = nodes[f.src as usize].ports()[0].line_rate_bps;
            w.max_packets(SimTime::from_secs_f64(f.start_s), end, f.frame_bytes, line)
        }
        None => f.size_bytes.div_ceil(f.frame_bytes as u64),
    }
}

/// True if frames from host `src` can reach host `dst`. Routes come from a BFS towards each
/// host, so every hop of a route gets closer: a route at the first switch is a whole path.
fn reachable(nodes: &[Node], src: u32, dst: u32) -> bool {
    let first = nodes[src as usize].ports()[0].peer_node;
    match &nodes[first as usize] {
        Node::Host(_) => first == dst,
        Node::Switch(sw) => sw.route.reaches(dst as usize),
    }
}

fn check_flow_routes(sc: &Scenario, nodes: &[Node], flows: &[FlowRow]) -> Result<(), ConfigError> {
    match flows.iter().find(|f| !reachable(nodes, f.src, f.dst)) {
        Some(f) => Err(ConfigError::field(
            "traffic",
            format!(
                "a flow has no route from '{}' to '{}'",
                sc.hosts[f.src as usize].name, sc.hosts[f.dst as usize].name
            ),
        )),
        None => Ok(()),
    }
}

/// The frame sources of the `bernoulli`, `cbr` and `saturate` entries, and the long flows of
/// the `cbr` and `saturate` entries over a transport (one per sending host, in entry order).
fn build_sources(
    sc: &Scenario,
    index: &HashMap<&str, u32>,
    nodes: &[Node],
    reach: &Reach,
) -> Result<(Vec<Source>, Vec<FlowRow>), ConfigError> {
    let mut sources = Vec::new();
    let mut long_flows = Vec::new();
    let n_hosts = sc.hosts.len() as u32;
    for (ti, t) in sc.traffic.iter().enumerate() {
        if matches!(
            t.kind,
            TrafficKind::Flows | TrafficKind::FlowTrace | TrafficKind::Incast
        ) {
            continue;
        }
        for host_name in &t.hosts {
            let host = index[host_name.as_str()];
            let dst = frame_destinations(t, index, host, n_hosts);
            let dst = check_destinations(sc, ti, t, nodes, reach, host_name, host, dst)?;
            if !t.transport.is_none() {
                long_flows.push(long_flow(sc, ti, t, nodes, host, &dst)?);
                continue;
            }
            let rng = stream(
                t.seed.unwrap_or(sc.seed),
                StreamKind::Traffic,
                sources.len() as u64,
            );
            let line_rate = nodes[host as usize].ports()[0].line_rate_bps;
            let start = SimTime::from_secs_f64(t.start_s);
            let stop = t.stop_s.map_or(SimTime::MAX, SimTime::from_secs_f64);
            let mut source = match t.kind {
                TrafficKind::Bernoulli => Source::bernoulli(
                    host,
                    host,
                    dst,
                    t.load.expect("validated"),
                    line_rate,
                    t.frame_bytes,
                    start,
                    stop,
                    rng,
                ),
                TrafficKind::Cbr => {
                    let interval =
                        serialization_time(t.frame_bytes as u64, t.rate_bps.expect("validated"));
                    Source {
                        host,
                        node: host,
                        dst,
                        pattern: Pattern::Cbr { interval },
                        frame_bytes: t.frame_bytes,
                        start,
                        stop,
                        rng,
                        active: false,
                        priority: 0,
                    }
                }
                TrafficKind::Saturate => Source {
                    host,
                    node: host,
                    dst,
                    pattern: Pattern::Saturate,
                    frame_bytes: t.frame_bytes,
                    start,
                    stop,
                    rng,
                    active: false,
                    priority: 0,
                },
                TrafficKind::Flows | TrafficKind::FlowTrace | TrafficKind::Incast => {
                    unreachable!("skipped above")
                }
            };
            source.priority = t.priority;
            sources.push(source);
        }
    }
    Ok((sources, long_flows))
}

/// The long flow of a `cbr` or `saturate` entry's sending host over a transport, to its one
/// destination (`check_destinations`): its application writes it as the run goes
/// (`net/host/transport/app.rs`). A `cbr` application's first packet is written at the
/// start; a saturating one has written nothing before its sender takes a packet.
fn long_flow(
    sc: &Scenario,
    ti: usize,
    t: &scenario::TrafficSpec,
    nodes: &[Node],
    host: u32,
    dst: &Destinations,
) -> Result<FlowRow, ConfigError> {
    let Destinations::Fixed(dst) = *dst else {
        unreachable!("check_destinations: one destination with a transport")
    };
    let line_rate = nodes[host as usize].ports()[0].line_rate_bps;
    let interval = (t.kind == TrafficKind::Cbr)
        .then(|| serialization_time(t.frame_bytes as u64, t.rate_bps.expect("validated")));
    let writes = AppWrites {
        interval,
        stop: t.stop_s.map_or(SimTime::MAX, SimTime::from_secs_f64),
    };
    let start = SimTime::from_secs_f64(t.start_s);
    let end = SimTime::from_secs_f64(sc.duration_s);
    let packets = writes.max_packets(start, end, t.frame_bytes, line_rate);
    if packets >= OPEN_PACKETS as u64 {
        return Err(ConfigError::field(
            format!("traffic[{ti}].transport"),
            format!(
                "a long flow over a transport has under 2^32 - 2 packets; this one can write \
                 {packets} packets of {} B by its stop_s or the run's end: shorten it or raise \
                 frame_bytes",
                t.frame_bytes
            ),
        ));
    }
    Ok(FlowRow {
        start_s: t.start_s,
        src: host,
        dst,
        size_bytes: if interval.is_some() {
            t.frame_bytes as u64
        } else {
            0
        },
        priority: t.priority,
        frame_bytes: t.frame_bytes,
        transport: t.transport,
        writes: Some(Box::new(writes)),
    })
}

/// Where a frame-level source of entry `t` on `host` sends (before `check_destinations`).
fn frame_destinations(
    t: &scenario::TrafficSpec,
    index: &HashMap<&str, u32>,
    host: u32,
    n_hosts: u32,
) -> Destinations {
    let others = |names: &mut dyn Iterator<Item = &String>| {
        let list = names.map(|d| index[d.as_str()]).filter(|&h| h != host);
        Destinations::UniformOver(list.collect())
    };
    match t.dst.as_ref().expect("validated") {
        DstSpec::One(d) if d == "uniform" => {
            Destinations::uniform(host, n_hosts, t.locality.as_ref())
        }
        DstSpec::One(d) => others(&mut std::iter::once(d)),
        DstSpec::Many(list) => others(&mut list.iter()),
        DstSpec::Part(_) => unreachable!("validated: selections are expanded"),
    }
}

/// Checks a frame-level source's destinations (one other than itself, all reachable; exactly
/// one for a saturating source) and returns them with a single one made `Fixed` (no draws).
/// "All other hosts" is checked from the routes' reach in O(1), not host by host.
#[allow(clippy::too_many_arguments)]
fn check_destinations(
    sc: &Scenario,
    ti: usize,
    t: &scenario::TrafficSpec,
    nodes: &[Node],
    reach: &Reach,
    host_name: &str,
    host: u32,
    dst: Destinations,
) -> Result<Destinations, ConfigError> {
    let field = format!("traffic[{ti}].dst");
    let (first, count) = match &dst {
        Destinations::Fixed(d) => (Some(*d), 1),
        Destinations::UniformOver(list) => (list.first().copied(), list.len()),
        Destinations::AllOthers { me, n_hosts } | Destinations::Local { me, n_hosts, .. } => {
            let first = (*me != 0).then_some(0).or((*n_hosts > 1).then_some(1));
            (first, *n_hosts as usize - 1)
        }
    };
    let Some(first) = first else {
        return Err(ConfigError::field(
            field,
            format!("host '{host_name}' has no destination other than itself"),
        ));
    };
    let unreachable = match &dst {
        Destinations::Fixed(d) => (!reachable(nodes, host, *d)).then_some(*d),
        Destinations::UniformOver(list) => {
            list.iter().copied().find(|&d| !reachable(nodes, host, d))
        }
        Destinations::AllOthers { me, n_hosts } | Destinations::Local { me, n_hosts, .. }
            if !reach.all_from(nodes, *me) =>
        {
            (0..*n_hosts).find(|&d| d != *me && !reachable(nodes, host, d))
        }
        Destinations::AllOthers { .. } | Destinations::Local { .. } => None,
    };
    if let Some(d) = unreachable {
        return Err(ConfigError::field(
            field,
            format!(
                "no route from '{host_name}' to '{}'",
                sc.hosts[d as usize].name
            ),
        ));
    }
    if t.kind == TrafficKind::Saturate && count != 1 {
        return Err(ConfigError::field(
            field,
            "a saturating source needs exactly one destination",
        ));
    }
    if !t.transport.is_none() && count != 1 {
        return Err(ConfigError::field(
            field,
            format!(
                "a cbr source over a transport is one long flow to one destination; host \
                 '{host_name}' has {count} (several destinations per source are not supported \
                 with a transport: give one host, or one entry per destination)"
            ),
        ));
    }
    Ok(if count == 1 {
        Destinations::Fixed(first)
    } else {
        dst
    })
}
