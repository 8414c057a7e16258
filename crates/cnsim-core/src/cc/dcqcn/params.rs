//! DCQCN's parameters, TOML table `[congestion.dcqcn]`: the named parameter sets, their checks
//! and the CP's marking curve.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Check, ConfigError};

/// Where the CP decides to mark a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum MarkOn {
    /// When the frame joins the queue, against the queue including it (RED as specified).
    #[default]
    Enqueue,
    /// When the frame leaves the queue, against the queue it leaves behind (feedback is
    /// fresher by one queueing delay; the public ns-3 code bases mark here).
    Dequeue,
}

/// How large a hyper-increase step is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HaiStep {
    /// R_HAI (min(T, BC) - F), as in QCN's pseudo code.
    #[default]
    Qcn,
    /// R_HAI per step, as in the Mellanox model of the public ns-3 code.
    Constant,
}

/// Which counters raise the RP's rate between CNPs (each a distinct protocol, named so that
/// none is chosen by a zero elsewhere).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RateCounters {
    /// SIGCOMM 2015: the rate timer T and the byte counter B (every `byte_counter_bytes`);
    /// fast recovery while max(T, BC) <= F, hyper increase when min(T, BC) > F, additive
    /// increase between.
    #[default]
    TimerAndBytes,
    /// The same rule with the byte counter off (BC stays 0): F fast-recovery steps, then
    /// additive increase only, never hyper increase.
    TimerOnly,
    /// The single-counter Mellanox model of the public ns-3 code (the `hpcc_ns3` set): the
    /// rate timer alone, F fast-recovery steps, one additive step, then hyper increase.
    SingleCounter,
}

/// Named parameter sets: the table's keys are laid over the set's values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ParameterSet {
    /// SIGCOMM 2015 (Zhu et al.) and its CoNEXT 2016 analysis: Kmin 5 KB, Kmax 200 KB, Pmax 1 %,
    /// g 1/256, N 50 us, K = T 55 us, B 10 MB, F 5, R_AI 40 Mb/s.
    #[default]
    Sigcomm2015,
    /// The DCQCN settings of the HPCC ns-3 code base (`mix/config.txt`, CC_MODE 1, 25 Gb/s
    /// ECN map): Kmin 100 KB, Kmax 400 KB, Pmax 20 %, rate timer 900 us, alpha timer 1 us,
    /// F 1, R_AI 50 Mb/s, R_HAI 100 Mb/s constant, minimum rate 100 Mb/s, no byte counter,
    /// marking at dequeue.
    HpccNs3,
}

/// `[congestion.dcqcn]`. Defaults are the SIGCOMM 2015 parameters.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct DcqcnParams {
    /// The named set the other keys start from (outputs say which ran).
    pub(crate) parameter_set: ParameterSet,
    /// CP: below this queue nothing is marked (Kmin).
    pub(crate) kmin_bytes: f64,
    /// CP: above this queue everything is marked (Kmax).
    pub(crate) kmax_bytes: f64,
    /// CP: marking probability at Kmax (Pmax).
    pub(crate) pmax: f64,
    /// CP: the link rate Kmin and Kmax are for; a port of rate C marks at them x C / this, as
    /// HPCC's ns-3 simulator's per-rate `KMIN_MAP` and `KMAX_MAP` (its 100 KB and 400 KB, the
    /// `hpcc_ns3` set's, are for 25 Gb/s). None: every port at the thresholds as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) k_reference_rate_bps: Option<f64>,
    /// CP: mark at enqueue or at dequeue.
    pub(crate) mark_on: MarkOn,
    /// NP: at most one CNP per flow per this interval (N).
    pub(crate) cnp_interval_s: f64,
    /// Size of a CNP frame.
    pub(crate) cnp_bytes: u32,
    /// RP: alpha's gain g.
    pub(crate) g: f64,
    /// RP: alpha when the RP is created.
    pub(crate) alpha_init: f64,
    /// RP: period of alpha's decay without CNPs (K).
    pub(crate) alpha_timer_s: f64,
    /// RP: rate-increase timer (T).
    pub(crate) rate_timer_s: f64,
    /// RP: which counters raise the rate (`timer_and_bytes`, `timer_only`, `single_counter`).
    pub(crate) counters: RateCounters,
    /// RP: rate-increase byte counter (B), with `counters = "timer_and_bytes"` (ignored
    /// otherwise).
    pub(crate) byte_counter_bytes: f64,
    /// RP: fast-recovery steps (F).
    pub(crate) fast_recovery_threshold: u32,
    /// RP: additive-increase step R_AI.
    pub(crate) r_ai_bps: f64,
    /// RP: hyper-increase step R_HAI.
    pub(crate) r_hai_bps: f64,
    pub(crate) hai_step: HaiStep,
    /// RP: floor of CR.
    pub(crate) min_rate_bps: f64,
    /// RP: token-bucket depth of the rate limiter (bytes accrued at CR while it waits, e.g.
    /// paused; 0 = none beyond the frame being paced), as `congestion.qcn.rp_bucket_bytes`.
    pub(crate) rp_bucket_bytes: f64,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams::of_set(ParameterSet::Sigcomm2015)
    }
}

