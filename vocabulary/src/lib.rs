//! The capacity sentinel's vocabulary: every domain word, defined once.
//!
//! The policy's rules (`guest/`), the host's native modules, its tick, stores, API, replay and
//! published document, and the tests all use these types. The WIT contract (`wit/`) carries the
//! same words across the component boundary; the generated binding types are converted to and
//! from these in exactly one place per side (the guest's `export` layer, the host's component
//! wrapper in `crates/core/src/policy/component/`).
//!
//! serde names every enum case as docs/behaviour.md and the wire do (`spacing-wait`,
//! `constrained`); the names written by earlier releases (`SpacingWait`, `Constrained`) are read
//! too, so stored memory and records stay readable. Field names are the WIT names in snake_case.
//! With the `openapi` feature the types also derive their OpenAPI schema.

mod admission;
mod baseline;
mod damping;
mod decision;
mod factor_choice;
mod manifest;
mod memory;
mod pin_request;
mod reading;
mod replay;
mod state;
mod thresholds;

pub use admission::{
    AdmissionOutcome, AdmissionPlan, AdmissionRequest, AdmissionResult, PlanRequest, QueuedBatch, WaitingBatch, WorkspaceLoad,
};
pub use baseline::{ApiBaseline, ApiSamples, LatencySample};
pub use damping::{AutoChange, ChangeDirection, DampingHold, FlapDamping, FlapRecord};
pub use decision::{Decision, DecisionInput};
pub use factor_choice::{Channel, ChannelRead, ChannelVerdict, FactorChoice, FactorChoiceRequest};
pub use manifest::PolicyManifest;
pub use memory::{Memory, Pin, RecentEntry};
pub use pin_request::{PinError, PinField, PinRequest};
pub use reading::{ApiLatency, Reading, Signal};
pub use replay::{LearntBaselines, Outcome, ReplayChunk, SessionStart, TraceEvent, column_bits};
pub use state::{Cause, Instant, Level, ProtectionState, ThrottleIntent};
pub use thresholds::{Factors, LevelThresholds, PolicyDescription, StateFactors, Thresholds};

#[cfg(test)]
mod tests;
