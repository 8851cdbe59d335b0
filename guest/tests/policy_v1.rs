//! docs/behaviour.md §2 and §13: policy 1.0.0 carries exactly the 1.0.0 numbers listed there.

mod common;

use capacity_guest::embedded::{NAME, THRESHOLDS, VERSION};
use common::T;
use vocabulary::Factors;
use vocabulary::{Level, ProtectionState};

fn f(bulk: f64, heavy: f64, write: f64, read: f64) -> Factors {
    Factors { bulk, heavy, write, read }
}

#[test]
fn embedded_policy_is_version_1_0_0() {
    assert_eq!(VERSION, "1.0.0");
    assert!(!NAME.trim().is_empty());
    assert_eq!(THRESHOLDS.check(), Ok(()));
}

#[test]
fn embedded_thresholds_are_the_documented_1_0_0_values() {
    assert_eq!((T.cpu_pct.constrained, T.cpu_pct.critical), (70.0, 85.0));
    assert_eq!((T.connections_pct.constrained, T.connections_pct.critical), (70.0, 85.0));
    assert_eq!((T.latency_ratio.constrained, T.latency_ratio.critical), (1.5, 2.5));
    assert_eq!(T.spacing_s, 300);
    assert_eq!(T.escalate_readings, 3);
    assert_eq!(T.recover_readings, 5);
    assert_eq!(T.emergency_after_s, 180);
    assert_eq!(T.throttle_after_s, 300);
    assert_eq!(T.max_gap_s, 90);
    assert_eq!(T.release_after_failed_reads, 2);
    assert_eq!(T.baseline_min_samples, 60);
    assert_eq!(T.pin_max_ahead_s, 24 * 3600);
    assert_eq!(T.pin_reason_max_chars, 500);
}

#[test]
fn each_state_has_the_factors_of_the_documented_table() {
    assert_eq!(T.factors.of(ProtectionState::Normal), f(1.0, 1.0, 1.0, 1.0));
    assert_eq!(T.factors.of(ProtectionState::Constrained), f(0.5, 0.5, 1.0, 1.0));
    assert_eq!(T.factors.of(ProtectionState::Critical), f(0.0, 0.25, 1.0, 1.0));
    assert_eq!(T.factors.of(ProtectionState::Emergency), f(0.0, 0.25, 0.5, 0.5));
}

#[test]
fn states_rank_normal_constrained_critical_emergency() {
    let ranks: Vec<u8> = ProtectionState::ALL.iter().map(|s| s.rank()).collect();
    assert_eq!(ranks, vec![0, 1, 2, 3]);
    assert!(ProtectionState::Normal < ProtectionState::Constrained && ProtectionState::Constrained < ProtectionState::Critical);
    assert!(ProtectionState::Critical < ProtectionState::Emergency);
    assert_eq!(Level::Critical.rank(), ProtectionState::Critical.rank());
    assert_eq!(Level::Constrained.as_state(), ProtectionState::Constrained);
}

#[test]
fn stepping_down_lowers_one_rank_and_normal_stays_normal() {
    assert_eq!(ProtectionState::Emergency.step_down(), ProtectionState::Critical);
    assert_eq!(ProtectionState::Critical.step_down(), ProtectionState::Constrained);
    assert_eq!(ProtectionState::Constrained.step_down(), ProtectionState::Normal);
    assert_eq!(ProtectionState::Normal.step_down(), ProtectionState::Normal);
}

#[test]
fn state_names_round_trip_and_unknown_names_do_not_parse() {
    for s in ProtectionState::ALL {
        assert_eq!(ProtectionState::parse(s.name()), Some(s));
    }
    assert_eq!(ProtectionState::parse("Emergency"), None);
    assert_eq!(ProtectionState::parse("panic"), None);
    assert_eq!(ProtectionState::parse(""), None);
}

#[test]
fn factors_never_grow_with_rank() {
    for pair in ProtectionState::ALL.windows(2) {
        let (lo, hi) = (T.factors.of(pair[0]), T.factors.of(pair[1]));
        assert!(hi.bulk <= lo.bulk && hi.heavy <= lo.heavy && hi.write <= lo.write && hi.read <= lo.read);
    }
}
