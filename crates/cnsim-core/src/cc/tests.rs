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

/// Every frame's hooks read the CP's id, its message count and its scheme's state: they come
/// first (`CongestionPoint`), the generator last; DCTCP's marker, on every frame of a
/// data-center fabric, reads two lines in all.
#[test]
fn what_a_frame_reads_of_a_congestion_point_is_in_its_first_lines() {
    use std::mem::offset_of;
    assert!(offset_of!(CongestionPoint, cpid) < 16 && offset_of!(CongestionPoint, messages) < 16);
    assert_eq!(offset_of!(CongestionPoint, state), 16);
    let base = crate::testkit::STAR;
    let mut hot = std::collections::BTreeMap::new();
    for name in table::all_names() {
        let text = format!("{base}\n[congestion]\nscheme = \"{name}\"\n");
        let Ok(sc) = crate::resolve(&text, &[], None) else {
            continue;
        };
        let rng = stream(1, StreamKind::CongestionPoint, 0);
        if let Some(cp) = CongestionPoint::new(&sc.congestion.resolve(), 0, 10e9, rng) {
            assert!(cp.hot_bytes() <= offset_of!(CongestionPoint, rng), "{name}");
            hot.insert(*name, cp.hot_bytes());
        }
    }
    assert!(hot["dctcp"] <= 128, "{hot:?}");
    assert!(hot.len() >= 4, "{hot:?}");
}
