//! docs/behaviour.md §5.2: an active pin (expires_at > now) sets the state at once, whatever the
//! readings, spacing or failed reads; a pinned change sets state_since, not last_auto_change;
//! after release or expiry automatic decisions resume from the pinned state.

mod common;

use common::*;
use vocabulary::{Cause, Level, ProtectionState};

use Level::{Constrained as C, Critical as X, Normal as N};

#[test]
fn normal_to_emergency_by_a_pin() {
    let mut sim = Sim::from(memory_in(ProtectionState::Normal));
    sim.pin = Some(pin(ProtectionState::Emergency, T0 + HOUR));
    let d = sim.read(N);
    assert_eq!(d.cause, Cause::Pinned);
    assert!(d.changed);
    assert_eq!((d.previous, d.state), (ProtectionState::Normal, ProtectionState::Emergency));
    assert_eq!(d.factors, T.factors.of(ProtectionState::Emergency));
    assert!(d.explanation.contains("ops@example.com"), "{}", d.explanation);
}

#[test]
fn a_pinned_change_sets_state_since_not_last_auto_change() {
    let mut sim = Sim::from(memory_in(ProtectionState::Normal));
    sim.pin = Some(pin(ProtectionState::Critical, T0 + HOUR));
    let d = sim.read(N);
    assert_eq!(d.memory.state_since, T0);
    assert_eq!(d.memory.last_auto_change, Some(T0 - HOUR));
    let fresh = decide_once(T0, signal(N), None, Some(pin(ProtectionState::Critical, T0 + HOUR)), false);
    assert_eq!(fresh.memory.last_auto_change, None);
}

#[test]
fn a_pin_on_fresh_memory_is_reported_as_pinned_not_fresh() {
    let d = decide_once(T0, signal(N), None, Some(pin(ProtectionState::Constrained, T0 + HOUR)), false);
    assert_eq!(d.cause, Cause::Pinned);
    assert_eq!(d.state, ProtectionState::Constrained);
}

#[test]
fn a_pin_selects_any_state_from_any_state() {
    for from in ProtectionState::ALL {
        for to in ProtectionState::ALL {
            let d = decide_once(T0, signal(X), Some(memory_in(from)), Some(pin(to, T0 + 1)), false);
            assert_eq!(d.state, to, "{from:?} pinned to {to:?}");
            assert_eq!(d.cause, Cause::Pinned);
            assert_eq!(d.changed, from != to);
            assert_eq!(d.factors, T.factors.of(to));
        }
    }
}

#[test]
fn a_pin_selects_emergency_straight_from_constrained() {
    let d =
        decide_once(T0, signal(N), Some(memory_in(ProtectionState::Constrained)), Some(pin(ProtectionState::Emergency, T0 + HOUR)), false);
    assert_eq!((d.previous, d.state), (ProtectionState::Constrained, ProtectionState::Emergency));
}

#[test]
fn a_pin_holds_its_state_whatever_the_readings() {
    let mut sim = Sim::fresh();
    sim.pin = Some(pin(ProtectionState::Normal, T0 + HOUR));
    for d in sim.repeat(X, 20) {
        assert_eq!(d.state, ProtectionState::Normal);
        assert_eq!(d.cause, Cause::Pinned);
    }
}

#[test]
fn a_pin_overrides_spacing() {
    let mut m = memory_in(ProtectionState::Normal);
    m.last_auto_change = Some(T0 - 1);
    let d = decide_once(T0, signal(N), Some(m), Some(pin(ProtectionState::Critical, T0 + HOUR)), false);
    assert_eq!(d.state, ProtectionState::Critical);
}

#[test]
fn a_pin_overrides_failed_reads_which_are_still_counted() {
    let mut sim = Sim::from(memory_in(ProtectionState::Critical));
    sim.pin = Some(pin(ProtectionState::Emergency, T0 + HOUR));
    let ds = [sim.fail(), sim.fail(), sim.fail()];
    assert!(ds.iter().all(|d| d.state == ProtectionState::Emergency && d.cause == Cause::Pinned));
    assert_eq!(sim.mem().failed_reads, 3);
    assert!(sim.mem().recent.is_empty());
}

#[test]
fn pinned_to_the_current_state_changes_nothing_but_the_cause() {
    let d = decide_once(T0, signal(N), Some(memory_in(ProtectionState::Critical)), Some(pin(ProtectionState::Critical, T0 + HOUR)), false);
    assert_eq!(d.cause, Cause::Pinned);
    assert!(!d.changed);
    assert_eq!(d.memory.state_since, T0 - HOUR, "state_since is when the state was entered");
}

#[test]
fn a_pin_that_expires_now_or_earlier_is_not_active() {
    for expires_at in [T0, T0 - 1, T0 - HOUR, i64::MIN] {
        let d =
            decide_once(T0, signal(N), Some(memory_in(ProtectionState::Normal)), Some(pin(ProtectionState::Emergency, expires_at)), false);
        assert_eq!(d.state, ProtectionState::Normal, "expires_at {expires_at}");
        assert_ne!(d.cause, Cause::Pinned);
    }
    let d = decide_once(T0, signal(N), Some(memory_in(ProtectionState::Normal)), Some(pin(ProtectionState::Emergency, T0 + 1)), false);
    assert_eq!(d.state, ProtectionState::Emergency, "one second ahead is still active");
}

