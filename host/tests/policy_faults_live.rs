//! Bad policy modules dropped into the policy directory of a running sentinel: one that loops
//! forever, one that exhausts its memory, the admission component passed off as a policy (the
//! wrong world), a component whose bytes were tampered with, and one that passes every check
//! but traps on an input that arrives later. The first four are refused at activation; the
//! last is swapped in, then rolled back during the tick it traps on. Throughout, the loop keeps
//! its minute and every tick is decided and published by a good version.

use crate::support;

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{Metrics, Sandbox, eventually, t};

const TICKS: i64 = 150;
/// Minutes whose reading names the API `trap`, which the 9.3.0 fixture traps on.
const TRAP_MINUTES: std::ops::Range<i64> = 120..123;

fn target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")
}

/// Copies a built component under `name` (version `version`) with a manifest that claims
/// `world`; with `tamper`, one byte of the copy is flipped after the digest was taken.
fn forge(dir: &Path, built: &Path, name: &str, version: &str, world: &str, tamper: bool) {
    let mut bytes = std::fs::read(built).unwrap_or_else(|e| panic!("{}: {e}; run `cargo policies` first", built.display()));
    let manifest = serde_json::json!({
        "name": name, "version": version, "file": format!("{name}-{version}.wasm"),
        "sha256": hex::encode(Sha256::digest(&bytes)), "size": bytes.len(), "world": world,
    });
    if tamper {
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x55;
    }
    let stem = format!("{name}-{version}");
    std::fs::write(dir.join(format!(".{stem}.wasm.tmp")), &bytes).unwrap();
    std::fs::write(dir.join(format!("{stem}.manifest.json")), manifest.to_string()).unwrap();
    std::fs::rename(dir.join(format!(".{stem}.wasm.tmp")), dir.join(format!("{stem}.wasm"))).unwrap();
}

/// Installs a built component and its manifest (manifest first, component last, by rename).
fn install(dir: &Path, built: &Path) {
    for from in [built.with_extension("manifest.json"), built.to_path_buf()] {
        let tmp = dir.join(format!(".{}.tmp", from.file_name().unwrap().to_string_lossy()));
        std::fs::copy(&from, &tmp).unwrap_or_else(|e| panic!("{}: {e}; run `cargo policies` first", from.display()));
        std::fs::rename(&tmp, dir.join(from.file_name().unwrap())).unwrap();
    }
}

