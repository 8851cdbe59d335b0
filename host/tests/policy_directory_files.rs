//! The policy directory is written by others (docs/threat-model.md), as real processes meet it.
//! Nothing the sentinel writes may go through it: a writer of that directory plants symbolic
//! links where the shadow used to keep its files (the second security review, finding 1: the
//! next tick overwrote the private policy state through one and every later tick exited 2); the
//! shadow's memory and log now live in the private state directory, created 0600, never opened
//! through a link. Nothing there is read before its signature holds, or when it is not a
//! regular file (finding 2: a FIFO hung `tick` and `check`). And files that were broken at one
//! start condemn no version for good (finding 3).

use crate::support;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use support::{Metrics, Sandbox, cpu, t};

/// A sandbox whose policy directory holds 1.0.0 (active) and 1.1.0 (in shadow), unsigned.
fn with_shadow(minutes: i64) -> Sandbox {
    let sb = Sandbox::new(Metrics::Trace((0..minutes).map(|m| cpu(t(m), 40.0)).collect()));
    sb.with_shadow_policies("");
    sb
}

#[test]
fn links_planted_in_the_policy_directory_are_never_written_through() {
    let sb = with_shadow(3);
    sb.tick_ok(t(0));
    let state = sb.path("sentinel-state/policy-state.json");
    let state_before = std::fs::read(&state).expect("the first tick saved the policy state");
    let victim = sb.path("victim.log");
    std::fs::write(&victim, "precious\n").unwrap();
    let planted = sb.path("policies/shadow");
    std::fs::create_dir_all(&planted).unwrap();
    symlink(&state, planted.join("1.1.0.memory.json.tmp")).unwrap();
    symlink(&victim, planted.join("1.1.0.jsonl")).unwrap();

    sb.tick_ok(t(1));
    sb.tick_ok(t(2));

    assert_eq!(std::fs::read(&state).unwrap(), state_before, "the private policy state is untouched");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "nothing appended through the planted link");
    let files = sb.path("sentinel-state/shadow");
    let log = std::fs::read_to_string(files.join("1.1.0.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 3, "one line a tick in the private log:\n{log}");
    for name in ["1.1.0.jsonl", "1.1.0.memory.json"] {
        let mode = std::fs::symlink_metadata(files.join(name)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name} is private");
    }
    let report = sb.sentinel(&["policy", "shadow-report"]).success();
    assert!(report.stdout.contains("3 ticks"), "the report reads the private log: {}", report.stdout);
}

#[test]
fn a_link_where_the_shadow_log_goes_is_refused_not_followed() {
    let sb = with_shadow(2);
    sb.tick_ok(t(0));
    let log = sb.path("sentinel-state/shadow/1.1.0.jsonl");
    std::fs::remove_file(&log).unwrap();
    let victim = sb.path("victim.log");
    std::fs::write(&victim, "precious\n").unwrap();
    symlink(&victim, &log).unwrap();
    // The tick itself goes on: the shadow is never published and its record is best effort.
    sb.tick_ok(t(1));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

/// Runs `sentinel ARGS` and gives its status and output (stdout then stderr), failing when it
/// has not ended within 30 s (before the fix a FIFO component made it wait for good).
fn ends_within(sb: &Sandbox, args: &[&str]) -> (std::process::ExitStatus, String) {
    let out = sb.path(&format!("{}.out", args.join("-")));
    let mut child = sb
        .command(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(out.with_extension("err")).unwrap())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`sentinel {}` still waits after 30 s", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let said = std::fs::read_to_string(&out).unwrap() + &std::fs::read_to_string(out.with_extension("err")).unwrap();
    (status, said)
}

#[test]
fn a_version_whose_component_is_a_fifo_or_a_link_to_dev_zero_is_refused_at_once() {
    for (kind, plant) in [
        ("fifo", &(|p: &Path| assert!(std::process::Command::new("mkfifo").arg(p).status().unwrap().success())) as &dyn Fn(&Path)),
        ("link to /dev/zero", &|p: &Path| symlink("/dev/zero", p).unwrap()),
    ] {
        let sb = with_shadow(2);
        let dir = sb.path("policies");
        let text = std::fs::read_to_string(dir.join("capacity-policy-1.1.0.manifest.json")).unwrap();
        let mut manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        manifest["version"] = "9.9.9".into();
        manifest["file"] = "capacity-policy-9.9.9.wasm".into();
        std::fs::write(dir.join("capacity-policy-9.9.9.manifest.json"), manifest.to_string()).unwrap();
        plant(&dir.join("capacity-policy-9.9.9.wasm"));
        let (status, stderr) = ends_within(&sb, &["check"]);
        assert!(status.success(), "{kind}: check with 1.0.0 active:\n{stderr}");
        let (status, stderr) = ends_within(&sb, &["tick", "--at", &support::rfc(t(0))]);
        assert!(status.success(), "{kind}: tick:\n{stderr}");
        let (_, said) = ends_within(&sb, &["policy", "verify"]);
        assert!(said.contains("9.9.9") && (said.contains("not a regular file") || said.contains("symbolic link")), "{kind}: {said}");
    }
}

#[test]
fn a_start_with_every_component_truncated_condemns_none_and_the_restored_directory_runs() {
    let sb = with_shadow(2);
    let dir = sb.path("policies");
    let components: Vec<(std::path::PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    assert_eq!(components.len(), 2);
    for (path, bytes) in &components {
        std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
    }
    let broken = sb.sentinel(&["tick", "--at", &support::rfc(t(0))]);
    assert!(!broken.status.success(), "nothing can decide: {}", broken.stderr);
    assert!(broken.stderr.contains("passed its checks"), "{}", broken.stderr);
    for (path, bytes) in &components {
        std::fs::write(path, bytes).unwrap();
    }
    let ran = sb.tick_ok(t(0));
    let state: serde_json::Value = serde_json::from_slice(&std::fs::read(sb.path("sentinel-state/policy-state.json")).unwrap()).unwrap();
    assert!(state["unhealthy"].as_object().is_none_or(|m| m.is_empty()), "an unreadable file condemns nothing: {state}\n{}", ran.stderr);
}
