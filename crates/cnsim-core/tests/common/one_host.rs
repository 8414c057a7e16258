//! A one-node harness driving a host through the public element API: frames queued at t = 0,
//! PAUSE, PFC or control frames injected at given times, and the time each frame's last bit
//! left the host. Used by the PAUSE and PFC timing tests.

use cnsim_core::cc::Scheme;
use cnsim_core::engine::{EventKind, EventQueue};
use cnsim_core::flows::FlowTable;
use cnsim_core::net::frame::{Frame, HostId, Payload};
use cnsim_core::net::host::Host;
use cnsim_core::net::port::Port;
use cnsim_core::net::{Ctx, Node};
use cnsim_core::rng::{stream, StreamKind};
use cnsim_core::stats::Counters;
use cnsim_core::time::SimTime;

/// What reaches the host at an injection time.
pub enum Inject {
    /// An 802.3x PAUSE frame with this many quanta.
    Pause(u16),
    /// A PFC frame for one class.
    Pfc { class: u8, quanta: u16 },
    /// A control frame is queued on the host's port (control frames are never paused).
    Control,
}

/// Host "a" (node 0) with a 10 Gb/s, 1 us link.
pub struct OneHost {
    q: EventQueue,
    counters: Counters,
    flows: FlowTable,
    scheme: Scheme,
    pub node: Node,
    /// Due last first.
    injections: Vec<(SimTime, Inject)>,
    /// (time the last bit left, was it data, class) of every frame the host sent.
    pub sent: Vec<(SimTime, bool, u8)>,
}

impl OneHost {
    /// `frames`: (destination host, class) of each 1500 B data frame, queued at t = 0 in order.
    pub fn new(frames: &[(HostId, u8)], injections: Vec<(SimTime, Inject)>) -> OneHost {
        let port = Port::new("a->sw".into(), 1, 0, 10e9, SimTime::from_secs_f64(1e-6));
        let host = Host::new(0, "a".into(), port, stream(1, StreamKind::ReactionPoint, 0));
        let mut h = OneHost {
            q: EventQueue::new(),
            counters: Counters::default(),
            flows: FlowTable::default(),
            scheme: Scheme::None,
            node: Node::Host(Box::new(host)),
            injections,
            sent: Vec::new(),
        };
        for (t, _) in &h.injections {
            // The harness has no probes: a Probe event means "the next injection is due".
            h.q.schedule(*t, EventKind::Probe);
        }
        h.injections.reverse();
        for &(dst, class) in frames {
            let mut frame = Frame::data(0, dst, 1500, SimTime::ZERO);
            frame.priority = class;
            let mut ctx = Ctx {
                q: &mut h.q,
                counters: &mut h.counters,
                flows: &mut h.flows,
                scheme: &h.scheme,
                control_bytes: 64,
            };
            let Node::Host(host) = &mut h.node else {
                unreachable!()
            };
            host.enqueue_generated(0, frame, &mut ctx);
        }
        h
    }

    pub fn run(&mut self, end: SimTime) {
        while let Some(ev) = self.q.pop_until(end) {
            let now = self.q.now();
            let mut ctx = Ctx {
                q: &mut self.q,
                counters: &mut self.counters,
                flows: &mut self.flows,
                scheme: &self.scheme,
                control_bytes: 64,
            };
            match ev {
                EventKind::TxDone { node, port } => {
                    let p = self.node.port_mut(port);
                    let frame = *p.sending().expect("TxDone while sending");
                    self.sent.push((now, frame.is_data(), frame.priority));
                    if let Some(arrival) = p.end_tx(now) {
                        ctx.q.schedule(arrival, EventKind::Arrive { node, port });
                    }
                    self.node.try_transmit(node, port, &mut ctx);
                }
                EventKind::Arrive { node, port } => {
                    // Hosts hand whole frames to the link (no TxDone event): a frame's
                    // transmission ended one link delay before it arrives.
                    let p = self.node.port_mut(port);
                    let (frame, next) = p.pop_arrival();
                    let done = now - p.delay;
                    self.sent.push((done, frame.is_data(), frame.priority));
                    if let Some(next) = next {
                        ctx.q.schedule(next, EventKind::Arrive { node, port });
                    }
                }
                EventKind::PauseExpire { node, port, lane } => {
                    self.node.on_pause_expire(node, port, lane, &mut ctx)
                }
                EventKind::HostWake { node, generation } => {
                    if let Node::Host(h) = &mut self.node {
                        h.on_wake(node, generation, &mut ctx);
                    }
                }
                EventKind::Probe => {
                    let (_, inject) = self.injections.pop().expect("injection");
                    let payload = match inject {
                        Inject::Pause(quanta) => Payload::Pause { quanta },
                        Inject::Pfc { class, quanta } => Payload::Pfc { class, quanta },
                        Inject::Control => {
                            let c = Payload::Pause { quanta: 7 };
                            let c = Frame::control(c, 9, 9, 9, 64, now);
                            self.node.port_mut(0).ctrl_q.push_back(c);
                            self.node.try_transmit(0, 0, &mut ctx);
                            continue;
                        }
                    };
                    let frame = Frame::control(payload, 9, 9, 9, 64, now);
                    self.node.receive(0, 0, frame, &mut ctx);
                }
                other => panic!("unexpected event {other:?}"),
            }
        }
    }

    /// When each data frame of `class` (any class if None) finished leaving the host.
    pub fn data_done(&self, class: Option<u8>) -> Vec<SimTime> {
        (self.sent.iter())
            .filter(|&&(_, data, c)| data && class.is_none_or(|k| k == c))
            .map(|&(t, _, _)| t)
            .collect()
    }
}
