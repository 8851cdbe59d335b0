//! The gate's costs in what an operator pays (docs/behaviour.md §10.5): bulk capacity as a share
//! of a day, and on short scenarios minutes protected on calm readings per incident; the old
//! share-of-a-trace key refused naming the new ones; each new limit failing on a candidate built
//! to break it; the candidates the gate must still refuse (2.0.0's later protection, a
//! candidate that never protects on a short critical streak) refused; and the burst family
//! (tests/bursts/) being what its generator writes.

use capacity_tests::paths::crate_dir;
use capacity_tests::sentinel_bin::run;
use capacity_tests::workspace;
use sentinel_core::replay::gate::Gate;
use std::path::Path;

fn scenario(name: &str) -> String {
    crate_dir().join("traces").join(format!("{name}.jsonl")).display().to_string()
}

/// The burst family's traces (tests/bursts/README.md).
const FAMILY: [&str; 7] = [
    "bursts_hourly",
    "bursts_two_hourly",
    "bursts_shouldered",
    "bursts_busy_base",
    "bursts_clustered",
    "bursts_sampled",
    "bursts_sampled_hot",
];

fn burst(name: &str) -> String {
    crate_dir().join("bursts").join(format!("{name}.jsonl")).display().to_string()
}

/// A candidate folder: policies/`from`'s policy.toml with each `(old, new)` replaced once.
fn candidate(dir: &Path, name: &str, from: &str, edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(workspace().join("policies").join(from).join("policy.toml")).unwrap();
    for (old, new) in edits {
        assert!(text.contains(old), "policies/{from}/policy.toml has no {old:?}");
        text = text.replacen(old, new, 1);
    }
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("policy.toml"), text).unwrap();
    folder.display().to_string()
}

