//! PAUSE (IEEE 802.3x) and PFC (IEEE 802.1Qbb) at a host, to the nanosecond: the host finishes
//! the frame in progress, then holds data (all of it, or the paused class's) until the timer
//! ends or XON arrives; a new pause replaces the timer; control frames are never paused.
//! Driven through the test kit: host "a" sends to host "b" over 10 Gb/s, 1 us links.
//!
//! Units (protocols.md section 0): 1 bit at 10 Gb/s = 100 ps, a 1500 B frame = 1.2 us, a 64 B
//! PAUSE frame = 51.2 ns, 1 quantum = 512 bit times = 51.2 ns at 10 Gb/s.

use std::cell::RefCell;
use std::rc::Rc;

use crate::cc::Scheme;
use crate::engine::EventKind;
use crate::net::frame::{Frame, HostId, Payload};
use crate::net::Node;
use crate::testkit::TestNet;
use crate::time::SimTime;

fn us(x: f64) -> SimTime {
    SimTime::from_secs_f64(x * 1e-6)
}

/// What reaches host "a" from its switch at a given time.
enum Inject {
    /// An 802.3x PAUSE frame with this many quanta.
    Pause(u16),
    /// A PFC frame for one class.
    Pfc { class: u8, quanta: u16 },
    /// A control frame is queued on the host's port (control frames are never paused).
    Control,
}

/// Host "a" with 1500 B data frames (destination, class) queued at t = 0 in order, and
/// injections; `sent` holds (time the last bit left, was it data, class) of each frame it sent.
struct PausedHost {
    kit: TestNet,
    sent: Rc<RefCell<Vec<(SimTime, bool, u8)>>>,
}

impl PausedHost {
    fn new(frames: &[(HostId, u8)], injections: Vec<(SimTime, Inject)>) -> PausedHost {
        let mut kit = TestNet::two_hosts(Scheme::None);
        for (t, inject) in injections {
            let payload = match inject {
                Inject::Pause(quanta) => Payload::Pause { quanta },
                Inject::Pfc { class, quanta } => Payload::Pfc { class, quanta },
                Inject::Control => {
                    kit.at(t, move |net| {
                        let (nodes, ctx) = net.ctx();
                        let ctrl = Frame::control(Payload::Pause { quanta: 7 }, 9, 9, 9, 64, t);
                        nodes[0].port_mut(0).ctrl_q.push_back(ctrl);
                        nodes[0].try_transmit(0, 0, ctx);
                    });
                    continue;
                }
            };
            kit.deliver_at(t, 0, 0, Frame::control(payload, 9, 9, 9, 64, t));
        }
        for &(dst, class) in frames {
            let mut frame = Frame::data(0, dst, 1500, SimTime::ZERO);
            frame.priority = class;
            let (nodes, ctx) = kit.ctx();
            let Node::Host(a) = &mut nodes[0] else {
                unreachable!("node 0 is host a")
            };
            a.enqueue_generated(0, frame, ctx);
        }
        PausedHost {
            kit,
            sent: Rc::default(),
        }
    }

    fn run(&mut self, end: SimTime) {
        let sent = Rc::clone(&self.sent);
        self.kit.run_until(end, |net, ev| {
            // Hosts hand whole frames to the link: a frame's transmission ended one link delay
            // before it arrives.
            if let EventKind::Arrive {
                node: 0,
                port: 0,
                slot,
                ..
            } = *ev
            {
                let port = &net.nodes[0].ports()[0];
                assert_eq!(port.pipe_head(), Some(slot), "a frame arrives");
                let frame = net.ctx.frames.get(slot);
                let done = net.ctx.q.now() - port.delay;
                sent.borrow_mut()
                    .push((done, frame.is_data(), frame.priority));
            }
        });
    }

    /// When each data frame of `class` (any class if None) finished leaving the host.
    fn data_done(&self, class: Option<u8>) -> Vec<SimTime> {
        (self.sent.borrow().iter())
            .filter(|&&(_, data, c)| data && class.is_none_or(|k| k == c))
            .map(|&(t, _, _)| t)
            .collect()
    }

    fn port(&mut self) -> &crate::net::port::Port {
        &self.kit.host(0).port
    }
}

/// `n` data frames to host 1, all of class 0.
fn to_b(n: usize) -> Vec<(u32, u8)> {
    vec![(1, 0); n]
}

#[test]
fn quanta_use_the_line_rate_not_a_scheduled_service_rate() {
    // A schedule lowers the port to 2 Gb/s; one quantum is still 512 bit times at the 10 Gb/s
    // line rate = 51.2 ns (802.3x defines the quantum on the PHY rate).
    let mut h = PausedHost::new(&[], vec![(SimTime::ZERO, Inject::Pause(1))]);
    h.kit.host(0).port.rate_bps = 2e9;
    h.run(us(1.0));
    assert_eq!(h.port().pause.paused_time(us(1.0)), SimTime(51_200));
}

#[test]
fn host_finishes_its_frame_then_holds_data_until_the_timer_ends() {
    // Frame 0 is sent 0 - 1.2 us. PAUSE(100 quanta = 5.12 us) arrives at 0.5 us, mid-frame:
    // frame 0 still completes at 1.2 us; frame 1 may start only at 0.5 + 5.12 = 5.62 us, so it
    // completes at 6.82 us, and the rest follow back to back every 1.2 us.
    let mut h = PausedHost::new(&to_b(4), vec![(us(0.5), Inject::Pause(100))]);
    h.run(us(100.0));
    assert_eq!(
        h.data_done(None),
        vec![us(1.2), us(6.82), us(8.02), us(9.22)],
        "data frame completion times"
    );
    assert_eq!(h.port().pause.paused_time(us(100.0)), us(5.12));
}

