//! Policies: the active decision logic, either a WebAssembly component (what ships) or the
//! native modules of the same rules (for comparison and benchmarks). Both answer through
//! [`Policy`], in the generated WIT types.

pub mod active;
mod component;
pub mod contract;
pub mod embedded;
mod error;
mod inspect;
/// The protection invariants, checked from a policy's outputs: their own crate (`crates/invariants`).
pub use ::invariants;
pub mod lifecycle;
mod native;
mod runtime;
pub mod settings;
pub mod source;
pub(crate) mod stepping;
pub mod template;

pub use component::ComponentPolicy;
pub use error::PolicyError;
pub use inspect::{ComponentInfo, inspect_component};
pub use native::NativePolicy;
pub use runtime::{Limits, Runtime};

use std::sync::Arc;
use vocabulary::{
    AdmissionPlan, AdmissionRequest, AdmissionResult, ApiBaseline, ApiSamples, Decision, DecisionInput, Instant, Pin, PinError, PinRequest,
    PlanRequest, PolicyDescription, ReplayChunk, SessionStart, TraceEvent,
};

/// The one loaded policy the tick, the pin service and the API share; the lifecycle's hot swap
/// replaces what is inside. Cheap to clone: clones share the policy.
#[derive(Clone)]
pub struct SharedPolicy(Arc<crate::sync::Lock<Box<dyn Policy>>>);

impl SharedPolicy {
    /// Shares `policy` as the process's one loaded policy; clones of the result go to the tick, the
    /// pin service and the API.
    pub fn new(policy: Box<dyn Policy>) -> SharedPolicy {
        SharedPolicy(Arc::new(crate::sync::Lock::new("policy", policy)))
    }

    /// The policy, locked: the one way to take the lock. Poisoned by a panic during another
    /// call, it is taken anyway ([`crate::sync`]): the box still holds a whole policy (a
    /// component instance that trapped is discarded by the call that trapped, and every call
    /// checks its own answer). The next call through it says whether the policy still answers.
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Box<dyn Policy>> {
        self.0.lock()
    }
}

/// Which policy answered: every decision names version and digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyIdentity {
    /// Short name for reports and replay lines (the version unless given as `LABEL=PATH`).
    pub label: String,
    /// The policy's name as it describes itself (`capacity-policy`): a component's `describe`
    /// answer, or the `name` of a native policy's `policy.toml`.
    pub name: String,
    /// The version it describes itself as (`1.2.0`); a managed version's must be the one its
    /// manifest names.
    pub version: String,
    /// sha256 of the component file, or of the policy.toml for native modules.
    pub digest: String,
    /// `component` or `native`.
    pub kind: &'static str,
}

/// One loaded policy version. Calls take `&mut self`: a component keeps one long-lived
/// instance and replaces it after a trap.
pub trait Policy: Send {
    /// Which policy this is (label, name, version, digest, kind): held by the host, so it never
    /// calls into the policy and never fails. Every decision is tagged with it.
    fn identity(&self) -> &PolicyIdentity;
    /// The name, version and thresholds the policy declares (a component's `describe` export, with
    /// its damping numbers from contract 3.2.0 on; a native policy's `policy.toml`). Callers check
    /// the invariants against these thresholds.
    fn describe(&mut self) -> Result<PolicyDescription, PolicyError>;
    /// One tick's decision on `input` (docs/behaviour.md §5): the state, the factors to publish,
    /// the memory for the next tick and the explanation. It must be deterministic (the same input,
    /// the same decision). A version that traps, runs past its deadline, hits its memory cap or
    /// publishes other factors than it declares answers an error, never a panic; for a managed
    /// version the tick then decides again with the last good one ([`active::ActivePolicy`]).
    fn decide(&mut self, input: &DecisionInput) -> Result<Decision, PolicyError>;
    /// The hourly latency baselines (docs/behaviour.md §8) for the clock hour starting at `hour`:
    /// per API, the median of its p95 samples in [hour - 24 h, hour - 1 h) when there are enough of
    /// them, one result per API sorted by name. Samples outside that window are ignored, so the
    /// caller may pass everything it kept.
    fn compute_baselines(&mut self, hour: Instant, samples: &[ApiSamples]) -> Result<Vec<ApiBaseline>, PolicyError>;
    /// The outer error is the policy failing; the inner one the pin refused.
    fn validate_pin(&mut self, request: &PinRequest, now: Instant) -> Result<Result<Pin, PinError>, PolicyError>;
    /// How many batches one workspace may start now, from the published bulk factor
    /// (docs/behaviour.md §9).
    fn resolve_budget(&mut self, request: &AdmissionRequest) -> Result<AdmissionResult, PolicyError>;
    /// Admits a queue fairly (docs/behaviour.md §9): round robin across workspaces ordered by their
    /// oldest waiting batch, each within its ceiling, all within the service and cluster room.
    /// Deterministic.
    fn plan(&mut self, request: &PlanRequest) -> Result<AdmissionPlan, PolicyError>;
    /// Whether [`Policy::batch_session`] runs inside the policy (native rules, and components of
    /// contract 3.1.0 on); otherwise replay calls `decide` tick by tick.
    fn replays_in_batch(&self) -> bool {
        false
    }
    /// A batch replay session from `start` (docs/behaviour.md §10.2). Only called when
    /// [`Policy::replays_in_batch`].
    fn batch_session(&mut self, start: SessionStart) -> Result<Box<dyn ReplaySession + '_>, PolicyError> {
        let _ = start;
        Err(PolicyError::NoBatchReplay { policy: self.identity().label.clone() })
    }
}

/// One replay in progress inside a policy: events go in by the chunk, in trace order, and each
/// tick's outcome comes back with the baselines learnt on the way.
pub trait ReplaySession: Send {
    /// Replays the next `events` of the trace, in order (a pin, switch or stage-restore change
    /// applies to the ticks after it), and answers one outcome per tick of the chunk with the
    /// baselines learnt at each new hour. Memory, pin and switch carry over to the next call.
    fn feed(&mut self, events: &[TraceEvent]) -> Result<ReplayChunk, PolicyError>;
}

/// Opens a policy from `[LABEL=]PATH`: a `.wasm` file is loaded as a component; a
/// `policy.toml` (or a folder holding one) runs the native modules with those thresholds.
pub fn open(spec: &str, runtime: &Arc<Runtime>) -> Result<Box<dyn Policy>, PolicyError> {
    let (label, path) = source::split_spec(spec);
    let policy: Box<dyn Policy> = if path.extension().is_some_and(|e| e == "wasm") {
        Box::new(ComponentPolicy::load(runtime, path, label)?)
    } else {
        let toml = if path.is_dir() { path.join("policy.toml") } else { path.to_path_buf() };
        Box::new(NativePolicy::load(&toml, label)?)
    };
    Ok(policy)
}
