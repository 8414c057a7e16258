//! The test kit: a small network driven through the same dispatch as a run
//! ([`Network::dispatch`]), with test actions (inject a frame, queue a frame, change a rate)
//! scheduled at given times as `EventKind::Test` events, and a watcher that sees every event
//! before it is dispatched. So a test of an element's timing runs the real event loop, not a
//! copy of it.

use crate::cc::Scheme;
use crate::engine::EventKind;
use crate::flows::FlowTable;
use crate::net::frame::Frame;
use crate::net::host::Host;
use crate::net::port::Port;
use crate::net::{Ctx, Node};
use crate::rng::{stream, StreamKind};
use crate::sim::Network;
use crate::time::SimTime;

/// a, c -> s -> b: hosts a, b, c (nodes 0-2) and switch s (node 3), every link 10 Gb/s and 1 us,
/// no traffic of its own (tests inject frames).
pub(crate) const STAR: &str = r#"name = "star"
duration_s = 0.001
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[hosts]]
name = "c"
[[switches]]
name = "s"
[[links]]
ends = ["a", "s"]
rate_bps = 1e10
delay_s = 1e-6
[[links]]
ends = ["c", "s"]
rate_bps = 1e10
delay_s = 1e-6
[[links]]
ends = ["s", "b"]
rate_bps = 1e10
delay_s = 1e-6
"#;

/// An action a test schedules: it gets the network at its time.
type Action = Box<dyn FnOnce(&mut Network)>;

pub(crate) struct TestNet {
    pub(crate) net: Network,
    actions: Vec<Option<Action>>,
}

impl TestNet {
    pub(crate) fn new(nodes: Vec<Node>, scheme: Scheme) -> TestNet {
        TestNet {
            net: Network::new(nodes, FlowTable::default(), scheme, 64),
            actions: Vec::new(),
        }
    }

    /// Two hosts, "a" (node 0) and "b" (node 1), joined by a 10 Gb/s link of 1 us each way.
    pub(crate) fn two_hosts(scheme: Scheme) -> TestNet {
        let host = |id: u32, name: &str, peer: u32| {
            let port = Port::new(
                format!("{name}->peer"),
                peer,
                0,
                10e9,
                SimTime::from_micros(1),
            );
            let rng = stream(1, StreamKind::ReactionPoint, id as u64);
            Node::Host(Box::new(Host::new(id, name.into(), port, rng)))
        };
        TestNet::new(vec![host(0, "a", 1), host(1, "b", 0)], scheme)
    }

    /// What an element call needs besides the element.
    pub(crate) fn ctx(&mut self) -> (&mut Vec<Node>, &mut Ctx) {
        self.net.ctx()
    }

    /// Host `node` of the network.
    pub(crate) fn host(&mut self, node: usize) -> &mut Host {
        match &mut self.net.nodes[node] {
            Node::Host(h) => h,
            Node::Switch(_) => panic!("node {node} is a switch"),
        }
    }

    /// Runs `action` at time `at` (before any event scheduled later for that time).
    pub(crate) fn at(&mut self, at: SimTime, action: impl FnOnce(&mut Network) + 'static) {
        let n = self.actions.len() as u32;
        self.actions.push(Some(Box::new(action)));
        self.net.ctx.q.schedule(at, EventKind::Test(n));
    }

    /// At `at`, `frame` reaches node `node` on its port `port` from the link.
    pub(crate) fn deliver_at(&mut self, at: SimTime, node: u32, port: u16, frame: Frame) {
        self.at(at, move |net| {
            let (nodes, ctx) = net.ctx();
            let slot = ctx.frames.put(&frame);
            nodes[node as usize].receive(node, port, slot, ctx);
        });
    }

    /// Runs the network up to `end`, showing `watch` every event before it is dispatched.
    pub(crate) fn run_until(&mut self, end: SimTime, mut watch: impl FnMut(&Network, &EventKind)) {
        while let Some(ev) = self.net.ctx.q.pop_until(end) {
            watch(&self.net, &ev);
            match ev {
                EventKind::Test(n) => {
                    let action = self.actions[n as usize].take().expect("runs once");
                    action(&mut self.net);
                }
                element => self.net.dispatch(element),
            }
        }
        self.net.settle_ports(end);
    }
}
