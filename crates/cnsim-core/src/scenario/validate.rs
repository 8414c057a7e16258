//! Semantic checks that types alone cannot express. Each failure names its field's path.

use std::collections::HashSet;

use super::*;
use crate::error::Check;

const UNIFORM: &str = "uniform";

impl Scenario {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let top = Check { path: "" };
        top.positive("duration_s", self.duration_s)?;
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
        for (i, l) in self.links.iter().enumerate() {
            self.validate_link(l, &format!("links[{i}]"))?;
        }
        self.validate_host_attachment()?;
        for (i, t) in self.traffic.iter().enumerate() {
            self.validate_traffic(t, &format!("traffic[{i}]"))?;
        }
        self.validate_congestion()?;
        self.report.validate("report", self.duration_s)?;
        let m = Check { path: "model" };
        if self.model.control_frame_bytes < 64 {
            return Err(m.fail(
                "control_frame_bytes",
                "must be >= 64 (an Ethernet minimum frame)",
            ));
        }
        Ok(())
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
            if name.is_empty() || name == UNIFORM || name.contains("->") {
                return Err(ConfigError::field(
                    path,
                    format!(
                        "'{name}' is not a usable node name (empty, 'uniform', or contains '->')"
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

    fn node_exists(&self, name: &str) -> bool {
        self.hosts.iter().any(|h| h.name == name) || self.switches.iter().any(|s| s.name == name)
    }

    fn host_exists(&self, name: &str) -> bool {
        self.hosts.iter().any(|h| h.name == name)
    }

    fn validate_link(&self, l: &LinkSpec, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        for end in &l.ends {
            if !self.node_exists(end) {
                return Err(c.fail("ends", format!("unknown node '{end}'")));
            }
        }
        if l.ends[0] == l.ends[1] {
            return Err(c.fail("ends", "a link must join two different nodes"));
        }
        c.positive("rate_bps", l.rate_bps)?;
        c.non_negative("delay_s", l.delay_s)?;
        c.non_negative("delay_line_s", l.delay_line_s)?;
        for (j, step) in l.schedule.iter().enumerate() {
            let sp = format!("{path}.schedule[{j}]");
            let sc = Check { path: &sp };
            if !l.ends.contains(&step.from) {
                return Err(sc.fail(
                    "from",
                    format!("'{}' is not an end of this link", step.from),
                ));
            }
            sc.non_negative("at_s", step.at_s)?;
            sc.positive("rate_bps", step.rate_bps)?;
            if step.rate_bps > l.rate_bps {
                return Err(sc.fail("rate_bps", "must not exceed the link's rate_bps"));
            }
        }
        Ok(())
    }

    fn validate_host_attachment(&self) -> Result<(), ConfigError> {
        for (i, h) in self.hosts.iter().enumerate() {
            let n = self
                .links
                .iter()
                .filter(|l| l.ends.contains(&h.name))
                .count();
            if n != 1 {
                return Err(ConfigError::field(
                    format!("hosts[{i}]"),
                    format!("host '{}' must have exactly one link (has {n})", h.name),
                ));
            }
        }
        Ok(())
    }

    fn validate_traffic(&self, t: &TrafficSpec, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        if t.hosts.is_empty() {
            return Err(c.fail("hosts", "at least one sending host is required"));
        }
        for h in &t.hosts {
            if !self.host_exists(h) {
                return Err(c.fail("hosts", format!("unknown host '{h}'")));
            }
        }
        match &t.dst {
            DstSpec::One(d) if d == UNIFORM => {
                if self.hosts.len() < 2 {
                    return Err(c.fail("dst", "'uniform' needs at least two hosts"));
                }
            }
            DstSpec::One(d) => self.check_dst(&c, t, d)?,
            DstSpec::Many(list) => {
                if list.is_empty() {
                    return Err(c.fail("dst", "the destination list is empty"));
                }
                for d in list {
                    self.check_dst(&c, t, d)?;
                }
            }
        }
        let stray = match t.kind {
            TrafficKind::Bernoulli => t.rate_bps.map(|_| "rate_bps"),
            TrafficKind::Cbr => t.load.map(|_| "load"),
            TrafficKind::Saturate => t.load.map(|_| "load").or(t.rate_bps.map(|_| "rate_bps")),
        };
        if let Some(field) = stray {
            return Err(c.fail(
                field,
                format!("does not apply to kind = \"{:?}\"", t.kind).to_lowercase(),
            ));
        }
        match t.kind {
            TrafficKind::Bernoulli => match t.load {
                Some(load) => c.in_open_closed("load", load, 0.0, 1.0)?,
                None => return Err(c.fail("load", "required for kind = \"bernoulli\"")),
            },
            TrafficKind::Cbr => match t.rate_bps {
                Some(r) => c.positive("rate_bps", r)?,
                None => return Err(c.fail("rate_bps", "required for kind = \"cbr\"")),
            },
            TrafficKind::Saturate => {}
        }
        if !(64..=9216).contains(&t.frame_bytes) {
            return Err(c.fail(
                "frame_bytes",
                format!("must be in [64, 9216] (got {})", t.frame_bytes),
            ));
        }
        c.non_negative("start_s", t.start_s)?;
        if let Some(stop) = t.stop_s {
            if stop.is_nan() || stop <= t.start_s {
                return Err(c.fail("stop_s", format!("must be after start_s (got {stop})")));
            }
        }
        Ok(())
    }

    fn check_dst(&self, c: &Check, t: &TrafficSpec, d: &str) -> Result<(), ConfigError> {
        if !self.host_exists(d) {
            return Err(c.fail("dst", format!("unknown host '{d}'")));
        }
        if t.hosts.len() == 1 && t.hosts[0] == d {
            return Err(c.fail("dst", format!("host '{d}' cannot send to itself")));
        }
        Ok(())
    }

    fn validate_congestion(&self) -> Result<(), ConfigError> {
        if let Some(q) = &self.congestion.qcn {
            q.validate("congestion.qcn")?;
        }
        if let Some(b) = &self.congestion.bcn {
            b.validate("congestion.bcn")?;
        }
        Ok(())
    }
}

impl HostSpec {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        if let Some(b) = self.nic_buffer_bytes {
            c.positive("nic_buffer_bytes", b)?;
        }
        if let Some(r) = self.rx_rate_bps {
            c.positive("rx_rate_bps", r)?;
        }
        validate_schedule(&self.rx_schedule, &format!("{path}.rx_schedule"))?;
        if let Some(b) = self.rx_buffer_bytes {
            c.positive("rx_buffer_bytes", b)?;
        }
        if let Some(w) = &self.rx_pause {
            validate_watermarks(w.xoff_bytes, w.xon_bytes, &format!("{path}.rx_pause"))?;
            if w.quanta == 0 {
                return Err(c.fail("rx_pause.quanta", "must be > 0 (0 is XON)"));
            }
        }
        let has_rx_server = self.rx_rate_bps.is_some() || !self.rx_schedule.is_empty();
        if !has_rx_server && (self.rx_buffer_bytes.is_some() || self.rx_pause.is_some()) {
            let field = if self.rx_pause.is_some() {
                "rx_pause"
            } else {
                "rx_buffer_bytes"
            };
            return Err(c.fail(
                field,
                "needs rx_rate_bps or rx_schedule (a receiver without a service rate never queues)",
            ));
        }
        c.non_negative("response_delay_s", self.response_delay_s)
    }
}

fn validate_schedule(steps: &[RateStep], path: &str) -> Result<(), ConfigError> {
    let mut last = -1.0;
    for (j, s) in steps.iter().enumerate() {
        let sp = format!("{path}[{j}]");
        let c = Check { path: &sp };
        c.non_negative("at_s", s.at_s)?;
        c.positive("rate_bps", s.rate_bps)?;
        if s.at_s < last {
            return Err(c.fail("at_s", "steps must be in time order"));
        }
        last = s.at_s;
    }
    Ok(())
}

fn validate_watermarks(xoff: f64, xon: f64, path: &str) -> Result<(), ConfigError> {
    let c = Check { path };
    c.positive("xoff_bytes", xoff)?;
    c.non_negative("xon_bytes", xon)?;
    if xon > xoff {
        return Err(c.fail(
            "xon_bytes",
            format!("must be <= xoff_bytes ({xoff}) (got {xon})"),
        ));
    }
    Ok(())
}

impl SwitchSpec {
    fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.non_negative("latency_s", self.latency_s)?;
        for (field, v) in [
            ("shared_buffer_bytes", self.shared_buffer_bytes),
            ("output_buffer_bytes", self.output_buffer_bytes),
            ("input_buffer_bytes", self.input_buffer_bytes),
        ] {
            if let Some(v) = v {
                c.positive(field, v)?;
            }
        }
        if let Some(p) = &self.pause {
            validate_watermarks(p.xoff_bytes, p.xon_bytes, &format!("{path}.pause"))?;
            if p.quanta == 0 {
                return Err(c.fail("pause.quanta", "must be > 0 (0 is XON)"));
            }
        }
        Ok(())
    }
}

impl ReportSpec {
    fn validate(&self, path: &str, duration_s: f64) -> Result<(), ConfigError> {
        let c = Check { path };
        c.positive("probe_interval_s", self.probe_interval_s)?;
        if duration_s / self.probe_interval_s > 1e7 {
            return Err(c.fail(
                "probe_interval_s",
                "more than 10 million probes per run; raise it",
            ));
        }
        if let Some([a, b]) = self.window_s {
            if !(a >= 0.0 && a < b && b <= duration_s) {
                return Err(c.fail(
                    "window_s",
                    format!("must satisfy 0 <= start < end <= duration_s (got [{a}, {b}])"),
                ));
            }
        }
        if let Some(r) = &self.recovery {
            let rp = format!("{path}.recovery");
            let rc = Check { path: &rp };
            rc.non_negative("after_s", r.after_s)?;
            rc.positive("capacity_bps", r.capacity_bps)?;
            rc.in_open_closed("band", r.band, 0.0, 1.0)?;
            if let Some(h) = r.hold_s {
                rc.non_negative("hold_s", h)?;
            }
            check_metric(&rc, "metric", &r.metric)?;
        }
        if let Some(t) = &self.transient {
            let tp = format!("{path}.transient");
            let tc = Check { path: &tp };
            check_metric(&tc, "metric", &t.metric)?;
            if !["chord", "settle", "flat"].contains(&t.method.as_str()) {
                return Err(tc.fail(
                    "method",
                    format!(
                        "must be \"chord\", \"settle\" or \"flat\" (got \"{}\")",
                        t.method
                    ),
                ));
            }
            tc.positive("tol", t.tol)?;
            tc.in_open_closed("max_fraction", t.max_fraction, 0.0, 1.0)?;
            if let Some(r) = t.rtt_s {
                tc.positive("rtt_s", r)?;
            }
            for (field, v) in [("start_s", t.start_s), ("end_s", t.end_s)] {
                if let Some(v) = v {
                    tc.non_negative(field, v)?;
                }
            }
        }
        for (i, p) in self.plots.iter().enumerate() {
            let pp = format!("{path}.plots[{i}]");
            check_metric(&Check { path: &pp }, "metric", &p.metric)?;
        }
        Ok(())
    }
}

fn check_metric(c: &Check, field: &str, metric: &str) -> Result<(), ConfigError> {
    if METRICS.contains(&metric) {
        Ok(())
    } else {
        Err(c.fail(
            field,
            format!("unknown metric '{metric}' (known: {})", METRICS.join(", ")),
        ))
    }
}
