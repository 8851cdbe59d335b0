//! What can go wrong with a policy, each naming the policy and what to do.

use std::path::PathBuf;

/// Why a policy could not be loaded, checked or called: loading a component or a `policy.toml`,
/// a call into a running version, or a replay session. Each message names the policy and says
/// what to do.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The WebAssembly engine could not be configured, or its epoch ticker thread (which enforces
    /// call deadlines) could not be started.
    #[error("cannot set up the WebAssembly engine: {message}")]
    Engine {
        /// What the engine or the operating system reported.
        message: String,
    },
    /// A component file or a `policy.toml` could not be read from disk.
    #[error("cannot read policy {path}: {source}")]
    Read {
        /// The file that could not be read.
        path: PathBuf,
        /// The I/O error that reading it returned.
        source: std::io::Error,
    },
    /// A `policy.toml` (or the folder given for one) does not hold a valid policy description,
    /// so the native policy cannot run it.
    #[error("policy file {path} is invalid: {message}")]
    InvalidFile {
        /// The `policy.toml`, or the folder given in its place.
        path: PathBuf,
        /// What is wrong with it, as the policy file reader says.
        message: String,
    },
    /// The file is not a WebAssembly component this engine can compile and link.
    #[error("{path} is not a loadable component: {message}")]
    Compile {
        /// The component file.
        path: PathBuf,
        /// The compiler's or linker's reason.
        message: String,
    },
    /// The component compiles but lacks the exports of the `policy` world, e.g. an
    /// admission-only component.
    #[error(
        "{path} does not export the `policy` world ({message}); build it with `cargo policies` \
         (an admission-only component cannot decide)"
    )]
    WrongWorld {
        /// The component file.
        path: PathBuf,
        /// Which export was missing or mistyped, as the engine says.
        message: String,
    },
    /// The component was built for a contract version whose major version differs from the one
    /// this sentinel speaks (for 0.x, whose minor version differs).
    #[error(
        "{path} was built for contract capacity:sentinel@{built_for}; this sentinel speaks capacity:sentinel@{speaks} \
         and runs components of the same major version: rebuild the policy with `cargo policies` from a release of this contract, \
         or run a sentinel of its contract"
    )]
    ContractMismatch {
        /// The component file.
        path: PathBuf,
        /// The contract version the component's exports name (e.g. `3.1.0`).
        built_for: String,
        /// The contract version of this sentinel (`contract::CONTRACT`).
        speaks: &'static str,
    },
    /// The component imports something: a policy must be a pure function of its inputs, so it may
    /// import nothing from the host.
    #[error("{path} imports {imports:?}; a policy component must import nothing")]
    HasImports {
        /// The component file.
        path: PathBuf,
        /// The names of everything the component imports.
        imports: Vec<String>,
    },
    /// The workload factors the component declares for its protection states do not withhold
    /// more work as the state rises (INV-08).
    #[error(
        "{path} declares factors that do not protect: {message}; fix them in its policy.toml and build it again \
         (docs/behaviour.md §2 and §12, INV-08: a version withholds more work as the state rises)"
    )]
    Unprotective {
        /// The component file.
        path: PathBuf,
        /// Which factors fail to protect, and in which states.
        message: String,
    },
    /// The component's own description (name, version, thresholds) holds values no policy
    /// version may have.
    #[error("{path} describes itself with values no version may have: {message}; fix its policy.toml and build it again")]
    InvalidDescription {
        /// The component file.
        path: PathBuf,
        /// Which value is out of bounds, and why.
        message: String,
    },
    /// A decision published factors other than those the version declares for the state it
    /// named (INV-08): the decision is refused and the instance discarded, as after a trap.
    #[error(
        "policy {policy} published {detail} (INV-08); the decision was refused and its instance discarded: the component \
         does not publish what it declares, do not run it"
    )]
    FactorsNotDeclared {
        /// The label of the policy that decided (its version unless given as `LABEL=PATH`).
        policy: String,
        /// The protection state the decision named (`normal`, `constrained`, `critical` or `emergency`).
        state: &'static str,
        /// The factors published, in which state, and those the version declares there.
        detail: String,
    },
    /// The active version failed on a tick's input and the last good version, tried in its place,
    /// failed too: the input is blamed, no version is marked unhealthy and the tick fails.
    #[error(
        "policy {active} failed on this tick's input, and so did the version before it ({detail}): the input is at fault, \
         not a version, so none is marked unhealthy; check what the metrics source returned (an answer far larger than usual?)"
    )]
    InputFault {
        /// The version of the active policy that failed first.
        active: String,
        /// Both failures, each after its version (`active: error; fallback: error`).
        detail: String,
    },
    /// A call into the component trapped (a panic, an out-of-bounds access, memory past its
    /// limit...); the instance was discarded and the next call makes a fresh one.
    #[error("policy {policy} trapped in {call}: {message}; its instance was discarded")]
    Trap {
        /// The label of the policy called (its version unless given as `LABEL=PATH`).
        policy: String,
        /// The export that trapped (e.g. `decide`, `describe`, `replay.session.feed`).
        call: &'static str,
        /// The first line of the trap's root cause.
        message: String,
    },
    /// A call into the component ran past the runtime's deadline and was interrupted; the
    /// instance was discarded.
    #[error("policy {policy} ran past its deadline in {call}; its instance was discarded")]
    Timeout {
        /// The label of the policy called (its version unless given as `LABEL=PATH`).
        policy: String,
        /// The export that ran too long (e.g. `decide`).
        call: &'static str,
    },
    /// A fresh instance of the component could not be made (e.g. its memory does not fit the
    /// runtime's limits).
    #[error("policy {policy} could not be instantiated: {message}")]
    Instantiate {
        /// The label of the policy (its version unless given as `LABEL=PATH`).
        policy: String,
        /// The first line of the engine's reason.
        message: String,
    },
    /// A batch replay was asked of a policy that has none (a component built before contract
    /// 3.1.0); replay then calls `decide` tick by tick.
    #[error("policy {policy} has no batch replay (a component built before contract 3.1.0); replay runs it tick by tick")]
    NoBatchReplay {
        /// The label of the policy (its version unless given as `LABEL=PATH`).
        policy: String,
    },
    /// A batch replay was asked to start from a policy memory that holds a flap-damping record,
    /// which a session's start cannot carry.
    #[error(
        "policy {policy}: a batch replay cannot start from a memory that carries a flap-damping record (the session's start has no \
         place for it); replay tick by tick, or start from a fresh memory"
    )]
    BatchStartWithFlap {
        /// The label of the policy (its version unless given as `LABEL=PATH`).
        policy: String,
    },
    /// A batch replay session refused a chunk of trace events, answered one that is malformed or
    /// has the wrong number of tick outcomes, or was fed after it had already failed.
    #[error("policy {policy} refused a replay batch: {message}; this is a defect of the sentinel's replay, please report it")]
    ReplayRefused {
        /// The label of the policy replayed (its version unless given as `LABEL=PATH`).
        policy: String,
        /// The policy's reason, or what was wrong with its answer.
        message: String,
    },
    /// A component built from the policy template trapped or could not be instantiated, and its
    /// policy data region (the thresholds `policy build` wrote in) does not decode: the file
    /// was damaged after it was built.
    #[error(
        "{path} was built from the policy template and its numbers are damaged ({message}), so it cannot run: build it again \
         from its policy.toml with `sentinel policy build`, or copy it again from where it was built"
    )]
    DamagedData {
        /// The component file.
        path: PathBuf,
        /// Why the data region does not decode (e.g. its SHA-256 does not match).
        message: String,
    },
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
