//! The shipped alert rules (`deploy/prometheus/sentinel-alerts.yml`) are what `sentinel
//! alert-rules` writes, Prometheus's own `promtool` accepts them (at real time and scaled) and
//! their unit tests pass (`sentinel-alerts.test.yml`: each alert firing and not firing), and the
//! operator's documents name only alerts that exist: the README lists every one, and each alert
//! RELIABILITY.md names for a fault is a rule.

use capacity_tests::paths::workspace;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::binary;
use sentinel::alerts::rules::RULES;
use std::path::Path;
use std::process::Command;

fn promtool(args: &[&str], dir: &Path) -> String {
    let out = Command::new(binary("promtool", "apt-get install prometheus")).args(args).current_dir(dir).output().expect("promtool runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "promtool {args:?}:\n{text}");
    text
}

#[test]
fn the_shipped_rules_are_the_commands_output() {
    let dir = tempfile::tempdir().unwrap();
    let written = dir.path().join("rules.yml");
    let out = Command::new(sentinel()).args(["alert-rules", "--output"]).arg(&written).output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shipped = std::fs::read_to_string(workspace().join("deploy/prometheus/sentinel-alerts.yml")).unwrap();
    assert_eq!(
        shipped,
        std::fs::read_to_string(&written).unwrap(),
        "deploy/prometheus/sentinel-alerts.yml differs from `sentinel alert-rules`: regenerate it with \
         `sentinel alert-rules --output deploy/prometheus/sentinel-alerts.yml`"
    );
}

#[test]
fn promtool_accepts_the_rules_and_their_unit_tests_pass() {
    let deploy = workspace().join("deploy/prometheus");
    let checked = promtool(&["check", "rules", "sentinel-alerts.yml"], &deploy);
    assert!(checked.contains(&format!("SUCCESS: {} rules found", RULES.len())), "{checked}");
    let tested = promtool(&["test", "rules", "sentinel-alerts.test.yml"], &deploy);
    assert!(tested.contains("SUCCESS"), "{tested}");
    // Every alert is under test, firing and not.
    let tests = std::fs::read_to_string(deploy.join("sentinel-alerts.test.yml")).unwrap();
    for rule in RULES {
        assert!(tests.contains(&format!("alertname: {}", rule.name)), "{} has no promtool test", rule.name);
    }
}

#[test]
fn the_scaled_rules_are_valid_too() {
    let dir = tempfile::tempdir().unwrap();
    for scale in ["60", "600"] {
        let out = Command::new(sentinel())
            .args(["alert-rules", "--time-scale", scale, "--output", "rules.yml"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        promtool(&["check", "rules", "rules.yml"], dir.path());
    }
    let out = Command::new(sentinel()).args(["alert-rules", "--time-scale", "0.5"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--time-scale must be a number from 1 to 3600"));
}

/// `SentinelSomething` words in a document.
fn alert_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > "Sentinel".len() && w.starts_with("Sentinel") && w.as_bytes()["Sentinel".len()].is_ascii_uppercase())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_readme_lists_every_alert_and_the_documents_name_only_real_ones() {
    let known: Vec<&str> = RULES.iter().map(|r| r.name).collect();
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    for name in &known {
        assert!(readme.contains(&format!("`{name}`")), "README.md does not list {name}");
    }
    for doc in ["README.md", "RELIABILITY.md", "docs/behaviour.md", "deploy/README.md"] {
        let text = std::fs::read_to_string(workspace().join(doc)).unwrap();
        for name in alert_names(&text) {
            assert!(known.contains(&name.as_str()), "{doc} names {name}, which is not an alert rule");
        }
    }
    let reliability = std::fs::read_to_string(workspace().join("RELIABILITY.md")).unwrap();
    assert!(alert_names(&reliability).len() >= 8, "RELIABILITY.md names the alert of each fault row");
}
