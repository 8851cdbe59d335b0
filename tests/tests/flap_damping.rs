//! Flap damping (docs/behaviour.md §5.4) on the fixture `tests/policies/9.6.0`: a bursty
//! database stops oscillating, a held tick says why and for how long, the hold ends when the
//! penalty has decayed below the reuse limit, a calm database never pays for it, a pin is never
//! damped, and the component (contract 3.2.0) decides exactly as the native rules, its flap
//! record crossing beside the memory.

use capacity_tests::paths::{crate_dir, target_dir};
use capacity_tests::{ReplayPath, replay_outcomes, runtime};
use sentinel_core::policy::{NativePolicy, Policy};
use sentinel_core::replay::compare::Accumulator;
use sentinel_core::replay::metrics::metric;
use sentinel_core::replay::svg::{Frame, timeline_svg};
use sentinel_core::replay::timeline::Timeline;
use sentinel_core::trace::{Trace, parse_trace};
use vocabulary::{Decision, DecisionInput, Memory, Pin, PolicyDescription, ProtectionState, Reading, Signal};

const START: i64 = 1_790_000_000 - 1_790_000_000 % 60;

fn open(spec: String) -> Box<dyn Policy> {
    sentinel_core::policy::open(&spec, &runtime()).unwrap_or_else(|e| panic!("opening {spec}: {e}"))
}

fn native() -> Box<dyn Policy> {
    open(format!("9.6.0={}", crate_dir().join("policies/9.6.0").display()))
}

fn component() -> Box<dyn Policy> {
    open(format!("9.6.0={}", target_dir().join("test-policies/capacity-policy-damping-9.6.0.wasm").display()))
}

/// The fixture's numbers without damping: what the same database gets from the seeds' rule.
fn undamped() -> Box<dyn Policy> {
    let mut description: PolicyDescription = native().describe().unwrap();
    description.thresholds.damping = None;
    Box::new(NativePolicy::new(description, "undamped", Some("9.6.0-undamped")))
}

fn reading(cpu: f64) -> Signal {
    Signal::Reading(Reading { cpu_pct: Some(cpu), connections_pct: Some(20.0), scaling: Some(false), latency: Vec::new() })
}

/// One decision a minute over `cpu`, the memory carried as the live sentinel carries it (through
/// its JSON, as the store keeps it), with `pin` from minute `pin_from` on.
fn run(policy: &mut dyn Policy, cpu: &[f64], pin: Option<(usize, Pin)>) -> Vec<Decision> {
    let mut memory: Option<Memory> = None;
    let mut decisions = Vec::new();
    for (minute, &value) in cpu.iter().enumerate() {
        let input = DecisionInput {
            now: START + 60 * minute as i64,
            signal: reading(value),
            memory: memory.take(),
            pin: pin.as_ref().filter(|(from, _)| minute >= *from).map(|(_, p)| p.clone()),
            throttles_enabled: false,
            stages_throttled: false,
        };
        let decision = policy.decide(&input).unwrap();
        let stored = serde_json::to_string(&decision.memory).unwrap();
        memory = Some(serde_json::from_str(&stored).unwrap());
        decisions.push(decision);
    }
    decisions
}

/// An hour of bursts (3 minutes at 75 % CPU, then 2 calm minutes at 40 %), then two calm hours.
fn bursty() -> Vec<f64> {
    let mut cpu: Vec<f64> = (0..60).map(|m| if m % 5 < 3 { 75.0 } else { 40.0 }).collect();
    cpu.extend(std::iter::repeat_n(40.0, 120));
    cpu
}

/// [`bursty`] as a trace, one reading a minute from 2026-10-20T14:00:00Z.
fn bursty_trace() -> Trace {
    let text: String = bursty()
        .iter()
        .enumerate()
        .map(|(m, cpu)| format!("{{\"at\":\"2026-10-20T{:02}:{:02}:00Z\",\"reading\":{{\"cpu_pct\":{cpu:.1}}}}}\n", 14 + m / 60, m % 60))
        .collect();
    parse_trace("bursty", &text).unwrap()
}

fn changes(decisions: &[Decision]) -> usize {
    decisions.iter().filter(|d| d.changed).count()
}

