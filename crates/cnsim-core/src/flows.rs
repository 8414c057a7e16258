//! Flows at run time: every flow of the workload, what it has sent, delivered and lost, and
//! when it completed. A flow completes when its last byte is delivered (in order, once: a
//! transport hands the table only the bytes its receiver accepts); without a transport
//! (`"none"`) nothing is retransmitted, so a flow that lost a frame never completes and is
//! reported with its losses. A transported flow also records its sender's completion (the
//! last ACK), its retransmissions and timeouts. A long flow (a `saturate` or `cbr` source
//! over a transport) has the size its application has written so far; it can complete only
//! once the application stopped writing (`writing` false), when that is delivered.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{FlowId, HostId, NO_FLOW};
use crate::time::{serialization_time, SimTime};
use crate::traffic::flows::FlowRow;

pub(crate) struct FlowState {
    pub(crate) row: FlowRow,
    pub(crate) start: SimTime,
    /// Bytes the source has not yet cut into frames.
    pub(crate) unsent_bytes: u64,
    pub(crate) delivered_bytes: u64,
    pub(crate) frames_dropped: u32,
    pub(crate) end: Option<SimTime>,
    /// The sender learnt that every byte arrived (its last ACK); transports only.
    pub(crate) sender_end: Option<SimTime>,
    /// Bytes sent again by the transport (go-back-N resends, timeouts).
    pub(crate) retransmitted_bytes: u64,
    pub(crate) retransmitted_frames: u64,
    pub(crate) timeouts: u32,
    /// Switches on the flow's path as the static routes give it when it starts (transported
    /// flows only, else 0): a sender controller's per-hop scaling (Swift's target delay).
    pub(crate) path_switches: u8,
    /// The application is still writing (a long flow before its stop): `row.size_bytes` is
    /// not final and the flow cannot complete.
    pub(crate) writing: bool,
}

/// The packet count a transport's state machines see while a long flow's application is
/// still writing: more than any such flow can send (the scenario's check bounds its packets
/// below it, `sim/build.rs`), so the receiver never takes the flow for complete.
pub(crate) const OPEN_PACKETS: u32 = u32::MAX - 1;

impl FlowState {
    /// The packets the flow has as its receiver counts them: `OPEN_PACKETS` while the
    /// application is writing.
    pub(crate) fn packets(&self) -> u32 {
        if self.writing {
            OPEN_PACKETS
        } else {
            self.row.size_bytes.div_ceil(self.row.frame_bytes as u64) as u32
        }
    }

    /// The packets the sender may send: those written so far (`cbr`), every one while an
    /// always-backlogged application writes (`saturate`: `OPEN_PACKETS`), or the flow's.
    pub(crate) fn sendable_packets(&self) -> u32 {
        let backlogged = self
            .row
            .writes
            .as_ref()
            .is_some_and(|w| w.interval.is_none());
        if self.writing && backlogged {
            OPEN_PACKETS
        } else {
            self.row.size_bytes.div_ceil(self.row.frame_bytes as u64) as u32
        }
    }

    /// Nothing of the flow changes any more. Over a transport: its last byte is delivered and
    /// its sender has the last ACK (nothing is sent after it; a copy still in flight can only
    /// be dropped, a late drop). Without one (nothing is sent twice): every frame is cut and
    /// each was delivered or dropped, so a flow that lost a frame is final too. A flow's
    /// frames are its size in `frame_bytes` pieces, the last one smaller, so the delivered
    /// ones are ceil(delivered bytes / frame bytes).
    pub(crate) fn is_final(&self) -> bool {
        if !self.row.transport.is_none() {
            return self.end.is_some() && self.sender_end.is_some();
        }
        let frame = self.row.frame_bytes as u64;
        let frames = self.row.size_bytes.div_ceil(frame);
        let accounted = self.delivered_bytes.div_ceil(frame) + u64::from(self.frames_dropped);
        self.end.is_some() || (self.unsent_bytes == 0 && !self.writing && accounted == frames)
    }

