//! docs/behaviour.md §5.4 and §5.5: emergency stage throttles. Engage with the switch on after 5
//! more minutes of emergency with 3 critical readings (a pinned emergency needs no readings);
//! release on leaving emergency, on the switch turned off and on a signal-loss release; restore
//! the throttles in their own tick before stepping down from emergency.

mod common;

use common::*;
use vocabulary::{Cause, Level, Memory, ProtectionState, ThrottleIntent};

use Level::{Constrained as C, Critical as X, Normal as N};

/// Emergency entered `ago` seconds before `T0`, with these levels recent.
fn emergency(ago: i64, levels: &[Level], engaged: bool) -> Memory {
    let mut m = memory_in(ProtectionState::Emergency);
    m.state_since = T0 - ago;
    m.last_auto_change = Some(T0 - ago);
    m.recent = recent_before(T0, levels);
    m.throttles_engaged = engaged;
    m
}

fn engaged_sim() -> Sim {
    Sim::from(emergency(HOUR, &[X, X, X, X], true)).throttles(true)
}

#[test]
fn throttles_engage_after_five_more_minutes_of_emergency_with_three_critical_readings() {
    let d = decide_once(T0, signal(X), Some(emergency(5 * MIN, &[X, X], false)), None, true);
    assert_eq!(d.throttles, ThrottleIntent::Engage);
    assert!(d.memory.throttles_engaged);
    assert_eq!(d.state, ProtectionState::Emergency);
    assert!(!d.changed);
    assert_eq!(d.cause, Cause::Hold);
    assert!(d.explanation.contains("engage"), "{}", d.explanation);
}

#[test]
fn throttles_wait_until_emergency_has_lasted_five_minutes() {
    let d = decide_once(T0, signal(X), Some(emergency(5 * MIN - 1, &[X, X], false)), None, true);
    assert_eq!(d.throttles, ThrottleIntent::None);
    assert!(!d.memory.throttles_engaged);
}

#[test]
fn throttles_need_the_newest_three_readings_critical() {
    for (before, now) in [(vec![X, C], X), (vec![C, X], X), (vec![X, X], C), (vec![X], X), (vec![], X)] {
        let d = decide_once(T0, signal(now), Some(emergency(HOUR, &before, false)), None, true);
        assert_eq!(d.throttles, ThrottleIntent::None, "{before:?} then {now:?}");
        assert!(!d.memory.throttles_engaged);
    }
}

#[test]
fn throttles_never_engage_with_the_switch_off() {
    let mut sim = Sim::from(emergency(HOUR, &[X, X, X, X], false));
    for d in sim.repeat(X, 30) {
        assert_eq!(d.throttles, ThrottleIntent::None);
        assert!(!d.memory.throttles_engaged);
        assert_eq!(d.state, ProtectionState::Emergency);
    }
}

#[test]
fn engage_is_asked_once_and_then_the_throttles_stay_engaged() {
    let mut sim = Sim::from(emergency(HOUR, &[X, X], false)).throttles(true);
    let ds = sim.repeat(X, 5);
    assert_eq!(ds[0].throttles, ThrottleIntent::Engage);
    assert!(ds[1..].iter().all(|d| d.throttles == ThrottleIntent::None && d.memory.throttles_engaged));
}

#[test]
fn from_fresh_sustained_critical_pressure_engages_five_minutes_after_emergency() {
    let mut sim = Sim::fresh().throttles(true);
    let ds = sim.repeat(X, 15);
    let emergency_at = ds.iter().position(|d| d.cause == Cause::Emergency).unwrap();
    let engage_at = ds.iter().position(|d| d.throttles == ThrottleIntent::Engage).unwrap();
    assert_eq!(emergency_at, 7);
    assert_eq!(engage_at, 12);
    assert_eq!(ds.iter().filter(|d| d.throttles == ThrottleIntent::Engage).count(), 1);
}

#[test]
fn pinned_emergency_engages_without_readings() {
    let mut sim = Sim::from(memory_in(ProtectionState::Normal)).throttles(true);
    sim.pin = Some(pin(ProtectionState::Emergency, T0 + HOUR));
    let mut ds = vec![sim.fail(), sim.fail(), sim.read(N), sim.fail(), sim.read(N)];
    ds.push(sim.fail());
    assert_eq!(ds[0].state, ProtectionState::Emergency);
    assert_eq!(ds[0].memory.state_since, T0);
    assert!(ds[..5].iter().all(|d| d.throttles == ThrottleIntent::None));
    assert_eq!(ds[5].throttles, ThrottleIntent::Engage, "{}", ds[5].explanation);
    assert_eq!(ds[5].cause, Cause::Pinned);
    assert!(ds[5].memory.throttles_engaged);
}

#[test]
fn pinned_emergency_with_the_switch_off_never_engages() {
    let mut sim = Sim::from(memory_in(ProtectionState::Normal));
    sim.pin = Some(pin(ProtectionState::Emergency, T0 + HOUR));
    assert!(sim.repeat(X, 20).iter().all(|d| d.throttles == ThrottleIntent::None));
}

#[test]
fn throttles_release_on_leaving_emergency_by_a_pin() {
    let mut sim = engaged_sim();
    sim.pin = Some(pin(ProtectionState::Critical, T0 + HOUR));
    let d = sim.read(X);
    assert_eq!(d.state, ProtectionState::Critical);
    assert_eq!(d.throttles, ThrottleIntent::Release);
    assert!(!d.memory.throttles_engaged);
}

