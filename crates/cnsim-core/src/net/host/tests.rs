//! The host's unit tests.
use super::*;
use crate::cc::qcn::QcnParams;
use crate::cc::Scheme;
use crate::cc::{CcMsg, Limiter};
use crate::engine::EventKind;
use crate::engine::EventQueue;
use crate::net::frame::{Frame, Payload};
use crate::rng::{stream, StreamKind};
use crate::sim::Network;
use crate::time::{serialization_time, TxTimer};

/// A host on a 10 Gb/s link.
fn plain_host() -> Host {
    let port = Port::new("h->sw".into(), 1, 0, 10e9, SimTime::ZERO);
    Host::new(0, "h".into(), port, stream(1, StreamKind::ReactionPoint, 0))
}

/// What a host's calls need besides the host: the clock, counters, flows and the scheme (a
/// network without elements).
fn world(scheme: Scheme) -> Network {
    Network::new(Vec::new(), crate::flows::FlowTable::default(), scheme, 64)
}

fn cnm(qfb: u8) -> Frame {
    let msg = CcMsg::Cnm(crate::cc::qcn::Cnm { qfb, cpid: 0 });
    Frame::control(Payload::Cc(msg), 0, 0, 1, 64, SimTime::ZERO)
}

/// The newest RP timer ticket among the pending events (the clock moves to the last one).
fn newest_ticket(q: &mut EventQueue) -> u32 {
    std::iter::from_fn(|| q.pop_until(SimTime::MAX))
        .filter_map(|ev| match ev {
            EventKind::RpTimer { ticket, .. } => Some(ticket),
            _ => None,
        })
        .max()
        .expect("an RP timer event was scheduled")
}

/// A timer event left over from a released limiter must not fire on the flow's next one.
#[test]
fn stale_timer_of_a_released_limiter_is_ignored() {
    let mut host = plain_host();
    let mut world = world(Scheme::Qcn(QcnParams::default()));
    let (_, ctx) = world.ctx();
    host.receive(0, cnm(63), ctx);
    // Release the first limiter as reaching line rate would, then install a second one.
    let slot = host.voq_slot[&1] as usize;
    host.voqs[slot].limiter = None;
    host.voqs[slot].timer_pending = None;
    host.receive(0, cnm(63), ctx);
    let stale = 1;
    host.on_rp_timer(0, slot as u32, stale, ctx);
    let Some(Limiter::Qcn(rp)) = host.voq(1).unwrap().limiter.as_deref() else {
        panic!("QCN limiter")
    };
    assert_eq!(
        rp.timer_stage(),
        0,
        "the stale event fired on the new limiter"
    );
    // The new limiter's own event does fire.
    let current = newest_ticket(&mut ctx.q);
    assert_ne!(current, stale);
    host.on_rp_timer(0, slot as u32, current, ctx);
    let Some(Limiter::Qcn(rp)) = host.voq(1).unwrap().limiter.as_deref() else {
        panic!("QCN limiter")
    };
    assert_eq!(rp.timer_stage(), 1);
}

/// A frame sent after PAUSE froze and resumed a limiter's timer re-arms it, though the frame
/// ends no byte-counter cycle: the host may skip `after_limiter_change` only while the
/// limiter is as it last looked at it.
#[test]
fn a_frame_after_a_pause_rearms_the_limiter_timer() {
    let mut host = plain_host();
    let mut world = world(Scheme::Qcn(QcnParams::default()));
    let (_, ctx) = world.ctx();
    host.receive(0, cnm(63), ctx);
    host.set_saturating(0, 1, Some(1500), 0, ctx);
    let timer_generation = |host: &Host| {
        let voq = host.voq(1).unwrap();
        let armed = voq.timer_pending.map(|(_, generation)| generation);
        (armed, voq.limiter.as_ref().unwrap().timer().map(|(_, g)| g))
    };
    let (armed, live) = timer_generation(&host);
    assert_eq!(armed, live, "the first frame leaves the timer armed");
    host.set_rate_limiters_paused(true, ctx.q.now());
    host.set_rate_limiters_paused(false, ctx.q.now());
    let (armed, live) = timer_generation(&host);
    assert_ne!(
        armed, live,
        "thawing restarts the timer under a new generation"
    );
    let sent_before = host.counters.tx_frames;
    while let Some(event) = ctx.q.pop_until(SimTime::MAX) {
        if let EventKind::HostWake { generation, .. } = event {
            host.on_wake(0, generation, ctx);
            break;
        }
    }
    assert_eq!(host.counters.tx_frames, sent_before + 1);
    let (armed, live) = timer_generation(&host);
    assert_eq!(armed, live, "the next frame re-arms the thawed timer");
}

