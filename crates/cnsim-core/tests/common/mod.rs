//! Small builders for TOML scenarios and readers for the report, shared by the integration
//! tests. Scenarios are written as TOML text (the crate's only input format), so every test
//! also goes through parsing and validation exactly as a user's file does.

#![allow(dead_code)] // each test binary uses a different subset

use cnsim_core::{run_toml, ConfigError, Report, Scenario};
use serde_json::Value;

/// 10 Gb/s, the line rate of every seed.
pub const G10: f64 = 10e9;
/// Frame size used throughout (the seeds count 1500 B frames on the wire).
pub const MTU: f64 = 1500.0;
/// Default control frame size (PAUSE is a 64 B MAC control frame).
pub const CTRL: f64 = 64.0;

/// A scenario under construction: top-level keys first, then tables in the order added.
pub struct ScenarioToml {
    head: String,
    body: String,
}

impl ScenarioToml {
    pub fn new(name: &str, duration_s: f64) -> Self {
        ScenarioToml {
            head: format!("name = \"{name}\"\nduration_s = {duration_s:?}\n"),
            body: String::new(),
        }
    }

    pub fn seed(mut self, seed: u64) -> Self {
        self.head += &format!("seed = {seed}\n");
        self
    }

    pub fn probe_interval(mut self, s: f64) -> Self {
        self.body += &format!("[report]\nprobe_interval_s = {s:?}\n");
        self
    }

    pub fn host(self, name: &str) -> Self {
        self.host_with(name, "")
    }

    /// A host with extra key = value lines (e.g. `rx_rate_bps = 2e9`).
    pub fn host_with(mut self, name: &str, extra: &str) -> Self {
        self.body += &format!("[[hosts]]\nname = \"{name}\"\n{extra}\n");
        self
    }

    pub fn hosts(self, names: &[&str]) -> Self {
        names.iter().fold(self, |s, n| s.host(n))
    }

    pub fn switch(self, name: &str) -> Self {
        self.switch_with(name, "")
    }

    pub fn switch_with(mut self, name: &str, extra: &str) -> Self {
        self.body += &format!("[[switches]]\nname = \"{name}\"\n{extra}\n");
        self
    }

    pub fn link(self, a: &str, b: &str, rate_bps: f64, delay_s: f64) -> Self {
        self.link_with(a, b, rate_bps, delay_s, "")
    }

    pub fn link_with(mut self, a: &str, b: &str, rate_bps: f64, delay_s: f64, extra: &str) -> Self {
        self.body += &format!(
            "[[links]]\nends = [\"{a}\", \"{b}\"]\nrate_bps = {rate_bps:?}\ndelay_s = {delay_s:?}\n{extra}\n"
        );
        self
    }

    /// A `[[traffic]]` entry; `extra` holds the kind-specific keys.
    pub fn traffic(mut self, kind: &str, senders: &[&str], dst: &str, extra: &str) -> Self {
        let senders: Vec<String> = senders.iter().map(|s| format!("\"{s}\"")).collect();
        let dst = if dst.starts_with('[') {
            dst.to_string()
        } else {
            format!("\"{dst}\"")
        };
        self.body += &format!(
            "[[traffic]]\nkind = \"{kind}\"\nhosts = [{}]\ndst = {dst}\n{extra}\n",
            senders.join(", ")
        );
        self
    }

    pub fn saturate(self, senders: &[&str], dst: &str) -> Self {
        self.traffic("saturate", senders, dst, "")
    }

    pub fn bernoulli(self, senders: &[&str], dst: &str, load: f64) -> Self {
        self.traffic("bernoulli", senders, dst, &format!("load = {load:?}"))
    }

    /// Raw TOML appended to the tables (e.g. `[congestion]`).
    pub fn raw(mut self, text: &str) -> Self {
        self.body += text;
        self.body += "\n";
        self
    }

    pub fn build(&self) -> String {
        format!("{}\n{}", self.head, self.body)
    }
}

pub fn try_run(
    text: &str,
    overrides: &[(&str, &str)],
    seed: Option<u64>,
) -> Result<Report, ConfigError> {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    // The progress callback returns false to cancel the run.
    run_toml(text, &overrides, seed, &mut |_| true)
}

