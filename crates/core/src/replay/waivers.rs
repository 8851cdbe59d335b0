//! What a gate file accepts beside its limits: a regression waived for one candidate version
//! (`[[waive]]`), and a version retired from the chain of gates (`[[retire]]`).

use serde::{Deserialize, Serialize};

/// A version taken out of the chain of gates, with why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retired {
    /// The policy version taken out of the chain (`2.0.0`).
    pub version: String,
    /// Why it is kept but not on the way to production.
    pub reason: String,
}

/// A regression the project accepted for one candidate version, with why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waiver {
    /// The candidate's policy version (`2.0.0`).
    pub candidate: String,
    /// The metric key; absent: every metric.
    pub metric: Option<String>,
    /// The trace name; absent: every trace.
    pub trace: Option<String>,
    /// Why the regression is accepted; shown beside the waived finding.
    pub reason: String,
}

impl Waiver {
    pub(super) fn covers(&self, candidate: &str, trace: &str, metric: &str) -> bool {
        self.candidate == candidate
            && self.metric.as_deref().is_none_or(|m| m == metric)
            && self.trace.as_deref().is_none_or(|t| t == trace)
    }
}