    /// The sender takes packet `psn`: an always-backlogged application wrote it just now
    /// (its flow's size is the packets taken so far).
    pub(crate) fn on_taken(&mut self, psn: u32) {
        if self.writing && self.row.writes.is_some() {
            let end = (psn as u64 + 1) * self.row.frame_bytes as u64;
            self.row.size_bytes = self.row.size_bytes.max(end);
        }
    }
}

#[derive(Default)]
pub(crate) struct FlowTable {
    pub(crate) flows: Vec<FlowState>,
    /// Flows started so far (they start in id order).
    pub(crate) started: usize,
    pub(crate) completed: u64,
    /// Flows whose records were handed over already (a streamed run, `drain_end`): ids below.
    pub(crate) drained: usize,
    /// Handed-over flows that lost a frame afterwards (a transport's spurious copy still in
    /// flight after the last ACK): their `frames_dropped` grew after it was written.
    pub(crate) late_drops: Vec<FlowId>,
}

impl FlowTable {
    pub(crate) fn new(rows: Vec<FlowRow>) -> FlowTable {
        let flows = rows
            .into_iter()
            .map(|row| FlowState {
                start: SimTime::from_secs_f64(row.start_s),
                unsent_bytes: row.size_bytes,
                delivered_bytes: 0,
                frames_dropped: 0,
                end: None,
                sender_end: None,
                retransmitted_bytes: 0,
                retransmitted_frames: 0,
                timeouts: 0,
                path_switches: 0,
                writing: row.writes.is_some(),
                row,
            })
            .collect();
        FlowTable {
            flows,
            started: 0,
            completed: 0,
            drained: 0,
            late_drops: Vec::new(),
        }
    }

    /// Cuts the next frame of flow `id`: its size (at most the flow's frame size), and whether
    /// the flow has nothing left to send after it.
    pub(crate) fn take_frame_bytes(&mut self, id: u32) -> (u32, bool) {
        let f = &mut self.flows[id as usize];
        let bytes = f.unsent_bytes.min(f.row.frame_bytes as u64);
        f.unsent_bytes -= bytes;
        (bytes as u32, f.unsent_bytes == 0)
    }

    /// `bytes` of flow `flow_id` (`NO_FLOW` for frame-level sources) reached the receiver.
    /// Always inline: once per delivered frame, usually the `NO_FLOW` test alone.
    #[inline(always)]
    pub(crate) fn on_delivered(&mut self, flow_id: FlowId, bytes: u32, now: SimTime) {
        if flow_id == NO_FLOW {
            return;
        }
        let f = &mut self.flows[flow_id as usize];
        f.delivered_bytes += bytes as u64;
        if f.delivered_bytes == f.row.size_bytes && !f.writing {
            f.end = Some(now);
            self.completed += 1;
        }
    }

    /// The application of long flow `id` wrote one more packet (`cbr`).
    pub(crate) fn on_written(&mut self, id: FlowId) {
        let f = &mut self.flows[id as usize];
        f.row.size_bytes += f.row.frame_bytes as u64;
    }

    /// The application of long flow `id` stopped writing at `now`: its size is final (at
    /// least one packet: a saturating application wrote the first one at its start). True if
    /// the receiver already holds all of it: the flow completes now.
    pub(crate) fn on_stopped_writing(&mut self, id: FlowId, now: SimTime) -> bool {
        let f = &mut self.flows[id as usize];
        f.writing = false;
        f.row.size_bytes = f.row.size_bytes.max(f.row.frame_bytes as u64);
        let complete = f.delivered_bytes == f.row.size_bytes && f.end.is_none();
        if complete {
            f.end = Some(now);
            self.completed += 1;
        }
        complete
    }

    /// A frame of flow `flow_id` was dropped.
    pub(crate) fn on_dropped(&mut self, flow_id: FlowId) {
        if flow_id != NO_FLOW {
            self.flows[flow_id as usize].frames_dropped += 1;
            if (flow_id as usize) < self.drained {
                self.late_drops.push(flow_id);
            }
        }
    }

