//! `kind = "incast"` in the scenario: periodic N-to-1 incasts on top of other traffic (the HPCC
//! paper's workload, SIGCOMM 2019 section 5: WebSearch background plus incasts). Every
//! `interval_s` from `start_s`, one receiver (`dst`: a host, or "uniform" over `hosts`) and
//! `fan_in` distinct senders drawn from `hosts` without it each start one flow of `size`.
//! The flows are made before the run (`traffic/incast.rs`), as `kind = "flows"` are.

use std::collections::HashSet;

use super::flows::check_priority;
use super::{DstSpec, Scenario, TrafficKind, TrafficSpec};
use crate::error::{Check, ConfigError};

/// `dst = "uniform"`: a receiver drawn from the entry's hosts at each incast.
pub(crate) const UNIFORM: &str = "uniform";

/// `fan_in` and `interval_s` apply to `kind = "incast"` only.
pub(super) fn check_fields_apply(t: &TrafficSpec, path: &str) -> Result<(), ConfigError> {
    let stray = [
        t.fan_in.map(|_| "fan_in"),
        t.interval_s.map(|_| "interval_s"),
    ];
    match stray.into_iter().flatten().next() {
        Some(field) if t.kind != TrafficKind::Incast => Err(Check { path }.fail(
            field,
            format!(
                "applies to kind = \"incast\" only (got kind = \"{}\")",
                t.kind.name()
            ),
        )),
        _ => Ok(()),
    }
}

/// The receiver of every incast (None: "uniform", drawn each time).
pub(crate) fn fixed_receiver(t: &TrafficSpec) -> Option<&str> {
    match t.dst.as_ref() {
        Some(DstSpec::One(d)) if d != UNIFORM => Some(d.as_str()),
        _ => None,
    }
}

/// How many distinct hosts an incast's senders are drawn from: the entry's hosts without the
/// receiver (a fixed receiver may or may not be one of them; a uniform one always is).
pub(crate) fn sender_pool_size(t: &TrafficSpec) -> usize {
    let distinct: HashSet<&str> = t.hosts.iter().map(String::as_str).collect();
    match fixed_receiver(t) {
        Some(d) => distinct.len() - usize::from(distinct.contains(d)),
        None => distinct.len().saturating_sub(1),
    }
}

impl Scenario {
    /// Every field of an incast entry, with errors naming the field.
    pub(super) fn validate_incast(
        &self,
        t: &TrafficSpec,
        path: &str,
        host_names: &HashSet<&str>,
    ) -> Result<(), ConfigError> {
        let c = Check { path };
        let stray = [
            t.load.map(|_| "load"),
            t.rate_bps.map(|_| "rate_bps"),
            t.trace.as_ref().map(|_| "trace"),
            (!t.flows.is_empty()).then_some("flows"),
        ];
        if let Some(field) = stray.into_iter().flatten().next() {
            return Err(c.fail(field, "does not apply to kind = \"incast\""));
        }
        if t.hosts.is_empty() {
            return Err(c.fail("hosts", "the hosts the senders are drawn from are required"));
        }
        if let Some(h) = t.hosts.iter().find(|h| !host_names.contains(h.as_str())) {
            return Err(c.fail("hosts", format!("unknown host '{h}'")));
        }
        match &t.dst {
            Some(DstSpec::One(d)) if d == UNIFORM || host_names.contains(d.as_str()) => {}
            Some(DstSpec::One(d)) => return Err(c.fail("dst", format!("unknown host '{d}'"))),
            None => {
                return Err(c.fail(
                    "dst",
                    "required for kind = \"incast\": the receiver, a host or \"uniform\" \
                     (drawn from hosts at each incast)",
                ))
            }
            Some(_) => {
                return Err(c.fail(
                    "dst",
                    "must be one host or \"uniform\" for kind = \"incast\" (the receiver of \
                     each incast; not a list or a part of the topology)",
                ))
            }
        }
        let pool = sender_pool_size(t);
        match t.fan_in {
            None | Some(0) => {
                return Err(c.fail(
                    "fan_in",
                    "required for kind = \"incast\": the senders per incast, at least 1",
                ))
            }
            Some(n) if n as usize > pool => {
                return Err(c.fail(
                    "fan_in",
                    format!(
                        "must be at most the {pool} host(s) of hosts other than the receiver \
                         (got {n})"
                    ),
                ))
            }
            Some(_) => {}
        }
        match t.interval_s {
            Some(interval) => c.time_positive("interval_s", interval)?,
            None => return Err(c.fail("interval_s", "required for kind = \"incast\"")),
        }
        let Some(size) = &t.size else {
            return Err(c.fail(
                "size",
                "required for kind = \"incast\" (e.g. { bytes = 500000 })",
            ));
        };
        size.validate(&format!("{path}.size"))?;
        check_priority(&c, t.priority)?;
        super::validate::check_frame_and_times(&c, t)
    }
}

