//! docs/behaviour.md §4 to §6: fresh memory, hold, the decision's fields, every tick publishing the
//! factors of its state, and purity.

mod common;

use capacity_guest::decide::decide;
use common::*;
use vocabulary::{Cause, DecisionInput, Level, Memory, ProtectionState, ThrottleIntent};

#[test]
fn absent_memory_starts_fresh_in_normal() {
    let d = decide_once(T0, signal(Level::Normal), None, None, false);
    assert_eq!(d.cause, Cause::Fresh);
    assert_eq!(d.state, ProtectionState::Normal);
    assert_eq!(d.previous, ProtectionState::Normal);
    assert!(!d.changed);
    assert_eq!(d.factors, T.factors.of(ProtectionState::Normal));
    assert_eq!(d.throttles, ThrottleIntent::None);
    assert_eq!(d.memory.state_since, T0);
    assert_eq!(d.memory.last_auto_change, None);
    assert_eq!(d.memory.failed_reads, 0);
    assert!(!d.memory.throttles_engaged);
    assert_eq!(d.memory.recent.len(), 1);
    assert_eq!(d.memory.recent[0].at, T0);
    assert_eq!(d.memory.recent[0].level, Level::Normal);
}

#[test]
fn fresh_memory_matches_the_documented_start() {
    let m = Memory::fresh(T0);
    assert_eq!(m.state, ProtectionState::Normal);
    assert_eq!(m.state_since, T0);
    assert_eq!(m.last_auto_change, None);
    assert!(m.recent.is_empty());
    assert_eq!(m.failed_reads, 0);
    assert!(!m.throttles_engaged);
}

#[test]
fn fresh_is_reported_even_when_the_first_reading_is_critical() {
    // One reading cannot escalate, so nothing but "fresh" applies.
    let d = decide_once(T0, signal(Level::Critical), None, None, true);
    assert_eq!(d.cause, Cause::Fresh);
    assert_eq!(d.state, ProtectionState::Normal);
    assert_eq!(d.level, Some(Level::Critical));
}

#[test]
fn the_second_tick_after_fresh_is_hold() {
    let mut sim = Sim::fresh();
    assert_eq!(sim.read(Level::Normal).cause, Cause::Fresh);
    let d = sim.read(Level::Normal);
    assert_eq!(d.cause, Cause::Hold);
    assert!(!d.changed);
}

#[test]
fn hold_keeps_every_state_when_nothing_qualifies() {
    for state in ProtectionState::ALL {
        let mut sim = Sim::in_state(state, &[]);
        let d = sim.read(Level::Constrained);
        assert_eq!(d.cause, Cause::Hold, "{state:?}");
        assert_eq!(d.state, state);
        assert!(!d.changed);
        assert!(d.supporting.is_empty());
        assert_eq!(d.pending, None);
        assert_eq!(d.memory.state_since, T0 - HOUR, "state_since is kept while holding");
        assert_eq!(d.memory.last_auto_change, Some(T0 - HOUR));
    }
}

#[test]
fn every_tick_publishes_the_factors_of_its_state() {
    for state in ProtectionState::ALL {
        let mut sim = Sim::in_state(state, &[]);
        for d in sim.repeat(Level::Constrained, 3) {
            assert_eq!(d.factors, T.factors.of(d.state));
            assert_consistent(&d);
        }
    }
}

#[test]
fn a_reading_records_its_level_and_resets_failed_reads() {
    let mut m = memory_in(ProtectionState::Critical);
    m.failed_reads = 1;
    let d = decide_once(T0, signal(Level::Constrained), Some(m), None, false);
    assert_eq!(d.level, Some(Level::Constrained));
    assert_eq!(d.memory.failed_reads, 0);
    assert_eq!(d.memory.recent.last().map(|e| (e.at, e.level)), Some((T0, Level::Constrained)));
}

#[test]
fn a_failed_read_has_no_level() {
    let d = decide_once(T0, failed(), Some(memory_in(ProtectionState::Normal)), None, false);
    assert_eq!(d.level, None);
}

#[test]
fn the_same_input_gives_the_same_decision() {
    let mut m = memory_in(ProtectionState::Critical);
    m.recent = recent_before(T0, &[Level::Critical, Level::Critical]);
    let input = DecisionInput {
        now: T0,
        signal: signal(Level::Critical),
        memory: Some(m),
        pin: None,
        throttles_enabled: true,
        stages_throttled: false,
    };
    let a = decide(&input, &T);
    let b = decide(&input, &T);
    assert_eq!(a, b);
    assert_eq!(a.cause, Cause::Emergency);
}

#[test]
fn the_explanation_is_one_line_naming_the_change_and_cause() {
    let mut sim = Sim::fresh();
    let d = sim.repeat(Level::Critical, 3).pop().unwrap();
    assert_eq!(d.cause, Cause::Escalate);
    assert!(d.explanation.contains("normal -> critical"), "{}", d.explanation);
    assert!(d.explanation.contains("escalate"), "{}", d.explanation);
    assert!(!d.explanation.contains('\n'));
}

#[test]
fn the_decision_threads_memory_into_the_next_tick() {
    let mut sim = Sim::fresh();
    sim.repeat(Level::Constrained, 2);
    assert_eq!(sim.mem().recent.len(), 2);
    let d = sim.read(Level::Constrained);
    assert_eq!(d.previous, ProtectionState::Normal);
    assert_eq!(d.state, ProtectionState::Constrained);
    assert_eq!(sim.mem().state, ProtectionState::Constrained);
    assert_eq!(sim.mem().last_auto_change, Some(T0 + 2 * MIN));
}
