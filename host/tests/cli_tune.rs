//! `sentinel policy tune` as a user runs it (docs/behaviour.md §10.8): on a series that flaps
//! under 1.0.0 (a 5-minute CPU sample at 74 % every 20 minutes, 66 % between: up and back down
//! within 15 minutes, twice a cycle), a resolve band is what stops the flapping; the report is the same byte for byte whatever the number of
//! workers; `--write` gives a policy folder that reads back; the gate, as a constraint, keeps a
//! candidate it fails from being chosen; a bad space or no evidence is refused before anything
//! is replayed, with a message naming the key; one server's history tuned forward in time, and a
//! choice of the base's own numbers writing nothing (exit 5).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `days` of 5-minute samples: 74 % then three of 66 %, over and over.
fn flapping_csv(dir: &Path, name: &str, days: u32) -> PathBuf {
    let path = dir.join(name);
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "timestamp,value").unwrap();
    for i in 0..days * 288 {
        let (day, minute) = (14 + i / 288, (i % 288) * 5);
        writeln!(f, "2014-05-{day:02} {:02}:{:02}:00,{}", minute / 60, minute % 60, if i % 4 == 0 { 74 } else { 66 }).unwrap();
    }
    path
}

fn tune(dir: &Path, args: &[&str]) -> Output {
    let base = root().join("policies/1.0.0");
    Command::new(env!("CARGO_BIN_EXE_sentinel"))
        .args(["policy", "tune", "--base", base.to_str().unwrap()])
        .args(args)
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const SPACE: &str =
    "[thresholds]\ncpu_pct.resolve_band = [0, 5]\nrecover_readings = [5, 6]\n\n[choose]\nmax_bulk_capacity_loss_pct = 100\n";

fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    flapping_csv(dir.path(), "train.csv", 3);
    flapping_csv(dir.path(), "check.csv", 2);
    std::fs::write(dir.path().join("space.toml"), SPACE).unwrap();
    dir
}

