//! The policy directory from the command line: a hot swap while `sentinel run --speed` is
//! ticking, and keygen / sign / verify / list / activate / rollback / export-trace.

use crate::support;

use std::path::{Path, PathBuf};
use std::time::Duration;
use support::{Metrics, Sandbox, eventually};

fn built(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/policies").join(format!("{name}.wasm"))
}

fn install(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let wasm = built(name);
    let manifest = wasm.with_extension("manifest.json");
    // The manifest first, the component last (as a deployment would), each by rename.
    for from in [&wasm, &manifest] {
        let tmp = dir.join(format!(".{}.tmp", from.file_name().unwrap().to_string_lossy()));
        std::fs::copy(from, &tmp).unwrap();
        std::fs::rename(&tmp, dir.join(from.file_name().unwrap())).unwrap();
    }
}

fn with_policies(sb: &Sandbox, table: &str) {
    sb.edit_config(|text| format!("{}[policies]\ndir = \"policies\"\npoll = \"100ms\"\n{table}", support::without_policy_file(&text)));
}

#[test]
fn a_hot_swap_while_running_changes_the_version_on_the_next_tick_with_no_missed_or_duplicate_tick() {
    let sb = Sandbox::new(Metrics::Synthetic);
    install(&sb.path("policies"), "capacity-policy-1.0.0");
    with_policies(&sb, "allow_unsigned = true\nactive = \"latest\"\n");
    let mut run = sb.spawn(&["run", "--speed", "600", "--ticks", "60"], "run");
    assert!(eventually(Duration::from_secs(20), || sb.cache.exists() && sb.ticks().len() >= 10), "{}", run.stderr());
    install(&sb.path("policies"), "capacity-policy-2.0.0");
    assert!(run.wait_for_exit(Duration::from_secs(30)).is_some_and(|s| s.success()), "{}", run.stderr());

    let ticks = sb.ticks();
    assert_eq!(ticks.iter().map(|(s, _)| *s).collect::<Vec<_>>(), (1..=60).collect::<Vec<u64>>(), "one record per tick");
    let ats: Vec<i64> = ticks.iter().map(|(_, r)| r["at"].as_i64().unwrap()).collect();
    assert!(ats.windows(2).all(|w| w[1] - w[0] == 60), "no minute missed or run twice: {ats:?}");
    let versions: Vec<&str> = ticks.iter().map(|(_, r)| r["policy"]["version"].as_str().unwrap()).collect();
    let switch = versions.iter().position(|v| *v == "2.0.0").expect("2.0.0 became active");
    assert!(
        switch >= 10 && versions[..switch].iter().all(|v| *v == "1.0.0") && versions[switch..].iter().all(|v| *v == "2.0.0"),
        "{versions:?}"
    );
    let stderr = run.stderr();
    let line = stderr.lines().find(|l| l.contains("policy swapped in")).expect("the swap is logged");
    eprintln!("{line}");
    assert!(std::fs::read_to_string(sb.path("sentinel-state/policy-state.json")).unwrap().contains("\"active\": \"2.0.0\""));
}

#[test]
fn signed_versions_are_verified_listed_activated_and_rolled_back_and_a_tampered_one_is_refused() {
    let sb = signed_sandbox("active = \"1.0.0\"\n");
    let dir = sb.path("policies");

    let verify = sb.sentinel(&["policy", "verify"]).success();
    assert_eq!(verify.stdout.matches("signature valid").count(), 2, "{}", verify.stdout);
    sb.tick_ok(support::t(0));
    let list = sb.sentinel(&["policy", "list", "--json"]).success().json();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r["signature"] == "valid" && r["integrity"] == "ok" && r["health"] == "healthy"), "{list}");
    assert_eq!(rows.iter().filter(|r| r["active"] == true).count(), 1);

    let activated = sb.sentinel(&["policy", "activate", "2.0.0"]).success();
    assert!(activated.stdout.contains("activated 2.0.0"), "{}", activated.stdout);
    sb.tick_ok(support::t(1));
    assert_eq!(sb.ticks().last().unwrap().1["policy"]["version"], "2.0.0", "the persisted choice is used by the next start");
    let back = sb.sentinel(&["policy", "rollback"]).success();
    assert!(back.stdout.contains("rolled back to 1.0.0"), "{}", back.stdout);

    // Tamper with 2.0.0's bytes: refused, naming the file and the digest.
    let file = dir.join("capacity-policy-2.0.0.wasm");
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len() / 2;
    bytes[n] ^= 1;
    std::fs::write(&file, bytes).unwrap();
    let verify = sb.sentinel(&["policy", "verify"]).expect_code(4);
    assert!(verify.stdout.contains(&format!("policy file {} does not match its manifest", file.display())), "{}", verify.stdout);
    let refused = sb.sentinel(&["policy", "activate", "2.0.0"]).expect_code(4);
    assert!(refused.stderr.contains("sha256 is"), "{}", refused.stderr);

    let trace = sb.sentinel(&["policy", "export-trace", "--since", "24h"]).success();
    assert_eq!(trace.stdout.lines().count(), 2, "{}", trace.stdout);
}

/// Signs 1.0.0 and 2.0.0 into `policies/` with a key of the sandbox's own and configures
/// `[policies]` with `table` (the single `policy` file removed).
fn signed_sandbox(table: &str) -> Sandbox {
    let sb = Sandbox::new(Metrics::Synthetic);
    let dir = sb.path("policies");
    install(&dir, "capacity-policy-1.0.0");
    install(&dir, "capacity-policy-2.0.0");
    let bin = env!("CARGO_BIN_EXE_sentinel");
    let cli = |args: &[&str]| std::process::Command::new(bin).args(args).current_dir(sb.dir.path()).output().unwrap();
    assert!(cli(&["policy", "keygen", "--out", sb.path("policy").to_str().unwrap()]).status.success());
    let signed = cli(&["policy", "sign", "--key", sb.path("policy.key").to_str().unwrap(), dir.to_str().unwrap()]);
    assert!(signed.status.success(), "{}", String::from_utf8_lossy(&signed.stderr));
    with_policies(&sb, &format!("public_key = \"policy.pub\"\n{table}"));
    sb
}

