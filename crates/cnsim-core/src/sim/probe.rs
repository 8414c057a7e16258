//! Periodic probes: every `probe_interval_s` each element reports its rates (from counter
//! differences over the interval) and instantaneous levels. With `[report] probe = "tiers"`
//! each element reports under its tier's entity (hosts; switches by hops from the nearest
//! host; a port as the pair of tiers it joins) and the summing recorder adds them up.

use rustc_hash::FxHashMap;

use crate::flows::FlowTable;
use crate::ids::{FlowId, NO_FLOW};
use crate::net::host::Host;
use crate::net::port::Port;
use crate::net::switch::Switch;
use crate::net::Node;
use crate::scenario::N_CLASSES;
use crate::stats::Recorder;
use crate::time::SimTime;

/// Counter values at the previous probe, per element.
#[derive(Default)]
pub(crate) struct ProbeState {
    node_entity: Vec<u32>,
    port_entity: Vec<Vec<u32>>,
    prev_host: Vec<[u64; 3]>,
    prev_port: Vec<Vec<(u64, SimTime)>>,
    /// Host names by host id, for naming rate limiters "host->dst".
    host_names: Vec<String>,
    /// PFC: time paused per class at the previous probe and the entity ("node->peer:c3"),
    /// per port; made when a port's class is first paused.
    prev_pfc: Vec<Vec<PfcProbe>>,
    /// Entities "node->peer:c3" of the class queues, per switch port; made on first use.
    class_entity: Vec<Vec<[Option<u32>; N_CLASSES]>>,
    /// Per transported flow with a congestion controller: its series' entity
    /// ("host->dst#flow") and its delivered bytes at the previous probe (`flow_rx_bps`).
    controllers: FxHashMap<FlowId, ControllerProbe>,
    /// Per-tier sums: a host's limiters and controllers report as the host's tier.
    tiers: bool,
}

/// Per class of one port: time paused at the previous probe, and the series' entity.
type PfcProbe = [(SimTime, Option<u32>); N_CLASSES];

/// A controlled flow's series entity and its delivered bytes at the previous probe.
struct ControllerProbe {
    entity: u32,
    delivered_bytes: u64,
}

impl ProbeState {
    /// The probes of `nodes`: each element its own entity, or with `tiers` its tier's (the
    /// recorder then sums, `Recorder::summing`).
    pub(crate) fn new(nodes: &[Node], rec: &mut Recorder, tiers: bool) -> ProbeState {
        let names: Vec<String> = if tiers {
            tier_names(nodes)
        } else {
            nodes.iter().map(|n| n.name().to_string()).collect()
        };
        let port_name = |i: usize, p: &Port| match tiers {
            true => format!("{}->{}", names[i], names[p.peer_node as usize]),
            false => p.name.clone(),
        };
        ProbeState {
            node_entity: names.iter().map(|n| rec.entity(n)).collect(),
            port_entity: (nodes.iter().enumerate())
                .map(|(i, n)| {
                    n.ports()
                        .iter()
                        .map(|p| rec.entity(&port_name(i, p)))
                        .collect()
                })
                .collect(),
            prev_host: vec![[0; 3]; nodes.len()],
            prev_port: nodes
                .iter()
                .map(|n| vec![(0, SimTime::ZERO); n.ports().len()])
                .collect(),
            host_names: nodes
                .iter()
                .filter(|n| matches!(n, Node::Host(_)))
                .map(|n| n.name().to_string())
                .collect(),
            prev_pfc: nodes
                .iter()
                .map(|n| vec![[(SimTime::ZERO, None); N_CLASSES]; n.ports().len()])
                .collect(),
            class_entity: nodes
                .iter()
                .map(|n| vec![[None; N_CLASSES]; n.ports().len()])
                .collect(),
            controllers: FxHashMap::default(),
            tiers,
        }
    }
}

