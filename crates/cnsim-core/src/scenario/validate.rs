//! Semantic checks that types alone cannot express. Each failure names its field's path.

use std::collections::HashSet;

use super::*;
use crate::error::Check;

const UNIFORM: &str = "uniform";

pub(crate) use crate::error::MAX_FRAME_BYTES;

/// Smallest Bernoulli load: one frame per 10^9 slots on average. Below it the geometric gap
/// sampler cannot be set up (at 1e-16, 1 - load rounds to 1.0 and its setup loops forever).
pub const MIN_LOAD: f64 = 1e-9;

/// Ports per node are numbered in a u16 and u16::MAX means "no route".
pub const MAX_PORTS_PER_NODE: usize = u16::MAX as usize - 1;

impl Scenario {
    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        let top = Check { path: "" };
        top.time_positive("duration_s", self.duration_s)?;
        if self.hosts.is_empty() {
            return Err(top.fail("hosts", "at least one host is required"));
        }
        self.validate_names()?;
        for (i, h) in self.hosts.iter().enumerate() {
            h.validate(&format!("hosts[{i}]"))?;
        }
        for (i, s) in self.switches.iter().enumerate() {
            s.validate(&format!("switches[{i}]"))?;
        }
        let nodes: HashSet<&str> = (self.hosts.iter().map(|h| h.name.as_str()))
            .chain(self.switches.iter().map(|s| s.name.as_str()))
            .collect();
        for (i, l) in self.links.iter().enumerate() {
            self.validate_link(l, &format!("links[{i}]"), &nodes)?;
        }
        self.validate_host_attachment()?;
        // Looked up once per traffic host and flow: a set, not a search of the host list.
        let host_names: HashSet<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
        for (i, t) in self.traffic.iter().enumerate() {
            self.validate_traffic(t, &format!("traffic[{i}]"), &host_names)?;
        }
        // Each scheme's table, checked by the scheme (`cc/`).
        self.congestion.validate()?;
        self.transport.validate()?;
        if let Some(pfc) = &self.pfc {
            let shared = self
                .switches
                .iter()
                .all(|s| s.shared_buffer_bytes.is_some());
            pfc.validate("pfc", shared)?;
        }
        self.report.validate("report", self.duration_s)?;
        let m = Check { path: "model" };
        if !(64..=MAX_FRAME_BYTES).contains(&self.model.control_frame_bytes) {
            return Err(m.fail(
                "control_frame_bytes",
                format!(
                    "must be in [64, {MAX_FRAME_BYTES}] (an Ethernet frame; got {})",
                    self.model.control_frame_bytes
                ),
            ));
        }
        if self.model.wire_overhead_bytes > MAX_FRAME_BYTES {
            return Err(m.fail(
                "wire_overhead_bytes",
                format!(
                    "must be in [0, {MAX_FRAME_BYTES}] (got {})",
                    self.model.wire_overhead_bytes
                ),
            ));
        }
        self.validate_ports()?;
        self.validate_resources()
    }

    fn validate_names(&self) -> Result<(), ConfigError> {
        let mut seen = HashSet::new();
        let all = self
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (format!("hosts[{i}].name"), &h.name))
            .chain(
                self.switches
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (format!("switches[{i}].name"), &s.name)),
            );
        for (path, name) in all {
            if name.is_empty()
                || name == UNIFORM
                || name == flows::PERMUTATION
                || name.contains("->")
            {
                return Err(ConfigError::field(
                    path,
                    format!(
                        "'{name}' is not a usable node name \
                         (empty, 'uniform', 'permutation', or contains '->')"
                    ),
                ));
            }
            if !seen.insert(name.clone()) {
                return Err(ConfigError::field(
                    path,
                    format!("duplicate node name '{name}'"),
                ));
            }
        }
        Ok(())
    }

    fn validate_link(
        &self,
        l: &LinkSpec,
        path: &str,
        nodes: &HashSet<&str>,
    ) -> Result<(), ConfigError> {
        let c = Check { path };
        for end in &l.ends {
            if !nodes.contains(end.as_str()) {
                return Err(c.fail("ends", format!("unknown node '{end}'")));
            }
        }
        if l.ends[0] == l.ends[1] {
            return Err(c.fail("ends", "a link must join two different nodes"));
        }
        c.rate("rate_bps", l.rate_bps)?;
        c.time_non_negative("delay_s", l.delay_s)?;
        c.time_non_negative("delay_line_s", l.delay_line_s)?;
        c.in_closed("loss_rate", l.loss_rate, 0.0, 1.0)?;
        for (j, step) in l.schedule.iter().enumerate() {
            let sp = format!("{path}.schedule[{j}]");
            let sc = Check { path: &sp };
            if !l.ends.contains(&step.from) {
                return Err(sc.fail(
                    "from",
                    format!("'{}' is not an end of this link", step.from),
                ));
            }
            sc.time_non_negative("at_s", step.at_s)?;
            sc.rate("rate_bps", step.rate_bps)?;
            if step.rate_bps > l.rate_bps {
                return Err(sc.fail("rate_bps", "must not exceed the link's rate_bps"));
            }
        }
        Ok(())
    }

    /// Every host has exactly one link (counted in one pass: thousands of hosts stay fast).
    fn validate_host_attachment(&self) -> Result<(), ConfigError> {
        let mut links_of: std::collections::HashMap<&str, usize> = Default::default();
        for l in &self.links {
            for end in &l.ends {
                *links_of.entry(end.as_str()).or_default() += 1;
            }
        }
        for (i, h) in self.hosts.iter().enumerate() {
            let n = links_of.get(h.name.as_str()).copied().unwrap_or(0);
            if n != 1 {
                return Err(ConfigError::field(
                    format!("hosts[{i}]"),
                    format!("host '{}' must have exactly one link (has {n})", h.name),
                ));
            }
        }
        Ok(())
    }

    fn validate_traffic(
        &self,
        t: &TrafficSpec,
        path: &str,
        host_names: &HashSet<&str>,
    ) -> Result<(), ConfigError> {
        super::locality::check_entry(t, path, self.hosts.len() as u32)?;
        // Before the kinds that return early (incast, flow_trace): the build reads `load` for
        // every entry with this basis.
        let load_kind = matches!(t.kind, TrafficKind::Bernoulli | TrafficKind::Flows);
        if !load_kind && t.load_basis != LoadBasis::HostLink {
            return Err(Check { path }.fail(
                "load_basis",
                format!(
                    "does not apply to kind = \"{}\" (only \"bernoulli\" and \"flows\" have a load)",
                    t.kind.name()
                ),
            ));
        }
        if t.kind == TrafficKind::Incast {
            return self.validate_incast(t, path, host_names);
        }
        super::incast::check_fields_apply(t, path)?;
        let c = Check { path };
        if t.seed.is_some() && matches!(t.kind, TrafficKind::FlowTrace | TrafficKind::Saturate) {
            return Err(c.fail("seed", "does not apply to kind (nothing random to seed)"));
        }
        self.validate_flow_fields(t, path, host_names)?;
        super::transport::check_entry(t, path)?;
        if t.kind == TrafficKind::FlowTrace {
            return Ok(());
        }
        if t.hosts.is_empty() {
            return Err(c.fail("hosts", "at least one sending host is required"));
        }
        for h in &t.hosts {
            if !host_names.contains(h.as_str()) {
                return Err(c.fail("hosts", format!("unknown host '{h}'")));
            }
        }
        let Some(dst) = &t.dst else {
            return Err(c.fail("dst", "required (a host, \"uniform\" or a list)"));
        };
        match dst {
            DstSpec::One(d) if d == flows::PERMUTATION => {
                if t.kind != TrafficKind::Flows || t.hosts.len() < 2 {
                    return Err(c.fail(
                        "dst",
                        "'permutation' needs kind = \"flows\" and at least two hosts",
                    ));
                }
            }
            DstSpec::One(d) if d == UNIFORM => {
                if self.hosts.len() < 2 {
                    return Err(c.fail("dst", "'uniform' needs at least two hosts"));
                }
            }
            DstSpec::One(d) => Self::check_dst(&c, t, d, host_names)?,
            DstSpec::Many(list) => {
                if list.is_empty() {
                    return Err(c.fail("dst", "the destination list is empty"));
                }
                for d in list {
                    Self::check_dst(&c, t, d, host_names)?;
                }
            }
            // Expanded into a list when the scenario is read (`expand_topology`).
            DstSpec::Part(_) => return Err(c.fail("dst", "a selection needs a [topology]")),
        }
        let stray = match t.kind {
            TrafficKind::Bernoulli => t.rate_bps.map(|_| "rate_bps"),
            TrafficKind::Cbr => t.load.map(|_| "load"),
            TrafficKind::Saturate => t.load.map(|_| "load").or(t.rate_bps.map(|_| "rate_bps")),
            TrafficKind::Flows | TrafficKind::FlowTrace => t.rate_bps.map(|_| "rate_bps"),
            TrafficKind::Incast => unreachable!("validated above"),
        };
        if let Some(field) = stray {
            return Err(c.fail(
                field,
                format!("does not apply to kind = \"{}\"", t.kind.name()),
            ));
        }
        match t.kind {
            TrafficKind::Bernoulli => match t.load {
                // Below MIN_LOAD the geometric gap sampler cannot be built (1 - load rounds to
                // 1.0 and its setup never ends) and gaps pass the end of the clock.
                Some(load) => {
                    c.in_open_closed("load", load, 0.0, 1.0)?;
                    c.in_range("load", load, MIN_LOAD, 1.0, "of the line rate")?
                }
                None => return Err(c.fail("load", "required for kind = \"bernoulli\"")),
            },
            TrafficKind::Cbr => match t.rate_bps {
                Some(r) => c.rate("rate_bps", r)?,
                None => return Err(c.fail("rate_bps", "required for kind = \"cbr\"")),
            },
            TrafficKind::Flows => match t.load {
                Some(load) => c.in_open_closed("load", load, 0.0, 1.0)?,
                None => return Err(c.fail("load", "required for kind = \"flows\"")),
            },
            TrafficKind::Saturate | TrafficKind::FlowTrace | TrafficKind::Incast => {}
        }
        check_frame_and_times(&c, t)
    }

    fn check_dst(
        c: &Check,
        t: &TrafficSpec,
        d: &str,
        host_names: &HashSet<&str>,
    ) -> Result<(), ConfigError> {
        if !host_names.contains(d) {
            return Err(c.fail("dst", format!("unknown host '{d}'")));
        }
        if t.hosts.len() == 1 && t.hosts[0] == d {
            return Err(c.fail("dst", format!("host '{d}' cannot send to itself")));
        }
        Ok(())
    }
}

