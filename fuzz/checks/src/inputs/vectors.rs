//! The conformance vectors' inputs (`tests/vectors/`), compiled in: starting points that already
//! reach every cause, throttle intent, admission outcome and planner rule. The committed seeds
//! of the structured targets select them one by one (`seeds/<target>/vector-NN`).

use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::sync::OnceLock;
use vocabulary::{AdmissionRequest, DecisionInput, PlanRequest};

#[derive(Deserialize)]
struct Case<T> {
    input: T,
}

fn inputs<T: DeserializeOwned>(files: &[(&str, &str)]) -> Vec<T> {
    files
        .iter()
        .flat_map(|(name, json)| serde_json::from_str::<Vec<Case<T>>>(json).unwrap_or_else(|e| panic!("tests/vectors/{name}: {e}")))
        .map(|case| case.input)
        .collect()
}

pub fn decisions() -> &'static [DecisionInput] {
    static V: OnceLock<Vec<DecisionInput>> = OnceLock::new();
    V.get_or_init(|| {
        inputs(&[
            ("decision/causes.json", include_str!("../../../../tests/vectors/decision/causes.json")),
            ("decision/memory.json", include_str!("../../../../tests/vectors/decision/memory.json")),
            ("decision/throttles.json", include_str!("../../../../tests/vectors/decision/throttles.json")),
            ("decision/assessment.json", include_str!("../../../../tests/vectors/decision/assessment.json")),
        ])
    })
}

pub fn admissions() -> &'static [AdmissionRequest] {
    static V: OnceLock<Vec<AdmissionRequest>> = OnceLock::new();
    V.get_or_init(|| inputs(&[("admission/resolve_budget.json", include_str!("../../../../tests/vectors/admission/resolve_budget.json"))]))
}

pub fn plans() -> &'static [PlanRequest] {
    static V: OnceLock<Vec<PlanRequest>> = OnceLock::new();
    V.get_or_init(|| inputs(&[("planner/plan.json", include_str!("../../../../tests/vectors/planner/plan.json"))]))
}

/// The vector `index` selects (wrapping).
pub fn nth<T: Clone>(cases: &[T], index: u8) -> T {
    cases[usize::from(index) % cases.len()].clone()
}
