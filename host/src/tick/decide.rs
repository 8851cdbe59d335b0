//! Hop 2 (docs/behaviour.md §11.2): one call of the active policy. When a managed version traps,
//! runs past its deadline or hits its memory cap, the tick reruns once with the last good version,
//! which stays active; the failing one is marked unhealthy and the alarm counter rises. Then the
//! shadow version, if any, decides on the same input (never published).

use super::Sentinel;
use crate::bindings::{Decision, DecisionInput};
use crate::policy::{PolicyError, PolicyIdentity};
use std::time::Instant as Clock;

impl Sentinel {
    pub(super) fn decide(&self, input: &DecisionInput, notes: &mut Vec<String>) -> Result<(Decision, PolicyIdentity), PolicyError> {
        let (decision, identity) = {
            let mut policy = self.policy.lock().expect("policy lock poisoned");
            let started = Clock::now();
            let decision = match policy.decide(input) {
                Ok(d) => d,
                Err(e) if recoverable(&e) && self.lifecycle.as_ref().is_some_and(|l| l.fall_back(&mut policy, &e)) => {
                    notes.push(format!("{e}; the tick reran with policy {}", policy.identity().version));
                    policy.decide(input)?
                }
                Err(e) => return Err(e),
            };
            self.telemetry.decision_seconds.observe(started.elapsed().as_secs_f64());
            (decision, policy.identity().clone())
        };
        if let Some(lifecycle) = &self.lifecycle {
            lifecycle.shadow_step(input, &decision, &identity.version);
        }
        Ok((decision, identity))
    }
}

/// A failure of the version itself (a memory-cap hit traps or fails instantiation).
fn recoverable(e: &PolicyError) -> bool {
    matches!(e, PolicyError::Trap { .. } | PolicyError::Timeout { .. } | PolicyError::Instantiate { .. })
}
