//! `sentinel replay --from-store`: what the live sentinel recorded replays to what it decided.
//! A sped-up `sentinel run` over the incident trace fills a SQLite store; replaying the store's
//! tick records through the same component gives exactly the scenario's expected lines, and
//! `sentinel policy tune --from-store` tunes on them.

use std::path::PathBuf;
use std::process::Command;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn replaying_the_store_reproduces_the_live_decisions() {
    let policy = workspace().join("target/policies/capacity-policy-1.0.0.wasm");
    assert!(policy.is_file(), "{} is missing: run `cargo policies` first", policy.display());
    let trace = workspace().join("tests/traces/incident.jsonl");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sentinel.toml");
    std::fs::write(
        &config,
        format!(
            "policy = {policy:?}\n[store]\nkind = \"sqlite\"\npath = \"db/s.db\"\n[metrics]\nkind = \"trace\"\npath = {trace:?}\n\
             [publish.cache]\nkind = \"file\"\npath = \"out/cache.json\"\n[publish.parameter]\nkind = \"file\"\npath = \"out/parameter.json\"\n",
            policy = policy.display().to_string(),
            trace = trace.display().to_string(),
        ),
    )
    .unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_sentinel"))
        .args(["run", "--speed", "100000", "--config"])
        .arg(&config)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));

    let replay = Command::new(env!("CARGO_BIN_EXE_sentinel"))
        .args(["replay", "--since", "100000h", "--format", "jsonl", "--from-store"])
        .arg(&config)
        .arg("--policy")
        .arg(&policy)
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    let expected = std::fs::read_to_string(workspace().join("tests/traces/incident.expected.jsonl")).unwrap();
    assert_eq!(String::from_utf8_lossy(&replay.stdout), expected);

    // The same records are evidence a tuning sweep chooses on (named `store`).
    std::fs::write(dir.path().join("space.toml"), "[thresholds]\ncpu_pct.resolve_band = [0, 5]\n").unwrap();
    let tune = Command::new(env!("CARGO_BIN_EXE_sentinel"))
        .args(["policy", "tune", "--base"])
        .arg(workspace().join("policies/1.0.0"))
        .args(["--space", "space.toml", "--from-store"])
        .arg(&config)
        .args(["--since", "100000h", "--out", "tuned", "--holdout"])
        .arg(workspace().join("tests/traces/flapping.jsonl"))
        .current_dir(dir.path())
        .env("RUST_LOG", "off")
        .output()
        .unwrap();
    assert!(tune.status.success(), "{}", String::from_utf8_lossy(&tune.stderr));
    let report = std::fs::read_to_string(dir.path().join("tuned/report.md")).unwrap();
    assert!(report.contains("| store | train | 0.0 | `store` |"), "{report}");
    assert!(report.contains("| flapping | hold-out |"), "{report}");
}

#[test]
fn an_empty_store_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sentinel.toml");
    std::fs::write(&config, "[store]\nkind = \"sqlite\"\npath = \"db/s.db\"\n").unwrap();
    let policy = workspace().join("target/policies/capacity-policy-1.0.0.wasm");
    let out = Command::new(env!("CARGO_BIN_EXE_sentinel"))
        .args(["replay", "--from-store"])
        .arg(&config)
        .arg("--policy")
        .arg(&policy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds no tick records"), "{}", String::from_utf8_lossy(&out.stderr));
}