/// Any entry's frame size and its start and stop times (frame sources, flows, incasts).
pub(super) fn check_frame_and_times(c: &Check, t: &TrafficSpec) -> Result<(), ConfigError> {
    if !(64..=MAX_FRAME_BYTES).contains(&t.frame_bytes) {
        return Err(c.fail(
            "frame_bytes",
            format!("must be in [64, {MAX_FRAME_BYTES}] (got {})", t.frame_bytes),
        ));
    }
    c.time_non_negative("start_s", t.start_s)?;
    if let Some(stop) = t.stop_s {
        c.time_positive("stop_s", stop)?;
        if stop <= t.start_s {
            return Err(c.fail("stop_s", format!("must be after start_s (got {stop})")));
        }
    }
    Ok(())
}

/// Defaults of `[limits]`.
pub(crate) const DEFAULT_MAX_EVENTS: f64 = 1e10;
pub(crate) const DEFAULT_MAX_PROBE_SAMPLES: f64 = 1e8;
pub(crate) const DEFAULT_MAX_MEMORY_BYTES: f64 = 8e9;

impl Scenario {
    /// Ports per node fit their u16 index.
    fn validate_ports(&self) -> Result<(), ConfigError> {
        let mut ports: std::collections::HashMap<&str, usize> = Default::default();
        for l in &self.links {
            for end in &l.ends {
                *ports.entry(end.as_str()).or_default() += 1;
            }
        }
        for (i, s) in self.switches.iter().enumerate() {
            let n = ports.get(s.name.as_str()).copied().unwrap_or(0);
            if n > MAX_PORTS_PER_NODE {
                return Err(ConfigError::field(
                    format!("switches[{i}]"),
                    format!(
                        "switch '{}' has {n} links; at most {MAX_PORTS_PER_NODE} fit its port numbers",
                        s.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a run whose estimate passes a `[limits]` cap, naming the cap to raise. An entry
    /// with `load_basis = "busiest_link"` is left out here (its hosts' load needs the routes);
    /// the build checks again with its hosts' load once it is known (`sim/build.rs`).
    pub(crate) fn validate_resources(&self) -> Result<(), ConfigError> {
        let c = Check { path: "limits" };
        let caps = [
            ("max_events", self.limits.max_events, DEFAULT_MAX_EVENTS),
            (
                "max_probe_samples",
                self.limits.max_probe_samples,
                DEFAULT_MAX_PROBE_SAMPLES,
            ),
            (
                "max_memory_bytes",
                self.limits.max_memory_bytes,
                DEFAULT_MAX_MEMORY_BYTES,
            ),
        ];
        for (field, given, _) in &caps {
            if let Some(v) = given {
                c.positive(field, *v)?;
            }
        }
        let e = self.estimate_known_loads();
        let left_out: Vec<String> = (self.traffic.iter().enumerate())
            .filter(|(_, t)| t.load_basis == LoadBasis::BusiestLink)
            .map(|(i, _)| format!("traffic[{i}]"))
            .collect();
        let without = match left_out.is_empty() {
            true => String::new(),
            false => format!(
                " without {} (a load on the busiest link: counted once the routes are known)",
                left_out.join(", ")
            ),
        };
        let needs = [
            (e.events, "events"),
            (e.probe_samples, "probe samples"),
            (e.memory_bytes, "bytes of memory"),
        ];
        for ((field, given, default), (need, what)) in caps.iter().zip(needs) {
            let cap = given.unwrap_or(*default);
            if need > cap {
                return Err(c.fail(
                    field,
                    format!(
                        "the run needs about {need:.2e} {what}{without}, above the cap of \
                         {cap:.2e}; shorten it or raise limits.{field}"
                    ),
                ));
            }
        }
        Ok(())
    }
}
