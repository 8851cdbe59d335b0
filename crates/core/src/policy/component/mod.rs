//! A policy shipped as a WebAssembly component: compiled once, pre-instantiated against the
//! `policy` world, run in one long-lived instance bounded by an epoch deadline and a memory
//! cap. A trap or timeout is an error naming the policy, never a crash; the instance is then
//! dropped (a trapped instance is poisoned) and the next call starts a fresh one.

mod bindings;
mod convert;
mod damping_convert;
mod replay_convert;
mod replay_session;

use super::contract;
use super::runtime::Runtime;
use super::{Policy, PolicyError, PolicyIdentity, ReplaySession};
use bindings::{ExportIndices, Exports};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;
use vocabulary::{
    AdmissionPlan, AdmissionRequest, AdmissionResult, ApiBaseline, ApiSamples, Decision, DecisionInput, Instant, Pin, PinError, PinRequest,
    PlanRequest, PolicyDescription, SessionStart, StateFactors,
};
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Store, StoreLimits, StoreLimitsBuilder, Trap};

/// What each store carries: only its resource limits (the policy imports nothing).
pub struct StoreState {
    limits: StoreLimits,
}

/// A policy component loaded for this sentinel's engine: checked (no imports, a contract that runs
/// here, the `policy` world, factors that protect), then run in one long-lived instance that a
/// failed call discards (the next call starts a fresh one).
pub struct ComponentPolicy {
    identity: PolicyIdentity,
    runtime: Arc<Runtime>,
    pre: InstancePre<StoreState>,
    indices: ExportIndices,
    live: Option<(Store<StoreState>, Exports)>,
    /// The factors the version declares for each state: every decision must publish these
    /// (INV-08), so a component cannot name a state and publish a weaker one.
    declared: Option<StateFactors>,
}

impl ComponentPolicy {
    /// Loads, checks and instantiates a component file.
    pub fn load(runtime: &Arc<Runtime>, path: &Path, label: Option<&str>) -> Result<ComponentPolicy, PolicyError> {
        let bytes = std::fs::read(path).map_err(|source| PolicyError::Read { path: path.into(), source })?;
        Self::from_bytes(runtime, path, &bytes, label)
    }

    /// Compiles `bytes` (named `path` in messages) and checks and instantiates them as
    /// [`ComponentPolicy::from_component`] does; a version built from the template whose numbers
    /// were damaged is refused as such.
    pub fn from_bytes(runtime: &Arc<Runtime>, path: &Path, bytes: &[u8], label: Option<&str>) -> Result<ComponentPolicy, PolicyError> {
        let component = Component::from_binary(runtime.engine(), bytes)
            .map_err(|e| PolicyError::Compile { path: path.into(), message: format!("{e:#}") })?;
        Self::from_component(runtime, path, &component, hex::encode(Sha256::digest(bytes)), label)
            .map_err(|e| e.or_damaged_data(path, bytes))
    }

    /// Checks and instantiates an already compiled component.
    pub fn from_component(
        runtime: &Arc<Runtime>,
        path: &Path,
        component: &Component,
        digest: String,
        label: Option<&str>,
    ) -> Result<ComponentPolicy, PolicyError> {
        let engine = runtime.engine();
        let imports: Vec<String> = component.component_type().imports(engine).map(|(name, _)| name.to_string()).collect();
        if !imports.is_empty() {
            return Err(PolicyError::HasImports { path: path.into(), imports });
        }
        let exports: Vec<String> = component.component_type().exports(engine).map(|(name, _)| name.to_string()).collect();
        if let Some(built_for) = contract::contract_of(exports.iter().map(String::as_str)).filter(|v| !contract::runs_here(v)) {
            return Err(PolicyError::ContractMismatch { path: path.into(), built_for, speaks: contract::CONTRACT });
        }
        let linker = Linker::<StoreState>::new(engine);
        let instance_pre =
            linker.instantiate_pre(component).map_err(|e| PolicyError::Compile { path: path.into(), message: format!("{e:#}") })?;
        let indices =
            ExportIndices::new(&instance_pre).map_err(|e| PolicyError::WrongWorld { path: path.into(), message: format!("{e:#}") })?;
        let provisional = path.display().to_string();
        let mut policy = ComponentPolicy {
            identity: PolicyIdentity { label: provisional.clone(), name: String::new(), version: String::new(), digest, kind: "component" },
            runtime: runtime.clone(),
            pre: instance_pre,
            indices,
            live: None,
            declared: None,
        };
        let description = policy.describe()?;
        // What it declares is checked as a policy file is (a component need not come from one):
        // above all, its factors must protect (INV-08).
        description.thresholds.factors.check_protection().map_err(|message| PolicyError::Unprotective { path: path.into(), message })?;
        description.check().map_err(|message| PolicyError::InvalidDescription { path: path.into(), message })?;
        policy.declared = Some(description.thresholds.factors);
        policy.identity.label = label.map(str::to_string).unwrap_or_else(|| description.version.clone());
        policy.identity.name = description.name;
        policy.identity.version = description.version;
        Ok(policy)
    }

