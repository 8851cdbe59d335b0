//! Opening the two implementations of a policy version (native modules and built component)
//! under the same label, so their replay lines compare byte for byte, and replaying traces.

use crate::paths::{component_path, policy_folder, stale_hint};
use sentinel::policy::{self, Limits, Policy, Runtime};
use sentinel::replay::{self, output};
use sentinel::trace::Trace;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use vocabulary::Decision;

/// The policy versions under `policies/`.
pub const VERSIONS: [&str; 2] = ["1.0.0", "2.0.0"];

/// One engine for the whole test binary (each engine starts an epoch ticker thread).
pub fn runtime() -> Arc<Runtime> {
    static RUNTIME: OnceLock<Arc<Runtime>> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime::new(Limits::default()).expect("the wasmtime engine starts")).clone()
}

/// The native modules with `policies/<version>/policy.toml`, labelled `<version>`.
pub fn native(version: &str) -> Box<dyn Policy> {
    let spec = format!("{version}={}", policy_folder(version).display());
    policy::open(&spec, &runtime()).unwrap_or_else(|e| panic!("opening native policy {version}: {e}"))
}

/// The file name of a version's built policy component.
pub fn component_file(version: &str) -> String {
    format!("capacity-policy-{version}.wasm")
}

/// The built component `target/policies/capacity-policy-<version>.wasm`, labelled `<version>`.
pub fn component(version: &str) -> Box<dyn Policy> {
    let path = component_path(&component_file(version));
    let spec = format!("{version}={}", path.display());
    let policy = policy::open(&spec, &runtime())
        .unwrap_or_else(|e| panic!("opening component {}: {e}{}", path.display(), stale_hint(&path, version)));
    assert_eq!(policy.identity().version, version, "{} describes itself as another version{}", path.display(), stale_hint(&path, version));
    policy
}

/// The built component of `version`, compiled once per test process and shared by its tests
/// (a compile costs most of a second in a debug build; a call about 30 µs). The guard holds the
/// instance for the caller alone; take several versions in [`VERSIONS`] order.
pub fn shared_component(version: &str) -> MutexGuard<'static, Box<dyn Policy>> {
    type Cache = Mutex<BTreeMap<String, &'static Mutex<Box<dyn Policy>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cell: &'static Mutex<Box<dyn Policy>> = {
        let mut map = CACHE.get_or_init(Cache::default).lock().unwrap_or_else(|e| e.into_inner());
        map.entry(version.to_string()).or_insert_with(|| Box::leak(Box::new(Mutex::new(component(version)))))
    };
    // A test that panicked while holding it leaves a usable instance (a trap replaces it anyway).
    cell.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why a component and the native modules might disagree for reasons other than a bug.
pub fn component_hint(version: &str) -> String {
    stale_hint(&component_path(&component_file(version)), version)
}

/// Replays a trace through one policy (fresh memory, switch as given): its docs/behaviour.md
/// §10.3 lines, labelled with the policy's label.
pub fn replay_lines(trace: &Trace, policy: &mut Box<dyn Policy>, throttles: bool) -> Vec<String> {
    replay_both(trace, policy, throttles).0
}

/// Replays a trace through one policy: its decisions.
pub fn replay_decisions(trace: &Trace, policy: &mut Box<dyn Policy>, throttles: bool) -> Vec<Decision> {
    replay_both(trace, policy, throttles).1
}

/// Replays a trace through one policy: its lines and its decisions.
pub fn replay_both(trace: &Trace, policy: &mut Box<dyn Policy>, throttles: bool) -> (Vec<String>, Vec<Decision>) {
    let label = policy.identity().label.clone();
    let mut lines = Vec::new();
    let mut decisions = Vec::new();
    replay::run(trace, std::slice::from_mut(policy), throttles, &mut |_, tick| {
        lines.push(output::tick_line(&label, &tick));
        decisions.push(tick.decision.clone());
    })
    .unwrap_or_else(|e| panic!("replaying {} through {label}: {e}", trace.name));
    (lines, decisions)
}