impl DcqcnParams {
    /// The values of a named parameter set.
    pub(crate) fn of_set(set: ParameterSet) -> DcqcnParams {
        let sigcomm = DcqcnParams {
            parameter_set: ParameterSet::Sigcomm2015,
            kmin_bytes: 5_000.0,
            kmax_bytes: 200_000.0,
            pmax: 0.01,
            k_reference_rate_bps: None,
            mark_on: MarkOn::Enqueue,
            cnp_interval_s: 50e-6,
            cnp_bytes: 64,
            g: 1.0 / 256.0,
            alpha_init: 1.0,
            alpha_timer_s: 55e-6,
            rate_timer_s: 55e-6,
            counters: RateCounters::TimerAndBytes,
            byte_counter_bytes: 10e6,
            fast_recovery_threshold: 5,
            r_ai_bps: 40e6,
            // The paper gives no number for R_HAI ("larger"); QCN's ratio R_HAI = 10 R_AI.
            r_hai_bps: 400e6,
            hai_step: HaiStep::Qcn,
            min_rate_bps: 10e6,
            rp_bucket_bytes: 0.0,
        };
        match set {
            ParameterSet::Sigcomm2015 => sigcomm,
            ParameterSet::HpccNs3 => DcqcnParams {
                parameter_set: ParameterSet::HpccNs3,
                kmin_bytes: 100_000.0,
                kmax_bytes: 400_000.0,
                pmax: 0.2,
                mark_on: MarkOn::Dequeue,
                alpha_timer_s: 1e-6,
                rate_timer_s: 900e-6,
                counters: RateCounters::SingleCounter,
                byte_counter_bytes: 0.0,
                fast_recovery_threshold: 1,
                r_ai_bps: 50e6,
                r_hai_bps: 100e6,
                hai_step: HaiStep::Constant,
                min_rate_bps: 100e6,
                ..sigcomm
            },
        }
    }

