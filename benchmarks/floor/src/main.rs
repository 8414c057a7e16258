//! A lean model of `meta-fabric-6144`'s open-loop run, written to measure what a frame-hop
//! costs on this machine in a loop of the same events that does nothing else: a reference for
//! cnsim's loop, not a simulator (benchmarks/floor/README.md says what it leaves out and what it showed).
//!
//! The same fabric (8 pods x 48 racks x 16 hosts at 10 Gb/s, 4 fabric switches a pod, 4 planes
//! of 24 spines, 40 Gb/s fabric links, 1 us each), the same traffic (WebSearch flows, Poisson
//! arrivals at 28.6% of a host's line rate, uniform destinations, 1,500-byte frames, each
//! host's flows served in round robin), the same switch (a 12 MB shared buffer, drop-tail,
//! one FIFO per output, a frame passing through an idle port at once) and the same events:
//! an arrival per frame-hop, a port's departure only when a frame waited, a host's wake-up
//! when it has more to send, a flow's start. What it drops is everything cnsim keeps for the
//! schemes and the outputs: the frame is 16 bytes (destination, flow, size, hash) and travels
//! inside its arrival event; routing is arithmetic on the destination's coordinates; no
//! congestion point, PAUSE, PFC, probe, time series or per-port statistics.

mod fabric;
mod queue;

use fabric::{parse_cdf, peak_rss_bytes, Fabric, Shape, WEBSEARCH};
use std::time::Instant;

/// `meta-fabric-6144`'s load: 50% on the fabric-spine links, 28.6% at the hosts.
const HOST_LOAD: f64 = 0.5 / 1.75;

const USAGE: &str = "usage: cnsim-floor DURATION_MS [--seed N] [--cdf FILE]";

struct Args {
    duration_ms: f64,
    seed: u64,
    cdf_text: String,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut it = args.iter();
    let duration = it.next().ok_or("DURATION_MS: missing")?;
    let duration_ms = (duration.parse::<f64>().ok())
        .filter(|d| d.is_finite() && *d >= 0.0)
        .ok_or_else(|| format!("DURATION_MS: {duration:?} is not a number of milliseconds >= 0"))?;
    let mut parsed = Args {
        duration_ms,
        seed: 1,
        cdf_text: WEBSEARCH.to_string(),
    };
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag}: missing its value"))?;
        match flag.as_str() {
            "--seed" => {
                parsed.seed = value
                    .parse()
                    .map_err(|_| format!("--seed: {value:?} is not an integer"))?
            }
            "--cdf" => {
                parsed.cdf_text =
                    std::fs::read_to_string(value).map_err(|e| format!("--cdf: {value}: {e}"))?
            }
            _ => return Err(format!("{flag}: unknown option")),
        }
    }
    Ok(parsed)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fail = |why: String| -> ! {
        eprintln!("cnsim-floor: {why}\n{USAGE}");
        std::process::exit(2)
    };
    let args = parse_args(&args).unwrap_or_else(|why| fail(why));
    let cdf = parse_cdf(&args.cdf_text).unwrap_or_else(|why| fail(format!("--cdf: {why}")));
    let mut fabric = Fabric::new(Shape::META_6144, HOST_LOAD, cdf, args.seed);
    let started = Instant::now();
    fabric.run((args.duration_ms * 1e9) as u64);
    let loop_s = started.elapsed().as_secs_f64();
    let c = &fabric.counts;
    let in_flight = fabric.in_flight();
    assert_eq!(
        c.generated,
        c.delivered + c.dropped + in_flight,
        "frames are conserved"
    );
    let hops = c.frame_hops.max(1) as f64;
    println!(
        "{{\"duration_ms\": {}, \"loop_s\": {loop_s:.3}, \"events\": {}, \"frame_hops\": {}, \
         \"ns_per_frame_hop\": {:.1}, \"events_per_frame_hop\": {:.3}, \"generated\": {}, \
         \"delivered\": {}, \"dropped\": {}, \"in_flight\": {in_flight}, \"flows_started\": {}, \
         \"flows_completed\": {}, \"fct_mean_us\": {:.1}, \"peak_rss_bytes\": {}}}",
        args.duration_ms,
        c.events,
        c.frame_hops,
        loop_s * 1e9 / hops,
        c.events as f64 / hops,
        c.generated,
        c.delivered,
        c.dropped,
        c.flows_started,
        c.flows_completed,
        c.fct_sum_ps as f64 / c.flows_completed.max(1) as f64 / 1e6,
        peak_rss_bytes(),
    );
}
