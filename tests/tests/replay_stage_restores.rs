//! Replay shows the stage throttles as the live sentinel would make them (docs/behaviour.md
//! §10.1, §11.3): an incident with the switch on engages and releases them; with a
//! `stage_restores_fail` line before the release, the restore fails and emergency is held
//! (restore-throttles-first) until a `stage_restores_fail: false` line, or for at most
//! `restore_hold_max_s`; the summary counts engagements, releases and the held minutes. Through
//! the native module and the component alike.

use capacity_tests::{component, native};
use sentinel_core::policy::Policy;
use sentinel_core::replay::compare::{Accumulator, Summary};
use sentinel_core::trace::parse_trace;
use vocabulary::{Cause, ProtectionState, ThrottleIntent};

/// 14 critical minutes then calm, the switch on; restores fail from minute `fail_from` to
/// minute `fail_until` (none when `fail_from` is none).
fn trace(fail: Option<(i64, i64)>) -> String {
    let mut lines = vec![r#"{"at":"2026-10-20T14:00:00Z","throttles_enabled":true}"#.to_string()];
    for i in 0..60 {
        if let Some((from, until)) = fail {
            if i == from {
                lines.push(format!(r#"{{"at":"2026-10-20T14:{i:02}:00Z","stage_restores_fail":true}}"#));
            }
            if i == until {
                lines.push(format!(r#"{{"at":"2026-10-20T14:{i:02}:00Z","stage_restores_fail":false}}"#));
            }
        }
        let cpu = if i < 14 { 95.0 } else { 10.0 };
        lines.push(format!(r#"{{"at":"2026-10-20T14:{i:02}:00Z","reading":{{"cpu_pct":{cpu}}}}}"#));
    }
    lines.join("\n")
}

/// Builds a policy of a version: the native module or the component.
type MakePolicy = fn(&str) -> Box<dyn Policy>;

/// Each tick's (minute, state, cause, intent), and the summary.
fn replay(make: MakePolicy, text: &str) -> (Vec<(i64, ProtectionState, Cause, ThrottleIntent)>, Summary) {
    let trace = parse_trace("stages", text).unwrap();
    let mut policies = vec![make("1.0.0")];
    let thresholds = policies[0].describe().unwrap().thresholds;
    let mut acc = Accumulator::new("1.0.0", "stages", &thresholds);
    let mut ticks = Vec::new();
    sentinel_core::replay::run(&trace, &mut policies, false, &mut |_, t| {
        ticks.push(((t.at - 1_792_504_800) / 60, t.outcome.state, t.outcome.cause, t.outcome.throttles));
        acc.add(&t);
    })
    .unwrap();
    (ticks, acc.finish())
}

#[test]
fn restores_that_fail_hold_emergency_in_replay_as_they_do_live() {
    let makers: [MakePolicy; 2] = [native, component];
    for make in makers {
        let (ok, ok_summary) = replay(make, &trace(None));
        let engaged = ok.iter().find(|t| t.3 == ThrottleIntent::Engage).expect("engaged").0;
        let released = ok.iter().find(|t| t.3 == ThrottleIntent::Release).expect("released").0;
        let stepped = ok.iter().find(|t| t.0 > released && t.1 == ProtectionState::Critical).expect("stepped down").0;
        assert_eq!(stepped, released + 1, "restored at the release, stepped down the next minute");
        assert_eq!((ok_summary.throttle_engagements, ok_summary.throttle_releases, ok_summary.minutes_held_for_restore), (1, 1, 0));

        // Restores fail from before the release until 4 minutes after it.
        let (held, summary) = replay(make, &trace(Some((engaged + 1, released + 4))));
        let held_ticks: Vec<i64> = held.iter().filter(|t| t.0 > released && t.2 == Cause::RestoreThrottlesFirst).map(|t| t.0).collect();
        assert_eq!(held_ticks, (released + 1..=released + 4).collect::<Vec<_>>(), "{held:?}");
        assert!(held.iter().filter(|t| held_ticks.contains(&t.0)).all(|t| t.1 == ProtectionState::Emergency));
        let stepped = held.iter().find(|t| t.0 > released && t.1 == ProtectionState::Critical).expect("stepped down").0;
        assert_eq!(stepped, released + 5, "the first tick after the restore succeeded");
        assert_eq!((summary.throttle_engagements, summary.throttle_releases, summary.minutes_held_for_restore), (1, 1, 4));

        // Restores that never succeed: held for restore_hold_max_s (600 s), then stepped down.
        let (bounded, summary) = replay(make, &trace(Some((engaged + 1, 60))));
        let stepped = bounded.iter().find(|t| t.0 > released && t.1 == ProtectionState::Critical).expect("stepped down").0;
        assert_eq!(stepped, released + 11, "ten held minutes, then the step down");
        assert_eq!(summary.minutes_held_for_restore, 10);
    }
}
