//! A version that fails during a tick: rolled back to the last good one, recorded off the
//! tick's thread, never over a state file it cannot read.

use super::state::{self, PolicyState};
use super::tests::{START, TRAP, V1, config, install, trace};
use crate::tick::Sentinel;

/// A sentinel whose state names 1.0.0 then 9.3.0 (which traps on the trace's second minute),
/// running 9.3.0 with 1.0.0 as its last good version.
async fn on_the_trapping_version() -> (tempfile::TempDir, Sentinel) {
    let dir = tempfile::tempdir().unwrap();
    install(&dir.path().join("policies"), &[V1, TRAP]);
    state::update(&dir.path().join("sentinel-state"), |s| {
        s.activated("1.0.0");
        s.activated("9.3.0");
    })
    .unwrap();
    trace(dir.path(), &[40.0, -1.0, 40.0]);
    let (sentinel, _) = crate::setup::sentinel(&config(dir.path(), "active = \"9.3.0\"\n"), START, None).await.unwrap();
    (dir, sentinel)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_never_replaces_an_unreadable_state_file_and_still_takes_effect() {
    let (dir, sentinel) = on_the_trapping_version().await;
    let state_dir = dir.path().join("sentinel-state");
    assert_eq!(sentinel.tick(START).await.unwrap().document.policy.version, "9.3.0");

    // The state file is damaged while the sentinel runs (a full disk, a bad edit).
    let damaged = b"{\"active\": \"9.3.0\", \"history\": [\"1.0.0\"";
    super::private_dir::write_atomically(&state::path(&state_dir), damaged).unwrap();
    let report = sentinel.tick(START + 60).await.unwrap();
    assert_eq!(report.document.policy.version, "1.0.0", "the rollback takes effect in memory");
    sentinel.policy.lifecycle().unwrap().settle().await;
    assert_eq!(std::fs::read(state::path(&state_dir)).unwrap(), damaged, "the unreadable state is left for the operator");
    assert!(PolicyState::load(&state_dir).is_err());
    assert_eq!(sentinel.tick(START + 120).await.unwrap().document.policy.version, "1.0.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_that_traps_during_a_tick_is_rolled_back_and_the_old_one_publishes() {
    let dir = tempfile::tempdir().unwrap();
    let policies = dir.path().join("policies");
    install(&policies, &[V1, TRAP]);
    let mut state = PolicyState::default();
    state.activated("1.0.0");
    state.activated("9.3.0");
    state.save(&dir.path().join("sentinel-state")).unwrap();
    trace(dir.path(), &[40.0, -1.0, 40.0]);
    let config = config(dir.path(), "active = \"9.3.0\"\n");
    let (sentinel, _) = crate::setup::sentinel(&config, START, None).await.unwrap();
    assert_eq!(sentinel.tick(START).await.unwrap().document.policy.version, "9.3.0");
    let report = sentinel.tick(START + 60).await.unwrap();
    assert_eq!(report.document.policy.version, "1.0.0", "the tick reran with the last good version");
    assert!(report.notes.iter().any(|n| n.contains("trapped")), "{:?}", report.notes);
    assert_eq!(sentinel.telemetry.policy_rollbacks.get(), 1);
    assert!(sentinel.telemetry.render().contains("sentinel_policy_rollbacks_total 1"));
    sentinel.policy.lifecycle().unwrap().settle().await;
    let state = PolicyState::load(&dir.path().join("sentinel-state")).unwrap();
    assert_eq!(state.active.as_deref(), Some("1.0.0"));
    assert!(state.unhealthy.get("9.3.0").is_some_and(|why| why.contains("trapped")), "{state:?}");
    assert_eq!(sentinel.tick(START + 120).await.unwrap().document.policy.version, "1.0.0");
    // The unhealthy version is not picked again on restart.
    let (restarted, _) = crate::setup::sentinel(&config, START + 180, None).await.unwrap();
    assert_eq!(restarted.policy.lifecycle().unwrap().active_version().0, "1.0.0");
}

/// While a rollback's record waits (here: behind a job that holds the background thread), the
/// state file still names the failed version as active; a look at the directory in that gap
/// keeps the good version and prepares nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_look_at_the_directory_before_the_rollback_is_recorded_keeps_the_good_version() {
    let (dir, sentinel) = on_the_trapping_version().await;
    let (state_dir, policies) = (dir.path().join("sentinel-state"), dir.path().join("policies"));
    let lifecycle = sentinel.policy.lifecycle().cloned().unwrap();
    assert_eq!(sentinel.tick(START).await.unwrap().document.policy.version, "9.3.0");

    let (release, hold) = std::sync::mpsc::channel::<()>();
    lifecycle.background.run(move || {
        let _ = hold.recv();
    });
    assert_eq!(sentinel.tick(START + 60).await.unwrap().document.policy.version, "1.0.0");
    assert_eq!(PolicyState::load(&state_dir).unwrap().active.as_deref(), Some("9.3.0"), "the record is still waiting");
    std::fs::write(policies.join("README.txt"), "a change in the directory").unwrap();
    let refusals = sentinel.telemetry.policy_refusals.get();
    assert_eq!(lifecycle.sync().await.unwrap(), None);
    assert_eq!(lifecycle.active_version().0, "1.0.0");
    assert_eq!(sentinel.telemetry.policy_refusals.get(), refusals, "the failed version was not prepared again");

    release.send(()).unwrap();
    lifecycle.settle().await;
    let recorded = PolicyState::load(&state_dir).unwrap();
    assert_eq!(recorded.active.as_deref(), Some("1.0.0"));
    assert!(recorded.unhealthy.contains_key("9.3.0"), "{recorded:?}");
}

/// An input no version can decide (a reading of 200,000 latency series, past every version's
/// memory cap) is the input's fault: the active version is neither condemned nor rolled back,
/// the tick fails naming both errors, and the next ordinary reading is decided by the same
/// version (security review, 6: it stayed condemned for good).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_every_version_fails_on_condemns_no_version() {
    let dir = tempfile::tempdir().unwrap();
    install(&dir.path().join("policies"), &[V1, super::tests::V2]);
    state::update(&dir.path().join("sentinel-state"), |s| {
        s.activated("1.0.0");
        s.activated("2.0.0");
    })
    .unwrap();
    trace(dir.path(), &[40.0, 40.0, 40.0]);
    let at = |i: i64| crate::instants::format_rfc3339(START + 60 * i);
    let flood: Vec<String> = (0..200_000).map(|i| format!(r#"{{"api":"api-{i}","p95_ms":100,"baseline_ms":100}}"#)).collect();
    let lines = [
        format!("{{\"at\":\"{}\",\"reading\":{{\"cpu_pct\":40,\"connections_pct\":30,\"scaling\":false,\"latency\":[]}}}}", at(0)),
        format!(
            "{{\"at\":\"{}\",\"reading\":{{\"cpu_pct\":40,\"connections_pct\":30,\"scaling\":false,\"latency\":[{}]}}}}",
            at(1),
            flood.join(",")
        ),
        format!("{{\"at\":\"{}\",\"reading\":{{\"cpu_pct\":40,\"connections_pct\":30,\"scaling\":false,\"latency\":[]}}}}", at(2)),
    ];
    std::fs::write(dir.path().join("trace.jsonl"), lines.join("\n") + "\n").unwrap();
    let text = "[policy_limits]\ndeadline = \"2s\"\nmemory_mib = 3\n[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n\
                [metrics]\nkind = \"trace\"\npath = \"trace.jsonl\"\n\
                [publish.cache]\nkind = \"file\"\npath = \"out/cache.json\"\n[publish.parameter]\nkind = \"file\"\npath = \"out/parameter.json\"\n\
                [policies]\ndir = \"policies\"\nallow_unsigned = true\npoll = \"100ms\"\nactive = \"2.0.0\"\n";
    let config = crate::config::Config::parse(text, &dir.path().join("sentinel.toml")).unwrap();
    let (sentinel, _) = crate::setup::sentinel(&config, START, None).await.unwrap();
    assert_eq!(sentinel.tick(START).await.unwrap().document.policy.version, "2.0.0");
    let failed = sentinel.tick(START + 60).await.expect_err("no version can decide this input");
    let said = format!("{failed:#}");
    assert!(said.contains("the input is at fault") && said.contains("2.0.0") && said.contains("1.0.0"), "{said}");
    assert_eq!(sentinel.telemetry.policy_rollbacks.get(), 0, "no rollback");
    assert_eq!(sentinel.tick(START + 120).await.unwrap().document.policy.version, "2.0.0", "the same version decides the next reading");
    sentinel.policy.lifecycle().unwrap().settle().await;
    let recorded = PolicyState::load(&dir.path().join("sentinel-state")).unwrap();
    assert_eq!(recorded.active.as_deref(), Some("2.0.0"));
    assert!(recorded.unhealthy.is_empty(), "{recorded:?}");
}
