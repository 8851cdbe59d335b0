//! `sentinel replay`'s cache of compiled components (`$SENTINEL_CACHE_DIR`, else the user's
//! cache directory; docs/behaviour.md §10.2) goes through the live sentinel's code
//! (crates/core/src/policy/lifecycle/cache.rs): an artifact is keyed by the engine and the sha256 of
//! the component's bytes, and deserialized only when it hashes to the record written beside it
//! at compile time and that record names the component replayed. Security finding 10 planted
//! 2.0.0's artifact under 1.0.0's key: with 2.0.0's own record, or with 1.0.0's, it is refused,
//! never run, replaced by 1.0.0's own compile, and 1.0.0's rules decide. The embedded default and
//! a config's single `policy` file use the same cache for every command.

use crate::support;

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{cpu, t};

/// `sentinel replay --policy POLICY --format jsonl TRACE` with `cache` as its cache.
fn replay(cache: &Path, policy: &Path, trace: &Path) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_sentinel"))
        .args(["replay", "--format", "jsonl", "--policy"])
        .arg(policy)
        .arg(trace)
        .env("SENTINEL_CACHE_DIR", cache)
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert!(out.status.success(), "replay of {}: {}", policy.display(), String::from_utf8_lossy(&out.stderr));
    out
}

/// The policy version and state of the last line a replay printed.
fn last_decision(out: &Output) -> (String, String) {
    let text = String::from_utf8_lossy(&out.stdout);
    let line: serde_json::Value = serde_json::from_str(text.lines().last().expect("replay printed its ticks")).unwrap();
    (line["policy"].as_str().unwrap().to_string(), line["state"].as_str().unwrap().to_string())
}

/// The artifact the cache holds for the component `wasm`, found by its sha256.
fn artifact_of(cache: &Path, wasm: &Path) -> PathBuf {
    let digest = hex::encode(Sha256::digest(std::fs::read(wasm).unwrap()));
    let found: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().ends_with(&format!("-{digest}.cwasm")))
        .collect();
    assert_eq!(found.len(), 1, "one artifact for {digest} in {}: {found:?}", cache.display());
    found.into_iter().next().unwrap()
}

fn record_of(artifact: &Path) -> PathBuf {
    artifact.with_extension("cwasm.sha256")
}

/// Replaces `path` by a rename, as a planter would.
fn plant(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("planting");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[test]
fn another_components_artifact_planted_under_the_replayed_ones_key_is_refused_replaced_and_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let trace = dir.path().join("trace.jsonl");
    // CPU at 72%: constrained for 1.0.0 (70), normal for 2.0.0 (75).
    std::fs::write(&trace, (0..10).map(|m| cpu(t(m), 72.0) + "\n").collect::<String>()).unwrap();
    let (v1, v2) =
        (support::built_policies().join("capacity-policy-1.0.0.wasm"), support::built_policies().join("capacity-policy-2.0.0.wasm"));
    assert_eq!(last_decision(&replay(&cache, &v1, &trace)), ("1.0.0".into(), "constrained".into()));
    assert_eq!(last_decision(&replay(&cache, &v2, &trace)), ("2.0.0".into(), "normal".into()), "the trace tells them apart");
    let (a1, a2) = (artifact_of(&cache, &v1), artifact_of(&cache, &v2));
    let v2_code = std::fs::read(&a2).unwrap();
    let v1_record = std::fs::read_to_string(record_of(&a1)).unwrap();

    for (what, record) in
        [("with 2.0.0's record", std::fs::read(record_of(&a2)).unwrap()), ("with 1.0.0's record", v1_record.clone().into())]
    {
        plant(&a1, &v2_code);
        plant(&record_of(&a1), &record);
        let out = replay(&cache, &v1, &trace);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(last_decision(&out), ("1.0.0".into(), "constrained".into()), "{what}: 1.0.0's rules run\n{stderr}");
        let a1_name = a1.file_name().unwrap().to_string_lossy();
        assert!(
            stderr.contains("WARN") && stderr.contains("refused") && stderr.contains(&*a1_name) && stderr.contains("replaced"),
            "{what}: a warning names the artifact, why it was refused and that it was replaced:\n{stderr}"
        );
        assert_ne!(std::fs::read(&a1).unwrap(), v2_code, "{what}: the planted artifact is replaced");
        assert_eq!(std::fs::read_to_string(record_of(&a1)).unwrap().split_whitespace().nth(1), v1_record.split_whitespace().nth(1));
        // The replacement is 1.0.0's own compile: the next replay uses it, silently.
        let again = replay(&cache, &v1, &trace);
        assert_eq!(last_decision(&again), ("1.0.0".into(), "constrained".into()), "{what}");
        assert!(!String::from_utf8_lossy(&again.stderr).contains("WARN"), "{what}: {}", String::from_utf8_lossy(&again.stderr));
    }
}

/// Issue 49: every command on the embedded default, or on a config's single `policy` file,
/// compiled the component again (0.7 s on the quick install, 4-5 s for a `policy build`
/// component). Now the first command compiles it, saying so, into the user's cache, and the next
/// loads the artifact without compiling.
#[test]
fn the_embedded_default_and_a_single_policy_file_are_compiled_once_then_loaded_precompiled() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_sentinel"))
            .args(args)
            .current_dir(dir.path())
            .env("SENTINEL_CACHE_DIR", &cache)
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        assert!(out.status.success(), "sentinel {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    const COMPILING: &str = "compiling the policy component";

    let embedded = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/core/embedded/capacity-policy-1.0.0.wasm");
    let first = run(&["check"]);
    assert!(first.contains(COMPILING) && first.contains("embedded:capacity-policy-1.0.0.wasm"), "a cold compile says so:\n{first}");
    artifact_of(&cache, &embedded);
    let again = run(&["check"]);
    assert!(!again.contains(COMPILING), "the second command loads the artifact:\n{again}");

    let file = support::built_policies().join("capacity-policy-1.1.0.wasm");
    std::fs::write(dir.path().join("sentinel.toml"), format!("policy = {:?}\n", file.display().to_string())).unwrap();
    let first = run(&["pin", "show", "--config", "sentinel.toml"]);
    assert!(first.contains(COMPILING), "{first}");
    artifact_of(&cache, &file);
    for args in [&["pin", "show", "--config", "sentinel.toml"][..], &["check", "--config", "sentinel.toml"]] {
        let again = run(args);
        assert!(!again.contains(COMPILING), "sentinel {args:?} loads the artifact:\n{again}");
    }
    // `policy info` too (it compiled every time before): the first compiles, the next loads.
    let other = support::built_policies().join("capacity-policy-1.2.0.wasm");
    let info = ["policy", "info", other.to_str().unwrap()];
    let first = run(&info);
    assert!(first.contains(COMPILING), "{first}");
    artifact_of(&cache, &other);
    let again = run(&info);
    assert!(!again.contains(COMPILING), "policy info loads the artifact:\n{again}");
}
