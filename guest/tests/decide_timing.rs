//! docs/behaviour.md §5.1 and §5.4, timing: spacing between automatic changes (spacing-wait names
//! the pending target), repeated ticks (the same minute replaces the newest entry) and missed
//! ticks (a gap of more than 90 s clears recent).

mod common;

use common::*;
use vocabulary::{Cause, Level, ProtectionState};

use Level::{Constrained as C, Critical as X, Normal as N};

#[test]
fn no_second_automatic_change_within_five_minutes_of_the_last() {
    let mut sim = Sim::fresh();
    sim.repeat(C, 3); // constrained at T0 + 2 min
    let ds = sim.repeat(X, 6); // T0 + 3 .. T0 + 8 min
    // Critical qualifies from T0 + 5 min (three critical readings) and waits until T0 + 7 min.
    assert_eq!(ds[0].cause, Cause::Hold);
    assert_eq!(ds[1].cause, Cause::Hold);
    assert_eq!(ds[2].cause, Cause::SpacingWait);
    assert_eq!(ds[2].pending, Some(ProtectionState::Critical));
    assert_eq!(ds[2].state, ProtectionState::Constrained);
    assert_eq!(ds[3].cause, Cause::SpacingWait);
    assert_eq!(ds[4].cause, Cause::Escalate);
    assert_eq!(ds[4].state, ProtectionState::Critical);
    assert_eq!(ds[4].memory.last_auto_change, Some(T0 + 7 * MIN));
}

#[test]
fn spacing_allows_a_change_at_exactly_five_minutes() {
    let mut m = memory_in(ProtectionState::Normal);
    m.recent = recent_before(T0, &[X, X]);
    m.last_auto_change = Some(T0 - 5 * MIN);
    let d = decide_once(T0, signal(X), Some(m.clone()), None, false);
    assert_eq!(d.cause, Cause::Escalate);
    m.last_auto_change = Some(T0 - 5 * MIN + 1);
    let d = decide_once(T0, signal(X), Some(m), None, false);
    assert_eq!(d.cause, Cause::SpacingWait);
    assert_eq!(d.state, ProtectionState::Normal);
}

#[test]
fn spacing_wait_names_the_pending_target_and_its_supporting_readings() {
    let mut m = memory_in(ProtectionState::Normal);
    m.recent = recent_before(T0, &[X, C]);
    m.last_auto_change = Some(T0 - MIN);
    let d = decide_once(T0, signal(X), Some(m), None, false);
    assert_eq!(d.cause, Cause::SpacingWait);
    assert_eq!(d.pending, Some(ProtectionState::Constrained));
    assert_eq!(d.supporting.len(), 3);
    assert!(!d.changed);
    assert_eq!(d.memory.last_auto_change, Some(T0 - MIN));
    assert!(d.explanation.contains("constrained pending"), "{}", d.explanation);
}

#[test]
fn no_automatic_change_yet_means_spacing_is_satisfied() {
    let mut m = memory_in(ProtectionState::Normal);
    m.last_auto_change = None;
    m.state_since = T0 - 1;
    m.recent = recent_before(T0, &[X, X]);
    let d = decide_once(T0, signal(X), Some(m), None, false);
    assert_eq!(d.cause, Cause::Escalate);
}

#[test]
fn recovery_waits_for_spacing_too() {
    let mut m = memory_in(ProtectionState::Constrained);
    m.last_auto_change = Some(T0 - 4 * MIN);
    m.recent = recent_before(T0, &[N, N, N, N]);
    let d = decide_once(T0, signal(N), Some(m), None, false);
    assert_eq!(d.cause, Cause::SpacingWait);
    assert_eq!(d.pending, Some(ProtectionState::Normal));
}

#[test]
fn emergency_waits_for_spacing_too() {
    let mut m = memory_in(ProtectionState::Critical);
    m.state_since = T0 - HOUR;
    m.last_auto_change = Some(T0 - MIN);
    m.recent = recent_before(T0, &[X, X]);
    let d = decide_once(T0, signal(X), Some(m), None, false);
    assert_eq!(d.cause, Cause::SpacingWait);
    assert_eq!(d.pending, Some(ProtectionState::Emergency));
}

#[test]
fn a_last_change_in_the_future_forbids_automatic_changes() {
    let mut m = memory_in(ProtectionState::Normal);
    m.last_auto_change = Some(T0 + HOUR);
    m.recent = recent_before(T0, &[X, X]);
    let d = decide_once(T0, signal(X), Some(m), None, false);
    assert_eq!(d.cause, Cause::SpacingWait);
}