#[test]
fn a_bursty_database_stops_oscillating_and_the_hold_ends_when_the_penalty_has_decayed() {
    let cpu = bursty();
    let plain = run(undamped().as_mut(), &cpu, None);
    let damped = run(native().as_mut(), &cpu, None);
    assert!(changes(&plain) >= 20, "the burst pattern flaps without damping: {} changes", changes(&plain));
    assert!(changes(&damped) <= 8, "damping holds after a few flaps: {} changes", changes(&damped));

    let held: Vec<&Decision> = damped.iter().filter(|d| d.damping_hold.is_some()).collect();
    assert!(!held.is_empty(), "some recovery was held");
    for d in &held {
        assert_eq!(d.state, ProtectionState::Constrained, "only a recovery is held: {}", d.explanation);
        let hold = d.damping_hold.unwrap();
        assert!(hold.penalty >= hold.reuse_limit, "{hold:?}");
        let expected = format!(
            "recovery held by flap damping: penalty {:.1} (suppressed at 2.0), decays to the reuse limit 0.5 in {} min",
            hold.penalty,
            hold.reuse_in_s.div_ceil(60)
        );
        assert!(d.explanation.contains(&expected), "{}\nexpected: {expected}", d.explanation);
    }

    // The last hold says when the penalty reaches the reuse limit; the recovery comes then.
    let last_held = damped.iter().rposition(|d| d.damping_hold.is_some()).unwrap();
    let recovered = damped.iter().skip(last_held).position(|d| d.changed).map(|i| i + last_held).expect("recovers in the end");
    assert_eq!(damped[recovered].state, ProtectionState::Normal);
    let promised = damped[last_held].damping_hold.unwrap().reuse_in_s;
    assert!(
        (recovered - last_held) as u32 * 60 >= promised && (recovered - last_held) as u32 * 60 <= promised + 60,
        "held at minute {last_held} for {promised} s more, recovered at minute {recovered}"
    );
    let flap = damped[recovered].memory.flap.expect("the memory keeps the penalty");
    assert!(!flap.suppressed, "the suppression was lifted below the reuse limit");
    assert_eq!(damped.last().unwrap().state, ProtectionState::Normal);
}

/// With `suppressed_recover_readings`, a suppressed recovery is not held outright: it needs the
/// longer calm, and comes as soon as the database has been calm that long.
#[test]
fn while_suppressed_a_longer_calm_recovers_before_the_reuse_limit() {
    let mut description: PolicyDescription = native().describe().unwrap();
    let damping = description.thresholds.damping.as_mut().unwrap();
    // A slow decay (an hour's half-life), so that the calm, not the reuse limit, ends the hold.
    damping.half_life_s = 3600;
    damping.suppressed_recover_readings = Some(8);
    let mut policy: Box<dyn Policy> = Box::new(NativePolicy::new(description, "longer-calm", Some("9.6.0-longer-calm")));
    let cpu = bursty();
    let decisions = run(policy.as_mut(), &cpu, None);
    let last_held = decisions.iter().rposition(|d| d.damping_hold.is_some()).expect("held in the bursts");
    let hold = decisions[last_held].damping_hold.unwrap();
    assert_eq!(hold.calm_readings_needed, Some(8));
    assert!(
        decisions[last_held].explanation.ends_with(", or 8 calm readings in a row before then"),
        "{}",
        decisions[last_held].explanation
    );
    // The bursts end at minute 60; the eighth calm reading after the last burst recovers (the
    // two calm readings between bursts never do), well before the penalty reaches the reuse limit.
    let recovered = decisions.iter().skip(last_held).position(|d| d.changed).map(|i| i + last_held).unwrap();
    assert_eq!(decisions[recovered].state, ProtectionState::Normal);
    assert_eq!(recovered, 57 + 8 - 1 + 1, "8 calm readings from minute 58 (the last burst is minutes 55 to 57)");
    assert!(((recovered - last_held) as u32) * 60 < hold.reuse_in_s, "recovered before the reuse limit");
    assert!(decisions[..58].iter().filter(|d| d.damping_hold.is_some()).all(|d| d.state == ProtectionState::Constrained));
}

#[test]
fn a_calm_or_steady_database_never_pays_for_damping() {
    // Calm; one long incident (no reversal within the window); one escalation a couple of hours
    // after a recovery.
    let mut cpu = vec![30.0; 120];
    cpu.extend(vec![90.0; 40]);
    cpu.extend(vec![30.0; 200]);
    cpu.extend(vec![75.0; 10]);
    cpu.extend(vec![30.0; 60]);
    let plain = run(undamped().as_mut(), &cpu, None);
    let damped = run(native().as_mut(), &cpu, None);
    let states = |d: &[Decision]| d.iter().map(|d| (d.state, d.cause)).collect::<Vec<_>>();
    assert_eq!(states(&damped), states(&plain));
    assert!(damped.iter().all(|d| d.damping_hold.is_none()));
}