pub fn run(text: &str) -> Report {
    try_run(text, &[], None).unwrap_or_else(|e| panic!("scenario rejected: {e}\n{text}"))
}

/// The error `run_toml` rejects a scenario (with overrides) with.
pub fn run_error_of(text: &str, overrides: &[(&str, &str)]) -> ConfigError {
    match try_run(text, overrides, None) {
        Ok(_) => panic!("scenario ran but should not:\n{text}\noverrides {overrides:?}"),
        Err(e) => e,
    }
}

/// `cnsim_core::resolve` (parse, override, validate; no run) with `&str` overrides.
pub fn resolve_with(text: &str, overrides: &[(&str, &str)]) -> Result<Scenario, ConfigError> {
    let overrides: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    cnsim_core::resolve(text, &overrides, None)
}

/// The error `resolve` rejects a scenario (with overrides) with.
pub fn error_of(text: &str, overrides: &[(&str, &str)]) -> ConfigError {
    match resolve_with(text, overrides) {
        Ok(_) => {
            panic!("scenario was accepted but should not be:\n{text}\noverrides {overrides:?}")
        }
        Err(e) => e,
    }
}

/// `summary` at a slash-separated path (`frames/dropped/total`, `per_port/sw->b/paused_frac`).
pub fn at<'a>(summary: &'a Value, path: &str) -> &'a Value {
    path.split('/').fold(summary, |v, k| {
        v.get(k)
            .unwrap_or_else(|| panic!("summary has no '{k}' on the way to '{path}': {v}"))
    })
}

pub fn u(summary: &Value, path: &str) -> u64 {
    at(summary, path)
        .as_u64()
        .unwrap_or_else(|| panic!("{path} is not an integer"))
}

pub fn f(summary: &Value, path: &str) -> f64 {
    at(summary, path)
        .as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number"))
}

/// The probe series (time_s, value) of `metric` for `entity`, in time order.
pub fn series(report: &Report, metric: &str, entity: &str) -> Vec<(f64, f64)> {
    let ts = &report.timeseries;
    let m = ts
        .metrics
        .iter()
        .position(|x| x == metric)
        .unwrap_or_else(|| panic!("unknown metric {metric}")) as u32;
    let e = ts
        .entities
        .iter()
        .position(|x| x == entity)
        .unwrap_or_else(|| panic!("no entity {entity}; known: {:?}", ts.entities))
        as u32;
    (0..ts.time_s.len())
        .filter(|&i| ts.metric[i] == m && ts.entity[i] == e)
        .map(|i| (ts.time_s[i], ts.value[i]))
        .collect()
}

/// Values of a series whose sample time lies in [from_s, to_s].
pub fn values_between(s: &[(f64, f64)], from_s: f64, to_s: f64) -> Vec<f64> {
    s.iter()
        .filter(|(t, _)| *t >= from_s - 1e-12 && *t <= to_s + 1e-12)
        .map(|(_, v)| *v)
        .collect()
}

pub fn mean(v: &[f64]) -> f64 {
    assert!(!v.is_empty(), "mean of no values");
    v.iter().sum::<f64>() / v.len() as f64
}

pub fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

pub fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// generated == delivered + dropped + in flight, both as reported and recomputed.
pub fn assert_conserved(report: &Report) {
    let s = &report.summary;
    let generated = u(s, "frames/generated");
    let delivered = u(s, "frames/delivered");
    let dropped = u(s, "frames/dropped/total");
    let in_flight = u(s, "frames/in_flight");
    assert_eq!(
        generated,
        delivered + dropped + in_flight,
        "generated {generated} != delivered {delivered} + dropped {dropped} + in flight {in_flight}"
    );
    assert_eq!(at(s, "frames/conserved"), &Value::Bool(true));
    assert!(report.conserved);
    // The network-wide counters agree with the per-element ones they summarise.
    let sources = at(s, "per_source").as_object().expect("per_source");
    let sum = |key: &str| -> u64 { sources.values().map(|v| v[key].as_u64().unwrap()).sum() };
    assert_eq!(
        sum("generated_frames"),
        generated,
        "sum of per-source generated"
    );
    assert_eq!(sum("rx_frames"), delivered, "sum of per-source received");
    let switch_drops: u64 = at(s, "per_switch")
        .as_object()
        .expect("per_switch")
        .values()
        .map(|v| v["dropped_frames"].as_u64().unwrap())
        .sum();
    let at_switches = ["ingress", "shared", "egress"]
        .iter()
        .map(|p| u(s, &format!("frames/dropped/{p}")))
        .sum::<u64>();
    assert_eq!(
        switch_drops, at_switches,
        "switch drops vs ingress+shared+egress"
    );
}