/// `serve`, `pin` and `check` validate with the version `run` decides with (the persisted
/// active version, verified), never with an unsigned single file: an earlier release loaded
/// the `policy` file for them whatever `[policies]` said.
#[test]
fn check_and_pin_run_the_verified_active_version_and_refuse_when_no_version_verifies() {
    let sb = signed_sandbox("active = \"1.0.0\"\n");
    sb.sentinel(&["policy", "activate", "2.0.0"]).success();
    let report = sb.sentinel(&["check"]).success().json();
    assert_eq!(report["policy"]["version"], "2.0.0", "{report}");
    assert_eq!(report["policy"]["source"]["dir"], sb.path("policies").display().to_string().as_str(), "{report}");
    let pinned = sb.sentinel(&["pin", "set", "--state", "critical", "--reason", "drill", "--expires-in", "1h", "--actor", "ops"]).success();
    assert!(pinned.stdout.to_lowercase().contains("critical"), "{}", pinned.stdout);

    // Without valid signatures no version verifies: pin and check refuse, nothing is stored.
    for sig in std::fs::read_dir(sb.path("policies")).unwrap().filter_map(Result::ok).map(|e| e.path()) {
        if sig.extension().is_some_and(|e| e == "sig") {
            std::fs::remove_file(sig).unwrap();
        }
    }
    let before = sb.sentinel(&["pin", "audit"]);
    let refused = sb.sentinel(&["pin", "set", "--state", "normal", "--reason", "x", "--expires-in", "1h", "--actor", "ops"]);
    assert_ne!(refused.code(), Some(0), "a pin was validated by an unverified policy: {}", refused.stdout);
    assert!(refused.stderr.contains("passed its checks") && refused.stderr.contains("not signed"), "{}", refused.stderr);
    let check = sb.sentinel(&["check"]);
    assert_ne!(check.code(), Some(0), "{}", check.stdout);
    assert_eq!(before.stdout, sb.sentinel(&["pin", "audit"]).stdout, "nothing was stored");
}

/// The persisted state lives in the private state directory: a state file written into the
/// policy directory (where an earlier release kept it, and where whoever drops versions can
/// write) cannot bring an older version back, and `minimum_version` refuses older versions
/// whatever any state says.
#[test]
fn a_state_file_in_the_policy_directory_is_ignored_and_minimum_version_refuses_older_versions() {
    let sb = signed_sandbox("active = \"1.0.0\"\n");
    sb.tick_ok(support::t(0));
    sb.sentinel(&["policy", "activate", "2.0.0"]).success();
    std::fs::write(sb.path("policies/sentinel-policy-state.json"), r#"{"active":"1.0.0","unhealthy":{"2.0.0":"x"}}"#).unwrap();
    let ticked = sb.tick_ok(support::t(1));
    assert_eq!(sb.ticks().last().unwrap().1["policy"]["version"], "2.0.0", "the planted state was obeyed");
    assert!(ticked.stderr.contains("sentinel-policy-state.json is ignored"), "{}", ticked.stderr);
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &str| std::fs::metadata(sb.path(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode("sentinel-state"), mode("sentinel-state/policy-state.json")), (0o700, 0o600));

    sb.edit_config(|text| format!("{text}minimum_version = \"2.0.0\"\n"));
    let back = sb.sentinel(&["policy", "rollback"]).expect_code(4);
    assert!(back.stderr.contains("policy 1.0.0 refused") && back.stderr.contains("minimum_version = 2.0.0"), "{}", back.stderr);
    let activate = sb.sentinel(&["policy", "activate", "1.0.0"]).expect_code(4);
    assert!(activate.stderr.contains("minimum_version = 2.0.0"), "{}", activate.stderr);
    // Even a private state naming 1.0.0 (written before the minimum was raised) runs 2.0.0.
    let state = sb.path("sentinel-state/policy-state.json");
    let text = std::fs::read_to_string(&state).unwrap().replace("\"active\": \"2.0.0\"", "\"active\": \"1.0.0\"");
    std::fs::write(&state, text).unwrap();
    let ticked = sb.tick_ok(support::t(2));
    assert_eq!(sb.ticks().last().unwrap().1["policy"]["version"], "2.0.0");
    assert!(ticked.stderr.contains("policy 1.0.0 refused"), "{}", ticked.stderr);
}

/// `policy keygen --out keys/policy` in a folder without `keys/` (the README's own command)
/// makes the folder; before, it failed with a bare "No such file or directory (os error 2)".
/// A key pair that exists already is never overwritten, and the error names it.
#[test]
fn keygen_makes_the_keys_folder_and_never_overwrites_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_sentinel");
    let keygen =
        || std::process::Command::new(bin).args(["policy", "keygen", "--out", "keys/policy"]).current_dir(dir.path()).output().unwrap();
    let made = keygen();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let secret = std::fs::read_to_string(dir.path().join("keys/policy.key")).unwrap();
    assert!(dir.path().join("keys/policy.pub").is_file());
    let again = keygen();
    assert_eq!(again.status.code(), Some(2));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("writing the key pair keys/policy.key and keys/policy.pub") && err.contains("exists; not overwriting"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.path().join("keys/policy.key")).unwrap(), secret, "the key is kept");
}
