//! The fuzz targets' committed seeds (`fuzz/seeds/<target>/`) and any corpus earlier runs grew
//! (`fuzz/corpus/<target>/`, gitignored) replayed as ordinary tests, through the same checks as
//! `cargo fuzz` runs them (`fuzz/checks`, with the built components beside the native rules and
//! the config parser): every input a fuzzing run has reached stays checked by every change,
//! without the fuzzer's own build. `tests/fuzz.sh` then fuzzes, coverage-guided, the targets
//! that need no part of the sentinel.

use capacity_tests::paths::workspace;
use fuzz_checks::run::{TARGETS, replay};
use std::path::PathBuf;

/// Every file of `fuzz/<kind>/<target>/`, sorted (none when the folder does not exist).
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = workspace().join("fuzz").join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

fn replay_target(target: &str) {
    let seeds = inputs("seeds", target);
    assert!(!seeds.is_empty(), "fuzz/seeds/{target}/ holds no seed: the target's committed starting points are missing");
    let corpus = inputs("corpus", target);
    for file in seeds.iter().chain(&corpus) {
        let bytes = std::fs::read(file).unwrap();
        // A failing check panics naming the target, each problem and the input; say which file.
        let outcome = std::panic::catch_unwind(|| replay(target, &bytes));
        match outcome {
            Ok(result) => result.unwrap(),
            Err(panic) => {
                eprintln!("{target}: {} fails its checks", file.display());
                std::panic::resume_unwind(panic);
            }
        }
    }
    eprintln!("{target}: {} seeds and {} corpus entries pass", seeds.len(), corpus.len());
}

#[test]
fn every_target_is_replayed_here() {
    assert_eq!(TARGETS, ["decide", "admission", "planner", "trace_parser", "config_parser"], "a new target needs its test below");
    assert!(replay("no_such_target", b"").is_err());
}

#[test]
fn decide_seeds_pass_through_components_and_native_rules() {
    replay_target("decide");
}

#[test]
fn admission_seeds_pass_through_components_and_native_rules() {
    replay_target("admission");
}

#[test]
fn planner_seeds_pass_through_components_and_native_rules() {
    replay_target("planner");
}

#[test]
fn trace_parser_seeds_pass() {
    replay_target("trace_parser");
}

#[test]
fn config_parser_seeds_pass() {
    replay_target("config_parser");
}