/// The summary without the fields that measure the machine rather than the simulation.
pub fn deterministic_part(summary: &Value) -> Value {
    let mut s = summary.clone();
    let obj = s.as_object_mut().expect("summary is an object");
    for k in [
        "wall_time_s",
        "events_per_s",
        "frame_hops_per_s",
        "wall_s_per_sim_s",
    ] {
        assert!(obj.remove(k).is_some(), "summary lost its '{k}' field");
    }
    s
}

/// Seconds a frame of `bytes` takes at `rate_bps`.
pub fn tx_s(bytes: f64, rate_bps: f64) -> f64 {
    bytes * 8.0 / rate_bps
}

pub fn assert_close(got: f64, want: f64, rel: f64, what: &str) {
    assert!(
        (got - want).abs() <= rel * want.abs(),
        "{what}: got {got}, want {want} +- {:.1}%",
        rel * 100.0
    );
}

/// Every number in the summary is a number: NaN and infinities serialise as null. `window`,
/// `flows` and `pfc` are null when not asked for; inside `flows`, FCT statistics are null when no flow
/// completed and the requested load when the workload is a trace.
pub fn assert_no_nulls(v: &Value, path: &str) {
    match v {
        Value::Null if !["/window", "/pfc"].contains(&path) && !path.starts_with("/flows") => {
            panic!("null (NaN or infinity) at {path}")
        }
        Value::Object(m) => m
            .iter()
            .for_each(|(k, v)| assert_no_nulls(v, &format!("{path}/{k}"))),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, v)| assert_no_nulls(v, &format!("{path}/{i}"))),
        _ => {}
    }
}

/// a -> sw -> b at 10 Gb/s with 1 us links, Bernoulli 50% from a, 1 ms: the scenario the
/// error tests vary one field of.
pub fn base() -> ScenarioToml {
    ScenarioToml::new("base", 1e-3)
        .hosts(&["a", "b"])
        .switch("sw")
        .link("a", "sw", G10, 1e-6)
        .link("sw", "b", G10, 1e-6)
        .bernoulli(&["a"], "b", 0.5)
}

/// The error names `path` (as `ConfigError::path` and at the start of its message), is one
/// line, and gives a reason containing `reason`.
pub fn assert_field_error(e: &ConfigError, path: &str, reason: &str) {
    let msg = e.to_string();
    assert_eq!(e.path(), Some(path), "wrong path in: {msg}");
    assert!(msg.starts_with(&format!("{path}: ")), "{msg}");
    assert!(!msg.contains('\n'), "more than one line: {msg}");
    assert!(msg.contains(reason), "'{msg}' does not say '{reason}'");
}

/// Seconds a frame of `bytes` takes at 10 Gb/s.
pub fn tx10(bytes: f64) -> f64 {
    tx_s(bytes, G10)
}

/// The transport tests' line, a - s1 - s2 - b: three 10 Gb/s links of 1, 2 and 3 us, switch
/// latencies 0.5 and 0.25 us; one flow of `size` bytes from a to b at 1 ms over `transport`,
/// with `extra` TOML appended; 20 ms long.
pub fn transport_line(size: u64, transport: &str, extra: &str) -> String {
    transport_line_for(0.02, size, transport, extra)
}

