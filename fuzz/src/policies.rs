//! The policies under test, opened once per fuzzing process: for each version, the built
//! component (`target/policies/capacity-policy-<v>.wasm`, which `cargo policies` writes) through
//! `sentinel::policy::open` with the host's default limits, so each call runs under the same
//! epoch deadline and memory cap as in the sentinel, in one long-lived instance; and the native
//! modules from `policies/<v>/policy.toml`.

use sentinel::policy::{self, Limits, Policy, Runtime};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};
use vocabulary::Thresholds;

/// The versions every structured target runs through.
pub const VERSIONS: [&str; 2] = ["1.0.0", "2.0.0"];

/// One version, both ways.
pub struct Pair {
    pub version: &'static str,
    pub component: Box<dyn Policy>,
    pub native: Box<dyn Policy>,
    /// What the component declares (checked equal to the native modules' at start).
    pub thresholds: Thresholds,
}

/// The workspace root: the parent of this crate.
pub fn workspace() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Where the built components are: `FUZZ_POLICIES_DIR` (set by `tests/fuzz.sh`), else
/// `<workspace>/target/policies`.
pub fn policies_dir() -> PathBuf {
    std::env::var_os("FUZZ_POLICIES_DIR").map(PathBuf::from).unwrap_or_else(|| workspace().join("target/policies"))
}

/// Every version's pair, opened on first use and kept for the life of the process.
pub fn pairs() -> MutexGuard<'static, Vec<Pair>> {
    static PAIRS: OnceLock<Mutex<Vec<Pair>>> = OnceLock::new();
    let pairs = PAIRS.get_or_init(|| {
        let runtime = Runtime::new(Limits::default()).expect("the wasmtime engine starts");
        Mutex::new(VERSIONS.iter().map(|v| open_pair(v, &runtime)).collect())
    });
    // A panic while holding the lock is a finding; the process ends with it.
    pairs.lock().unwrap_or_else(|e| e.into_inner())
}

fn open_pair(version: &'static str, runtime: &std::sync::Arc<Runtime>) -> Pair {
    let wasm = policies_dir().join(format!("capacity-policy-{version}.wasm"));
    assert!(wasm.is_file(), "{} is missing: run `cargo policies` first", wasm.display());
    let mut component =
        policy::open(&format!("{version}={}", wasm.display()), runtime).unwrap_or_else(|e| panic!("opening {}: {e}", wasm.display()));
    let folder = workspace().join("policies").join(version);
    let mut native =
        policy::open(&format!("{version}={}", folder.display()), runtime).unwrap_or_else(|e| panic!("opening {}: {e}", folder.display()));
    let declared = component.describe().expect("the component describes itself");
    let native_declared = native.describe().expect("the native modules describe themselves");
    assert_eq!(declared.version, version, "{} is another version: run `cargo policies`", wasm.display());
    let differences = crate::diff::differences(&native_declared, &declared);
    assert!(differences.is_empty(), "{version}: component and policy.toml disagree: {differences:?}");
    Pair { version, component, native, thresholds: declared.thresholds }
}
