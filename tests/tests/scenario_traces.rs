//! The hand-designed scenario traces of `tests/traces/` (described in its README.md): each runs
//! through the native modules (policies/1.0.0) and the built 1.0.0 component, and both must
//! print exactly the committed `<name>.expected.jsonl`. `BLESS=1` rewrites the expected files
//! from the native modules (the component must still agree with them).

use capacity_tests::golden::write_golden;
use capacity_tests::paths::{crate_dir, files_ending};
use capacity_tests::policies::{component_hint, replay_both};
use capacity_tests::{bless, first_difference, native, shared_component};
use sentinel_core::replay::compare::Accumulator;
use sentinel_core::trace::{Trace, read_trace};
use std::path::{Path, PathBuf};

const VERSION: &str = "1.0.0";

fn traces_dir() -> PathBuf {
    crate_dir().join("traces")
}

/// Every scenario trace (`*.jsonl` that is not an expected output), sorted.
fn scenario_files() -> Vec<PathBuf> {
    let files: Vec<PathBuf> =
        files_ending(&traces_dir(), ".jsonl").into_iter().filter(|p| !p.to_string_lossy().ends_with(".expected.jsonl")).collect();
    assert!(files.len() >= 11, "expected the scenario traces in {}, found {files:?}", traces_dir().display());
    files
}

fn expected_path(trace: &Path) -> PathBuf {
    trace.with_extension("expected.jsonl")
}

fn load(path: &Path) -> Trace {
    read_trace(path).unwrap_or_else(|e| panic!("scenario trace does not parse: {e}"))
}

#[test]
fn native_and_component_print_the_expected_lines_for_every_scenario() {
    let mut native = native(VERSION);
    let mut component = shared_component(VERSION);
    let mut failures = Vec::new();
    for path in scenario_files() {
        let trace = load(&path);
        let (native_lines, native_decisions) = replay_both(&trace, &mut native, false);
        let (component_lines, component_decisions) = replay_both(&trace, &mut component, false);
        let expected_file = expected_path(&path);
        if bless() {
            write_golden(&expected_file, &(native_lines.join("\n") + "\n"));
        }
        let expected: Vec<String> = std::fs::read_to_string(&expected_file)
            .unwrap_or_else(|e| panic!("{}: {e} (run with BLESS=1 to create it)", expected_file.display()))
            .lines()
            .map(str::to_string)
            .collect();
        if let Some(diff) = first_difference(&expected, &native_lines) {
            failures.push(format!("{} through the native modules: {diff}", trace.name));
        }
        if let Some(diff) = first_difference(&expected, &component_lines) {
            failures.push(format!("{} through the component: {diff}{}", trace.name, component_hint(VERSION)));
        }
        // Beyond the printed line: the whole outcome is the same too.
        if let Some(i) = (0..native_decisions.len()).find(|&i| native_decisions.get(i) != component_decisions.get(i)) {
            failures.push(format!(
                "{} tick {}: the component's outcome differs from the native one:\n  native:    {:?}\n  component: {:?}",
                trace.name,
                i + 1,
                native_decisions.get(i),
                component_decisions.get(i)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn no_scenario_breaks_an_invariant() {
    let mut policy = native(VERSION);
    let thresholds = policy.describe().expect("native describe").thresholds;
    for path in scenario_files() {
        let trace = load(&path);
        let mut acc = Accumulator::new(VERSION, &trace.name, &thresholds);
        sentinel_core::replay::run(&trace, std::slice::from_mut(&mut policy), false, &mut |_, tick| acc.add(&tick))
            .unwrap_or_else(|e| panic!("{e}"));
        let summary = acc.finish();
        assert!(summary.violations.is_empty(), "{}: {:?}", trace.name, summary.violations);
    }
}

#[test]
fn every_scenario_is_described_and_has_an_expected_output() {
    let readme = std::fs::read_to_string(traces_dir().join("README.md")).expect("tests/traces/README.md exists");
    for path in scenario_files() {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(readme.contains(&format!("`{file}`")), "tests/traces/README.md does not describe `{file}`");
        assert!(expected_path(&path).is_file() || bless(), "{file} has no expected output: run with BLESS=1");
    }
    for expected in files_ending(&traces_dir(), ".expected.jsonl") {
        let name = expected.file_name().unwrap().to_string_lossy().replace(".expected.jsonl", ".jsonl");
        assert!(traces_dir().join(&name).is_file(), "{} has no trace {name}", expected.display());
    }
}
