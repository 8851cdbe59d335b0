//! The active policy: the one handle the tick decides through (docs/behaviour.md §11.2). It
//! owns what surrounds a decision: the hot swap (the lifecycle replaces what is inside the
//! shared box), the fallback when a managed version traps, runs past its deadline or hits its
//! memory cap (the decision is made again, once, with the last good version, which stays
//! active), and the shadow's step on the same input (off the tick's thread). The tick never
//! names the lifecycle.

use super::Policy;
pub use super::SharedPolicy;
use super::lifecycle::Lifecycle;
use super::{PolicyError, PolicyIdentity};
use std::sync::{Arc, MutexGuard};
use vocabulary::{Decision, DecisionInput};

#[derive(Clone)]
/// The policy the tick decides through: one fixed version, or the version a `[policies]` lifecycle
/// keeps active (with its fallback and its shadow). Cheap to clone: clones share the policy and the
/// lifecycle.
pub struct ActivePolicy {
    shared: SharedPolicy,
    lifecycle: Option<Arc<Lifecycle>>,
}

impl ActivePolicy {
    /// One version for the life of the process (a policy file, the embedded default).
    pub fn fixed(shared: SharedPolicy) -> ActivePolicy {
        ActivePolicy { shared, lifecycle: None }
    }

    /// The version a `[policies]` lifecycle keeps active.
    pub fn managed(lifecycle: Arc<Lifecycle>) -> ActivePolicy {
        ActivePolicy { shared: lifecycle.active(), lifecycle: Some(lifecycle) }
    }

    /// The shared box, for the pin service and the API.
    pub fn shared(&self) -> SharedPolicy {
        self.shared.clone()
    }

    /// The lifecycle behind it, when managed (its watcher, its tests).
    pub fn lifecycle(&self) -> Option<&Arc<Lifecycle>> {
        self.lifecycle.as_ref()
    }

    /// The policy itself, locked (a tick's other calls, such as the hourly baselines).
    pub fn lock(&self) -> MutexGuard<'_, Box<dyn Policy>> {
        self.shared.lock()
    }

    /// One decision. When a managed version fails by itself, the last good version takes its
    /// place and decides instead (`notes` says so); then the shadow, if any, is given the same
    /// input. The lock is held for the decision only.
    pub fn decide(&self, input: &DecisionInput, notes: &mut Vec<String>) -> Result<(Decision, PolicyIdentity), PolicyError> {
        let (decision, identity) = {
            let mut policy = self.lock();
            let decision = match policy.decide(input) {
                Ok(d) => d,
                Err(e) if recoverable(&e) => match self.lifecycle.as_ref().and_then(|l| l.fall_back(&mut policy, &e, input)) {
                    Some(Ok(d)) => {
                        notes.push(format!("{e}; the tick reran with policy {}", policy.identity().version));
                        d
                    }
                    Some(Err(both)) => return Err(both),
                    None => return Err(e),
                },
                Err(e) => return Err(e),
            };
            (decision, policy.identity().clone())
        };
        if let Some(lifecycle) = &self.lifecycle {
            lifecycle.shadow_step(input, &decision, &identity.version);
        }
        Ok((decision, identity))
    }
}

/// A failure of the version itself (a memory-cap hit traps or fails instantiation; a decision
/// publishing other factors than the version declares).
fn recoverable(e: &PolicyError) -> bool {
    matches!(
        e,
        PolicyError::Trap { .. } | PolicyError::Timeout { .. } | PolicyError::Instantiate { .. } | PolicyError::FactorsNotDeclared { .. }
    )
}
