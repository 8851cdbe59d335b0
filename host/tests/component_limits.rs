//! The component runs under a memory cap and a deadline, and a trap is an error naming the
//! policy, never a crash: the instance is discarded and the next call works again.

use sentinel_core::policy::{ComponentPolicy, Limits, Policy, PolicyError, Runtime};
use std::path::PathBuf;
use std::time::Duration;
use vocabulary::{DecisionInput, Level, Memory, ProtectionState, Reading, RecentEntry, Signal};

fn component(version: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/policies").join(format!("capacity-policy-{version}.wasm"));
    assert!(path.is_file(), "{} is missing: run `cargo policies` first", path.display());
    path
}

fn input(now: i64, memory: Option<Memory>) -> DecisionInput {
    DecisionInput {
        now,
        signal: Signal::Reading(Reading { cpu_pct: Some(90.0), connections_pct: None, scaling: None, latency: vec![] }),
        memory,
        pin: None,
        throttles_enabled: false,
        stages_throttled: false,
    }
}

fn runtime(memory_bytes: usize) -> std::sync::Arc<Runtime> {
    Runtime::new(Limits { deadline: Duration::from_millis(500), memory_bytes }).unwrap()
}

#[test]
fn decides_within_a_one_mebibyte_memory_cap() {
    let rt = runtime(1 << 20);
    let mut policy = ComponentPolicy::load(&rt, &component("1.0.0"), None).unwrap();
    let decision = policy.decide(&input(1_800_000_000, None)).unwrap();
    assert_eq!(decision.level, Some(Level::Critical));
    assert_eq!(policy.identity().version, "1.0.0");
    assert_eq!(policy.identity().label, "1.0.0");
}

#[test]
fn a_cap_below_the_guest_stack_is_an_error_naming_the_policy() {
    let rt = runtime(32 << 10);
    let err = ComponentPolicy::load(&rt, &component("1.0.0"), Some("tiny")).err().expect("must not load");
    assert!(matches!(err, PolicyError::Instantiate { .. }), "{err}");
    assert!(err.to_string().contains("could not be instantiated"), "{err}");
}

#[test]
fn a_trap_names_the_policy_and_the_next_call_gets_a_fresh_instance() {
    let rt = runtime(1 << 20);
    let mut policy = ComponentPolicy::load(&rt, &component("2.0.0"), Some("candidate")).unwrap();
    // An absurd memory (a million recent entries) cannot be lowered into 1 MiB: the guest's
    // allocation fails and the call traps.
    let huge = Memory {
        state: ProtectionState::Normal,
        state_since: 0,
        last_auto_change: None,
        recent: vec![RecentEntry::new(0, Level::Normal); 1_000_000],
        failed_reads: 0,
        throttles_engaged: false,
        restore_held_since: None,
        flap: None,
    };
    let err = policy.decide(&input(1_800_000_000, Some(huge))).unwrap_err();
    assert!(matches!(err, PolicyError::Trap { call: "decide", .. }), "{err}");
    assert!(err.to_string().starts_with("policy candidate trapped in decide"), "{err}");
    let decision = policy.decide(&input(1_800_000_000, None)).unwrap();
    assert_eq!(decision.state, ProtectionState::Normal);
}

#[test]
fn an_admission_component_is_refused_as_a_policy_with_a_clear_message() {
    let rt = runtime(16 << 20);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/policies/capacity-admission-3.2.0.wasm");
    assert!(path.is_file(), "{} is missing: run `cargo policies` first", path.display());
    let err = ComponentPolicy::load(&rt, &path, None).err().expect("must not load");
    assert!(matches!(err, PolicyError::WrongWorld { .. }), "{err}");
    assert!(err.to_string().contains("does not export the `policy` world"), "{err}");
}

#[test]
fn bytes_that_are_not_a_component_are_refused_naming_the_file() {
    let rt = runtime(16 << 20);
    let path = PathBuf::from("not-a-component.wasm");
    let err = ComponentPolicy::from_bytes(&rt, &path, b"\0asm garbage", None).err().expect("must not load");
    assert!(matches!(err, PolicyError::Compile { .. }), "{err}");
    assert!(err.to_string().starts_with("not-a-component.wasm is not a loadable component"), "{err}");
}

#[test]
fn a_component_that_imports_anything_is_refused_before_it_can_run() {
    // A clock, a file system or a socket would all arrive as imports: none is accepted.
    for import in ["wasi:clocks/wall-clock@0.2.0", "wasi:filesystem/types@0.2.0", "wasi:sockets/tcp@0.2.0"] {
        let bytes = wat::parse_str(format!(r#"(component (import "{import}" (instance)))"#)).unwrap();
        let err = ComponentPolicy::from_bytes(&runtime(16 << 20), std::path::Path::new("importing.wasm"), &bytes, None)
            .err()
            .expect("a component with an import must not load");
        assert!(matches!(err, PolicyError::HasImports { .. }), "{err}");
        assert!(err.to_string().contains(import) && err.to_string().contains("importing.wasm"), "{err}");
    }
}
