//! One instance of each policy, checked out of its source for one trace and given back after it
//! (every replay mode leases through here): the one place a failed instance becomes an error,
//! [`StepError::Lease`].

use crate::policy::Policy;
use crate::policy::source::PolicySource;
use crate::policy::stepping::StepError;

/// One instance of each source's policy, checked out for one trace.
pub struct Lease<'s> {
    sources: &'s [PolicySource],
    policies: Vec<Box<dyn Policy>>,
}

impl<'s> Lease<'s> {
    /// An instance of every source (an idle one, or a new one), for `trace`.
    pub fn take(sources: &'s [PolicySource], trace: &str) -> Result<Lease<'s>, StepError> {
        let mut lease = Lease { sources, policies: Vec::with_capacity(sources.len()) };
        for source in sources {
            match source.take() {
                Ok(policy) => lease.policies.push(policy),
                Err(e) => {
                    lease.give_back();
                    return Err(StepError::Lease { policy: source.label().to_string(), trace: trace.to_string(), source: e });
                }
            }
        }
        Ok(lease)
    }

    /// The instances, in the order of the sources.
    pub fn policies(&mut self) -> &mut [Box<dyn Policy>] {
        &mut self.policies
    }

    /// Gives every instance back to its source for the next trace. A lease dropped without it
    /// (its replay failed) drops its instances: one that failed mid-run is not used again.
    pub fn give_back(self) {
        for (source, policy) in self.sources.iter().zip(self.policies) {
            source.give_back(policy);
        }
    }
}