fn trace() -> Vec<String> {
    (0..TICKS)
        .map(|m| {
            let latency = if TRAP_MINUTES.contains(&m) { r#"[{"api":"trap","p95_ms":100,"baseline_ms":100}]"# } else { "[]" };
            format!(r#"{{"at":"{}","reading":{{"cpu_pct":40,"latency":{latency}}}}}"#, support::rfc(t(m)))
        })
        .collect()
}

fn scrape_text(port: u16) -> String {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return String::new() };
    let _ = write!(stream, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    text
}

fn scrape(port: u16, name: &str) -> f64 {
    scrape_text(port).lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok()).unwrap_or(0.0)
}

#[test]
fn bad_modules_are_refused_or_rolled_back_while_every_tick_is_published() {
    let sb = Sandbox::new(Metrics::Trace(trace()));
    let dir = sb.path("policies");
    std::fs::create_dir_all(&dir).unwrap();
    install(&dir, &target().join("policies/capacity-policy-1.0.0.wasm"));
    sb.edit_config(|text| {
        format!(
            "{}[policies]\ndir = \"policies\"\nallow_unsigned = true\nactive = \"latest\"\npoll = \"100ms\"\n",
            support::without_policy_file(&text)
        )
    });
    let port = capacity_sentinel_free_port();
    let run = sb.spawn(&["run", "--speed", "300", "--metrics-addr", &format!("127.0.0.1:{port}")], "run");
    assert!(eventually(Duration::from_secs(30), || sb.cache.exists() && sb.ticks().len() >= 5), "{}", run.stderr());

    let test_policies = target().join("test-policies");
    let refused = |n: f64| eventually(Duration::from_secs(30), || scrape(port, "sentinel_policy_refusals_total") >= n);
    install(&dir, &test_policies.join("capacity-policy-fault-loop-9.1.0.wasm"));
    assert!(refused(1.0), "the endless loop is refused:\n{}", run.stderr());
    install(&dir, &test_policies.join("capacity-policy-fault-oom-9.2.0.wasm"));
    assert!(refused(2.0), "memory exhaustion is refused:\n{}", run.stderr());
    let admission = target().join("policies/capacity-admission-3.2.0.wasm");
    forge(&dir, &admission, "capacity-policy-wrong-world", "9.4.0", "policy", false);
    assert!(refused(3.0), "the wrong world is refused:\n{}", run.stderr());
    let good = target().join("policies/capacity-policy-1.0.0.wasm");
    forge(&dir, &good, "capacity-policy-tampered", "9.5.0", "policy", true);
    assert!(refused(4.0), "tampered bytes are refused:\n{}", run.stderr());
    let ticks_so_far = sb.ticks().len() as i64;
    assert!(ticks_so_far < TRAP_MINUTES.start - 10, "the trap fixture must arrive before its input ({ticks_so_far} ticks)");
    install(&dir, &test_policies.join("capacity-policy-fault-trap-on-api-trap-9.3.0.wasm"));
    assert!(
        eventually(Duration::from_secs(30), || sb.ticks().last().is_some_and(|(_, r)| r["policy"]["version"] == "9.3.0")),
        "the trapping version passes activation and decides:\n{}",
        run.stderr()
    );
    // The rollback, scraped from the running sentinel: counted, and the info series names the
    // version deciding again.
    let mut after_rollback = String::new();
    let rolled_back = eventually(Duration::from_secs(60), || {
        after_rollback = scrape_text(port);
        scrape(port, "sentinel_policy_rollbacks_total") >= 1.0
            && after_rollback.contains("sentinel_policy_info{name=\"capacity-policy\",version=\"1.0.0\"")
    });
    assert!(rolled_back, "the rollback is on the metrics endpoint:\n{after_rollback}\n{}", run.stderr());
    assert!(!after_rollback.contains("version=\"9.3.0\""), "the info series shows only the active version:\n{after_rollback}");
    let mut run = run;
    let status = run.wait_for_exit(Duration::from_secs(120)).expect("the run ends after its trace");
    assert!(status.success(), "{}", run.stderr());
    let stderr = run.stderr();

    assert!(stderr.lines().all(|l| l.starts_with("20")), "one line per log record:\n{stderr}");
    for (version, why) in [("9.1.0", "deadline"), ("9.2.0", "memory"), ("9.4.0", "world"), ("9.5.0", "sha256")] {
        let line = stderr.lines().find(|l| l.contains("stays active") && l.contains(&format!("policy {version}")));
        let line = line.unwrap_or_else(|| panic!("no refusal logged for {version}:\n{stderr}"));
        assert!(line.to_lowercase().contains(why), "the refusal of {version} says why ({why}): {line}");
    }
    assert!(stderr.contains("policy 9.3.0 failed during a tick"), "the rollback is logged:\n{stderr}");

    let ticks = sb.ticks();
    assert_eq!(ticks.iter().map(|(s, _)| *s as i64).collect::<Vec<_>>(), (1..=TICKS).collect::<Vec<_>>(), "every minute decided once");
    let versions: Vec<&str> = ticks.iter().map(|(_, r)| r["policy"]["version"].as_str().unwrap()).collect();
    assert!(versions.iter().all(|v| ["1.0.0", "9.3.0"].contains(v)), "only good versions decided: {versions:?}");
    let trap_tick = &ticks[TRAP_MINUTES.start as usize];
    assert_eq!(trap_tick.1["policy"]["version"], "1.0.0", "the trapping tick reran with the last good version");
    assert!(versions[TRAP_MINUTES.start as usize..].iter().all(|v| *v == "1.0.0"), "and 1.0.0 stays: {versions:?}");
    let state: Value = serde_json::from_str(&std::fs::read_to_string(sb.path("sentinel-state/policy-state.json")).unwrap()).unwrap();
    // Versions that ran and failed are condemned; files that could not be loaded or verified
    // are not (a restored file is tried again at the next change of the directory).
    for version in ["9.1.0", "9.2.0", "9.3.0"] {
        assert!(state["unhealthy"].get(version).is_some(), "{version} is marked unhealthy: {state}");
    }
    for version in ["9.4.0", "9.5.0"] {
        assert!(state["unhealthy"].get(version).is_none(), "{version} is refused, not condemned: {state}");
    }
    assert_eq!(sb.cache_doc()["sequence"], TICKS, "the last tick was published");
}

fn capacity_sentinel_free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
