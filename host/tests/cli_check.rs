//! `sentinel check` validates the config and the policy and prints what would run, as JSON; a
//! config with an unknown key is refused, naming the key.

use crate::support;

use support::{Metrics, Sandbox, cpu, t};

#[test]
fn check_prints_the_policy_version_and_the_store() {
    let sb = Sandbox::new(Metrics::Trace(vec![cpu(t(0), 40.0), cpu(t(1), 40.0)]));
    let report = sb.sentinel(&["check"]).success().json();
    assert_eq!(report["policy"]["name"], "capacity-policy");
    assert_eq!(report["policy"]["version"], "1.0.0");
    assert_eq!(report["policy"]["digest"].as_str().unwrap().len(), 64, "a sha256: {report}");
    assert_eq!(report["policy"]["source"]["file"], support::policy().display().to_string().as_str());
    // Relative paths in the config are relative to its folder.
    assert_eq!(report["store"], format!("sqlite {}", sb.db.display()).as_str());
    assert_eq!(report["metrics_kind"], "trace");
    assert!(report["metrics"].as_str().unwrap().contains("(2 minutes)"), "{report}");
    assert_eq!(report["publish"]["cache"], format!("file {}", sb.cache.display()).as_str());
    assert_eq!(report["publish"]["parameter"], format!("file {}", sb.parameter.display()).as_str());
    assert_eq!(report["tick_deadline"], "20s");
    assert_eq!(report["throttles_enabled"], false);
    assert!(!sb.cache.exists() && !sb.parameter.exists(), "check publishes nothing");
}

#[test]
fn check_refuses_an_unknown_key_naming_it() {
    let sb = Sandbox::new(Metrics::Synthetic);
    let good = std::fs::read_to_string(&sb.config).unwrap();
    for (typo, key) in
        [("tick_dedline = \"20s\"\n", "tick_dedline"), ("[store]\nkind = \"sqlite\"\npath = \"x.db\"\npth = \"y.db\"\n", "pth")]
    {
        // A top-level key goes before the first table; the store table replaces the good one.
        let text = if key == "pth" {
            good.replace("[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n", typo)
        } else {
            format!("{typo}{good}")
        };
        assert_ne!(text, good);
        std::fs::write(&sb.config, &text).unwrap();
        let ran = sb.sentinel(&["check"]);
        assert_ne!(ran.code(), Some(0), "{ran:?}");
        assert!(ran.stderr.contains(key), "names {key}: {}", ran.stderr);
        assert!(ran.stderr.contains("unknown field"), "{}", ran.stderr);
        assert!(ran.stdout.is_empty(), "no report for a refused config: {}", ran.stdout);
    }
}

#[test]
fn a_missing_file_is_named_with_its_cause_once_and_the_controller_in_the_config_s_words() {
    let sb = Sandbox::new(Metrics::Synthetic);
    let report = sb.sentinel(&["check"]).success().json();
    assert_eq!(report["stage_controller"], "log", "the config's own word, not a Rust name: {report}");
    std::fs::remove_file(&sb.config).unwrap();
    let ran = sb.sentinel(&["check"]);
    assert_eq!(ran.code(), Some(2), "{ran:?}");
    assert!(ran.stderr.contains(&sb.config.display().to_string()), "names the file: {}", ran.stderr);
    assert_eq!(ran.stderr.matches("No such file or directory").count(), 1, "the cause said once: {}", ran.stderr);
    let replay = std::process::Command::new(env!("CARGO_BIN_EXE_sentinel"))
        .args(["replay", "--policy", "gone.wasm", "gone.jsonl"])
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&replay.stderr);
    assert_eq!(replay.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("gone.wasm"), "{stderr}");
    assert_eq!(stderr.matches("No such file or directory").count(), 1, "the cause said once: {stderr}");
}
