//! Conformance vectors (`tests/vectors/<kind>/*.json`): each file a list of cases
//! `{name, note?, input, expected}` in the serde form of the generated WIT types. Every case runs
//! through the native modules (policies/1.0.0) and the built 1.0.0 component; both must equal
//! `expected` exactly, and a mismatch names the file, the case and the differing fields.
//! `BLESS=1` rewrites `expected` from the native result (the component must still agree).
//!
//! The same files run in Python and Node (`tests/cross_language.sh`), the admission vectors there
//! through `capacity-admission-3.2.0.wasm`.

use capacity_tests::golden::{json_differences, write_golden};
use capacity_tests::paths::{crate_dir, files_ending};
use capacity_tests::policies::component_hint;
use capacity_tests::{bless, json, native, shared_component};
use sentinel_core::policy::Policy;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;
use vocabulary::{
    AdmissionOutcome, AdmissionPlan, AdmissionRequest, AdmissionResult, ApiBaseline, ApiSamples, Cause, Decision, DecisionInput, Instant,
    Pin, PinError, PinField, PinRequest, PlanRequest, ProtectionState, ThrottleIntent,
};

const VERSION: &str = "1.0.0";

#[derive(Debug, Serialize, Deserialize)]
struct Case<I, E> {
    name: String,
    /// What the case is about and which rule of docs/behaviour.md it checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    input: I,
    /// Absent (or null) until blessed.
    expected: Option<E>,
}

#[derive(Debug, Serialize, Deserialize)]
struct PinCase {
    request: PinRequest,
    now: Instant,
}

#[derive(Debug, Serialize, Deserialize)]
struct BaselineCase {
    hour: Instant,
    samples: Vec<ApiSamples>,
}

/// Runs every case of every file of one kind through both implementations, panicking with every
/// mismatch at once; returns the results (all equal to their expectations).
fn check_kind<I, E>(kind: &str, call: impl Fn(&mut dyn Policy, &I) -> E) -> Vec<E>
where
    I: Serialize + DeserializeOwned,
    E: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let dir = crate_dir().join("vectors").join(kind);
    let files = files_ending(&dir, ".json");
    assert!(!files.is_empty(), "no vectors in {}", dir.display());
    let mut native = native(VERSION);
    let mut component = shared_component(VERSION);
    let mut failures = Vec::new();
    let mut results = Vec::new();
    for file in &files {
        let mut cases = read_cases::<I, E>(file);
        let mut names = std::collections::BTreeSet::new();
        for case in &mut cases {
            assert!(names.insert(case.name.clone()), "{}: case name {:?} appears twice", file.display(), case.name);
            let from_native = call(native.as_mut(), &case.input);
            let from_component = call(component.as_mut(), &case.input);
            let place = format!("{} case {:?}", display(file), case.name);
            if from_component != from_native {
                failures.push(format!(
                    "{place}: the component differs from the native modules{}:\n  {}",
                    component_hint(VERSION),
                    differences(&from_native, &from_component).join("\n  ")
                ));
            }
            if bless() {
                case.expected = Some(from_native);
                continue;
            }
            match &case.expected {
                None => failures.push(format!("{place}: no expected value (run with BLESS=1 and review it)")),
                Some(expected) => {
                    for (side, actual) in [("native modules", &from_native), ("component", &from_component)] {
                        if actual != expected {
                            failures.push(format!("{place}, {side}:\n  {}", differences(expected, actual).join("\n  ")));
                        }
                    }
                }
            }
            results.push(from_native);
        }
        if bless() {
            write_golden(file, &json::pretty(&cases));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    results
}

/// Panics unless every one of `all` occurs among `seen` (the vectors cover each case).
fn covers<T: std::fmt::Debug + PartialEq>(what: &str, seen: &[T], all: &[T]) {
    if bless() {
        return;
    }
    let missing: Vec<&T> = all.iter().filter(|x| !seen.contains(x)).collect();
    assert!(missing.is_empty(), "no {what} vector expects {missing:?}");
}

fn read_cases<I: DeserializeOwned, E: DeserializeOwned>(file: &Path) -> Vec<Case<I, E>> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not a list of vector cases: {e}", display(file)))
}

fn display(file: &Path) -> String {
    file.strip_prefix(crate_dir()).unwrap_or(file).display().to_string()
}

fn differences<E: Serialize>(expected: &E, actual: &E) -> Vec<String> {
    let e = serde_json::to_value(expected).expect("serializes");
    let a = serde_json::to_value(actual).expect("serializes");
    json_differences(&e, &a, 8)
}

#[test]
fn decision_vectors() {
    let results = check_kind::<DecisionInput, Decision>("decision", |p, input| p.decide(input).expect("decide"));
    use Cause::*;
    let causes: Vec<Cause> = results.iter().map(|d| d.cause).collect();
    let all = [Pinned, SignalHeld, SignalLostRelease, Escalate, Emergency, Recover, SpacingWait, RestoreThrottlesFirst, Fresh, Hold];
    covers("decision", &causes, &all);
    let intents: Vec<ThrottleIntent> = results.iter().map(|d| d.throttles).collect();
    covers("decision", &intents, &[ThrottleIntent::Engage, ThrottleIntent::Release, ThrottleIntent::None]);
    let states: Vec<ProtectionState> = results.iter().filter(|d| d.changed).map(|d| d.state).collect();
    covers(
        "changing decision",
        &states,
        &[ProtectionState::Normal, ProtectionState::Constrained, ProtectionState::Critical, ProtectionState::Emergency],
    );
}

