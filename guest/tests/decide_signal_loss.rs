//! docs/behaviour.md §5.1 and §5.3: a failed read increments failed_reads and clears recent; the
//! first consecutive failure holds the state, the second and later release to normal at once,
//! spacing notwithstanding, with full factors and throttles released (INV-03).

mod common;

use common::*;
use vocabulary::{Cause, Level, ProtectionState, ThrottleIntent};

use Level::{Critical as X, Normal as N};

#[test]
fn a_first_failed_read_holds_the_state() {
    for state in ProtectionState::ALL {
        let mut m = memory_in(state);
        m.recent = recent_before(T0, &[X, X]);
        let d = decide_once(T0, failed(), Some(m), None, false);
        assert_eq!(d.cause, Cause::SignalHeld, "{state:?}");
        assert_eq!(d.state, state);
        assert!(!d.changed);
        assert_eq!(d.memory.failed_reads, 1);
        assert!(d.memory.recent.is_empty(), "a failed read clears recent");
        assert!(d.explanation.contains("read failed"), "{}", d.explanation);
    }
}

#[test]
fn releases_to_normal_after_two_failed_reads() {
    let mut sim = Sim::in_state(ProtectionState::Constrained, &[]);
    assert_eq!(sim.fail().state, ProtectionState::Constrained);
    let d = sim.fail();
    assert_eq!(d.cause, Cause::SignalLostRelease);
    assert_eq!((d.previous, d.state), (ProtectionState::Constrained, ProtectionState::Normal));
    assert_eq!(d.factors, T.factors.of(ProtectionState::Normal));
    assert_eq!(d.memory.failed_reads, 2);
}

#[test]
fn critical_to_normal_after_signal_loss() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[X, X, X]);
    sim.fail();
    let d = sim.fail();
    assert_eq!((d.previous, d.state), (ProtectionState::Critical, ProtectionState::Normal));
    assert_eq!(d.cause, Cause::SignalLostRelease);
    assert_eq!(d.memory.state_since, T0 + MIN);
    assert_eq!(d.memory.last_auto_change, Some(T0 + MIN), "the release is an automatic change");
}

#[test]
fn emergency_to_normal_after_signal_loss() {
    let mut sim = Sim::in_state(ProtectionState::Emergency, &[X, X, X]).throttles(true);
    sim.fail();
    let d = sim.fail();
    assert_eq!((d.previous, d.state), (ProtectionState::Emergency, ProtectionState::Normal));
    assert_eq!(d.factors, T.factors.of(ProtectionState::Normal));
    assert!(!d.memory.throttles_engaged);
}

#[test]
fn signal_loss_release_ignores_spacing() {
    let mut m = memory_in(ProtectionState::Critical);
    m.last_auto_change = Some(T0 - 30);
    m.state_since = T0 - 30;
    m.failed_reads = 1;
    let d = decide_once(T0, failed(), Some(m), None, false);
    assert_eq!(d.state, ProtectionState::Normal);
    assert_eq!(d.cause, Cause::SignalLostRelease);
}

#[test]
fn signal_loss_release_asks_to_release_engaged_throttles() {
    let mut m = memory_in(ProtectionState::Emergency);
    m.failed_reads = 1;
    m.throttles_engaged = true;
    let d = decide_once(T0, failed(), Some(m), None, true);
    assert_eq!(d.throttles, ThrottleIntent::Release);
    assert!(!d.memory.throttles_engaged);
}

#[test]
fn later_failed_reads_are_signal_lost_release_even_when_already_normal() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[]);
    let ds: Vec<_> = (0..6).map(|_| sim.fail()).collect();
    assert_eq!(ds[0].cause, Cause::SignalHeld);
    for d in &ds[1..] {
        assert_eq!(d.cause, Cause::SignalLostRelease);
        assert_eq!(d.state, ProtectionState::Normal);
    }
    assert!(ds[1].changed);
    assert!(ds[2..].iter().all(|d| !d.changed));
    assert_eq!(sim.mem().failed_reads, 6);
    assert_eq!(sim.mem().last_auto_change, Some(T0 + MIN), "no change, no new change time");
}

#[test]
fn signal_loss_from_normal_changes_nothing() {
    let mut sim = Sim::in_state(ProtectionState::Normal, &[]);
    sim.fail();
    let d = sim.fail();
    assert_eq!(d.cause, Cause::SignalLostRelease);
    assert!(!d.changed);
    assert_eq!(d.memory.state_since, T0 - HOUR);
    assert_eq!(d.memory.last_auto_change, Some(T0 - HOUR));
}

#[test]
fn a_reading_between_failures_resets_the_count() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[]);
    sim.fail();
    sim.read(X);
    let d = sim.fail();
    assert_eq!(d.cause, Cause::SignalHeld);
    assert_eq!(d.state, ProtectionState::Critical);
    assert_eq!(d.memory.failed_reads, 1);
}

#[test]
fn a_failed_read_breaks_an_escalation_streak() {
    let mut sim = Sim::fresh();
    sim.repeat(X, 2);
    sim.fail();
    let ds = sim.repeat(X, 3);
    assert_eq!(ds[0].state, ProtectionState::Normal);
    assert_eq!(ds[1].state, ProtectionState::Normal);
    assert_eq!(ds[2].state, ProtectionState::Critical);
}

#[test]
fn a_failed_read_on_fresh_memory_is_signal_held_not_fresh() {
    let d = decide_once(T0, failed(), None, None, false);
    assert_eq!(d.cause, Cause::SignalHeld);
    assert_eq!(d.state, ProtectionState::Normal);
    assert_eq!(d.memory.failed_reads, 1);
}

#[test]
fn the_release_starts_spacing_for_the_next_automatic_change() {
    let mut sim = Sim::in_state(ProtectionState::Critical, &[]);
    sim.fail();
    sim.fail(); // released at T0 + 1 min
    let ds = sim.repeat(X, 6); // T0 + 2 .. T0 + 7 min
    assert_eq!(ds[2].cause, Cause::SpacingWait, "qualifies at T0 + 4 min, spacing until T0 + 6");
    assert_eq!(ds[3].cause, Cause::SpacingWait);
    assert_eq!(ds[4].cause, Cause::Escalate);
    assert_eq!(ds[4].state, ProtectionState::Critical);
}

#[test]
fn failed_reads_saturate_instead_of_overflowing() {
    let mut m = memory_in(ProtectionState::Critical);
    m.failed_reads = u32::MAX;
    let d = decide_once(T0, failed(), Some(m), None, false);
    assert_eq!(d.memory.failed_reads, u32::MAX);
    assert_eq!(d.state, ProtectionState::Normal);
}

#[test]
fn a_reading_after_signal_loss_starts_a_new_streak() {
    let mut sim = Sim::in_state(ProtectionState::Normal, &[N, N, N, N]);
    sim.fail();
    let d = sim.read(X);
    assert_eq!(d.memory.recent.len(), 1);
    assert_eq!(d.memory.failed_reads, 0);
}