/// Each node's tier: `hosts`, or `tierN` for a switch N hops from the nearest host (a leaf
/// or ToR is tier1; a fabric's spines tier2 or tier3). Breadth-first from every host over the
/// links; a switch no host reaches is `unreached`.
fn tier_names(nodes: &[Node]) -> Vec<String> {
    let mut hops: Vec<Option<u32>> = vec![None; nodes.len()];
    let mut frontier: Vec<usize> = (0..nodes.len())
        .filter(|&i| matches!(nodes[i], Node::Host(_)))
        .collect();
    for &i in &frontier {
        hops[i] = Some(0);
    }
    let mut depth = 0;
    while !frontier.is_empty() {
        depth += 1;
        let mut next = Vec::new();
        for i in frontier {
            for p in nodes[i].ports() {
                let peer = p.peer_node as usize;
                if hops[peer].is_none() {
                    hops[peer] = Some(depth);
                    next.push(peer);
                }
            }
        }
        frontier = next;
    }
    (hops.iter().zip(nodes))
        .map(|(h, n)| match (h, n) {
            (_, Node::Host(_)) => "hosts".to_string(),
            (Some(d), _) => format!("tier{d}"),
            (None, _) => "unreached".to_string(),
        })
        .collect()
}

pub(crate) fn sample(
    st: &mut ProbeState,
    nodes: &mut [Node],
    flows: &FlowTable,
    rec: &mut Recorder,
    now: SimTime,
    interval: SimTime,
) {
    rec.begin_sample(now.as_secs_f64());
    let per_s = 1.0 / interval.as_secs_f64();
    for (i, node) in nodes.iter_mut().enumerate() {
        let entity = st.node_entity[i];
        match node {
            Node::Host(h) => {
                let tier = st.tiers.then_some(entity);
                let prev = &mut st.prev_host[i];
                sample_host(h, entity, prev, &st.host_names, rec, per_s, st.tiers);
                let names = &st.host_names;
                sample_controllers(h, tier, &mut st.controllers, names, flows, rec, per_s);
            }
            Node::Switch(s) => sample_switch(s, entity, rec),
        }
        for (j, port) in node.ports().iter().enumerate() {
            let is_switch = matches!(node, Node::Switch(_));
            sample_port(
                port,
                st.port_entity[i][j],
                &mut st.prev_port[i][j],
                is_switch,
                rec,
                now,
                interval,
            );
            let port_entity = st.port_entity[i][j];
            sample_pfc(
                port,
                port_entity,
                &mut st.prev_pfc[i][j],
                rec,
                now,
                interval,
            );
            if is_switch {
                sample_classes(port, port_entity, &mut st.class_entity[i][j], rec);
            }
        }
        if let Node::Switch(s) = node {
            for (j, cp) in s.cps.iter().enumerate() {
                if let Some(cp) = cp {
                    rec.record("cp_fb", st.port_entity[i][j], cp.last_fb());
                    rec.record("cp_messages", st.port_entity[i][j], cp.messages as f64);
                }
            }
        }
    }
    rec.end_sample();
}

fn sample_host(
    h: &mut Host,
    entity: u32,
    prev: &mut [u64; 3],
    host_names: &[String],
    rec: &mut Recorder,
    per_s: f64,
    tiers: bool,
) {
    let c = h.counters;
    let now = [c.generated_bytes, c.tx_bytes, c.rx_bytes];
    for (k, metric) in ["host_offered_bps", "host_tx_bps", "host_rx_bps"]
        .iter()
        .enumerate()
    {
        rec.record(metric, entity, (now[k] - prev[k]) as f64 * 8.0 * per_s);
    }
    *prev = now;
    rec.record("nic_queue_bytes", entity, h.nic_bytes as f64);
    rec.record("rx_queue_bytes", entity, h.rx.bytes as f64);
    rec.record("dropped_frames", entity, h.counters.dropped_frames as f64);
    // Limiters in destination order (then queue pair), so entity ids do not depend on VOQ
    // slot reuse. A queue pair's limiter is "host->dst#flow".
    let mut limited: Vec<(u32, u32, usize)> = (h.voqs.iter().enumerate())
        .filter(|(_, v)| v.limiter.is_some())
        .map(|(slot, v)| (v.dst, v.qp, slot))
        .collect();
    limited.sort_unstable();
    for (dst, qp, slot) in limited {
        let voq = &mut h.voqs[slot];
        let limiter = voq.limiter.as_ref().expect("filtered");
        let e = *voq.probe_entity.get_or_insert_with(|| {
            if tiers {
                return entity;
            }
            let pair = format!("{}->{}", h.name, host_names[dst as usize]);
            match qp {
                NO_FLOW => rec.entity(&pair),
                flow => rec.entity(&format!("{pair}#{flow}")),
            }
        });
        rec.record("rp_rate_bps", e, limiter.rate_bps());
        if let Some(tr) = limiter.target_rate_bps() {
            rec.record("rp_target_bps", e, tr);
        }
        if let Some(fb) = limiter.feedback() {
            rec.record("rp_feedback", e, fb);
        }
    }
}

