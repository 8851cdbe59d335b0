//! The host's one `bindgen!`: the `policy` world's types and exports, generated from `wit/`.
//!
//! The generated records derive serde and comparison traits, so they are also the types of
//! trace fixtures, conformance vectors and published documents: no WIT type is written twice.
//! (serde names enum cases after their Rust variants, e.g. `"Normal"`, `"SpacingWait"`; the
//! kebab-case names of docs/behaviour.md for operators come from [`crate::policy::names`].)

wasmtime::component::bindgen!({
    path: "../wit",
    world: "policy",
    additional_derives: [serde::Serialize, serde::Deserialize, Clone, PartialEq],
});

pub use exports::capacity::sentinel::admission_types::{
    AdmissionOutcome, AdmissionPlan, AdmissionRequest, AdmissionResult, PlanRequest, QueuedBatch, WaitingBatch, WorkspaceLoad,
};
pub use exports::capacity::sentinel::info::{LevelThresholds, PolicyDescription, StateFactors, Thresholds};
pub use exports::capacity::sentinel::pins::{PinError, PinField, PinRequest};
pub use exports::capacity::sentinel::types::{
    ApiBaseline, ApiLatency, ApiSamples, Cause, Decision, DecisionInput, Factors, Instant, LatencySample, Level, Memory, Pin,
    ProtectionState, Reading, RecentEntry, Signal, ThrottleIntent,
};