#[test]
fn throttles_release_when_the_switch_is_turned_off() {
    let mut sim = engaged_sim();
    assert_eq!(sim.read(X).throttles, ThrottleIntent::None);
    sim.throttles = false;
    let d = sim.read(X);
    assert_eq!(d.throttles, ThrottleIntent::Release);
    assert_eq!(d.state, ProtectionState::Emergency);
    assert!(!d.memory.throttles_engaged);
    assert_eq!(sim.read(X).throttles, ThrottleIntent::None);
}

#[test]
fn throttles_engage_again_when_the_switch_is_turned_back_on() {
    let mut sim = engaged_sim();
    sim.throttles = false;
    assert_eq!(sim.read(X).throttles, ThrottleIntent::Release);
    sim.throttles = true;
    assert_eq!(sim.read(X).throttles, ThrottleIntent::Engage);
}

#[test]
fn a_first_failed_read_keeps_the_throttles_and_the_second_releases_them() {
    let mut sim = engaged_sim();
    let held = sim.fail();
    assert_eq!(held.cause, Cause::SignalHeld);
    assert_eq!(held.state, ProtectionState::Emergency);
    assert_eq!(held.throttles, ThrottleIntent::None);
    assert!(held.memory.throttles_engaged);
    let released = sim.fail();
    assert_eq!(released.cause, Cause::SignalLostRelease);
    assert_eq!(released.state, ProtectionState::Normal);
    assert_eq!(released.throttles, ThrottleIntent::Release);
    assert!(!released.memory.throttles_engaged);
}

#[test]
fn restore_throttles_first_before_stepping_down_from_emergency() {
    let mut sim = Sim::from(emergency(HOUR, &[N, N, N, N], true)).throttles(true);
    let restore = sim.read(N);
    assert_eq!(restore.cause, Cause::RestoreThrottlesFirst);
    assert_eq!(restore.state, ProtectionState::Emergency);
    assert!(!restore.changed);
    assert_eq!(restore.throttles, ThrottleIntent::Release);
    assert!(!restore.memory.throttles_engaged);
    assert_eq!(restore.memory.last_auto_change, Some(T0 - HOUR), "restoring is not a state change");
    assert_eq!(restore.supporting.len(), 5);
    let step = sim.read(N);
    assert_eq!(step.cause, Cause::Recover);
    assert_eq!((step.previous, step.state), (ProtectionState::Emergency, ProtectionState::Critical));
    assert_eq!(step.throttles, ThrottleIntent::None);
}

#[test]
fn after_restoring_the_step_down_waits_for_a_tick_that_qualifies_again() {
    let mut sim = Sim::from(emergency(HOUR, &[C, C, C, C], true)).throttles(true);
    assert_eq!(sim.read(C).cause, Cause::RestoreThrottlesFirst);
    let d = sim.read(X);
    assert_eq!(d.state, ProtectionState::Emergency);
    // Critical pressure is back, but five more minutes of emergency have passed long ago.
    assert_eq!(d.throttles, ThrottleIntent::None, "one critical reading is not three");
    let ds = sim.repeat(C, 5);
    assert!(ds[..4].iter().all(|d| d.state == ProtectionState::Emergency));
    assert_eq!(ds[4].cause, Cause::Recover);
    assert_eq!(ds[4].state, ProtectionState::Critical);
}

#[test]
fn restoring_also_happens_with_the_switch_already_off() {
    let mut sim = Sim::from(emergency(HOUR, &[N, N, N, N], true));
    let d = sim.read(N);
    assert_eq!(d.cause, Cause::RestoreThrottlesFirst);
    assert_eq!(d.throttles, ThrottleIntent::Release);
    assert_eq!(d.state, ProtectionState::Emergency);
}

#[test]
fn restoring_waits_for_spacing_like_the_step_it_precedes() {
    let mut m = emergency(HOUR, &[N, N, N, N], true);
    m.last_auto_change = Some(T0 - MIN);
    let d = decide_once(T0, signal(N), Some(m), None, true);
    assert_eq!(d.cause, Cause::SpacingWait);
    assert_eq!(d.pending, Some(ProtectionState::Critical));
    assert_eq!(d.throttles, ThrottleIntent::None);
    assert!(d.memory.throttles_engaged);
}

#[test]
fn throttles_stay_engaged_through_a_pinned_emergency_whatever_the_readings() {
    let mut sim = engaged_sim();
    sim.pin = Some(pin(ProtectionState::Emergency, T0 + HOUR));
    for d in sim.repeat(N, 10) {
        assert_eq!(d.cause, Cause::Pinned);
        assert_eq!(d.throttles, ThrottleIntent::None);
        assert!(d.memory.throttles_engaged);
    }
}

#[test]
fn engaged_throttles_outside_emergency_are_released() {
    for state in [ProtectionState::Normal, ProtectionState::Constrained, ProtectionState::Critical] {
        let mut m = memory_in(state);
        m.throttles_engaged = true;
        let d = decide_once(T0, signal(C), Some(m), None, true);
        assert_eq!(d.throttles, ThrottleIntent::Release, "{state:?}");
        assert!(!d.memory.throttles_engaged);
    }
}

#[test]
fn no_throttle_intent_outside_emergency() {
    for state in [ProtectionState::Normal, ProtectionState::Constrained, ProtectionState::Critical] {
        let mut sim = Sim::in_state(state, &[]).throttles(true);
        sim.now = T0;
        let d = sim.read(X);
        assert_eq!(d.throttles, ThrottleIntent::None, "{state:?}");
    }
}
