//! docs/behaviour.md §6.2: emergency steps down only once the stages are really restored. The
//! decision input says whether any stage is still throttled; while one is, a recovery from
//! emergency is held (cause restore-throttles-first) for at most `restore_hold_max_s`, then the
//! state steps down anyway and says so.

mod common;

use common::*;
use vocabulary::{Cause, Level, Memory, ProtectionState, ThrottleIntent};

use Level::{Critical as X, Normal as N};

/// Emergency for an hour, four calm readings, throttles engaged.
fn engaged_and_calming() -> Sim {
    let mut m = memory_in(ProtectionState::Emergency);
    m.recent = recent_before(T0, &[N, N, N, N]);
    m.throttles_engaged = true;
    Sim::from(m).throttles(true)
}

#[test]
fn a_failed_restore_holds_emergency_until_the_stages_are_restored() {
    let mut sim = engaged_and_calming();
    sim.stages_throttled = Some(true);
    let release = sim.read(N);
    assert_eq!(
        (release.cause, release.throttles, release.state),
        (Cause::RestoreThrottlesFirst, ThrottleIntent::Release, ProtectionState::Emergency)
    );
    assert_eq!(release.memory.restore_held_since, None, "the release tick is the seeds' own");
    // The restore failed: the stages are still throttled. Emergency holds, every minute.
    let held = sim.repeat(N, 5);
    for d in &held {
        assert_eq!((d.cause, d.state, d.changed), (Cause::RestoreThrottlesFirst, ProtectionState::Emergency, false), "{}", d.explanation);
        assert_eq!(d.throttles, ThrottleIntent::None, "nothing more to ask: the host retries the restore");
        assert_eq!(d.memory.restore_held_since, Some(T0 + MIN));
        assert!(d.explanation.contains("stages still throttled"), "{}", d.explanation);
    }
    // Restored: the next tick steps down.
    sim.stages_throttled = Some(false);
    let step = sim.read(N);
    assert_eq!((step.cause, step.previous, step.state), (Cause::Recover, ProtectionState::Emergency, ProtectionState::Critical));
    assert_eq!(step.memory.restore_held_since, None);
}

#[test]
fn the_hold_is_bounded_then_emergency_steps_down_anyway() {
    assert_eq!(T.restore_hold_max_s, 600, "the default bound: 10 minutes");
    let mut sim = engaged_and_calming();
    sim.stages_throttled = Some(true);
    sim.read(N); // the release
    let start = sim.now;
    let mut held = 0;
    loop {
        let d = sim.read(N);
        if d.state != ProtectionState::Emergency {
            assert_eq!(d.cause, Cause::Recover);
            assert_eq!(sim.last_at() - start, i64::from(T.restore_hold_max_s), "steps down when the hold has lasted its bound");
            assert!(d.explanation.contains("ran out: stepped down anyway"), "{}", d.explanation);
            assert_eq!(d.memory.restore_held_since, None);
            break;
        }
        held += 1;
        assert!(held <= 10, "held past the bound");
    }
    assert_eq!(held, 10, "one tick a minute for ten minutes");
    // Critical does not hold for stages (only a step down from emergency waits for them).
    let next = sim.repeat(N, 5);
    assert_eq!(next[4].state, ProtectionState::Constrained);
}

#[test]
fn pressure_coming_back_ends_the_hold_and_a_new_one_starts_afresh() {
    let mut sim = engaged_and_calming();
    sim.stages_throttled = Some(true);
    sim.read(N);
    let d = sim.read(N);
    assert_eq!(d.memory.restore_held_since, Some(T0 + MIN));
    let d = sim.read(X);
    assert_eq!((d.cause, d.memory.restore_held_since), (Cause::Hold, None), "not calm: an ordinary hold");
    let ds = sim.repeat(N, 5);
    assert_eq!(ds[4].cause, Cause::RestoreThrottlesFirst);
    assert_eq!(ds[4].memory.restore_held_since, Some(sim.last_at()));
}

#[test]
fn stages_still_throttled_do_not_hold_a_pin_or_a_lost_signal() {
    let mut sim = engaged_and_calming();
    sim.stages_throttled = Some(true);
    sim.pin = Some(pin(ProtectionState::Normal, T0 + HOUR));
    let d = sim.read(N);
    assert_eq!((d.cause, d.state), (Cause::Pinned, ProtectionState::Normal), "staff decide");

    let mut sim = engaged_and_calming();
    sim.stages_throttled = Some(true);
    sim.fail();
    let d = sim.fail();
    assert_eq!((d.cause, d.state), (Cause::SignalLostRelease, ProtectionState::Normal), "the seeds release on a lost signal");
}

#[test]
fn memory_written_before_the_hold_existed_reads_as_not_held() {
    let old = r#"{"state":"emergency","state_since":1,"last_auto_change":null,"recent":[],"failed_reads":0,"throttles_engaged":false}"#;
    let m: Memory = serde_json::from_str(old).unwrap();
    assert_eq!(m.restore_held_since, None);
}