/// The window and pacing rate of each transported flow's congestion controller (a scheme's
/// sender hook: DCTCP, TIMELY, HPCC...), named as its queue pair's limiter, `host->dst#flow`,
/// and the flow's delivered data rate over the interval (`flow_rx_bps`: the bytes its
/// receiver accepted, whatever the scheme; the rate the steady metrics use without limiters).
fn sample_controllers(
    h: &Host,
    tier: Option<u32>,
    controllers: &mut FxHashMap<FlowId, ControllerProbe>,
    host_names: &[String],
    flows: &FlowTable,
    rec: &mut Recorder,
    per_s: f64,
) {
    let Some(tp) = h.transports.as_deref() else {
        return;
    };
    for (flow, dst, window_bytes, rate_bps) in tp.controllers() {
        let probe = controllers.entry(flow).or_insert_with(|| ControllerProbe {
            entity: tier.unwrap_or_else(|| {
                rec.entity(&format!("{}->{}#{flow}", h.name, host_names[dst as usize]))
            }),
            // A flow first seen here started within the interval: it delivered from 0.
            delivered_bytes: 0,
        });
        let e = probe.entity;
        if let Some(w) = window_bytes {
            rec.record("cc_window_bytes", e, w);
        }
        if let Some(r) = rate_bps {
            rec.record("cc_rate_bps", e, r);
        }
        let delivered = flows.flows[flow as usize].delivered_bytes;
        let bytes = delivered - std::mem::replace(&mut probe.delivered_bytes, delivered);
        rec.record("flow_rx_bps", e, bytes as f64 * 8.0 * per_s);
    }
}

fn sample_switch(s: &Switch, entity: u32, rec: &mut Recorder) {
    rec.record("switch_memory_bytes", entity, s.memory_bytes as f64);
    rec.record("dropped_frames", entity, s.dropped_frames as f64);
}

fn sample_port(
    p: &Port,
    entity: u32,
    prev: &mut (u64, SimTime),
    is_switch: bool,
    rec: &mut Recorder,
    now: SimTime,
    interval: SimTime,
) {
    let paused = p.pause.paused_time(now);
    rec.record(
        "paused_frac",
        entity,
        (paused - prev.1).as_secs_f64() / interval.as_secs_f64(),
    );
    if is_switch {
        let bits = (p.stats.data_tx_bytes - prev.0) as f64 * 8.0;
        rec.record("port_tx_bps", entity, bits / interval.as_secs_f64());
        rec.record("queue_bytes", entity, p.data_bytes as f64);
    }
    *prev = (p.stats.data_tx_bytes, paused);
}

/// `pfc_paused_frac` per (port, class) once the class has been paused there, named after the
/// port's entity (`port:c3`).
fn sample_pfc(
    p: &Port,
    port_entity: u32,
    prev: &mut PfcProbe,
    rec: &mut Recorder,
    now: SimTime,
    interval: SimTime,
) {
    let Some(state) = &p.pfc else {
        return;
    };
    for (c, (prev_paused, entity)) in prev.iter_mut().enumerate() {
        let paused = state.lane(c).paused_time(now);
        if paused == SimTime::ZERO {
            continue;
        }
        let e = *entity.get_or_insert_with(|| class_entity(rec, port_entity, c));
        let frac = (paused - *prev_paused).as_secs_f64() / interval.as_secs_f64();
        rec.record("pfc_paused_frac", e, frac);
        *prev_paused = paused;
    }
}

/// `class_queue_bytes` per class of a switch port, once the port has carried a class other
/// than 0 (a port whose data is all class 0 has only `queue_bytes`).
fn sample_classes(
    p: &Port,
    port_entity: u32,
    entities: &mut [Option<u32>; N_CLASSES],
    rec: &mut Recorder,
) {
    let used = p.data_q.used();
    if used <= 1 {
        return;
    }
    for (c, entity) in entities.iter_mut().enumerate() {
        if used & (1 << c) == 0 {
            continue;
        }
        let e = *entity.get_or_insert_with(|| class_entity(rec, port_entity, c));
        rec.record("class_queue_bytes", e, p.data_q.class_bytes(c) as f64);
    }
}

/// The entity of class `c` at a port: `port:c3` (with tiers, `tier1->tier2:c3`).
fn class_entity(rec: &mut Recorder, port_entity: u32, c: usize) -> u32 {
    let name = format!("{}:c{c}", rec.name(port_entity));
    rec.entity(&name)
}