#[test]
fn the_band_stops_the_flapping_and_the_report_does_not_depend_on_the_workers() {
    let dir = setup();
    let run = |jobs: &str, out: &str| {
        tune(dir.path(), &["--space", "space.toml", "--holdout", "check.csv", "--jobs", jobs, "--out", out, "train.csv"])
    };
    let one = run("1", "one");
    assert!(one.status.success(), "{}", stderr(&one));
    let stdout = String::from_utf8_lossy(&one.stdout);
    assert!(stdout.contains("chosen: candidate 2, cpu_pct.resolve_band=5, recover_readings=5"), "{stdout}");
    assert!(stdout.contains("hold-out: flaps per day 143.70 -> 0.00"), "{stdout}");
    assert!(stderr(&one).contains("M candidate-ticks/s"), "the throughput is printed: {}", stderr(&one));
    let two = run("2", "two");
    assert!(two.status.success(), "{}", stderr(&two));
    for file in ["report.md", "report.json", "pareto.svg"] {
        let read = |d: &str| std::fs::read_to_string(dir.path().join(d).join(file)).unwrap();
        let strip = |text: String| text.lines().filter(|l| !l.contains("--jobs")).collect::<Vec<_>>().join("\n");
        assert_eq!(strip(read("one")), strip(read("two")), "{file} differs between 1 and 2 workers");
    }
    let md = std::fs::read_to_string(dir.path().join("one/report.md")).unwrap();
    for expected in [
        "| train | train | 3.0 |",
        "| check | hold-out | 2.0 |",
        "| `cpu_pct.resolve_band` | 0 | 0, 5 |",
        "4 candidates.",
        "(against the base: cpu_pct.resolve_band 0 -> 5)",
        "| flaps (a change undone within 15 min) | 431 | 0 | 287 | 0 |",
        "![Pareto front](pareto.svg)",
        "## Emergency-switch readiness",
    ] {
        assert!(md.contains(expected), "report.md lacks {expected:?}:\n{md}");
    }
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("one/report.json")).unwrap()).unwrap();
    assert_eq!(json["chosen"], 2);
    assert_eq!(json["candidates"].as_array().unwrap().len(), 4);
    assert_eq!(json["base_scores"]["holdout"]["flaps"], 287);
    let svg = std::fs::read_to_string(dir.path().join("one/pareto.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("chosen: cpu_pct.resolve_band 0 -&gt; 5"), "the chosen candidate is marked: {svg}");
}

#[test]
fn write_gives_a_policy_folder_that_reads_back_and_is_not_replaced_unasked() {
    let dir = setup();
    let args = ["--space", "space.toml", "--holdout", "check.csv", "--out", "out", "--write", "policies/1.4.0", "train.csv"];
    let out = tune(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("policies/1.4.0/policy.toml")).unwrap();
    let written: vocabulary::PolicyDescription = toml::from_str(&text).unwrap();
    written.check().unwrap();
    let base: vocabulary::PolicyDescription =
        toml::from_str(&std::fs::read_to_string(root().join("policies/1.0.0/policy.toml")).unwrap()).unwrap();
    let mut expected = base.thresholds;
    expected.cpu_pct.resolve_band = 5.0;
    assert_eq!((written.version.as_str(), written.thresholds), ("1.4.0", expected));
    let readme = std::fs::read_to_string(dir.path().join("policies/1.4.0/README.md")).unwrap();
    assert!(readme.contains("cpu_pct.resolve_band 0 -> 5"), "{readme}");
    assert!(readme.contains("sentinel policy tune --base"), "the README names the command: {readme}");
    assert!(readme.contains("| check | hold-out | 2.0 |"), "and the evidence: {readme}");
    let again = tune(dir.path(), &args);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("policy.toml: exists: choose another version, or give --replace"), "{}", stderr(&again));
    let bad =
        tune(dir.path(), &["--space", "space.toml", "--holdout", "check.csv", "--out", "o2", "--write", "policies/next", "train.csv"]);
    assert!(stderr(&bad).contains("--write: the policy's version: `next` is not MAJOR.MINOR.PATCH"), "{}", stderr(&bad));
    assert!(!dir.path().join("o2").exists(), "refused before the sweep");
}