/// An incast entry's offered rate per host of `hosts`, in bits per second, for the estimate:
/// fan_in flows of the mean size every interval, spread over the pool.
pub(crate) fn offered_bps_per_host(t: &TrafficSpec, mean_bytes: Option<f64>) -> f64 {
    let (Some(fan_in), Some(interval), Some(mean)) = (t.fan_in, t.interval_s, mean_bytes) else {
        return 0.0;
    };
    if t.hosts.is_empty() || interval <= 0.0 {
        return 0.0;
    }
    f64::from(fan_in) * mean * 8.0 / interval / t.hosts.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "name = \"t\"\nduration_s = 0.01\n[topology]\nkind = \"leaf_spine\"\n\
                        leaves = 2\nspines = 1\nhosts_per_leaf = 2\n[[traffic]]\n";
    const GOOD: &str = "kind = \"incast\"\nhosts = \"all\"\ndst = \"uniform\"\nfan_in = 3\n\
                        interval_s = 0.001\nsize = { bytes = 1000 }\n";

    fn error(entry: &str) -> String {
        match Scenario::from_toml(&format!("{HEAD}{entry}"), &[]) {
            Ok(_) => panic!("accepted: {entry}"),
            Err(e) => e.to_string(),
        }
    }

    fn with(replace: &str, by: &str) -> String {
        assert!(GOOD.contains(replace), "{replace}");
        GOOD.replace(replace, by)
    }

    #[test]
    fn a_complete_entry_is_accepted_and_resolves_a_fixed_size() {
        let sc = Scenario::from_toml(&format!("{HEAD}{GOOD}"), &[]).expect("valid");
        assert!(sc.to_toml().contains("dist = \"fixed\""));
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (with("fan_in = 3\n", ""), "traffic[0].fan_in", "required"),
            (
                with("fan_in = 3", "fan_in = 0"),
                "traffic[0].fan_in",
                "at least 1",
            ),
            // Four hosts, the receiver one of them: at most 3 senders.
            (
                with("fan_in = 3", "fan_in = 4"),
                "traffic[0].fan_in",
                "at most the 3",
            ),
            (
                with("interval_s = 0.001\n", ""),
                "traffic[0].interval_s",
                "required",
            ),
            (
                with("interval_s = 0.001", "interval_s = 0"),
                "traffic[0].interval_s",
                "",
            ),
            (
                with("interval_s = 0.001", "interval_s = -1"),
                "traffic[0].interval_s",
                "",
            ),
            (
                with("size = { bytes = 1000 }\n", ""),
                "traffic[0].size",
                "required",
            ),
            (
                with("size = { bytes = 1000 }", "size = { bytes = 0 }"),
                "size.bytes",
                "",
            ),
            (
                format!("{GOOD}load = 0.5\n"),
                "traffic[0].load",
                "does not apply",
            ),
            (
                with("dst = \"uniform\"", "dst = \"nobody\""),
                "traffic[0].dst",
                "unknown",
            ),
            (
                with("dst = \"uniform\"", "dst = [\"h0_0\"]"),
                "traffic[0].dst",
                "one host or",
            ),
            (
                with("dst = \"uniform\"\n", ""),
                "traffic[0].dst",
                "required",
            ),
            (
                with("hosts = \"all\"", "hosts = [\"x\"]"),
                "traffic[0].hosts",
                "unknown",
            ),
        ];
        for (entry, field, words) in cases {
            let e = error(&entry);
            assert!(e.contains(field) && e.contains(words), "{entry}: {e}");
        }
        // A fixed receiver among the four hosts leaves three senders.
        let e = error(&with("dst = \"uniform\"", "dst = \"h0_0\"").replace("= 3", "= 4"));
        assert!(e.contains("at most the 3"), "{e}");
    }

    #[test]
    fn incast_fields_do_not_apply_to_other_kinds() {
        let flows = "kind = \"flows\"\nhosts = \"all\"\ndst = \"uniform\"\nload = 0.1\n\
                     size = { bytes = 1000 }\nfan_in = 2\n";
        let e = error(flows);
        assert!(
            e.contains("traffic[0].fan_in") && e.contains("incast"),
            "{e}"
        );
        let e = error(&flows.replace("fan_in = 2", "interval_s = 0.1"));
        assert!(e.contains("traffic[0].interval_s"), "{e}");
    }

    #[test]
    fn the_estimate_counts_the_incast_flows() {
        // 3 flows every ms for 10 ms: 30 flows (the estimate's flow term is its own).
        let sc = Scenario::from_toml(&format!("{HEAD}{GOOD}"), &[]).expect("valid");
        let t = &sc.traffic[0];
        let per_host = offered_bps_per_host(t, Some(1000.0));
        let flows = per_host * 4.0 / (8.0 * 1000.0) * sc.duration_s;
        assert!((flows - 30.0).abs() < 1e-9, "{flows}");
        let none = Scenario::from_toml(
            &format!(
                "{HEAD}{}",
                GOOD.replace("interval_s = 0.001", "interval_s = 0.005")
            ),
            &[],
        )
        .expect("valid");
        assert!(sc.estimate().events > none.estimate().events);
    }
}