#[test]
fn admission_vectors() {
    let results = check_kind::<AdmissionRequest, AdmissionResult>("admission", |p, input| p.resolve_budget(input).expect("resolve_budget"));
    use AdmissionOutcome::*;
    let outcomes: Vec<AdmissionOutcome> = results.iter().map(|r| r.outcome).collect();
    covers("admission", &outcomes, &[Admit, WaitClusterFull, WaitServiceFull, WaitWorkspaceFull, WaitCapacityZero]);
}

#[test]
fn planner_vectors() {
    let results = check_kind::<PlanRequest, AdmissionPlan>("planner", |p, input| p.plan(input).expect("plan"));
    use AdmissionOutcome::*;
    let outcomes: Vec<AdmissionOutcome> = results.iter().flat_map(|r| r.waiting.iter().map(|w| w.outcome)).collect();
    covers("planner", &outcomes, &[WaitClusterFull, WaitServiceFull, WaitWorkspaceFull, WaitCapacityZero]);
}

#[test]
fn pin_vectors() {
    let results =
        check_kind::<PinCase, Result<Pin, PinError>>("pins", |p, input| p.validate_pin(&input.request, input.now).expect("validate_pin"));
    let fields: Vec<PinField> = results.iter().filter_map(|r| r.as_ref().err().map(|e| e.field)).collect();
    covers("refused pin", &fields, &[PinField::State, PinField::Reason, PinField::ExpiresAt, PinField::Actor]);
    assert!(bless() || results.iter().any(Result::is_ok), "no pin vector is accepted");
}

#[test]
fn baseline_vectors() {
    let results = check_kind::<BaselineCase, Vec<ApiBaseline>>("baseline", |p, input| {
        p.compute_baselines(input.hour, &input.samples).expect("compute_baselines")
    });
    let found: Vec<bool> = results.iter().flatten().map(|b| b.baseline_ms.is_some()).collect();
    covers("baseline (with and without a result)", &found, &[true, false]);
}

/// The self-check every policy version passes before it may run decides the inputs of the
/// decision vectors; the host keeps its own copy (`crates/core/src/policy/lifecycle/self_check_inputs.json`,
/// so the binary never reads test fixtures), which must stay equal to them. `BLESS=1` rewrites it.
#[test]
fn the_self_checks_fixed_inputs_are_the_decision_vectors_inputs() {
    use sentinel_core::policy::lifecycle::checks::{FixedInput, fixed_inputs};
    let dir = crate_dir().join("vectors/decision");
    let vectors: Vec<FixedInput> = files_ending(&dir, ".json")
        .iter()
        .flat_map(|file| read_cases::<DecisionInput, serde_json::Value>(file))
        .map(|case| FixedInput { name: case.name, input: case.input })
        .collect();
    assert!(vectors.len() > 50, "{} decision vectors", vectors.len());
    let host = fixed_inputs().unwrap_or_else(|e| panic!("{e}"));
    let path = crate_dir().join("../crates/core/src/policy/lifecycle/self_check_inputs.json");
    let text = serde_json::to_string_pretty(&vectors).unwrap() + "\n";
    if bless() && std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        write_golden(&path, &text);
        return;
    }
    assert_eq!(
        host.len(),
        vectors.len(),
        "the self-check's inputs and the decision vectors differ in number (BLESS=1 rewrites the host's copy)"
    );
    for (h, v) in host.iter().zip(&vectors) {
        assert_eq!(h, v, "the self-check's input `{}` differs from the vector `{}` (BLESS=1 rewrites the host's copy)", h.name, v.name);
    }
}

/// Which published document a service acts on (`factor-choice/`): the rule's native build here;
/// Python and Node run the same files through the admission component (`tests/cross_language.sh`).
#[test]
fn factor_choice_vectors() {
    use capacity_guest::factor_choice::choose_factor;
    use vocabulary::{Channel, ChannelVerdict, FactorChoice, FactorChoiceRequest};
    let dir = crate_dir().join("vectors/factor-choice");
    let files = files_ending(&dir, ".json");
    assert!(!files.is_empty(), "no vectors in {}", dir.display());
    let (mut failures, mut results) = (Vec::new(), Vec::new());
    for file in &files {
        let mut cases = read_cases::<FactorChoiceRequest, FactorChoice>(file);
        for case in &mut cases {
            let actual = choose_factor(&case.input);
            let place = format!("{} case {:?}", display(file), case.name);
            match &case.expected {
                _ if bless() => case.expected = Some(actual.clone()),
                None => failures.push(format!("{place}: no expected value (run with BLESS=1 and review it)")),
                Some(expected) if *expected != actual => {
                    failures.push(format!("{place}:\n  {}", differences(expected, &actual).join("\n  ")))
                }
                Some(_) => {}
            }
            results.push(actual);
        }
        if bless() {
            write_golden(file, &json::pretty(&cases));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    use ChannelVerdict::*;
    let verdicts: Vec<ChannelVerdict> = results.iter().flat_map(|c| [c.cache, c.parameter]).collect();
    covers("factor-choice", &verdicts, &[NotRead, Usable, ReadFailed, Unreadable, OutOfRange, Stale, FromTheFuture]);
    let sources: Vec<Option<Channel>> = results.iter().map(|c| c.source).collect();
    covers("factor-choice", &sources, &[Some(Channel::Cache), Some(Channel::Parameter), None]);
}
