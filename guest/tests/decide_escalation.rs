//! docs/behaviour.md §5.4, escalate and emergency: normal -> constrained, constrained ->
//! critical, normal -> critical directly, critical -> emergency; never emergency from
//! constrained or normal; scaling alone never above constrained.

mod common;

use common::*;
use vocabulary::{Cause, Level, ProtectionState, Reading, Signal};

use Level::{Constrained as C, Critical as X, Normal as N};

#[test]
fn normal_to_constrained_after_three_constrained_readings() {
    let mut sim = Sim::fresh();
    let ds = sim.repeat(C, 3);
    assert_eq!(ds[1].state, ProtectionState::Normal, "two readings are not enough");
    let d = &ds[2];
    assert_eq!(d.cause, Cause::Escalate);
    assert!(d.changed);
    assert_eq!((d.previous, d.state), (ProtectionState::Normal, ProtectionState::Constrained));
    assert_eq!(d.factors, T.factors.of(ProtectionState::Constrained));
    assert_eq!(d.memory.state_since, T0 + 2 * MIN);
    assert_eq!(d.memory.last_auto_change, Some(T0 + 2 * MIN));
    let supporting: Vec<_> = d.supporting.iter().map(|e| (e.at, e.level)).collect();
    assert_eq!(supporting, vec![(T0, C), (T0 + MIN, C), (T0 + 2 * MIN, C)]);
}

#[test]
fn two_readings_are_not_enough_to_escalate() {
    let mut sim = Sim::in_state(ProtectionState::Normal, &[X]);
    let d = sim.read(X);
    assert_eq!(d.cause, Cause::Hold);
    assert_eq!(d.state, ProtectionState::Normal);
}

#[test]
fn normal_goes_straight_to_critical_on_three_critical_readings() {
    let mut sim = Sim::fresh();
    let d = sim.repeat(X, 3).pop().unwrap();
    assert_eq!(d.cause, Cause::Escalate);
    assert_eq!((d.previous, d.state), (ProtectionState::Normal, ProtectionState::Critical));
    assert_eq!(d.factors, T.factors.of(ProtectionState::Critical));
}

#[test]
fn the_escalation_target_is_the_lowest_of_the_newest_three() {
    for newest in [[X, X, C], [X, C, X], [C, X, X]] {
        let mut sim = Sim::in_state(ProtectionState::Normal, &newest[..2]);
        let d = sim.read(newest[2]);
        assert_eq!(d.state, ProtectionState::Constrained, "{newest:?}");
        assert_eq!(d.cause, Cause::Escalate);
    }
}

#[test]
fn one_normal_reading_among_the_newest_three_blocks_escalation() {
    for newest in [[X, X, N], [X, N, X], [N, X, X]] {
        let mut sim = Sim::in_state(ProtectionState::Normal, &newest[..2]);
        let d = sim.read(newest[2]);
        assert_eq!(d.state, ProtectionState::Normal, "{newest:?}");
        assert_eq!(d.cause, Cause::Hold);
    }
}

#[test]
fn only_the_newest_three_readings_count_for_escalation() {
    let mut sim = Sim::in_state(ProtectionState::Normal, &[N, N, X, X]);
    let d = sim.read(X);
    assert_eq!(d.state, ProtectionState::Critical);
    assert_eq!(d.supporting.len(), 3);
    assert!(d.supporting.iter().all(|e| e.level == X));
}

#[test]
fn constrained_to_critical_on_three_critical_readings() {
    let mut sim = Sim::in_state(ProtectionState::Constrained, &[X, X]);
    let d = sim.read(X);
    assert_eq!(d.cause, Cause::Escalate);
    assert_eq!((d.previous, d.state), (ProtectionState::Constrained, ProtectionState::Critical));
    assert_eq!(d.factors.bulk, 0.0);
}

#[test]
fn constrained_holds_on_constrained_readings() {
    let mut sim = Sim::in_state(ProtectionState::Constrained, &[C, C, C, C]);
    let d = sim.read(C);
    assert_eq!(d.cause, Cause::Hold);
    assert_eq!(d.state, ProtectionState::Constrained);
}

#[test]
fn escalation_never_lowers_the_state() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[C, C]);
    let d = sim.read(C);
    assert_eq!(d.state, ProtectionState::Critical);
    assert_eq!(d.cause, Cause::Hold);
}

#[test]
fn critical_to_emergency_after_three_minutes_of_critical_with_critical_readings() {
    let mut m = memory_in(ProtectionState::Critical);
    m.state_since = T0 - 3 * MIN;
    m.recent = recent_before(T0, &[X, X]);
    let d = decide_once(T0, signal(X), Some(m), None, false);
    assert_eq!(d.cause, Cause::Emergency);
    assert_eq!((d.previous, d.state), (ProtectionState::Critical, ProtectionState::Emergency));
    assert_eq!(d.factors, T.factors.of(ProtectionState::Emergency));
    assert_eq!(d.factors.write, 0.5);
    assert_eq!(d.memory.state_since, T0);
    assert_eq!(d.memory.last_auto_change, Some(T0));
    assert_eq!(d.supporting.len(), 3);
}

