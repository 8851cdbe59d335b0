//! The policies under test, opened once per process: for each version the rules' native code
//! (the guest crate, called directly with the thresholds of `policies/<v>/policy.toml`) and,
//! with the `host` feature, the built component (`target/policies/capacity-policy-<v>.wasm`,
//! which `cargo policies` writes) through `sentinel_core::policy::open` with the host's default
//! limits, so each call runs under the same epoch deadline and memory cap as in the sentinel,
//! in one long-lived instance.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};
use vocabulary::{AdmissionPlan, AdmissionRequest, AdmissionResult, Decision, DecisionInput, PlanRequest, Thresholds};

/// The versions every structured target runs through.
pub const VERSIONS: [&str; 2] = ["1.0.0", "2.0.0"];

/// One version: its native rules and, with the `host` feature, its component.
pub struct Pair {
    pub version: &'static str,
    /// What `policies/<v>/policy.toml` declares (with `host`, checked equal to the component's).
    pub thresholds: Thresholds,
    component: Component,
}

/// The answer of one call: the native one, and every difference the component's answer has
/// from it (none without the `host` feature).
pub struct Answer<T> {
    pub value: T,
    pub problems: Vec<String>,
}

impl Pair {
    pub fn decide(&mut self, input: &DecisionInput) -> Answer<Decision> {
        let native = capacity_guest::decide::decide(input, &self.thresholds);
        let component = self.component.decide(input);
        self.compared(native, "decide", component)
    }

    pub fn resolve_budget(&mut self, request: &AdmissionRequest) -> Answer<AdmissionResult> {
        let native = capacity_guest::admission::resolve_budget(request);
        let component = self.component.resolve_budget(request);
        self.compared(native, "resolve-budget", component)
    }

    pub fn plan(&mut self, request: &PlanRequest) -> Answer<AdmissionPlan> {
        let native = capacity_guest::planner::plan(request);
        let component = self.component.plan(request);
        self.compared(native, "plan", component)
    }

    /// The native answer, with the component's (when there is one; it must not trap or time
    /// out) compared to it field by field.
    fn compared<T: serde::Serialize + PartialEq>(&self, native: T, what: &str, component: Option<Result<T, String>>) -> Answer<T> {
        let problems = match component {
            None => Vec::new(),
            Some(Err(e)) => panic!("{} {what}: {e}", self.version),
            Some(Ok(c)) => crate::diff::differences(&native, &c).into_iter().map(|d| format!("component vs native: {d}")).collect(),
        };
        Answer { value: native, problems }
    }
}

/// The same calls on the version's component: `None` when there is none to call.
trait Calls {
    fn decide(&mut self, input: &DecisionInput) -> Option<Result<Decision, String>>;
    fn resolve_budget(&mut self, request: &AdmissionRequest) -> Option<Result<AdmissionResult, String>>;
    fn plan(&mut self, request: &PlanRequest) -> Option<Result<AdmissionPlan, String>>;
}

/// Without the `host` feature: no component, the native rules alone.
#[cfg(not(feature = "host"))]
struct Component;

#[cfg(not(feature = "host"))]
impl Calls for Component {
    fn decide(&mut self, _: &DecisionInput) -> Option<Result<Decision, String>> {
        None
    }
    fn resolve_budget(&mut self, _: &AdmissionRequest) -> Option<Result<AdmissionResult, String>> {
        None
    }
    fn plan(&mut self, _: &PlanRequest) -> Option<Result<AdmissionPlan, String>> {
        None
    }
}

/// With the `host` feature: the built component, loaded as the sentinel loads it.
#[cfg(feature = "host")]
struct Component(Box<dyn sentinel_core::policy::Policy>);

#[cfg(feature = "host")]
impl Calls for Component {
    fn decide(&mut self, input: &DecisionInput) -> Option<Result<Decision, String>> {
        Some(self.0.decide(input).map_err(|e| e.to_string()))
    }
    fn resolve_budget(&mut self, request: &AdmissionRequest) -> Option<Result<AdmissionResult, String>> {
        Some(self.0.resolve_budget(request).map_err(|e| e.to_string()))
    }
    fn plan(&mut self, request: &PlanRequest) -> Option<Result<AdmissionPlan, String>> {
        Some(self.0.plan(request).map_err(|e| e.to_string()))
    }
}

/// The workspace root: two folders above this crate.
pub fn workspace() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Where the built components are: `FUZZ_POLICIES_DIR` (set by `tests/fuzz.sh`), else
/// `<workspace>/target/policies`.
#[cfg(feature = "host")]
pub fn policies_dir() -> PathBuf {
    std::env::var_os("FUZZ_POLICIES_DIR").map(PathBuf::from).unwrap_or_else(|| workspace().join("target/policies"))
}

/// Every version's pair, opened on first use and kept for the life of the process.
pub fn pairs() -> MutexGuard<'static, Vec<Pair>> {
    static PAIRS: OnceLock<Mutex<Vec<Pair>>> = OnceLock::new();
    let pairs = PAIRS.get_or_init(|| Mutex::new(VERSIONS.iter().map(|v| open_pair(v)).collect()));
    // A panic while holding the lock is a finding; the process ends with it.
    pairs.lock().unwrap_or_else(|e| e.into_inner())
}

fn declared(version: &str) -> Thresholds {
    let file = workspace().join("policies").join(version).join("policy.toml");
    let description = policy_files::description::read_version(&file).unwrap_or_else(|e| panic!("{e}")).description;
    assert_eq!(description.version, version, "{} is another version", file.display());
    description.thresholds
}

#[cfg(not(feature = "host"))]
fn open_pair(version: &'static str) -> Pair {
    Pair { version, thresholds: declared(version), component: Component }
}

#[cfg(feature = "host")]
fn open_pair(version: &'static str) -> Pair {
    use sentinel_core::policy::{self, Limits, Runtime};
    static RUNTIME: OnceLock<std::sync::Arc<Runtime>> = OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| Runtime::new(Limits::default()).expect("the wasmtime engine starts"));
    let wasm = policies_dir().join(format!("capacity-policy-{version}.wasm"));
    assert!(wasm.is_file(), "{} is missing: run `cargo policies` first", wasm.display());
    let mut component =
        policy::open(&format!("{version}={}", wasm.display()), runtime).unwrap_or_else(|e| panic!("opening {}: {e}", wasm.display()));
    let thresholds = declared(version);
    let described = component.describe().expect("the component describes itself");
    assert_eq!(described.version, version, "{} is another version: run `cargo policies`", wasm.display());
    let differences = crate::diff::differences(&thresholds, &described.thresholds);
    assert!(differences.is_empty(), "{version}: component and policy.toml disagree: {differences:?}");
    Pair { version, thresholds, component: Component(component) }
}
