//! `sentinel policy tune --shard I/N` and `--merge DIR` (docs/behaviour.md §10.8, "Shards"): the
//! candidates swept on several machines (here one after another), then merged, give the report,
//! the data, the figure and the written policy of a run on one machine, byte for byte, gate and
//! cross-validation by series included, on the repository's CloudWatch series. A merge refuses
//! a missing shard, a shard given twice, shards swept on other inputs, and a bad `I/N`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The space: eight candidates (two constrained boundaries, two bands, two recoveries).
const SPACE: &str = "[thresholds]\ncpu_pct.constrained = [70, 75]\ncpu_pct.resolve_band = [0, 5]\nrecover_readings = [5, 8]\n";

fn tune(dir: &Path, space: &str, extra: &[&str]) -> Output {
    let root = root();
    Command::new(env!("CARGO_BIN_EXE_sentinel"))
        .args(["policy", "tune", "--base"])
        .arg(root.join("policies/1.0.0"))
        .args(["--space", space, "--gate"])
        .arg(root.join("policies/gate-1.2.0.toml"))
        .arg("--gate-trace")
        .arg(root.join("tests/traces"))
        .args(extra)
        .arg(root.join("tests/data/cloudwatch"))
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn refused(out: Output) -> String {
    assert!(!out.status.success(), "expected a refusal: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every file under `dir`, relative path -> bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push((path.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn three_shards_merged_give_the_unsharded_runs_reports_and_policy_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("space.toml"), SPACE).unwrap();
    let whole = ok(tune(dir.path(), "space.toml", &["--out", "whole", "--write", "whole/policy/9.1.0", "--even-if-unchanged"]));
    for (part, out) in [("1/3", "shards-a"), ("2/3", "shards-b"), ("3/3", "shards-a")] {
        let said = ok(tune(dir.path(), "space.toml", &["--shard", part, "--out", out]));
        assert!(said.contains(&format!("shard {} of 3:", &part[..1])) && said.contains("merge every shard with --merge"), "{said}");
    }
    assert!(dir.path().join("shards-a/shard-1-of-3.json").is_file() && dir.path().join("shards-b/shard-2-of-3.json").is_file());
    assert!(!dir.path().join("shards-a/report.md").exists(), "a shard writes no report");
    let merged = ok(tune(
        dir.path(),
        "space.toml",
        &["--merge", "shards-a", "--merge", "shards-b", "--out", "merged", "--write", "merged/policy/9.1.0", "--even-if-unchanged"],
    ));
    let strip = |said: &str| said.replace("merged", "whole");
    assert_eq!(strip(&merged), whole, "the merge says what the whole run said");
    let (a, b) = (files(&dir.path().join("whole")), files(&dir.path().join("merged")));
    assert_eq!(a.iter().map(|(p, _)| p).collect::<Vec<_>>(), b.iter().map(|(p, _)| p).collect::<Vec<_>>());
    for ((path, left), (_, right)) in a.iter().zip(&b) {
        // The written policy's README and report name the output folder given on the command line.
        let (left, right) = (String::from_utf8_lossy(left), String::from_utf8_lossy(right));
        assert_eq!(left, strip(&right), "{} differs between the whole run and the merge", path.display());
    }
    assert!(a.iter().any(|(p, _)| p.ends_with("report.json")) && a.iter().any(|(p, _)| p.ends_with("policy.toml")));
}

#[test]
fn a_merge_refuses_a_missing_or_doubled_shard_and_shards_of_other_inputs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("space.toml"), SPACE).unwrap();
    ok(tune(dir.path(), "space.toml", &["--shard", "1/2", "--out", "one"]));
    let missing = refused(tune(dir.path(), "space.toml", &["--merge", "one", "--out", "merged"]));
    assert!(missing.contains("missing shard(s) 2/2: run them, or merge the folder that holds them"), "{missing}");
    let twice = refused(tune(dir.path(), "space.toml", &["--merge", "one", "--merge", "one", "--out", "merged"]));
    assert!(twice.contains("shard 1 of 2 is given twice"), "{twice}");
    std::fs::write(dir.path().join("other.toml"), "[thresholds]\ncpu_pct.constrained = [70, 80]\n").unwrap();
    ok(tune(dir.path(), "other.toml", &["--shard", "2/2", "--out", "two"]));
    let other = refused(tune(dir.path(), "space.toml", &["--merge", "one", "--merge", "two", "--out", "merged"]));
    assert!(other.contains("swept on other inputs than this merge's"), "{other}");
    assert!(!dir.path().join("merged").exists(), "a refused merge writes nothing");
    let empty = refused(tune(dir.path(), "space.toml", &["--merge", "merged-nothing", "--out", "merged"]));
    assert!(empty.contains("cannot read the folder"), "{empty}");
    for bad in ["0/2", "3/2", "2", "a/b"] {
        let said = refused(tune(dir.path(), "space.toml", &["--shard", bad, "--out", "x"]));
        assert!(said.contains("expected I/N, a shard I of N with 1 <= I <= N <= 10000"), "{bad}: {said}");
    }
    let write = refused(tune(dir.path(), "space.toml", &["--shard", "1/2", "--write", "p/1.0.1"]));
    assert!(write.contains("cannot be used with"), "{write}");
}