#[test]
fn a_pin_is_never_damped() {
    let cpu: Vec<f64> = bursty().into_iter().take(40).chain(std::iter::repeat_n(40.0, 10)).collect();
    let unpinned = run(native().as_mut(), &cpu, None);
    let suppressed_at = unpinned.iter().position(|d| d.damping_hold.is_some()).expect("suppressed in the bursts");
    let pin = Pin { state: ProtectionState::Normal, reason: "load test".into(), expires_at: START + 86_400, actor: "alice".into() };
    let pinned = run(native().as_mut(), &cpu, Some((suppressed_at, pin)));
    assert_eq!(pinned[suppressed_at].state, ProtectionState::Normal, "{}", pinned[suppressed_at].explanation);
    assert!(pinned[suppressed_at..].iter().all(|d| d.state == ProtectionState::Normal && d.damping_hold.is_none()));
}

#[test]
fn the_component_decides_with_damping_exactly_as_the_native_rules() {
    let cpu = bursty();
    let by_native = run(native().as_mut(), &cpu, None);
    let by_component = run(component().as_mut(), &cpu, None);
    assert!(by_native.iter().any(|d| d.damping_hold.is_some()));
    for (minute, (n, c)) in by_native.iter().zip(&by_component).enumerate() {
        assert_eq!(n, c, "minute {minute}");
    }
    let damping = component().describe().unwrap().thresholds.damping;
    assert!(damping.is_some());
    assert_eq!(damping, native().describe().unwrap().thresholds.damping, "policy info shows the file's numbers");
}

#[test]
fn a_replay_marks_the_ticks_damping_held_in_batch_and_tick_by_tick() {
    let trace = bursty_trace();
    let mut native = native();
    let mut component = component();
    let reference = replay_outcomes(&trace, native.as_mut(), false, ReplayPath::PerTick, 64);
    assert!(reference.0.iter().any(|o| o.damping_held), "the bursts are damped under 9.6.0");
    assert_eq!(replay_outcomes(&trace, component.as_mut(), false, ReplayPath::Batch, 64), reference, "component, batch");
    assert_eq!(replay_outcomes(&trace, component.as_mut(), false, ReplayPath::PerTick, 64), reference, "component, tick by tick");
    assert_eq!(replay_outcomes(&trace, native.as_mut(), false, ReplayPath::Batch, 7), reference, "native, batch");
}

/// The A/B report's numbers and its timeline show where damping held a state.
#[test]
fn the_report_counts_and_the_timeline_marks_the_minutes_damping_held() {
    let trace = bursty_trace();
    let mut policy = native();
    let thresholds = policy.describe().unwrap().thresholds;
    let mut summary = Accumulator::new("9.6.0", "bursty", &thresholds);
    let mut timeline = Timeline::default();
    let mut held = 0;
    sentinel_core::replay::run(&trace, std::slice::from_mut(&mut policy), false, &mut |_, tick| {
        summary.add(&tick);
        timeline.add(&tick);
        held += u64::from(tick.outcome.damping_held);
    })
    .unwrap();
    let summary = summary.finish();
    assert!(held > 0);
    assert_eq!(summary.minutes_held_by_damping, held);
    assert_eq!((metric("minutes_held_by_damping").unwrap().value)(&summary), Some(held as f64));
    let svg = timeline_svg(&Frame::report("bursty", &["9.6.0".into()]), &["9.6.0".into()], &[&timeline], &[&thresholds]).unwrap();
    assert!(svg.contains("recovery held by flap damping"), "the legend names the mark");
    assert!(svg.to_uppercase().contains("#4527A0"), "the violet bar is drawn");
    timeline.points.iter_mut().for_each(|p| p.damping_held = false);
    let unmarked = timeline_svg(&Frame::report("bursty", &["9.6.0".into()]), &["9.6.0".into()], &[&timeline], &[&thresholds]).unwrap();
    assert_eq!(unmarked.to_uppercase().matches("#4527A0").count(), 0, "no bar and no legend entry without a hold");
    assert!(!unmarked.contains("recovery held by flap damping"), "the legend names only what is drawn");
}

/// A batch session's start crosses as the memory record, which has no flap record: starting one
/// from a memory that carries a penalty is refused, never run without it.
#[test]
fn a_batch_replay_from_a_memory_with_a_penalty_is_refused_not_run_without_it() {
    let decisions = run(native().as_mut(), &bursty(), None);
    let memory = decisions.iter().map(|d| d.memory.clone()).find(|m| m.flap.is_some_and(|f| f.penalty > 0.0)).unwrap();
    let mut policy = component();
    let start = vocabulary::SessionStart { memory: Some(memory), ..vocabulary::SessionStart::fresh(false) };
    let error = policy.batch_session(start).err().expect("refused");
    assert!(matches!(error, sentinel_core::policy::PolicyError::BatchStartWithFlap { .. }), "{error}");
    assert!(error.to_string().contains("replay tick by tick, or start from a fresh memory"), "{error}");
}