    /// Checks every field; errors name the field as `<path>.<field>`.
    pub(crate) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let c = Check { path };
        c.non_negative("kmin_bytes", self.kmin_bytes)?;
        c.positive("kmax_bytes", self.kmax_bytes)?;
        if self.kmax_bytes <= self.kmin_bytes {
            return Err(c.fail(
                "kmax_bytes",
                format!(
                    "must be above kmin_bytes ({} <= {})",
                    self.kmax_bytes, self.kmin_bytes
                ),
            ));
        }
        c.in_closed("pmax", self.pmax, 0.0, 1.0)?;
        if let Some(rate) = self.k_reference_rate_bps {
            c.in_closed("k_reference_rate_bps", rate, 1e3, 1e15)?;
        }
        c.time_positive("cnp_interval_s", self.cnp_interval_s)?;
        c.in_closed("cnp_bytes", self.cnp_bytes as f64, 64.0, 9216.0)?;
        c.in_open_closed("g", self.g, 0.0, 1.0)?;
        c.in_closed("alpha_init", self.alpha_init, 0.0, 1.0)?;
        c.time_positive("alpha_timer_s", self.alpha_timer_s)?;
        c.time_positive("rate_timer_s", self.rate_timer_s)?;
        c.non_negative("byte_counter_bytes", self.byte_counter_bytes)?;
        if self.counters == RateCounters::TimerAndBytes && self.byte_counter_bytes <= 0.0 {
            return Err(c.fail(
                "byte_counter_bytes",
                "must be > 0 with counters = \"timer_and_bytes\" (without a byte counter, set \
                 counters = \"timer_only\", or \"single_counter\" for the Mellanox model)",
            ));
        }
        c.rate_non_negative("r_ai_bps", self.r_ai_bps)?;
        c.rate_non_negative("r_hai_bps", self.r_hai_bps)?;
        c.rate("min_rate_bps", self.min_rate_bps)?;
        c.non_negative("rp_bucket_bytes", self.rp_bucket_bytes)
    }

    /// The parameters of a CP on a port of `port_rate_bps`: Kmin and Kmax scaled to it when
    /// `k_reference_rate_bps` is given.
    pub(crate) fn at_rate(&self, port_rate_bps: f64) -> DcqcnParams {
        let scale = crate::cc::rate_scale(self.k_reference_rate_bps, port_rate_bps);
        DcqcnParams {
            kmin_bytes: self.kmin_bytes * scale,
            kmax_bytes: self.kmax_bytes * scale,
            ..self.clone()
        }
    }

    /// The RED-like marking probability at queue length `queue_bytes`.
    pub(crate) fn mark_probability(&self, queue_bytes: f64) -> f64 {
        if queue_bytes < self.kmin_bytes {
            0.0
        } else if queue_bytes <= self.kmax_bytes {
            self.pmax * (queue_bytes - self.kmin_bytes) / (self.kmax_bytes - self.kmin_bytes)
        } else {
            1.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_a_reference_rate_kmin_and_kmax_scale_with_the_ports_rate() {
        // HPCC's simulator: 100 KB and 400 KB at 25 Gb/s are 400 KB and 1,600 KB at 100 Gb/s.
        let p = DcqcnParams {
            k_reference_rate_bps: Some(25e9),
            ..DcqcnParams::of_set(ParameterSet::HpccNs3)
        };
        let at_100 = p.at_rate(100e9);
        assert_eq!((at_100.kmin_bytes, at_100.kmax_bytes), (400_000.0, 1_600_000.0));
        assert_eq!(at_100.mark_probability(399_999.0), 0.0);
        assert!((at_100.mark_probability(1_000_000.0) - 0.1).abs() < 1e-12);
        assert_eq!(p.at_rate(25e9), p);
        // Without one, the thresholds as given at any rate.
        let fixed = DcqcnParams::of_set(ParameterSet::HpccNs3);
        assert_eq!(fixed.at_rate(100e9), fixed);
        let bad = DcqcnParams {
            k_reference_rate_bps: Some(0.0),
            ..DcqcnParams::default()
        };
        let e = bad.validate("congestion.dcqcn").unwrap_err().to_string();
        assert!(e.contains("congestion.dcqcn.k_reference_rate_bps"), "{e}");
    }

    #[test]
    fn validate_names_the_field() {
        let bad = DcqcnParams {
            kmax_bytes: 1_000.0,
            ..DcqcnParams::default()
        };
        let e = bad.validate("congestion.dcqcn").unwrap_err();
        assert!(e.to_string().contains("congestion.dcqcn.kmax_bytes"), "{e}");
        let bad = DcqcnParams {
            g: 0.0,
            ..DcqcnParams::default()
        };
        let e = bad.validate("congestion.dcqcn").unwrap_err();
        assert!(e.to_string().contains("congestion.dcqcn.g"), "{e}");
    }

    /// A zero byte counter no longer switches the protocol silently: the two counter-less
    /// protocols have names of their own.
    #[test]
    fn a_zero_byte_counter_needs_a_counter_mode_that_has_none() {
        let zero = DcqcnParams {
            byte_counter_bytes: 0.0,
            ..DcqcnParams::default()
        };
        let e = zero.validate("congestion.dcqcn").unwrap_err().to_string();
        assert!(
            e.contains("congestion.dcqcn.byte_counter_bytes") && e.contains("timer_only"),
            "{e}"
        );
        for counters in [RateCounters::TimerOnly, RateCounters::SingleCounter] {
            let ok = DcqcnParams { counters, ..zero.clone() };
            assert!(ok.validate("congestion.dcqcn").is_ok());
        }
        let hpcc = DcqcnParams::of_set(ParameterSet::HpccNs3);
        assert_eq!(hpcc.counters, RateCounters::SingleCounter);
        assert!(hpcc.validate("congestion.dcqcn").is_ok());
    }
}