    fn instance(&mut self) -> Result<&mut (Store<StoreState>, Exports), PolicyError> {
        if self.live.is_none() {
            let limits = StoreLimitsBuilder::new().memory_size(self.runtime.limits().memory_bytes).trap_on_grow_failure(true).build();
            let mut store = Store::new(self.runtime.engine(), StoreState { limits });
            store.limiter(|s| &mut s.limits);
            store.set_epoch_deadline(self.runtime.deadline_ticks());
            let world = self
                .pre
                .instantiate(&mut store)
                .and_then(|instance| self.indices.load(&mut store, &instance))
                .map_err(|e| PolicyError::Instantiate { policy: self.identity.label.clone(), message: one_line(&e) })?;
            self.live = Some((store, world));
        }
        Ok(self.live.as_mut().expect("instance was just created"))
    }

    /// The decision, when it publishes the factors the version declares for its state (INV-08);
    /// otherwise an error naming both, and the instance is discarded as after a trap.
    fn published_as_declared(&mut self, decision: Decision) -> Result<Decision, PolicyError> {
        let Some(declared) = self.declared.map(|d| d.of(decision.state)) else { return Ok(decision) };
        if decision.factors == declared {
            return Ok(decision);
        }
        self.live = None;
        Err(PolicyError::FactorsNotDeclared {
            policy: self.identity.label.clone(),
            state: decision.state.name(),
            detail: format!("{} in {}, where it declares {declared}", decision.factors, decision.state.name()),
        })
    }

    /// Runs one export under the deadline; any failure discards the instance.
    fn call<R>(
        &mut self,
        call: &'static str,
        f: impl FnOnce(&Exports, &mut Store<StoreState>) -> wasmtime::Result<R>,
    ) -> Result<R, PolicyError> {
        let ticks = self.runtime.deadline_ticks();
        let (store, world) = self.instance()?;
        store.set_epoch_deadline(ticks);
        match f(world, store) {
            Ok(value) => Ok(value),
            Err(e) => {
                self.live = None;
                let policy = self.identity.label.clone();
                if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
                    Err(PolicyError::Timeout { policy, call })
                } else {
                    Err(PolicyError::Trap { policy, call, message: one_line(&e) })
                }
            }
        }
    }
}

impl Policy for ComponentPolicy {
    fn identity(&self) -> &PolicyIdentity {
        &self.identity
    }

    fn describe(&mut self) -> Result<PolicyDescription, PolicyError> {
        let description = self.call("describe", |w, s| w.info.call_describe(s))?;
        let mut description = convert::description_from_wit(description);
        if self.indices.has_damping() {
            let damping = self.call("damping.parameters", |w, s| w.damping.as_ref().expect("bound").call_parameters(s))?;
            description.thresholds.damping = damping.map(damping_convert::parameters_from_wit);
        }
        Ok(description)
    }

    /// With `damping` (contract 3.2.0 on), the memory's flap record crosses beside the memory
    /// record; a component without it has no damping and decides as it was built.
    fn decide(&mut self, input: &DecisionInput) -> Result<Decision, PolicyError> {
        let flap = input.memory.as_ref().and_then(|m| m.flap.as_ref()).map(damping_convert::flap_to_wit);
        let input = convert::input_to_wit(input);
        let decision = if self.indices.has_damping() {
            let damped = self.call("decide", |w, s| w.damping.as_ref().expect("bound").call_decide(s, &input, flap))?;
            damping_convert::damped_decision_from_wit(damped)
        } else {
            convert::decision_from_wit(self.call("decide", |w, s| w.decision.call_decide(s, &input))?)
        };
        self.published_as_declared(decision)
    }

