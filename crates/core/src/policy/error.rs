//! What can go wrong with a policy, each naming the policy and what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot set up the WebAssembly engine: {message}")]
    Engine { message: String },
    #[error("cannot read policy {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("policy file {path} is invalid: {message}")]
    InvalidFile { path: PathBuf, message: String },
    #[error("{path} is not a loadable component: {message}")]
    Compile { path: PathBuf, message: String },
    #[error(
        "{path} does not export the `policy` world ({message}); build it with `cargo policies` \
         (an admission-only component cannot decide)"
    )]
    WrongWorld { path: PathBuf, message: String },
    #[error(
        "{path} was built for contract capacity:sentinel@{built_for}; this sentinel speaks capacity:sentinel@{speaks} \
         and runs components of the same major version: rebuild the policy with `cargo policies` from a release of this contract, \
         or run a sentinel of its contract"
    )]
    ContractMismatch { path: PathBuf, built_for: String, speaks: &'static str },
    #[error("{path} imports {imports:?}; a policy component must import nothing")]
    HasImports { path: PathBuf, imports: Vec<String> },
    #[error(
        "{path} declares factors that do not protect: {message}; fix them in its policy.toml and build it again \
         (docs/behaviour.md §2 and §12, INV-08: a version withholds more work as the state rises)"
    )]
    Unprotective { path: PathBuf, message: String },
    #[error("{path} describes itself with values no version may have: {message}; fix its policy.toml and build it again")]
    InvalidDescription { path: PathBuf, message: String },
    #[error(
        "policy {policy} published {detail} (INV-08); the decision was refused and its instance discarded: the component \
         does not publish what it declares, do not run it"
    )]
    FactorsNotDeclared { policy: String, state: &'static str, detail: String },
    #[error(
        "policy {active} failed on this tick's input, and so did the version before it ({detail}): the input is at fault, \
         not a version, so none is marked unhealthy; check what the metrics source returned (an answer far larger than usual?)"
    )]
    InputFault { active: String, detail: String },
    #[error("policy {policy} trapped in {call}: {message}; its instance was discarded")]
    Trap { policy: String, call: &'static str, message: String },
    #[error("policy {policy} ran past its deadline in {call}; its instance was discarded")]
    Timeout { policy: String, call: &'static str },
    #[error("policy {policy} could not be instantiated: {message}")]
    Instantiate { policy: String, message: String },
    #[error("policy {policy} has no batch replay (a component built before contract 3.1.0); replay runs it tick by tick")]
    NoBatchReplay { policy: String },
    #[error(
        "policy {policy}: a batch replay cannot start from a memory that carries a flap-damping record (the session's start has no \
         place for it); replay tick by tick, or start from a fresh memory"
    )]
    BatchStartWithFlap { policy: String },
    #[error("policy {policy} refused a replay batch: {message}; this is a defect of the sentinel's replay, please report it")]
    ReplayRefused { policy: String, message: String },
    #[error(
        "{path} was built from the policy template and its numbers are damaged ({message}), so it cannot run: build it again \
         from its policy.toml with `sentinel policy build`, or copy it again from where it was built"
    )]
    DamagedData { path: PathBuf, message: String },
}

impl PolicyError {
    /// This error, or [`PolicyError::DamagedData`] when the component `bytes` (read from `path`)
    /// was built from the template and its policy data region does not read: the component
    /// then traps at its first call, which by itself says only `unreachable`.
    pub fn or_damaged_data(self, path: &std::path::Path, bytes: &[u8]) -> PolicyError {
        use capacity_guest::policy_data::{REGION_LEN, decode, locate};
        if !matches!(self, PolicyError::Trap { .. } | PolicyError::Instantiate { .. }) {
            return self;
        }
        match locate(bytes).map(|at| decode(&bytes[at..at + REGION_LEN])) {
            Some(Err(damage)) => PolicyError::DamagedData { path: path.to_path_buf(), message: damage.to_string() },
            _ => self,
        }
    }
}
