//! Opening the two implementations of a policy version (native modules and built component)
//! under the same label, so their replay lines compare byte for byte, and replaying traces.

use crate::paths::{component_path, policy_folder, stale_hint};
use sentinel_core::policy::{self, Limits, Policy, ReplaySession, Runtime};
use sentinel_core::replay::{self, CHUNK_EVENTS, PerTick, output};
use sentinel_core::trace::Trace;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use vocabulary::{ApiBaseline, Outcome, SessionStart};

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

/// Replays a trace through one policy as `sentinel replay` does: its lines and its outcomes.
pub fn replay_both(trace: &Trace, policy: &mut Box<dyn Policy>, throttles: bool) -> (Vec<String>, Vec<Outcome>) {
    let label = policy.identity().label.clone();
    let mut lines = Vec::new();
    let mut outcomes = Vec::new();
    replay::run(trace, std::slice::from_mut(policy), throttles, &mut |_, tick| {
        lines.push(output::tick_line(&label, &tick));
        outcomes.push(tick.outcome.clone());
    })
    .unwrap_or_else(|e| panic!("replaying {} through {label}: {e}", trace.name));
    (lines, outcomes)
}

/// How a replay reaches the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayPath {
    /// The policy's batch session, a chunk of events a call.
    Batch,
    /// `decide` tick by tick, the host carrying memory and baselines.
    PerTick,
}

/// Every tick's outcome with its explanation, and the baselines learnt (with the index of the
/// first tick they apply to), replayed by `path` in chunks of `chunk` events.
pub fn replay_outcomes(
    trace: &Trace,
    policy: &mut dyn Policy,
    throttles: bool,
    path: ReplayPath,
    chunk: usize,
) -> (Vec<Outcome>, Vec<(usize, Vec<ApiBaseline>)>) {
    let label = policy.identity().label.clone();
    let start = |throttles_enabled| SessionStart { throttles_enabled, explain: true, ..SessionStart::default() };
    let mut session: Box<dyn ReplaySession + '_> = match path {
        ReplayPath::Batch => {
            assert!(policy.replays_in_batch(), "{label} has no batch replay");
            policy.batch_session(start(throttles)).unwrap_or_else(|e| panic!("{label}: {e}"))
        }
        ReplayPath::PerTick => Box::new(PerTick::new(policy, start(throttles))),
    };
    let (mut outcomes, mut learnt) = (Vec::new(), Vec::new());
    for events in trace.events.chunks(chunk.clamp(1, CHUNK_EVENTS * 16)) {
        let answer = session.feed(events).unwrap_or_else(|e| panic!("replaying {} through {label}: {e}", trace.name));
        learnt.extend(answer.learnt.into_iter().map(|l| (outcomes.len() + l.from_tick as usize, l.baselines)));
        outcomes.extend(answer.outcomes);
    }
    (outcomes, learnt)
}