#[test]
fn a_candidate_the_gate_fails_is_not_chosen() {
    let dir = setup();
    std::fs::write(dir.path().join("gate.toml"), "max_bulk_capacity_loss_pct = 5\n").unwrap();
    let out = tune(
        dir.path(),
        &[
            "--space",
            "space.toml",
            "--holdout",
            "check.csv",
            "--gate",
            "gate.toml",
            "--gate-trace",
            "check.csv",
            "--out",
            "out",
            "train.csv",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("cpu_pct.resolve_band=0"), "the band loses more than 5 % on the gate's trace: {stdout}");
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(md.contains("It fails 2 of the 4 candidates."), "{md}");
    assert!(md.contains("no: the gate fails it (1 finding(s), first check: bulk_capacity_minutes"), "{md}");
}

#[test]
fn a_bad_space_or_no_evidence_is_refused_before_the_sweep_naming_the_key() {
    let dir = setup();
    for (space, expected) in [
        ("[thresholds]\ncpu_pct.resolve_bnd = [1]\n", "thresholds.cpu_pct.resolve_bnd: not a threshold the tuner can vary"),
        ("[thresholds]\nrecover_readings = [4, 5]\n", "thresholds.recover_readings: 4 is below the invariant floor 5"),
    ] {
        std::fs::write(dir.path().join("bad.toml"), space).unwrap();
        let out = tune(dir.path(), &["--space", "bad.toml", "--out", "never", "train.csv"]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
        assert!(!dir.path().join("never").exists());
    }
    let none = tune(dir.path(), &["--space", "space.toml", "--out", "never"]);
    assert!(stderr(&none).contains("no traces: name trace files, CSV series or folders"), "{}", stderr(&none));
    let one = tune(dir.path(), &["--space", "space.toml", "--out", "never", "check.csv"]);
    assert!(stderr(&one).contains("nothing to tune on: holding out one series at a time needs at least two series"), "{}", stderr(&one));
    let one = tune(dir.path(), &["--space", "space.toml", "--split", "fraction", "--out", "never", "check.csv"]);
    assert!(stderr(&one).contains("nothing to tune on: no trace with ticks to validate on"), "{}", stderr(&one));
    let mixed = tune(dir.path(), &["--space", "space.toml", "--holdout-fraction", "0.5", "--out", "never", "check.csv", "train.csv"]);
    assert!(stderr(&mixed).contains("--holdout-fraction applies to --split fraction"), "{}", stderr(&mixed));
    assert!(!dir.path().join("never").exists());
}

/// Issue 35: by default each series (file) is held out whole in turn and judged by a choice made
/// on the others; a fraction of segments is still possible, with a warning that it measures fit.
#[test]
fn each_series_is_held_out_whole_by_default_and_a_segment_split_is_called_fit() {
    let dir = setup();
    // A third series that stays at 66 %: calm under every candidate.
    let calm = dir.path().join("calm.csv");
    let text = std::fs::read_to_string(dir.path().join("check.csv")).unwrap().replace(",74\n", ",66\n");
    std::fs::write(&calm, text).unwrap();
    let out = tune(dir.path(), &["--space", "space.toml", "--out", "cv", "train.csv", "check.csv", "calm.csv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("chosen: candidate 2, cpu_pct.resolve_band=5, recover_readings=5"), "{stdout}");
    assert!(stdout.contains("cross-validated (each of 3 series judged by a choice made without it): flaps per day"), "{stdout}");
    assert!(stdout.contains("series worse than the base 0"), "{stdout}");
    let md = std::fs::read_to_string(dir.path().join("cv/report.md")).unwrap();
    for expected in [
        "3 traces from 3 series",
        "## Cross-validation: each series held out",
        "| train | 3.0 | 2: cpu_pct.resolve_band=5, recover_readings=5 |",
        "| calm | 2.0 | 2: cpu_pct.resolve_band=5, recover_readings=5 | 0.00 | 0.00 | - |",
        "the worst series decides",
    ] {
        assert!(md.contains(expected), "report.md lacks {expected:?}:\n{md}");
    }
    assert!(!md.contains("measures fit"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("cv/report.json")).unwrap()).unwrap();
    assert_eq!(json["cross_validation"]["folds"].as_array().unwrap().len(), 3);
    assert_eq!(json["cross_validation"]["series_worse"], 0);

    let args =
        ["--space", "space.toml", "--split", "fraction", "--holdout-fraction", "0.5", "--segment-days", "1", "--out", "fit", "train.csv"];
    let fit = tune(dir.path(), &args);
    assert!(fit.status.success(), "{}", stderr(&fit));
    assert!(stderr(&fit).contains("warning: segments of train are both chosen on and held out"), "{}", stderr(&fit));
    let md = std::fs::read_to_string(dir.path().join("fit/report.md")).unwrap();
    assert!(md.contains("**Warning: this hold-out measures fit, not generalization.** Segments of 1 series (train)"), "{md}");
}

/// A space that switches flap damping: damping stops this flapping too, the figure draws the
/// front with and without it, and `--write` gives a `[thresholds.damping]` that reads back.
#[test]
fn damping_in_the_space_is_chosen_drawn_apart_written_and_built() {
    let dir = setup();
    let space = "[thresholds]\ndamping.enabled = [0, 1]\ndamping.suppressed_recover_readings = [0, 8]\n\n[choose]\nmax_bulk_capacity_loss_pct = 100\n";
    std::fs::write(dir.path().join("damping.toml"), space).unwrap();
    let out = tune(
        dir.path(),
        &["--space", "damping.toml", "--holdout", "check.csv", "--out", "out", "--write", "policies/1.5.0", "--build", "dist", "train.csv"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("chosen: candidate 1, damping.enabled=1"), "{stdout}");
    let md = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(md.contains("3 candidates."), "damping off counts once: {md}");
    let svg = std::fs::read_to_string(dir.path().join("out/pareto.svg")).unwrap();
    assert!(svg.contains("without flap damping (solid) and with it (violet, dashed)"), "{svg}");
    assert!(svg.to_uppercase().contains("#4527A0"), "the damped front is drawn");
    let text = std::fs::read_to_string(dir.path().join("policies/1.5.0/policy.toml")).unwrap();
    let written: vocabulary::PolicyDescription = toml::from_str(&text).unwrap();
    written.check().unwrap();
    assert!(text.contains("\n[thresholds.damping]\npenalty_per_flap = 1.0\n"), "{text}");
    assert_eq!(written.thresholds.damping, Some(vocabulary::FlapDamping::DEFAULT));
    // --build: its component too, as `policy build` writes it, carrying the written numbers.
    assert!(stdout.contains("built dist/capacity-policy-1.5.0.wasm"), "{stdout}");
    let manifest: vocabulary::PolicyManifest =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("dist/capacity-policy-1.5.0.manifest.json")).unwrap()).unwrap();
    assert_eq!((manifest.version.as_str(), manifest.thresholds), ("1.5.0", Some(written.thresholds)));
}

#[test]
fn one_servers_history_is_tuned_forward_and_a_choice_of_the_base_writes_nothing() {
    let dir = setup();
    flapping_csv(dir.path(), "history.csv", 6);
    // Holding out series needs two; the refusal names the forward split.
    let one = tune(dir.path(), &["--space", "space.toml", "--out", "o1", "history.csv"]);
    assert!(!one.status.success());
    assert!(stderr(&one).contains("for one server's own history use --split forward"), "{}", stderr(&one));
    // Forward: chosen on the first half, judged on the second, not called fit.
    let out =
        tune(dir.path(), &["--space", "space.toml", "--split", "forward", "--out", "fwd", "--write", "policies/1.1.0", "history.csv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("chosen: candidate") && stdout.contains("cpu_pct.resolve_band=5"), "{stdout}");
    assert!(!stderr(&out).contains("measures fit"), "a forward split is not fit: {}", stderr(&out));
    let report = std::fs::read_to_string(dir.path().join("fwd/report.md")).unwrap();
    assert!(report.contains("| history#earlier | train |") && report.contains("| history#later | hold-out |"), "{report}");
    assert!(dir.path().join("policies/1.1.0/policy.toml").is_file());
    // A space holding only the base's numbers: the choice is the base, and nothing is written.
    std::fs::write(dir.path().join("same.toml"), "[thresholds]\nrecover_readings = [5]\n\n[choose]\nmax_bulk_capacity_loss_pct = 100\n")
        .unwrap();
    let same =
        tune(dir.path(), &["--space", "same.toml", "--split", "forward", "--out", "same", "--write", "policies/1.2.0", "history.csv"]);
    let stdout = String::from_utf8_lossy(&same.stdout);
    assert_eq!(same.status.code(), Some(5), "{stdout}{}", stderr(&same));
    assert!(
        stdout.contains("(the base's numbers: no change)") && stdout.contains("nothing written: the choice is the base's numbers"),
        "{stdout}"
    );
    assert!(!dir.path().join("policies/1.2.0").exists(), "nothing written");
    let forced = tune(
        dir.path(),
        &["--space", "same.toml", "--split", "forward", "--out", "same", "--write", "policies/1.2.0", "--even-if-unchanged", "history.csv"],
    );
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert!(dir.path().join("policies/1.2.0/policy.toml").is_file());
}
