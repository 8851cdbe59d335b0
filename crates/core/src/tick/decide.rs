//! Hop 2 (docs/behaviour.md §11.2): one decision of the active policy, timed. What surrounds
//! it (the fallback to the last good version, the shadow's step) belongs to the active
//! policy's handle, [`crate::policy::active::ActivePolicy`].

use super::Sentinel;
use crate::policy::{PolicyError, PolicyIdentity};
use std::time::Instant as Clock;
use vocabulary::{Decision, DecisionInput};

impl Sentinel {
    pub(super) fn decide(&self, input: &DecisionInput, notes: &mut Vec<String>) -> Result<(Decision, PolicyIdentity), PolicyError> {
        let started = Clock::now();
        let decided = self.policy.decide(input, notes)?;
        self.telemetry.decision_seconds.observe(started.elapsed().as_secs_f64());
        Ok(decided)
    }
}