#[test]
fn a_repeated_tick_in_the_same_minute_replaces_the_newest_entry() {
    let mut sim = Sim::fresh();
    sim.tick_at(T0, signal(X));
    sim.tick_at(T0 + 20, signal(X));
    let d = sim.tick_at(T0 + 59, signal(N));
    assert_eq!(d.memory.recent.len(), 1);
    assert_eq!(d.memory.recent[0].at, T0 + 59);
    assert_eq!(d.memory.recent[0].level, N, "the newest reading of the minute wins");
}

#[test]
fn repeated_ticks_count_once_toward_a_streak() {
    let mut sim = Sim::fresh();
    for at in [T0, T0 + 10, T0 + 30, T0 + MIN, T0 + MIN + 5] {
        let d = sim.tick_at(at, signal(X));
        assert_eq!(d.state, ProtectionState::Normal, "at +{}s", at - T0);
    }
    assert_eq!(sim.mem().recent.len(), 2);
    let d = sim.tick_at(T0 + 2 * MIN, signal(X));
    assert_eq!(d.state, ProtectionState::Critical);
}

#[test]
fn minutes_are_clock_minutes_not_sixty_second_windows() {
    let mut sim = Sim::fresh();
    sim.tick_at(T0 + 59, signal(X));
    let d = sim.tick_at(T0 + 61, signal(X));
    assert_eq!(d.memory.recent.len(), 2, "two seconds apart but in different minutes");
}

#[test]
fn a_gap_of_more_than_90_seconds_clears_recent() {
    let mut sim = Sim::fresh();
    sim.tick_at(T0, signal(X));
    sim.tick_at(T0 + MIN, signal(X));
    let d = sim.tick_at(T0 + MIN + 91, signal(X));
    assert_eq!(d.memory.recent.len(), 1);
    assert_eq!(d.state, ProtectionState::Normal, "a missed tick breaks the streak");
}

#[test]
fn a_gap_of_exactly_90_seconds_keeps_the_streak() {
    let mut sim = Sim::fresh();
    sim.tick_at(T0, signal(X));
    sim.tick_at(T0 + MIN, signal(X));
    let d = sim.tick_at(T0 + MIN + 90, signal(X));
    assert_eq!(d.memory.recent.len(), 3);
    assert_eq!(d.state, ProtectionState::Critical);
}

#[test]
fn a_missed_tick_breaks_a_recovery_streak() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[N, N, N]);
    sim.read(N);
    sim.now += 2 * MIN;
    let ds = sim.repeat(N, 5);
    assert!(ds[..4].iter().all(|d| d.state == ProtectionState::Critical));
    assert_eq!(ds[4].state, ProtectionState::Constrained);
}

#[test]
fn time_going_backwards_clears_recent() {
    let mut sim = Sim::in_state(ProtectionState::Normal, &[X, X]);
    let d = sim.tick_at(T0 - 10 * MIN, signal(X));
    assert_eq!(d.memory.recent.len(), 1);
    assert_eq!(d.state, ProtectionState::Normal);
}

#[test]
fn recent_keeps_only_the_newest_five_entries() {
    let mut sim = Sim::fresh();
    let levels = [N, C, X, N, C, X, N, C];
    sim.reads(&levels);
    let recent = &sim.mem().recent;
    assert_eq!(recent.len(), 5);
    let kept: Vec<(i64, Level)> = recent.iter().map(|e| (e.at - T0, e.level)).collect();
    assert_eq!(kept, vec![(180, N), (240, C), (300, X), (360, N), (420, C)]);
}

#[test]
fn an_overlong_recent_list_from_memory_is_trimmed() {
    let mut m = memory_in(ProtectionState::Normal);
    m.recent = recent_before(T0, &[N; 40]);
    let d = decide_once(T0, signal(N), Some(m), None, false);
    assert_eq!(d.memory.recent.len(), 5);
    assert_eq!(d.memory.recent.last().unwrap().at, T0);
}

#[test]
fn the_emergency_clock_runs_from_state_since_not_from_the_last_change() {
    // Critical entered 3 min ago by a pin, last automatic change long ago: emergency now.
    let mut m = memory_in(ProtectionState::Critical);
    m.state_since = T0 - 3 * MIN;
    m.last_auto_change = Some(T0 - HOUR);
    m.recent = recent_before(T0, &[X, X]);
    assert_eq!(decide_once(T0, signal(X), Some(m.clone()), None, false).cause, Cause::Emergency);
    // Critical entered 2 min ago, last automatic change long ago: not yet.
    m.state_since = T0 - 2 * MIN;
    assert_eq!(decide_once(T0, signal(X), Some(m), None, false).cause, Cause::Hold);
}
