//! The host's one `bindgen!`: the `policy` world's types and exports, generated from `wit/`.
//! Only the component wrapper sees these; [`super::convert`] turns them into the vocabulary's
//! types and back, and everything else in the host speaks the vocabulary.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "policy",
});

pub use exports::capacity::sentinel::admission_types::{
    AdmissionOutcome, AdmissionPlan, AdmissionRequest, AdmissionResult, PlanRequest, QueuedBatch, WorkspaceLoad,
};
pub use exports::capacity::sentinel::info::{LevelThresholds, PolicyDescription};
pub use exports::capacity::sentinel::pins::{PinError, PinField, PinRequest};
pub use exports::capacity::sentinel::types::{
    ApiBaseline, ApiLatency, ApiSamples, Cause, Decision, DecisionInput, Factors, LatencySample, Level, Memory, Pin, ProtectionState,
    Reading, RecentEntry, Signal, ThrottleIntent,
};