fn gate_with(dir: &Path, text: &str) -> String {
    let path = dir.join("gate.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `sentinel replay --gate` of `candidate` against `baseline` on `traces`: (exit code, stderr).
fn gate(baseline: &str, candidate: &str, gate: &str, traces: &[String]) -> (Option<i32>, String) {
    let mut args = vec!["replay".to_string(), "--baseline".into(), baseline.into(), "--candidate".into(), candidate.into()];
    args.extend(["--gate".to_string(), gate.to_string()]);
    args.extend(traces.iter().cloned());
    let out = run(&args);
    (out.code, out.stderr)
}

#[test]
fn the_old_share_of_a_trace_key_judges_as_before_with_a_warning_naming_the_new_keys() {
    let old = Gate::parse("old.toml", "max_bulk_capacity_loss_pct = 5\n").expect("a gate file of the old keys still reads");
    let warnings = old.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("max_bulk_capacity_loss_pct_of_day") && warnings[0].contains("max_calm_protection_minutes_per_incident"),
        "{warnings:?}"
    );
    let err = Gate::parse("g.toml", "max_calm_protection_minutes_per_incident = -1\n").unwrap_err().to_string();
    assert!(err.contains("max_calm_protection_minutes_per_incident: must be a number >= 0"), "{err}");
    let project = Gate::load(&workspace().join("policies/gate.toml")).expect("the project's gate file is valid");
    assert!(project.warnings().is_empty(), "the project's gate uses the new keys");
    assert_eq!(
        (project.max_bulk_capacity_loss_pct_of_day, project.max_calm_protection_minutes_per_incident, project.max_flaps_per_day_increase),
        (Some(1.0), Some(10.0), Some(1.0))
    );
    assert_eq!(project.flap_safety_traces, vec!["bursts_*".to_string()]);
    // Through the CLI: the old key still refuses what it refused (a 51-minute scenario's bulk
    // capacity as a share of the trace), and the log says what to write instead.
    let dir = tempfile::tempdir().unwrap();
    let held = candidate(dir.path(), "held", "1.0.0", &[("recover_readings = 5", "recover_readings = 7")]);
    let old = gate_with(dir.path(), "max_bulk_capacity_loss_pct = 1\n");
    let out = std::process::Command::new(capacity_tests::sentinel_bin::sentinel())
        .current_dir(workspace())
        .env("RUST_LOG", "warn")
        .args(["replay", "--baseline", "policies/1.0.0", "--candidate", &held, "--gate", &old, &scenario("incident")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("[max_bulk_capacity_loss_pct]") && stderr.contains("use max_bulk_capacity_loss_pct_of_day"), "{stderr}");
}

#[test]
fn capacity_is_judged_as_a_share_of_a_day_and_fails_a_candidate_that_withholds_more() {
    let dir = tempfile::tempdir().unwrap();
    // Constrained from 30 % CPU: the burst family's days (background 23-47 %) are half
    // constrained, bulk 0.5 for hours of each day.
    let early = candidate(dir.path(), "early", "1.0.0", &[("cpu_pct = { constrained = 70.0", "cpu_pct = { constrained = 30.0")]);
    let limit = gate_with(dir.path(), "max_bulk_capacity_loss_pct_of_day = 1\n");
    let (code, stderr) = gate("policies/1.0.0", &early, &limit, &[burst("bursts_hourly")]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("bursts_hourly: bulk_minutes_withheld_per_day ("), "{stderr}");
    assert!(stderr.contains("% of a day), limit 1 % [max_bulk_capacity_loss_pct_of_day]"), "{stderr}");
    // On a 51-minute scenario the same rule counts the trace as a day: the few minutes a
    // candidate holds protection longer are a small share of it, not 17 % of the trace.
    let held = candidate(dir.path(), "held", "1.0.0", &[("recover_readings = 5", "recover_readings = 7")]);
    let (code, stderr) = gate("policies/1.0.0", &held, &limit, &[scenario("incident")]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// A short scenario: 10 calm minutes, a 10-minute burst at 90 % CPU, then an hour calm (80
/// minutes, one incident).
fn burst_then_calm(dir: &Path) -> String {
    let cpus = std::iter::repeat_n(40.0, 10).chain(std::iter::repeat_n(90.0, 10)).chain(std::iter::repeat_n(40.0, 60));
    let text: String = cpus
        .enumerate()
        .map(|(m, cpu)| {
            format!("{{\"at\":\"2026-10-20T14:{:02}:00Z\",\"reading\":{{\"cpu_pct\":{cpu}}}}}\n", m % 60)
                .replace("T14:", &format!("T{}:", 14 + m / 60))
        })
        .collect();
    let path = dir.join("burst_then_calm.jsonl");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn calm_minutes_per_incident_fail_a_candidate_that_holds_protection_long_after_the_calm() {
    let dir = tempfile::tempdir().unwrap();
    let trace = burst_then_calm(dir.path());
    // 30 calm readings before each step down: protected through most of the calm hour, which
    // 1.0.0 leaves within a quarter of an hour.
    let sticky = candidate(dir.path(), "sticky", "1.0.0", &[("recover_readings = 5", "recover_readings = 30")]);
    let limit = gate_with(dir.path(), "max_calm_protection_minutes_per_incident = 10\n");
    let (code, stderr) = gate("policies/1.0.0", &sticky, &limit, std::slice::from_ref(&trace));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("burst_then_calm: over_protection_minutes ("), "{stderr}");
    assert!(
        stderr.contains("min more per incident on readings the baseline assessed calm") && stderr.contains("1 incident(s)"),
        "{stderr}"
    );
    assert!(stderr.contains("[max_calm_protection_minutes_per_incident]"), "{stderr}");
    // Two more calm readings per step are within the limit.
    let held = candidate(dir.path(), "held", "1.0.0", &[("recover_readings = 5", "recover_readings = 7")]);
    let (code, stderr) = gate("policies/1.0.0", &held, &limit, std::slice::from_ref(&trace));
    assert_eq!(code, Some(0), "{stderr}");
    // A trace of a day or more is judged by its share of the day, not by this rule.
    let (code, stderr) = gate("policies/1.0.0", &sticky, &limit, &[burst("bursts_hourly")]);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn the_project_gate_refuses_what_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let project = "policies/gate.toml";
    // A candidate that needs five critical readings never protects on the short critical
    // streaks of the ticks and signal_loss scenarios.
    let slow = candidate(
        dir.path(),
        "slow",
        "1.2.0",
        &[("escalate_readings = 3", "escalate_readings = 5"), ("version = \"1.2.0\"", "version = \"9.0.0\"")],
    );
    let (code, stderr) = gate("policies/1.2.0", &slow, project, &[scenario("ticks"), scenario("signal_loss")]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("ticks: minutes_to_protect") && stderr.contains("signal_loss: minutes_to_protect"), "{stderr}");
    // 2.0.0 protects later in absolute time where 1.0.0 reaches critical (its waivers cover the
    // scenarios it was designed for, not the burst family).
    let (code, stderr) = gate("policies/1.0.0", "policies/2.0.0", project, &[burst("bursts_hourly")]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("bursts_hourly: minutes_to_protect"), "{stderr}");
}

#[test]
fn a_candidate_that_flaps_more_on_the_burst_family_fails_the_project_gate() {
    // 1.0.0 judged against 1.3.0 on the bursts: it flaps more, which the project's gate refuses
    // there (flap_safety_traces), however little.
    let traces: Vec<String> = FAMILY.iter().map(|n| burst(n)).collect();
    let (code, stderr) = gate("policies/1.3.0", "policies/1.0.0", "policies/gate.toml", &traces);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("bursts_sampled_hot: flaps_per_day (flaps per day): +4.50") && stderr.contains("[flap_safety_traces]"),
        "{stderr}"
    );
    assert!(!stderr.contains("bulk_minutes_withheld_per_day"), "costs are not judged on the burst family: {stderr}");
    let err = Gate::parse("g.toml", "flap_safety_traces = [\"*\"]\n").unwrap_err().to_string();
    assert!(err.contains("flap_safety_traces[0]: \"*\" is not a trace name or a prefix"), "{err}");
}

#[test]
fn the_burst_family_is_what_its_generator_writes() {
    let dir = tempfile::tempdir().unwrap();
    let script = crate_dir().join("bursts/gen_bursts.py");
    let copy = dir.path().join("gen_bursts.py");
    std::fs::copy(&script, &copy).unwrap();
    let status = std::process::Command::new("python3").arg(&copy).status().expect("python3 runs");
    assert!(status.success());
    for name in FAMILY {
        let written = std::fs::read(dir.path().join(format!("{name}.jsonl"))).unwrap();
        let committed = std::fs::read(crate_dir().join("bursts").join(format!("{name}.jsonl"))).unwrap();
        assert!(written == committed, "tests/bursts/{name}.jsonl is not what gen_bursts.py writes: run it and commit the result");
        assert_eq!(written.iter().filter(|b| **b == b'\n').count(), 2 * 1440, "{name}: two days, one reading a minute");
    }
}
