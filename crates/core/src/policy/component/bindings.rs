//! The host's one `bindgen!`: the `policy` world's types and exports, generated from `wit/`.
//! Only the component wrapper sees these; [`super::convert`] and [`super::replay_convert`] turn
//! them into the vocabulary's types and back, and everything else in the host speaks the
//! vocabulary. The exports are bound interface by interface ([`Exports`]), so that a component
//! of contract 3.0.0, which lacks `replay`, or of 3.1.0, which lacks `damping`, still binds
//! everything else.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "policy",
});

pub use exports::capacity::sentinel::admission_types::{
    AdmissionOutcome, AdmissionPlan, AdmissionRequest, AdmissionResult, PlanRequest, QueuedBatch, WorkspaceLoad,
};
pub use exports::capacity::sentinel::damping::{AutoChange, ChangeDirection, DampedDecision, FlapDamping, FlapRecord};
pub use exports::capacity::sentinel::info::{LevelThresholds, PolicyDescription};
pub use exports::capacity::sentinel::pins::{PinError, PinField, PinRequest};
pub use exports::capacity::sentinel::replay::{Change, ChangeAt, ReplayChunk, SessionStart, TickColumns};
pub use exports::capacity::sentinel::types::{
    ApiBaseline, ApiLatency, ApiSamples, Cause, Decision, DecisionInput, Factors, LatencySample, Level, Memory, Pin, ProtectionState,
    Reading, RecentEntry, Signal, ThrottleIntent,
};

use exports::capacity::sentinel::{admission, baseline, damping, decision, info, pins, replay};
use wasmtime::component::{Instance, InstancePre};

/// Where each export of the contract is in one component, found once at load.
#[derive(Clone)]
pub struct ExportIndices {
    decision: decision::GuestIndices,
    baseline: baseline::GuestIndices,
    pins: pins::GuestIndices,
    info: info::GuestIndices,
    admission: admission::GuestIndices,
    /// None for a component built before contract 3.1.0.
    replay: Option<replay::GuestIndices>,
    /// None for a component built before contract 3.2.0.
    damping: Option<damping::GuestIndices>,
}

/// The exports of one instance.
pub struct Exports {
    pub decision: decision::Guest,
    pub baseline: baseline::Guest,
    pub pins: pins::Guest,
    pub info: info::Guest,
    pub admission: admission::Guest,
    pub replay: Option<replay::Guest>,
    pub damping: Option<damping::Guest>,
}

impl ExportIndices {
    /// Fails when an export every 3.x policy has is missing (the `policy-core` world).
    pub fn new<T>(pre: &InstancePre<T>) -> wasmtime::Result<ExportIndices> {
        Ok(ExportIndices {
            decision: decision::GuestIndices::new(pre)?,
            baseline: baseline::GuestIndices::new(pre)?,
            pins: pins::GuestIndices::new(pre)?,
            info: info::GuestIndices::new(pre)?,
            admission: admission::GuestIndices::new(pre)?,
            replay: replay::GuestIndices::new(pre).ok(),
            damping: damping::GuestIndices::new(pre).ok(),
        })
    }

    pub fn has_replay(&self) -> bool {
        self.replay.is_some()
    }

    pub fn has_damping(&self) -> bool {
        self.damping.is_some()
    }

    pub fn load(&self, mut store: impl wasmtime::AsContextMut, instance: &Instance) -> wasmtime::Result<Exports> {
        Ok(Exports {
            decision: self.decision.load(&mut store, instance)?,
            baseline: self.baseline.load(&mut store, instance)?,
            pins: self.pins.load(&mut store, instance)?,
            info: self.info.load(&mut store, instance)?,
            admission: self.admission.load(&mut store, instance)?,
            replay: self.replay.as_ref().map(|r| r.load(&mut store, instance)).transpose()?,
            damping: self.damping.as_ref().map(|d| d.load(&mut store, instance)).transpose()?,
        })
    }
}
