//! docs/behaviour.md §5.4, recover: five readings below min(state, critical) step the state
//! down one rank: emergency -> critical, critical -> constrained, constrained -> normal.

mod common;

use common::*;
use vocabulary::{Cause, Level, ProtectionState};

use Level::{Constrained as C, Critical as X, Normal as N};

#[test]
fn critical_to_constrained_after_five_below_critical_readings() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[C, N, C, N]);
    let d = sim.read(C);
    assert_eq!(d.cause, Cause::Recover);
    assert_eq!((d.previous, d.state), (ProtectionState::Critical, ProtectionState::Constrained));
    assert_eq!(d.factors, T.factors.of(ProtectionState::Constrained));
    assert_eq!(d.memory.state_since, T0);
    assert_eq!(d.memory.last_auto_change, Some(T0));
    assert_eq!(d.supporting.len(), 5);
    assert!(d.supporting.iter().all(|e| e.level < X));
}

#[test]
fn four_calm_readings_do_not_recover() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[N, N, N]);
    let d = sim.read(N);
    assert_eq!(d.cause, Cause::Hold);
    assert_eq!(d.state, ProtectionState::Critical);
}

#[test]
fn one_critical_reading_among_the_newest_five_blocks_recovery_from_critical() {
    for at in 0..5 {
        let mut levels = [C; 5];
        levels[at] = X;
        let mut sim = Sim::in_state(ProtectionState::Critical, &levels[..4]);
        let d = sim.read(levels[4]);
        assert_eq!(d.state, ProtectionState::Critical, "critical reading at {at}");
        assert_ne!(d.cause, Cause::Recover);
    }
}

#[test]
fn only_the_newest_five_readings_count_for_recovery() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[X, X, N, N, N, N]);
    let d = sim.read(N);
    assert_eq!(d.state, ProtectionState::Constrained);
}

#[test]
fn constrained_to_normal_after_five_normal_readings() {
    let mut sim = Sim::in_state(ProtectionState::Constrained, &[N, N, N, N]);
    let d = sim.read(N);
    assert_eq!(d.cause, Cause::Recover);
    assert_eq!((d.previous, d.state), (ProtectionState::Constrained, ProtectionState::Normal));
    assert_eq!(d.factors, T.factors.of(ProtectionState::Normal));
}

#[test]
fn constrained_readings_do_not_recover_constrained() {
    let mut sim = Sim::in_state(ProtectionState::Constrained, &[N, N, N, N]);
    let d = sim.read(C);
    assert_eq!(d.state, ProtectionState::Constrained);
    assert_eq!(d.cause, Cause::Hold);
}

#[test]
fn emergency_to_critical_after_five_below_critical_readings() {
    let mut sim = Sim::in_state(ProtectionState::Emergency, &[C, C, C, C]);
    let d = sim.read(C);
    assert_eq!(d.cause, Cause::Recover);
    assert_eq!((d.previous, d.state), (ProtectionState::Emergency, ProtectionState::Critical));
    assert_eq!(d.factors, T.factors.of(ProtectionState::Critical));
}

#[test]
fn emergency_steps_down_only_one_rank_even_on_normal_readings() {
    let mut sim = Sim::in_state(ProtectionState::Emergency, &[N, N, N, N]);
    let d = sim.read(N);
    assert_eq!(d.state, ProtectionState::Critical);
}

#[test]
fn a_critical_reading_blocks_recovery_from_emergency() {
    let mut sim = Sim::in_state(ProtectionState::Emergency, &[N, N, N, N]);
    let d = sim.read(X);
    assert_eq!(d.state, ProtectionState::Emergency);
}

#[test]
fn normal_has_nothing_to_recover() {
    let mut sim = Sim::in_state(ProtectionState::Normal, &[N, N, N, N]);
    let d = sim.read(N);
    assert_eq!(d.cause, Cause::Hold);
    assert_eq!(d.state, ProtectionState::Normal);
}

#[test]
fn emergency_descends_one_rank_per_spacing_to_normal() {
    let mut sim = Sim::in_state(ProtectionState::Emergency, &[N, N, N, N]);
    let ds = sim.repeat(N, 12);
    let changes: Vec<(usize, ProtectionState, ProtectionState)> =
        ds.iter().enumerate().filter(|(_, d)| d.changed).map(|(i, d)| (i, d.previous, d.state)).collect();
    assert_eq!(
        changes,
        vec![
            (0, ProtectionState::Emergency, ProtectionState::Critical),
            (5, ProtectionState::Critical, ProtectionState::Constrained),
            (10, ProtectionState::Constrained, ProtectionState::Normal),
        ]
    );
    assert!(ds.iter().filter(|d| d.changed).all(|d| d.cause == Cause::Recover));
    // Between the steps recovery qualifies but must wait for spacing.
    assert!(ds[1..5].iter().all(|d| d.cause == Cause::SpacingWait && d.pending == Some(ProtectionState::Constrained)));
    assert_eq!(sim.state(), ProtectionState::Normal);
}

#[test]
fn critical_descends_through_constrained_never_straight_to_normal() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[N, N, N, N]);
    for d in sim.repeat(N, 15) {
        if d.changed {
            assert_eq!(d.state.rank() + 1, d.previous.rank(), "{}", d.explanation);
        }
    }
}

#[test]
fn recovery_counts_readings_after_a_failed_read_afresh() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[N, N, N, N]);
    sim.fail();
    let ds = sim.repeat(N, 5);
    assert!(ds[..4].iter().all(|d| d.state == ProtectionState::Critical));
    assert_eq!(ds[4].state, ProtectionState::Constrained);
}
