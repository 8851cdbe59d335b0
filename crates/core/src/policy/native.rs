//! The same rules compiled natively, with thresholds read from a `policy.toml`. Replay and the
//! benchmarks compare a component against these: both must give the same decisions.

use super::{Policy, PolicyError, PolicyIdentity, ReplaySession};
use capacity_guest::{admission, baseline, decide, pin, planner, replay};
use sha2::{Digest, Sha256};
use std::path::Path;
use vocabulary::{
    AdmissionPlan, AdmissionRequest, AdmissionResult, ApiBaseline, ApiSamples, Decision, DecisionInput, Instant, Pin, PinError, PinRequest,
    PlanRequest, PolicyDescription, ReplayChunk, SessionStart, Thresholds, TraceEvent,
};

/// The policy rules compiled into the sentinel itself, deciding by a `policy.toml`'s thresholds:
/// what replay and the benchmarks compare a component against. Its identity's kind is `native` and
/// its digest the sha256 of the `policy.toml`.
pub struct NativePolicy {
    identity: PolicyIdentity,
    file: PolicyDescription,
}

impl NativePolicy {
    /// Reads and checks a `policies/<version>/policy.toml`.
    pub fn load(path: &Path, label: Option<&str>) -> Result<NativePolicy, PolicyError> {
        use policy_files::description::{self, PolicyFileError};
        let read = description::read(path).map_err(|e| match e {
            PolicyFileError::Read { path, source } => PolicyError::Read { path, source },
            PolicyFileError::Invalid { path, message } => PolicyError::InvalidFile { path, message },
            folder @ PolicyFileError::Folder { .. } => PolicyError::InvalidFile { path: path.into(), message: folder.to_string() },
        })?;
        Ok(NativePolicy::new(read.description, &hex::encode(Sha256::digest(read.text.as_bytes())), label))
    }

    /// A native policy deciding by `file`; `digest` identifies where it came from (the sha256 of
    /// the `policy.toml`), `label` is the short name for reports (by default `<version>-native`).
    pub fn new(file: PolicyDescription, digest: &str, label: Option<&str>) -> NativePolicy {
        let identity = PolicyIdentity {
            label: label.map(str::to_string).unwrap_or_else(|| format!("{}-native", file.version)),
            name: file.name.clone(),
            version: file.version.clone(),
            digest: digest.to_string(),
            kind: "native",
        };
        NativePolicy { identity, file }
    }
}

impl Policy for NativePolicy {
    fn identity(&self) -> &PolicyIdentity {
        &self.identity
    }

    fn describe(&mut self) -> Result<PolicyDescription, PolicyError> {
        Ok(self.file.clone())
    }

    fn decide(&mut self, input: &DecisionInput) -> Result<Decision, PolicyError> {
        Ok(decide::decide(input, &self.file.thresholds))
    }

    fn compute_baselines(&mut self, hour: Instant, samples: &[ApiSamples]) -> Result<Vec<ApiBaseline>, PolicyError> {
        Ok(baseline::compute(hour, samples, &self.file.thresholds))
    }

    fn validate_pin(&mut self, request: &PinRequest, now: Instant) -> Result<Result<Pin, PinError>, PolicyError> {
        Ok(pin::validate(request, now, &self.file.thresholds))
    }

    fn resolve_budget(&mut self, request: &AdmissionRequest) -> Result<AdmissionResult, PolicyError> {
        Ok(admission::resolve_budget(request))
    }

    fn plan(&mut self, request: &PlanRequest) -> Result<AdmissionPlan, PolicyError> {
        Ok(planner::plan(request))
    }

    fn replays_in_batch(&self) -> bool {
        true
    }

    fn batch_session(&mut self, start: SessionStart) -> Result<Box<dyn ReplaySession + '_>, PolicyError> {
        Ok(Box::new(NativeSession { session: replay::Session::new(start), thresholds: &self.file.thresholds }))
    }
}

/// The guest's replay session run natively, with this policy's thresholds.
struct NativeSession<'p> {
    session: replay::Session,
    thresholds: &'p Thresholds,
}

impl ReplaySession for NativeSession<'_> {
    fn feed(&mut self, events: &[TraceEvent]) -> Result<ReplayChunk, PolicyError> {
        Ok(self.session.feed(events, self.thresholds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::SharedPolicy;

    /// A panic while the policy is locked (a bug elsewhere in the process) used to make every
    /// later `lock().expect(..)` panic too: every tick, pin and probe after it. The one way to
    /// take the lock takes it anyway, and the policy answers.
    #[test]
    fn a_lock_poisoned_by_a_panic_is_taken_and_the_policy_still_answers() {
        let text = include_str!("../../../../policies/1.0.0/policy.toml");
        let file: PolicyDescription = toml::from_str(text).unwrap();
        let shared = SharedPolicy::new(Box::new(NativePolicy::new(file, "digest", None)));
        let other = shared.clone();
        let panicked = std::thread::spawn(move || {
            let _held = other.lock();
            panic!("a bug while the policy is locked");
        })
        .join();
        assert!(panicked.is_err(), "the thread panicked holding the lock");
        assert_eq!(shared.lock().describe().unwrap().version, "1.0.0");
    }
}