#[test]
fn emergency_waits_until_critical_has_lasted_three_minutes() {
    let mut m = memory_in(ProtectionState::Critical);
    m.state_since = T0 - 3 * MIN + 1;
    m.recent = recent_before(T0, &[X, X]);
    let d = decide_once(T0, signal(X), Some(m), None, false);
    assert_eq!(d.state, ProtectionState::Critical);
    assert_eq!(d.cause, Cause::Hold, "not yet qualified, so not a spacing wait either");
}

#[test]
fn emergency_needs_the_newest_three_readings_all_critical() {
    for newest in [[X, X, C], [C, X, X], [X, N, X]] {
        let mut sim = Sim::in_state(ProtectionState::Critical, &newest[..2]);
        let d = sim.read(newest[2]);
        assert_eq!(d.state, ProtectionState::Critical, "{newest:?}");
        assert_ne!(d.cause, Cause::Emergency);
    }
}

#[test]
fn emergency_needs_three_readings_not_just_three_minutes() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[X]);
    let d = sim.read(X);
    assert_eq!(d.state, ProtectionState::Critical);
}

#[test]
fn constrained_never_goes_straight_to_emergency() {
    // A long critical streak, spacing long satisfied: constrained first becomes critical, and
    // emergency comes only later, from critical.
    let mut sim = Sim::in_state(ProtectionState::Constrained, &[X, X, X, X, X]);
    let ds = sim.repeat(X, 20);
    assert_eq!((ds[0].previous, ds[0].state), (ProtectionState::Constrained, ProtectionState::Critical));
    for d in &ds {
        assert!(!(d.previous == ProtectionState::Constrained && d.state == ProtectionState::Emergency), "{}", d.explanation);
    }
    let first_emergency = ds.iter().position(|d| d.state == ProtectionState::Emergency).unwrap();
    assert_eq!(ds[first_emergency].previous, ProtectionState::Critical);
    assert_eq!(ds[first_emergency].cause, Cause::Emergency);
    // Five minutes after the escalation (spacing), not three (the critical duration).
    assert_eq!(first_emergency, 5);
}

#[test]
fn normal_never_goes_straight_to_emergency() {
    let mut sim = Sim::in_state(ProtectionState::Normal, &[X, X, X, X, X]);
    let d = sim.read(X);
    assert_eq!((d.previous, d.state), (ProtectionState::Normal, ProtectionState::Critical));
    assert_eq!(d.cause, Cause::Escalate);
}

#[test]
fn emergency_does_not_escalate_further_on_critical_readings() {
    let mut sim = Sim::in_state(ProtectionState::Emergency, &[X, X, X, X]);
    let d = sim.read(X);
    assert_eq!(d.state, ProtectionState::Emergency);
    assert_eq!(d.cause, Cause::Hold);
}

#[test]
fn from_fresh_critical_pressure_reaches_critical_then_emergency_after_spacing() {
    let mut sim = Sim::fresh();
    let ds = sim.repeat(X, 8);
    let states: Vec<ProtectionState> = ds.iter().map(|d| d.state).collect();
    use ProtectionState::{Critical as K, Emergency as E, Normal as O};
    assert_eq!(states, vec![O, O, K, K, K, K, K, E]);
    let causes: Vec<Cause> = ds.iter().map(|d| d.cause).collect();
    use Cause::*;
    // Emergency qualifies at +5 min (3 min in critical) but spacing from +2 min holds it to +7.
    assert_eq!(causes, vec![Fresh, Hold, Escalate, Hold, Hold, SpacingWait, SpacingWait, Emergency]);
    assert_eq!(ds[5].pending, Some(ProtectionState::Emergency));
    assert_eq!(ds[7].memory.last_auto_change, Some(T0 + 7 * MIN));
}

#[test]
fn scaling_alone_never_escalates_above_constrained() {
    let scaling = Reading { scaling: Some(true), cpu_pct: Some(20.0), ..Reading::default() };
    let mut sim = Sim::fresh().throttles(true);
    let ds: Vec<_> = (0..60).map(|_| sim.tick(Signal::Reading(scaling.clone()))).collect();
    assert_eq!(ds[2].state, ProtectionState::Constrained);
    assert!(ds.iter().all(|d| d.state <= ProtectionState::Constrained));
    assert_eq!(sim.state(), ProtectionState::Constrained);
}

#[test]
fn latency_alone_can_escalate_to_critical() {
    let slow = Reading { latency: vec![latency("crm", Some(300.0), Some(100.0))], ..Reading::default() };
    let mut sim = Sim::fresh();
    let d = (0..3).map(|_| sim.tick(Signal::Reading(slow.clone()))).last().unwrap();
    assert_eq!(d.state, ProtectionState::Critical);
}

#[test]
fn latency_without_a_baseline_never_escalates() {
    let slow = Reading { latency: vec![latency("crm", Some(9000.0), None)], ..Reading::default() };
    let mut sim = Sim::fresh();
    for _ in 0..10 {
        assert_eq!(sim.tick(Signal::Reading(slow.clone())).state, ProtectionState::Normal);
    }
}

#[test]
fn non_finite_readings_never_escalate() {
    let nan = Reading { cpu_pct: Some(f64::NAN), connections_pct: Some(f64::INFINITY), ..Reading::default() };
    let mut sim = Sim::fresh();
    for _ in 0..10 {
        let d = sim.tick(Signal::Reading(nan.clone()));
        assert_eq!(d.level, Some(N));
        assert_eq!(d.state, ProtectionState::Normal);
    }
}