    /// The end of the longest run of final flows from `drained` on: records of flows below it
    /// no longer change (but for a late drop). `FlowState::is_final` says which are.
    pub(crate) fn final_end(&self) -> usize {
        let waiting = self.flows[self.drained..self.started]
            .iter()
            .position(|f| !f.is_final());
        waiting.map_or(self.started, |k| self.drained + k)
    }

    /// The handed-over flows that lost frames afterwards, each once, with their final count;
    /// and how many of them had lost none when handed over (`with_drops` grows by these).
    pub(crate) fn late_drop_counts(&self) -> (Vec<(FlowId, u32)>, u64) {
        let mut ids = self.late_drops.clone();
        ids.sort_unstable();
        let counts: Vec<(FlowId, u32)> = (ids.chunk_by(|a, b| a == b))
            .map(|same| (same[0], self.flows[same[0] as usize].frames_dropped))
            .collect();
        let late = |id: FlowId| ids.iter().filter(|&&l| l == id).count() as u32;
        let newly = counts.iter().filter(|&&(id, n)| n == late(id)).count() as u64;
        (counts, newly)
    }
}

/// One stage of a flow's path: the time to serialise a frame there and the latency after it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stage {
    pub(crate) rate_bps: f64,
    pub(crate) overhead_bytes: u32,
    pub(crate) delay: SimTime,
}

impl Stage {
    fn ser(&self, bytes: u64) -> SimTime {
        serialization_time(bytes + self.overhead_bytes as u64, self.rate_bps)
    }
}

/// The flow completion time on an idle network: frames of `mtu` bytes (the last one smaller)
/// all ready at the start, store-and-forward through `stages`. For k equal frames a tandem of
/// servers finishes the j-th (0-based) at a stage after sum(ser) + sum(delay before it) +
/// j x max(ser) (the bottleneck spaces them); the last, smaller frame is then walked through.
pub(crate) fn ideal_fct(stages: &[Stage], size_bytes: u64, mtu: u32) -> SimTime {
    if size_bytes == 0 {
        // A long flow whose application wrote nothing yet.
        return SimTime::ZERO;
    }
    let mtu = mtu as u64;
    let full = (size_bytes - 1) / mtu; // frames before the last one
    let last = size_bytes - full * mtu;
    let (mut sum_ser, mut max_ser, mut sum_delay) = (0u64, 0u64, 0u64);
    let mut t_last = 0u64; // the last frame's arrival at the current stage
    for st in stages {
        let s_full = st.ser(mtu).ps();
        sum_ser += s_full;
        max_ser = max_ser.max(s_full);
        // When the stage finishes the frame before the last one.
        let prev_done = if full > 0 {
            sum_ser + sum_delay + (full - 1) * max_ser
        } else {
            0
        };
        t_last = t_last.max(prev_done) + st.ser(last).ps() + st.delay.ps();
        sum_delay += st.delay.ps();
    }
    SimTime(t_last)
}

/// One row per flow, as columns (what `flows.parquet` holds).
#[derive(Clone, Debug, Default)]
pub struct FlowRecords {
    pub flow_id: Vec<u32>,
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub size_bytes: Vec<u64>,
    pub priority: Vec<u8>,
    pub start_s: Vec<f64>,
    /// NaN for a flow that did not complete.
    pub end_s: Vec<f64>,
    pub fct_s: Vec<f64>,
    pub ideal_fct_s: Vec<f64>,
    pub completed: Vec<bool>,
    pub frames_dropped: Vec<u32>,
    pub delivered_bytes: Vec<u64>,
    /// Bytes the transport sent again (0 without a transport).
    pub retransmitted_bytes: Vec<u64>,
    /// Retransmission timeouts the sender took.
    pub timeouts: Vec<u32>,
    /// size x 8 / FCT (NaN for a flow that did not complete).
    pub goodput_bps: Vec<f64>,
    /// When the sender got its last ACK (NaN without a transport, or before it).
    pub sender_end_s: Vec<f64>,
}

