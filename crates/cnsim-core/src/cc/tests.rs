//! The registry's dispatch: each arm calls its own scheme.

use super::bcn::{BcnParams, BcnRp};
use super::dcqcn::{DcqcnParams, DcqcnRp};
use super::path_probe::{PathProbeParams, PathProbeRp};
use super::qcn::{QcnParams, QcnRp};
use super::*;
use crate::rng::{stream, StreamKind};

/// `pacing` gives each limiter's own rate, tag and bucket (one match for three questions:
/// an arm mixed up between schemes would pace or tag a frame wrongly).
#[test]
fn pacing_is_each_limiters_rate_tag_and_bucket() {
    let mut rng = stream(1, StreamKind::ReactionPoint, 0);
    let t0 = SimTime::ZERO;
    let qcn = QcnParams {
        rp_bucket_bytes: 3000.0,
        ..QcnParams::default()
    };
    let mut cut_qcn = QcnRp::new(10e9, &qcn, t0, &mut rng);
    cut_qcn.on_cnm(63, t0, &mut rng);
    let dcqcn = DcqcnParams {
        rp_bucket_bytes: 1500.0,
        ..DcqcnParams::default()
    };
    let limiters = [
        (Limiter::Qcn(cut_qcn), NO_TAG, 3000.0),
        (
            Limiter::Bcn(BcnRp::new(10e9, &BcnParams::default(), 7, t0)),
            7,
            0.0,
        ),
        (
            Limiter::PathProbe(PathProbeRp::new(&PathProbeParams::default(), 10e9)),
            NO_TAG,
            0.0,
        ),
        (
            Limiter::Dcqcn(DcqcnRp::new(40e9, &dcqcn, t0)),
            NO_TAG,
            1500.0,
        ),
    ];
    for (limiter, tag, bucket_bytes) in limiters {
        let want = Pacing {
            rate_bps: limiter.rate_bps(),
            tag,
            bucket_bytes,
        };
        assert_eq!(limiter.pacing(), want);
    }
}
