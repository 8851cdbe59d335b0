//! Conformance vectors (`tests/vectors/<kind>/*.json`): each file a list of cases
//! `{name, note?, input, expected}` in the serde form of the generated WIT types. Every case runs
//! through the native modules (policies/1.0.0) and the built 1.0.0 component; both must equal
//! `expected` exactly, and a mismatch names the file, the case and the differing fields.
//! `BLESS=1` rewrites `expected` from the native result (the component must still agree).
//!
//! The admission vectors cannot also run through `capacity-admission-1.0.0.wasm`: the host loads
//! only the `policy` world through its `Policy` trait.

use capacity_tests::golden::{json_differences, write_golden};
use capacity_tests::paths::{crate_dir, files_ending};
use capacity_tests::policies::component_hint;
use capacity_tests::{bless, component, json, native};
use sentinel::bindings::{
    AdmissionPlan, AdmissionRequest, AdmissionResult, ApiBaseline, ApiSamples, Decision, DecisionInput, Instant, Pin,
    PinError, PinRequest, PlanRequest,
};
use sentinel::policy::Policy;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

const VERSION: &str = "1.0.0";

#[derive(Debug, Serialize, Deserialize)]
struct Case<I, E> {
    name: String,
    /// What the case is about and which SPEC rule it checks.
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

/// Runs every case of every file of one kind through both implementations; returns the number
/// of cases, panicking with every mismatch at once.
fn check_kind<I, E>(kind: &str, call: impl Fn(&mut dyn Policy, &I) -> E) -> usize
where
    I: Serialize + DeserializeOwned,
    E: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let dir = crate_dir().join("vectors").join(kind);
    let files = files_ending(&dir, ".json");
    assert!(!files.is_empty(), "no vectors in {}", dir.display());
    let mut native = native(VERSION);
    let mut component = component(VERSION);
    let mut failures = Vec::new();
    let mut count = 0;
    for file in &files {
        let mut cases = read_cases::<I, E>(file);
        let mut names = std::collections::BTreeSet::new();
        for case in &mut cases {
            count += 1;
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
                            failures.push(format!(
                                "{place}, {side}:\n  {}",
                                differences(expected, actual).join("\n  ")
                            ));
                        }
                    }
                }
            }
        }
        if bless() {
            write_golden(file, &json::pretty(&cases));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    count
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
    let n = check_kind::<DecisionInput, Decision>("decision", |p, input| p.decide(input).expect("decide"));
    assert!(n >= 40, "only {n} decision vectors");
}

#[test]
fn admission_vectors() {
    let n = check_kind::<AdmissionRequest, AdmissionResult>("admission", |p, input| {
        p.resolve_budget(input).expect("resolve_budget")
    });
    assert!(n >= 15, "only {n} admission vectors");
}

#[test]
fn planner_vectors() {
    let n = check_kind::<PlanRequest, AdmissionPlan>("planner", |p, input| p.plan(input).expect("plan"));
    assert!(n >= 10, "only {n} planner vectors");
}

#[test]
fn pin_vectors() {
    let n = check_kind::<PinCase, Result<Pin, PinError>>("pins", |p, input| {
        p.validate_pin(&input.request, input.now).expect("validate_pin")
    });
    assert!(n >= 12, "only {n} pin vectors");
}

#[test]
fn baseline_vectors() {
    let n = check_kind::<BaselineCase, Vec<ApiBaseline>>("baseline", |p, input| {
        p.compute_baselines(input.hour, &input.samples).expect("compute_baselines")
    });
    assert!(n >= 8, "only {n} baseline vectors");
}