impl FlowTable {
    /// Records of flows `ids` (started ones). `path_stages(src, dst, flow)` gives a path's
    /// stages (`net::path`); with `per_flow` false a pair's flows share one path (no ECMP
    /// hashing of flows), asked for once per pair with `NO_FLOW`; with `per_flow` every flow
    /// has its own, asked for once and not kept (a cache would hold one path per flow).
    pub(crate) fn records(
        &self,
        ids: std::ops::Range<usize>,
        per_flow: bool,
        mut path_stages: impl FnMut(HostId, HostId, FlowId) -> Vec<Stage>,
    ) -> FlowRecords {
        let mut r = FlowRecords::default();
        let mut paths: HashMap<(HostId, HostId), Vec<Stage>> = HashMap::new();
        let first = ids.start;
        for (k, f) in self.flows[ids].iter().enumerate() {
            let id = first + k;
            let (src, dst) = (f.row.src, f.row.dst);
            let own;
            let stages = if per_flow {
                own = path_stages(src, dst, id as FlowId);
                &own
            } else {
                paths
                    .entry((src, dst))
                    .or_insert_with(|| path_stages(src, dst, NO_FLOW))
            };
            let ideal = ideal_fct(stages, f.row.size_bytes, f.row.frame_bytes);
            let end_s = f.end.map_or(f64::NAN, SimTime::as_secs_f64);
            let fct = f.end.map_or(f64::NAN, |e| (e - f.start).as_secs_f64());
            r.flow_id.push(id as u32);
            r.src.push(src);
            r.dst.push(dst);
            r.size_bytes.push(f.row.size_bytes);
            r.priority.push(f.row.priority);
            r.start_s.push(f.row.start_s);
            r.end_s.push(end_s);
            r.fct_s.push(fct);
            r.ideal_fct_s.push(ideal.as_secs_f64());
            r.completed.push(f.end.is_some());
            r.frames_dropped.push(f.frames_dropped);
            r.delivered_bytes.push(f.delivered_bytes);
            r.retransmitted_bytes.push(f.retransmitted_bytes);
            r.timeouts.push(f.timeouts);
            r.goodput_bps.push(f.row.size_bytes as f64 * 8.0 / fct);
            r.sender_end_s
                .push(f.sender_end.map_or(f64::NAN, SimTime::as_secs_f64));
        }
        r
    }
}

/// The `flows` object of `summary.json`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlowSummary {
    /// Flows started by the end of the run.
    pub started: u64,
    /// Flows whose last byte was delivered.
    pub completed: u64,
    /// Started but not completed: still sending, or lost a frame (no retransmission).
    pub incomplete: u64,
    /// Flows that lost at least one frame.
    pub with_drops: u64,
    /// Flow completion time of the completed flows: mean, median, 99th percentile, max.
    pub fct_mean_s: Option<f64>,
    pub fct_p50_s: Option<f64>,
    pub fct_p99_s: Option<f64>,
    pub fct_max_s: Option<f64>,
    /// Mean of FCT / the flow's FCT alone on the idle network, over completed flows.
    pub slowdown_mean: Option<f64>,
    /// Realised mean size of the started flows.
    pub size_mean_bytes: Option<f64>,
    /// The mean size the `kind = "flows"` entries asked for (null: none, or several).
    pub requested_size_mean_bytes: Option<f64>,
    /// Flows the `kind = "flows"` entries drew (each starts within the run), and their
    /// realised mean size: what `requested_size_mean_bytes` asked for (`size_mean_bytes`
    /// counts incast, trace and long flows too). The mean is null when they drew none.
    pub generated: u64,
    pub generated_size_mean_bytes: Option<f64>,
    /// Realised offered load of the generated flows, as a fraction of the senders' line
    /// rates over the arrival window.
    pub load: Option<f64>,
    pub requested_load: Option<f64>,
    /// Bytes of all flows delivered.
    pub delivered_bytes: u64,
    /// Bytes the transports sent again, over all flows (0 without a transport).
    pub retransmitted_bytes: u64,
    /// Retransmission timeouts, over all flows.
    pub timeouts: u64,
    /// With transported flows only (absent otherwise): the completed flows' bytes x 8 over
    /// the span from the first start to the last completion (an incast's block goodput).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput_bps: Option<f64>,
    /// Mean goodput (size x 8 / FCT) of the completed flows; only when a flow completed over
    /// a transport (its sender got the last ACK), so open-loop summaries are as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput_mean_bps: Option<f64>,
    /// Slowdown percentiles per flow-size bucket, keyed b0, b1, ... (only with `[report]
    /// slowdown_size_edges_bytes`; `flow_digest/slowdown.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowdown_by_size: Option<std::collections::BTreeMap<String, SizeBucket>>,
}