#[test]
fn readings_during_a_pin_are_remembered() {
    let mut sim = Sim::fresh();
    sim.pin = Some(pin(ProtectionState::Normal, T0 + HOUR));
    sim.fail();
    sim.repeat(C, 3);
    assert_eq!(sim.mem().failed_reads, 0);
    assert_eq!(sim.mem().recent.len(), 3);
}

#[test]
fn automatic_decisions_resume_from_the_pinned_state_when_the_pin_expires() {
    let mut sim = Sim::from(memory_in(ProtectionState::Normal));
    sim.pin = Some(pin(ProtectionState::Emergency, T0 + 10 * MIN));
    let pinned = sim.repeat(N, 10);
    assert!(pinned.iter().all(|d| d.state == ProtectionState::Emergency && d.cause == Cause::Pinned));
    // The pin expires at T0 + 10 min: from that tick the rules decide, starting from emergency.
    let d = sim.read(N);
    assert_eq!(d.cause, Cause::Recover);
    assert_eq!((d.previous, d.state), (ProtectionState::Emergency, ProtectionState::Critical));
    let later = sim.repeat(N, 10);
    assert_eq!(later[4].state, ProtectionState::Constrained);
    assert_eq!(later[9].state, ProtectionState::Normal);
}

#[test]
fn a_pin_that_expires_mid_sequence_leaves_the_escalation_streak_intact() {
    let mut sim = Sim::fresh();
    sim.pin = Some(pin(ProtectionState::Normal, T0 + 3 * MIN));
    let ds = sim.repeat(X, 4);
    assert!(ds[..3].iter().all(|d| d.state == ProtectionState::Normal));
    assert_eq!(ds[3].cause, Cause::Escalate);
    assert_eq!(ds[3].state, ProtectionState::Critical);
}

#[test]
fn automatic_decisions_resume_when_the_pin_is_removed() {
    let mut sim = Sim::from(memory_in(ProtectionState::Normal));
    sim.pin = Some(pin(ProtectionState::Critical, T0 + HOUR));
    assert!(sim.repeat(C, 4).iter().all(|d| d.state == ProtectionState::Critical));
    sim.pin = None;
    // Five below-critical readings (four of them taken under the pin) recover critical.
    let d = sim.read(C);
    assert_eq!(d.cause, Cause::Recover);
    assert_eq!((d.previous, d.state), (ProtectionState::Critical, ProtectionState::Constrained));
}

#[test]
fn spacing_after_a_pin_counts_from_the_last_automatic_change() {
    // Automatic change at T0 + 2 min; a pin from T0 + 3 min does not restart the spacing.
    let mut sim = Sim::fresh();
    sim.repeat(C, 3);
    assert_eq!(sim.mem().last_auto_change, Some(T0 + 2 * MIN));
    sim.pin = Some(pin(ProtectionState::Normal, T0 + 6 * MIN));
    assert!(sim.repeat(X, 3).iter().all(|d| d.state == ProtectionState::Normal));
    assert_eq!(sim.mem().last_auto_change, Some(T0 + 2 * MIN));
    // Expired at T0 + 6 min with three critical readings: qualifies, but spacing holds it.
    let wait = sim.read(X);
    assert_eq!(wait.cause, Cause::SpacingWait);
    assert_eq!(wait.pending, Some(ProtectionState::Critical));
    let d = sim.read(X);
    assert_eq!(d.cause, Cause::Escalate);
    assert_eq!((d.previous, d.state), (ProtectionState::Normal, ProtectionState::Critical));
    assert_eq!(sim.last_at(), T0 + 7 * MIN);
}

#[test]
fn emergency_after_a_pinned_critical_counts_from_the_pinned_change() {
    let mut sim = Sim::from(memory_in(ProtectionState::Normal));
    sim.pin = Some(pin(ProtectionState::Critical, T0 + MIN));
    assert_eq!(sim.read(X).memory.state_since, T0);
    let ds = sim.repeat(X, 3);
    assert_eq!(ds[0].state, ProtectionState::Critical);
    assert_eq!(ds[1].state, ProtectionState::Critical, "three readings, two minutes in critical");
    assert_eq!(ds[2].cause, Cause::Emergency, "three minutes in critical, spacing long satisfied");
}

#[test]
fn replacing_a_pin_takes_effect_at_once() {
    let mut sim = Sim::fresh();
    sim.pin = Some(pin(ProtectionState::Emergency, T0 + HOUR));
    assert_eq!(sim.read(N).state, ProtectionState::Emergency);
    sim.pin = Some(pin(ProtectionState::Constrained, T0 + HOUR));
    let d = sim.read(N);
    assert_eq!((d.previous, d.state), (ProtectionState::Emergency, ProtectionState::Constrained));
    assert_eq!(d.cause, Cause::Pinned);
}

#[test]
fn signal_loss_after_a_pin_expires_releases_on_the_next_failed_read() {
    let mut sim = Sim::from(memory_in(ProtectionState::Normal));
    sim.pin = Some(pin(ProtectionState::Emergency, T0 + 2 * MIN));
    sim.fail();
    sim.fail();
    let d = sim.fail();
    assert_eq!(d.cause, Cause::SignalLostRelease, "the failures during the pin count");
    assert_eq!(d.state, ProtectionState::Normal);
}
