//! `kind = "incast"`: periodic N-to-1 incasts (the HPCC paper's, SIGCOMM 2019 section 5), made
//! before the run like `kind = "flows"`, so `cnsim trace` writes them.
//!
//! Incast k starts at start_s + k x interval_s (a product, not a running sum, so late incasts
//! do not drift) while that is before `stop_s` and the run's end. Each draws, in this order,
//! from the entry's own stream: its receiver (when `dst = "uniform"`: one of `hosts`), its
//! `fan_in` distinct senders (uniform without replacement over `hosts` without the receiver),
//! then one size per sender in the senders' drawn order.

use std::collections::HashMap;

use rand::Rng;

use super::flows::{FlowRow, SizeDist};
use crate::ids::HostId;
use crate::rng::{stream, SimRng, StreamKind};
use crate::scenario::incast::fixed_receiver;
use crate::scenario::{Scenario, TrafficSpec};

/// Stream index bit of the incast entries (`kind = "flows"` senders use the entry index in
/// the high word and the sender in the low one, a permutation bit 63): bit 62 plus the entry.
const INCAST_STREAM: u64 = 1 << 62;

/// Appends the entry's flows to `rows`.
// `..FlowRow::default()`: an incast flow has a size, so no long flow's application writes.
pub(crate) fn generate(
    sc: &Scenario,
    ti: usize,
    t: &TrafficSpec,
    dist: &SizeDist,
    host_index: &HashMap<&str, u32>,
    end_s: f64,
    rows: &mut Vec<FlowRow>,
) {
    let mut hosts: Vec<HostId> = Vec::with_capacity(t.hosts.len());
    for h in &t.hosts {
        let id = host_index[h.as_str()];
        if !hosts.contains(&id) {
            hosts.push(id);
        }
    }
    let receiver = fixed_receiver(t).map(|d| host_index[d]);
    let interval_s = t.interval_s.expect("validated");
    let fan_in = t.fan_in.expect("validated") as usize;
    let stop_s = t.stop_s.unwrap_or(end_s).min(end_s);
    let seed = t.seed.unwrap_or(sc.seed);
    let mut rng = stream(seed, StreamKind::Flows, INCAST_STREAM | ti as u64);
    for k in 0u64.. {
        let at = t.start_s + k as f64 * interval_s;
        if at >= stop_s {
            break;
        }
        let dst = receiver.unwrap_or_else(|| hosts[rng.random_range(0..hosts.len())]);
        for src in senders(&hosts, dst, fan_in, &mut rng) {
            rows.push(FlowRow {
                start_s: at,
                src,
                dst,
                size_bytes: dist.sample(&mut rng),
                priority: t.priority,
                frame_bytes: t.frame_bytes,
                transport: t.transport,
                ..FlowRow::default()
            });
        }
    }
}

/// `fan_in` distinct hosts of `hosts` other than `dst`, uniform without replacement.
fn senders(hosts: &[HostId], dst: HostId, fan_in: usize, rng: &mut SimRng) -> Vec<HostId> {
    let pool: Vec<HostId> = hosts.iter().copied().filter(|&h| h != dst).collect();
    rand::seq::index::sample(rng, pool.len(), fan_in)
        .into_iter()
        .map(|i| pool[i])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn scenario(traffic: &str) -> Scenario {
        let text = format!(
            "name = \"t\"\nduration_s = 0.01\nseed = 1\n\
             [topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 4\n\
             [[traffic]]\n{traffic}"
        );
        Scenario::from_toml(&text, &[]).expect("valid")
    }

    fn rows(sc: &Scenario) -> Vec<FlowRow> {
        let index: HashMap<&str, u32> = (sc.hosts.iter().enumerate())
            .map(|(i, h)| (h.name.as_str(), i as u32))
            .collect();
        let rates = vec![10e9; sc.hosts.len()];
        crate::traffic::flows::workload(sc, &index, &rates)
            .expect("workload")
            .flows
    }

    #[test]
    fn every_interval_fan_in_distinct_senders_to_one_receiver() {
        let sc = scenario(
            "kind = \"incast\"\nhosts = \"all\"\ndst = \"uniform\"\nfan_in = 3\n\
             interval_s = 0.002\nstart_s = 0.001\nstop_s = 0.008\nsize = { bytes = 20000 }\n\
             seed = 7\npriority = 2\nframe_bytes = 1000",
        );
        let flows = rows(&sc);
        // Incasts at 1, 3, 5, 7 ms (9 ms is past stop_s), three flows each.
        let times: Vec<f64> = flows.iter().map(|f| f.start_s).collect();
        let expected: Vec<f64> = [0.001, 0.003, 0.005, 0.007]
            .iter()
            .flat_map(|&t| [t; 3])
            .collect();
        assert_eq!(times, expected);
        for incast in flows.chunks(3) {
            let dst = incast[0].dst;
            let mut srcs: Vec<u32> = incast.iter().map(|f| f.src).collect();
            assert!(incast.iter().all(|f| f.dst == dst));
            assert!(!srcs.contains(&dst), "{incast:?}");
            srcs.sort();
            srcs.dedup();
            assert_eq!(srcs.len(), 3, "{incast:?}");
            assert!(incast
                .iter()
                .all(|f| f.size_bytes == 20_000 && f.priority == 2 && f.frame_bytes == 1000));
        }
        // The exact draws of seed 7 (the same every run, every platform).
        let pairs: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
        assert_eq!(
            pairs,
            vec![
                (0, 6),
                (2, 6),
                (4, 6),
                (2, 0),
                (1, 0),
                (3, 0),
                (2, 1),
                (0, 1),
                (6, 1),
                (5, 2),
                (6, 2),
                (7, 2),
            ]
        );
        // Another seed draws other receivers or senders; the same seed the same ones.
        assert_eq!(rows(&sc), flows);
        let other = scenario(
            "kind = \"incast\"\nhosts = \"all\"\ndst = \"uniform\"\nfan_in = 3\n\
             interval_s = 0.002\nstart_s = 0.001\nstop_s = 0.008\nsize = { bytes = 20000 }\n\
             seed = 8\npriority = 2\nframe_bytes = 1000",
        );
        assert_ne!(rows(&other), flows);
    }

    #[test]
    fn a_fixed_receiver_outside_the_pool_takes_every_host_as_sender() {
        let sc = scenario(
            "kind = \"incast\"\nhosts = [\"h0_0\", \"h0_1\", \"h0_2\"]\ndst = \"h1_3\"\nfan_in = 3\n\
             interval_s = 0.004\nsize = { bytes = 1000 }",
        );
        let flows = rows(&sc);
        // Incasts at 0, 4 and 8 ms of the 10 ms run.
        assert_eq!(flows.len(), 9);
        assert!(flows.iter().all(|f| f.dst == 7 && f.src < 3));
    }
}