/// One size bucket of `summary.flows.slowdown_by_size` (computed in `flow_digest/slowdown.rs`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct SizeBucket {
    /// Sizes above this (exclusive; 0 for the first bucket).
    pub min_bytes: f64,
    /// Sizes up to this (inclusive); null for the last bucket (no bound).
    pub max_bytes: Option<f64>,
    /// Flows of the bucket started by the end of the run.
    pub started: u64,
    /// Those of them that completed: the percentiles are over these.
    pub completed: u64,
    /// Slowdown percentiles (nearest rank) of the completed flows; null when none completed.
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Transport;

    /// Flows of 2,500 bytes (frames of 1,000: three frames, the last of 500).
    fn table(transport: Transport, n: usize) -> FlowTable {
        let rows = (0..n).map(|i| FlowRow {
            start_s: i as f64 * 1e-6,
            src: 0,
            dst: 1,
            size_bytes: 2_500,
            priority: 0,
            frame_bytes: 1_000,
            transport,
            writes: None,
        });
        let mut t = FlowTable::new(rows.collect());
        t.started = n;
        t
    }

    fn send_all(t: &mut FlowTable, id: u32) {
        while !t.take_frame_bytes(id).1 {}
    }

    #[test]
    fn open_loop_flows_are_final_once_every_frame_is_delivered_or_dropped() {
        let mut t = table(Transport::None, 3);
        let now = SimTime::ZERO;
        // Flow 0 completes; flow 1 loses its middle frame; flow 2 is still sending.
        send_all(&mut t, 0);
        for b in [1_000, 1_000, 500] {
            t.on_delivered(0, b, now);
        }
        send_all(&mut t, 1);
        t.on_delivered(1, 1_000, now);
        assert_eq!(t.final_end(), 1, "flow 1 has a frame still in flight");
        t.on_dropped(1);
        t.on_delivered(1, 500, now);
        assert_eq!(t.final_end(), 2, "every frame of flow 1 accounted for");
        t.on_delivered(2, 1_000, now);
        assert_eq!(t.final_end(), 2);
        t.drained = 2;
        assert!(t.late_drops.is_empty());
    }

    #[test]
    fn transported_flows_wait_for_the_last_ack_and_late_drops_are_listed() {
        let mut t = table(Transport::Roce, 2);
        let now = SimTime::from_secs_f64(1e-3);
        for id in 0..2 {
            send_all(&mut t, id);
            for b in [1_000, 1_000, 500] {
                t.on_delivered(id, b, now);
            }
        }
        assert_eq!(
            t.final_end(),
            0,
            "delivered, but no sender has the last ACK"
        );
        t.flows[1].sender_end = Some(now);
        assert_eq!(t.final_end(), 0, "flow 1 waits for flow 0");
        t.flows[0].sender_end = Some(now);
        assert_eq!(t.final_end(), 2);
        t.drained = 2;
        // Spurious copies dropped after the records were handed over: twice of flow 1 (which
        // had lost none before), once of flow 0 (which had lost one).
        t.flows[0].frames_dropped = 1;
        t.on_dropped(1);
        t.on_dropped(0);
        t.on_dropped(1);
        assert_eq!(t.late_drop_counts(), (vec![(0, 2), (1, 2)], 1));
    }
}