/// Runs the host's own wake-ups until none is left (the clock ends at the last event).
fn run_wakes(host: &mut Host, ctx: &mut Ctx) {
    while let Some(event) = ctx.q.pop_until(SimTime::MAX) {
        if let EventKind::HostWake { generation, .. } = event {
            host.on_wake(0, generation, ctx);
        }
    }
}

/// The lone-VOQ fast paths: a drained VOQ alone in the ring is not waited for, leaves the
/// ring on the next decision and is released, and a new frame for its destination goes
/// into a ring holding it once.
#[test]
fn a_lone_voq_is_served_and_leaves_the_ring() {
    let mut host = plain_host();
    let mut world = world(Scheme::None);
    let (_, ctx) = world.ctx();
    let frame = |ctx: &Ctx| Frame::data(0, 1, 1500, ctx.q.now());
    host.enqueue_generated(0, frame(ctx), ctx);
    host.enqueue_generated(0, frame(ctx), ctx);
    assert_eq!(host.earliest_ready(ctx.q.now()), Some(SimTime::ZERO));
    run_wakes(&mut host, ctx);
    assert_eq!(host.counters.tx_frames, 2);
    // No wake-up was arranged just to find the VOQ drained: it is still in the ring.
    assert_eq!(host.ring.len(), 1);
    assert_eq!(
        host.earliest_ready(ctx.q.now()),
        None,
        "nothing left to wait for"
    );
    // The next decision, once the NIC is free, finds the VOQ empty: out of the ring, slot
    // freed. (A wake-up of a stale generation only moves the clock.)
    let stale = EventKind::HostWake {
        node: 0,
        generation: u32::MAX,
    };
    ctx.q.schedule(SimTime::from_micros(10), stale);
    run_wakes(&mut host, ctx);
    host.try_transmit(0, ctx);
    assert!(host.ring.is_empty());
    assert!(host.voq(1).is_none());
    host.enqueue_generated(0, frame(ctx), ctx);
    assert_eq!(host.ring.len(), 1, "the reused slot is in the ring once");
    run_wakes(&mut host, ctx);
    assert_eq!(host.counters.tx_frames, 3);
}

/// The VOQ's pacing timer answers exactly what `serialization_time` does through rate
/// changes (down to one ulp), frame-size changes, a stopped limiter and back.
#[test]
fn pacing_timer_equals_serialization_time() {
    let mut memo = TxTimer::default();
    let cut: f64 = 5.078125e9;
    let rates = [
        10e9,
        cut,
        cut,
        f64::from_bits(cut.to_bits() + 1),
        cut,
        7e9,
        0.0,
        1e3,
        0.0,
        9.999_999e9,
    ];
    for (i, rate) in rates.into_iter().enumerate() {
        for bytes in [1500, 1500, 64, 0, 9216, 1500] {
            assert_eq!(
                memo.time(bytes, rate),
                serialization_time(bytes, rate),
                "step {i}: {bytes} B at {rate} b/s"
            );
        }
    }
    // The first lookup, at the rate it starts with, is right too.
    assert_eq!(TxTimer::default().time(0, 0.0), serialization_time(0, 0.0));
}

/// Frames a saturating VOQ behind a QCN limiter lets go at `now` after a long wait, with a
/// token bucket of `bucket_bytes` (seed 004: a paused RP keeps adding tokens at CR).
fn burst_after_wait(bucket_bytes: f64) -> usize {
    let mut host = plain_host();
    let mut world = world(Scheme::Qcn(QcnParams {
        rp_bucket_bytes: bucket_bytes,
        ..QcnParams::default()
    }));
    let (_, ctx) = world.ctx();
    host.receive(0, cnm(63), ctx);
    let slot = host.voq_slot[&1];
    host.voqs[slot as usize].saturating_frame_bytes = Some(1500);
    // Long after the limiter last sent (as after a PAUSE): the bucket is full.
    let now = SimTime::from_secs_f64(0.01);
    let mut sent = 0;
    while host.voqs[slot as usize].ready_at() <= now {
        host.take_frame(0, slot, now, ctx);
        sent += 1;
        assert!(sent < 1000, "the bucket never ran dry");
    }
    sent
}