/// `transport_line`, `duration_s` long.
pub fn transport_line_for(duration_s: f64, size: u64, transport: &str, extra: &str) -> String {
    ScenarioToml::new("line", duration_s)
        .hosts(&["a", "b"])
        .switch_with("s1", "latency_s = 0.5e-6")
        .switch_with("s2", "latency_s = 0.25e-6")
        .link("a", "s1", G10, 1e-6)
        .link("s1", "s2", G10, 2e-6)
        .link("s2", "b", G10, 3e-6)
        .raw(&format!(
            "[[traffic]]\nkind = \"flow_trace\"\ntransport = \"{transport}\"\nflows = [{{ start_s = 0.001, src = \"a\", dst = \"b\", size_bytes = {size} }}]\n{extra}"
        ))
        .build()
}

/// 8 hosts on one switch, every link losing `loss` of its frames, flows over `transport` at
/// 30% load for 2 ms, run for `duration_s` (long enough for every retransmission), with
/// `extra` TOML appended.
pub fn lossy_star(loss: f64, seed: u64, transport: &str, duration_s: f64, extra: &str) -> String {
    let names: Vec<String> = (1..=8).map(|i| format!("h{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut s = ScenarioToml::new("lossy", duration_s)
        .seed(seed)
        .hosts(&names)
        .switch("sw");
    for h in &names {
        s = s.link_with(h, "sw", G10, 1e-6, &format!("loss_rate = {loss:?}"));
    }
    s.traffic(
        "flows",
        &names,
        "uniform",
        &format!(
            "load = 0.3\nsize = {{ dist = \"exponential\", mean_bytes = 60000 }}\nstop_s = 0.002\ntransport = \"{transport}\""
        ),
    )
    .raw(extra)
    .probe_interval(duration_s / 10.0)
    .build()
}

/// What a lossy run sent again, once `assert_every_flow_completes_once` has checked it.
pub struct Resent {
    /// Frames lost (all on links).
    pub dropped: u64,
    /// Frames made beyond the flows' packets: retransmissions.
    pub frames: u64,
    /// Bytes the transports sent again, over all flows.
    pub bytes: u64,
}

/// A run of full-frame (1500 B) transported flows under link loss (`lossy_star`): more than 50
/// flows, every one complete with exactly its bytes delivered (the receiver hands each packet
/// over once, in order) and its last ACK after its last byte, every loss on a link, frames
/// conserved, at least one frame resent per frame lost, the retransmitted bytes summed as the
/// summary says, and with `loss` >= 1e-3 some loss seen and resent.
pub fn assert_every_flow_completes_once(r: &Report, loss: f64, what: &str) -> Resent {
    let (f, s) = (&r.flows, &r.summary);
    assert!(f.flow_id.len() > 50, "{what}: {} flows", f.flow_id.len());
    for i in 0..f.flow_id.len() {
        assert!(f.completed[i], "{what}: flow {i} did not complete");
        assert_eq!(f.delivered_bytes[i], f.size_bytes[i], "{what}: flow {i}");
        assert!(f.sender_end_s[i] > f.end_s[i], "{what}: flow {i}");
    }
    let dropped = u(s, "frames/dropped/total");
    assert_eq!(dropped, u(s, "frames/dropped/link"), "{what}");
    assert_eq!(
        u(s, "frames/generated"),
        u(s, "frames/delivered") + dropped + u(s, "frames/in_flight"),
        "{what}"
    );
    assert!(at(s, "frames/conserved").as_bool().unwrap(), "{what}");
    let packets: u64 = f.size_bytes.iter().map(|b| b.div_ceil(1500)).sum();
    let frames = u(s, "frames/generated") - packets;
    assert!(frames >= dropped, "{what}: {frames} resent, {dropped} lost");
    let bytes: u64 = f.retransmitted_bytes.iter().sum();
    assert_eq!(u(s, "flows/retransmitted_bytes"), bytes, "{what}");
    let sizes: u64 = f.size_bytes.iter().sum();
    assert_eq!(u(s, "flows/delivered_bytes"), sizes, "{what}");
    if loss >= 1e-3 {
        assert!(dropped > 0 && bytes > 0, "{what}: no loss seen");
    }
    Resent {
        dropped,
        frames,
        bytes,
    }
}