#[test]
fn host_resumes_at_xon() {
    // XOFF(65535) at 0.5 us, XON at 3 us: frame 1 starts at 3 us, completes at 4.2 us.
    let mut h = PausedHost::new(
        &to_b(3),
        vec![
            (us(0.5), Inject::Pause(u16::MAX)),
            (us(3.0), Inject::Pause(0)),
        ],
    );
    h.run(us(100.0));
    assert_eq!(h.data_done(None), vec![us(1.2), us(4.2), us(5.4)]);
    assert_eq!(h.port().pause.paused_time(us(100.0)), us(2.5));
}

#[test]
fn host_obeys_a_longer_replacing_pause() {
    // XOFF(20) at 0.5 us (would end at 1.524 us), XOFF(100 = 5.12 us) at 1.0 us -> resume at
    // 6.12 us; the first timer's expiry must not release the host. Frame 1 completes at
    // 7.32 us.
    let mut h = PausedHost::new(
        &to_b(2),
        vec![(us(0.5), Inject::Pause(20)), (us(1.0), Inject::Pause(100))],
    );
    h.run(us(100.0));
    assert_eq!(h.data_done(None), vec![us(1.2), us(7.32)]);
}

#[test]
fn host_obeys_a_shorter_replacing_pause() {
    // XOFF(65535) at 0.5 us, XOFF(20 = 1.024 us) at 3 us: 802.3x replaces the timer, so the
    // host resumes at 4.024 us and frame 1 completes at 5.224 us (not at the end of the first
    // pause, 0.5 + 3355.392 + 1.2 = 3357.092 us).
    let mut h = PausedHost::new(
        &to_b(2),
        vec![
            (us(0.5), Inject::Pause(u16::MAX)),
            (us(3.0), Inject::Pause(20)),
        ],
    );
    h.run(us(4000.0));
    assert_eq!(h.data_done(None), vec![us(1.2), us(5.224)]);
    assert_eq!(h.port().pause.paused_time(us(4000.0)), us(3.524));
}

#[test]
fn control_frames_are_never_paused() {
    // Paused from 0.5 us for 3.36 ms; a control frame queued at 2 us leaves at once (64 B =
    // 51.2 ns -> done at 2.0512 us) while data stays held for the whole run.
    let mut h = PausedHost::new(
        &to_b(3),
        vec![
            (us(0.5), Inject::Pause(u16::MAX)),
            (us(2.0), Inject::Control),
        ],
    );
    h.run(us(100.0));
    assert_eq!(
        *h.sent.borrow(),
        vec![(us(1.2), true, 0), (us(2.0512), false, 0)]
    );
}

/// Host "a" with `n` frames of class 3 to host 1 and then `n` of class 0 to host 2, and PFC
/// frames (class, quanta) injected at given times.
fn two_classes_at_a_host(n: usize, pfc: &[(SimTime, u8, u16)]) -> PausedHost {
    let frames: Vec<(u32, u8)> = [(1, 3); 1]
        .repeat(n)
        .into_iter()
        .chain([(2, 0)].repeat(n))
        .collect();
    let injections = (pfc.iter())
        .map(|&(t, class, quanta)| (t, Inject::Pfc { class, quanta }))
        .collect();
    PausedHost::new(&frames, injections)
}

#[test]
fn a_paused_class_finishes_its_frame_waits_for_the_timer_and_others_keep_sending() {
    // Class 3's first frame leaves 0 - 1.2 us. PFC(class 3, 100 quanta = 5.12 us) arrives at
    // 0.5 us, mid-frame: that frame still completes at 1.2 us; class 0 then sends back to back
    // (2.4, 3.6, 4.8 us) and class 3 resumes exactly at 0.5 + 5.12 = 5.62 us (done at 6.82,
    // 8.02 us).
    let mut h = two_classes_at_a_host(3, &[(us(0.5), 3, 100)]);
    h.run(us(100.0));
    assert_eq!(h.data_done(Some(3)), vec![us(1.2), us(6.82), us(8.02)]);
    assert_eq!(h.data_done(Some(0)), vec![us(2.4), us(3.6), us(4.8)]);
    let pfc = h.port().pfc.as_ref().expect("PFC state");
    assert_eq!(pfc.lane(3).paused_time(us(100.0)), us(5.12));
    assert_eq!(pfc.lane(0).paused_time(us(100.0)), SimTime::ZERO);
    assert_eq!(pfc.lane(3).frames_received(), 1);
}

#[test]
fn a_paused_class_resumes_at_xon() {
    // XOFF(65535) for class 3 at 0.5 us, XON at 3.0 us (during class 0's second frame, 2.4 -
    // 3.6 us): class 3 takes its turn at 3.6 us (done 4.8 us), the VOQs alternate after.
    let mut h = two_classes_at_a_host(3, &[(us(0.5), 3, u16::MAX), (us(3.0), 3, 0)]);
    h.run(us(100.0));
    assert_eq!(h.data_done(Some(3)), vec![us(1.2), us(4.8), us(7.2)]);
    assert_eq!(h.data_done(Some(0)), vec![us(2.4), us(3.6), us(6.0)]);
    let pfc = h.port().pfc.as_ref().expect("PFC state");
    assert_eq!(pfc.lane(3).paused_time(us(100.0)), us(2.5));
}

#[test]
fn pausing_a_class_without_traffic_changes_nothing() {
    let mut h = two_classes_at_a_host(2, &[(us(0.5), 5, u16::MAX)]);
    h.run(us(100.0));
    assert_eq!(h.data_done(Some(3)), vec![us(1.2), us(2.4)]);
    assert_eq!(h.data_done(Some(0)), vec![us(3.6), us(4.8)]);
}