#[test]
fn a_waiting_limiter_accrues_up_to_its_bucket() {
    // Without a bucket, one frame, then the next is paced at CR.
    assert_eq!(burst_after_wait(0.0), 1);
    // 20.5 frames of credit: the frame taken plus 20 more leave at once (the half frame
    // keeps picosecond rounding of the pacing times out of the count).
    assert_eq!(burst_after_wait(30_750.0), 21);
}

/// Feedback for a queue pair reaches that QP's own reaction point, not its destination's; and
/// feedback for a queue pair whose sender has completed installs nothing (its VOQ may linger
/// until the round robin passes, but an RP there would never be released).
#[test]
fn queue_pair_feedback_goes_to_its_own_rp_and_none_after_it_completes() {
    use crate::scenario::Transport;
    use crate::traffic::flows::FlowRow;
    let row = |transport| FlowRow {
        start_s: 0.0,
        src: 0,
        dst: 1,
        size_bytes: 15_000,
        priority: 0,
        frame_bytes: 1500,
        transport,
        writes: None,
    };
    let mut host = plain_host();
    let flows = crate::flows::FlowTable::new(vec![row(Transport::Roce), row(Transport::Roce)]);
    let mut world = Network::new(Vec::new(), flows, Scheme::Qcn(QcnParams::default()), 64);
    let (_, ctx) = world.ctx();
    ctx.flows.flows[1].sender_end = Some(SimTime::ZERO);
    let about = |flow_id| {
        let mut f = cnm(63);
        f.flow_id = flow_id;
        f
    };
    host.receive(0, about(0), ctx);
    let qp = host.voq_slot[&voq::voq_key(1, 0)];
    assert!(host.voqs[qp as usize].limiter.is_some(), "QP 0's RP");
    assert!(
        host.voq(1).is_none(),
        "no RP for the destination's open-loop VOQ"
    );
    host.receive(0, about(1), ctx);
    assert!(
        !host.voq_slot.contains_key(&voq::voq_key(1, 1)),
        "QP 1 has completed"
    );
}

/// A CNM that host 0 queues for host 5 about data of class 3, with `model.message_queue`
/// "data" (`ride`) or "control": where it waits, and the class of the VOQ it waits in.
fn queued_cnm(ride: bool, data_to_5: Option<u8>) -> (bool, Option<u8>) {
    let mut host = plain_host();
    let mut world = world(Scheme::Qcn(QcnParams::default()));
    let (_, ctx) = world.ctx();
    ctx.messages_ride_data = ride;
    if let Some(class) = data_to_5 {
        // The first frame goes on the wire at once, the second waits in the VOQ.
        for _ in 0..2 {
            let mut frame = Frame::data(0, 5, 1500, SimTime::ZERO);
            frame.priority = class;
            host.enqueue_generated(0, frame, ctx);
        }
    }
    let msg = CcMsg::Cnm(crate::cc::qcn::Cnm { qfb: 1, cpid: 0 });
    host.queue_message(msg, 5, 0, crate::net::frame::NO_FLOW, 3, ctx);
    let in_control = !host.port.ctrl_q.is_empty();
    let voq = host.voq(5).filter(|v| !v.own_frames.is_empty());
    (in_control, voq.map(|v| v.priority))
}

#[test]
fn a_host_s_message_rides_its_voq_only_when_messages_ride_the_data_queue() {
    // "control": the control queue, no VOQ. "data": the VOQ towards the message's destination,
    // in the class of the data it is about when that VOQ has no data of its own, else in the
    // VOQ's class (one class per VOQ).
    assert_eq!(queued_cnm(false, None), (true, None));
    assert_eq!(queued_cnm(true, None), (false, Some(3)));
    assert_eq!(queued_cnm(true, Some(5)), (false, Some(5)));
}
