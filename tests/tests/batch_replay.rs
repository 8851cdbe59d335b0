//! Batch replay (docs/behaviour.md §10.2) gives what `decide` gives tick by tick: every tick's
//! outcome (state, factors, cause, level, pending, throttles, restore hold and the explanation)
//! and every baseline learnt, whether the session runs natively or in the component, whatever
//! the chunk size. Proven on the decision vectors (each a session started from the vector's
//! input), on random traces, and on every trace in the repository.
//!
//! Cases: `PROPTEST_CASES` (default 1000, a quarter of it through the components).

use capacity_tests::paths::{crate_dir, files_ending, target_dir};
use capacity_tests::policies::{ReplayPath, VERSIONS, component_hint, runtime};
use capacity_tests::random_trace::{cases, runner, trace};
use capacity_tests::repository_traces::repository_traces;
use capacity_tests::{native, replay_outcomes};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sentinel_core::policy::Policy;
use sentinel_core::trace::{Trace, TraceEvent};
use serde::Deserialize;
use std::cell::RefCell;
use vocabulary::{ApiBaseline, Decision, DecisionInput, Outcome, SessionStart};

type Replayed = (Vec<Outcome>, Vec<(usize, Vec<ApiBaseline>)>);

/// The first tick where two replays differ, described; `None` when they are the same.
fn difference(what: &str, reference: &Replayed, other: &Replayed) -> Option<String> {
    if let Some(i) = (0..reference.0.len().max(other.0.len())).find(|&i| reference.0.get(i) != other.0.get(i)) {
        return Some(format!(
            "{what}: tick {} of {} differs:\n  per tick: {:?}\n  batch:    {:?}",
            i + 1,
            reference.0.len(),
            reference.0.get(i),
            other.0.get(i)
        ));
    }
    if let Some(i) = (0..reference.1.len().max(other.1.len())).find(|&i| reference.1.get(i) != other.1.get(i)) {
        return Some(format!(
            "{what}: learnt baselines #{i} differ:\n  per tick: {:?}\n  batch:    {:?}",
            reference.1.get(i),
            other.1.get(i)
        ));
    }
    None
}

/// `trace` through every path of one version: native tick by tick (the reference), native in
/// batch, the component in batch and the component tick by tick, chunked by `chunk` events.
fn all_paths_agree(
    native: &mut dyn Policy,
    component: &mut dyn Policy,
    trace: &Trace,
    throttles: bool,
    chunk: usize,
) -> Result<(), String> {
    let version = native.identity().version.clone();
    let reference = replay_outcomes(trace, native, throttles, ReplayPath::PerTick, chunk);
    let native_batch = replay_outcomes(trace, native, throttles, ReplayPath::Batch, chunk);
    let component_batch = replay_outcomes(trace, component, throttles, ReplayPath::Batch, chunk);
    let component_per_tick = replay_outcomes(trace, component, throttles, ReplayPath::PerTick, chunk);
    for (what, replayed) in
        [("native in batch", native_batch), ("component in batch", component_batch), ("component tick by tick", component_per_tick)]
    {
        if let Some(diff) =
            difference(&format!("policy {version}, trace {}, {what} (chunks of {chunk})", trace.name), &reference, &replayed)
        {
            return Err(format!("{diff}{}", component_hint(&version)));
        }
    }
    Ok(())
}

#[derive(Debug, Deserialize)]
struct DecisionCase {
    name: String,
    input: DecisionInput,
    expected: Decision,
}

#[test]
fn every_decision_vector_is_decided_alike_by_a_session_started_from_its_input() {
    let mut policies = [native("1.0.0"), capacity_tests::component("1.0.0")];
    let mut checked = 0;
    for file in files_ending(&crate_dir().join("vectors/decision"), ".json") {
        let text = std::fs::read_to_string(&file).unwrap();
        let cases: Vec<DecisionCase> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for case in cases {
            let input = case.input;
            let start = SessionStart {
                memory: input.memory,
                pin: input.pin,
                throttles_enabled: input.throttles_enabled,
                stages_throttled: input.stages_throttled,
                explain: true,
            };
            let expected = Outcome::of(&case.expected, true);
            for policy in &mut policies {
                let label = policy.identity().kind;
                let mut session = policy.batch_session(start.clone()).unwrap_or_else(|e| panic!("{label}: {e}"));
                let answer = session.feed(&[TraceEvent::Tick { at: input.now, signal: input.signal.clone() }]).unwrap();
                assert_eq!(answer.outcomes, vec![expected.clone()], "{}: case {} through the {label} session", file.display(), case.name);
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} decision vectors");
}

/// The native modules and the component of one version.
type Pair = (Box<dyn Policy>, Box<dyn Policy>);

/// Both implementations of every version and of the resolve-band and flap-damping fixtures.
fn pairs() -> RefCell<Vec<Pair>> {
    let open = |spec: String| sentinel_core::policy::open(&spec, &runtime()).unwrap_or_else(|e| panic!("opening {spec}: {e}"));
    let mut pairs: Vec<Pair> = VERSIONS.iter().map(|v| (native(v), capacity_tests::component(v))).collect();
    pairs.push((
        open(format!("9.4.0={}", crate_dir().join("policies/9.4.0").display())),
        open(format!("9.4.0={}", target_dir().join("test-policies/capacity-policy-band-9.4.0.wasm").display())),
    ));
    pairs.push((
        open(format!("9.6.0={}", crate_dir().join("policies/9.6.0").display())),
        open(format!("9.6.0={}", target_dir().join("test-policies/capacity-policy-damping-9.6.0.wasm").display())),
    ));
    pairs.push((
        open(format!("9.7.0={}", crate_dir().join("policies/9.7.0").display())),
        open(format!("9.7.0={}", target_dir().join("test-policies/capacity-policy-longer-calm-9.7.0.wasm").display())),
    ));
    RefCell::new(pairs)
}

#[test]
fn random_traces_replay_alike_in_batch_and_tick_by_tick() {
    let pairs = pairs();
    let strategy = (trace(false), prop_oneof![Just(1usize), 2usize..9, Just(4096)]);
    runner(cases().div_ceil(4))
        .run(&strategy, |((trace, throttles), chunk)| {
            for (native, component) in pairs.borrow_mut().iter_mut() {
                all_paths_agree(native.as_mut(), component.as_mut(), &trace, throttles, chunk).map_err(TestCaseError::fail)?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn random_traces_with_odd_values_replay_alike_natively_in_batch_and_tick_by_tick() {
    let pairs = pairs();
    runner(cases())
        .run(&(trace(true), 1usize..64), |((trace, throttles), chunk)| {
            for (native, _) in pairs.borrow_mut().iter_mut() {
                let reference = replay_outcomes(&trace, native.as_mut(), throttles, ReplayPath::PerTick, chunk);
                let batch = replay_outcomes(&trace, native.as_mut(), throttles, ReplayPath::Batch, chunk);
                prop_assert!(difference("native", &reference, &batch).is_none(), "{}", difference("native", &reference, &batch).unwrap());
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn every_trace_in_the_repository_replays_alike_in_batch_and_tick_by_tick() {
    let pairs = pairs();
    let mut failures = Vec::new();
    for trace in repository_traces() {
        for (native, component) in pairs.borrow_mut().iter_mut() {
            for (throttles, chunk) in [(false, sentinel_core::replay::CHUNK_EVENTS), (true, 997)] {
                if let Err(diff) = all_paths_agree(native.as_mut(), component.as_mut(), &trace, throttles, chunk) {
                    failures.push(diff);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
