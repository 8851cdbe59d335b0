//! The checks of each target's outputs: independent restatements of docs/behaviour.md (the guest's
//! code is never called here), each violation one line naming the rule it breaks.

pub mod admission;
#[cfg(feature = "host")]
pub mod config;
pub mod decision;
pub mod planner;
pub mod trace;

/// Violations collected while checking one output.
#[derive(Debug, Default)]
pub struct Findings(Vec<String>);

impl Findings {
    /// Records `what` unless `ok`.
    pub fn ensure(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }

    pub fn into_vec(self) -> Vec<String> {
        self.0
    }
}