    fn compute_baselines(&mut self, hour: Instant, samples: &[ApiSamples]) -> Result<Vec<ApiBaseline>, PolicyError> {
        let samples: Vec<_> = samples.iter().map(convert::samples_to_wit).collect();
        let baselines = self.call("baseline.compute", |w, s| w.baseline.call_compute(s, hour, &samples))?;
        Ok(baselines.into_iter().map(convert::baseline_from_wit).collect())
    }

    fn validate_pin(&mut self, request: &PinRequest, now: Instant) -> Result<Result<Pin, PinError>, PolicyError> {
        let request = convert::pin_request_to_wit(request);
        let answer = self.call("pins.validate", |w, s| w.pins.call_validate(s, &request, now))?;
        Ok(answer.map(convert::pin_from_wit).map_err(convert::pin_error_from_wit))
    }

    fn resolve_budget(&mut self, request: &AdmissionRequest) -> Result<AdmissionResult, PolicyError> {
        let request = convert::admission_request_to_wit(request);
        let result = self.call("admission.resolve-budget", |w, s| w.admission.call_resolve_budget(s, request))?;
        Ok(convert::admission_result_from_wit(result))
    }

    fn plan(&mut self, request: &PlanRequest) -> Result<AdmissionPlan, PolicyError> {
        let request = convert::plan_request_to_wit(request);
        let plan = self.call("admission.plan", |w, s| w.admission.call_plan(s, &request))?;
        Ok(convert::plan_from_wit(plan))
    }

    fn replays_in_batch(&self) -> bool {
        self.indices.has_replay()
    }

    fn batch_session(&mut self, start: SessionStart) -> Result<Box<dyn ReplaySession + '_>, PolicyError> {
        if !self.indices.has_replay() {
            return Err(PolicyError::NoBatchReplay { policy: self.identity.label.clone() });
        }
        if start.memory.as_ref().is_some_and(|m| m.flap.is_some()) {
            // The session's start crosses as the `memory` record, which has no flap record.
            return Err(PolicyError::BatchStartWithFlap { policy: self.identity.label.clone() });
        }
        Ok(Box::new(replay_session::ComponentSession::open(self, &start)?))
    }
}

/// What went wrong, on one line: the root cause of a trap (`wasm trap: ...`, `forcing trap when
/// growing memory ...`), without the multi-line wasm backtrace wasmtime wraps it in, so that
/// each log record stays one line.
fn one_line(e: &wasmtime::Error) -> String {
    let cause = e.root_cause().to_string();
    let first = cause.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("unknown failure");
    first.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Limits;
    use vocabulary::{Reading, Signal};

    fn critical_input(now: Instant) -> DecisionInput {
        let reading = Reading { cpu_pct: Some(95.0), connections_pct: Some(30.0), scaling: Some(false), latency: vec![] };
        DecisionInput { now, signal: Signal::Reading(reading), memory: None, pin: None, throttles_enabled: false, stages_throttled: false }
    }

    #[test]
    fn a_decision_publishing_other_factors_than_declared_is_refused_naming_both() {
        let runtime = Arc::new(Runtime::new(Limits::default()).unwrap());
        let mut policy = ComponentPolicy::from_bytes(&runtime, Path::new("1.0.0"), crate::policy::embedded::BYTES, None).unwrap();
        let decided = policy.decide(&critical_input(1_792_500_000)).unwrap();
        assert_eq!(decided.factors, policy.declared.unwrap().of(decided.state), "what it publishes is what it declares");
        // As if the component declared stronger factors than its decisions publish (a component
        // built by hand can: the host holds it to what it declared).
        let mut declared = policy.declared.unwrap();
        declared.normal.bulk = 0.9;
        declared.normal.heavy = 0.9;
        policy.declared = Some(declared);
        let refused = policy.decide(&critical_input(1_792_500_000)).unwrap_err();
        assert!(matches!(refused, PolicyError::FactorsNotDeclared { state: "normal", .. }), "{refused}");
        let said = refused.to_string();
        assert!(
            said.contains(
                "published bulk 1 heavy 1 write 1 read 1 in normal, where it declares bulk 0.9 heavy 0.9 write 1 read 1 (INV-08)"
            ),
            "{said}"
        );
    }
}
