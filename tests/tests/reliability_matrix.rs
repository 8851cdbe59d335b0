//! RELIABILITY.md cannot drift from the tests: every row of its fault matrix, bad-input table
//! and security review names tests that exist (a test function, not ignored, in the file the
//! row names), and every test of the fault and bad-input suites has a row. `.ci/run` runs all
//! of them, so a landed RELIABILITY.md states results that CI reproduced. Each fault row names
//! the alert that fires for it (an alert rule of `sentinel alert-rules`), or `none:` and why.

use capacity_tests::paths::workspace;
use std::collections::BTreeSet;
use std::path::Path;

/// The headers of the three tables, exactly: the fault matrix, the bad-input table and the
/// security review.
const TABLES: [&str; 3] = [
    "| fault | expected behaviour | alert | test | result |",
    "| input | expected behaviour | test | result |",
    "| property | how it is enforced | test | result |",
];

/// Test files whose every test must appear in a row.
fn suites() -> Vec<String> {
    let mut files = vec!["host/tests/policy_faults_live.rs".to_string()];
    for entry in std::fs::read_dir(workspace().join("tests/tests")).expect("tests/tests").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if (name.starts_with("faults_") || name.starts_with("bad_input")) && name.ends_with(".rs") {
            files.push(format!("tests/tests/{name}"));
        }
    }
    files.sort();
    files
}

/// One row: its table's header, its text, and the tests it names as `(file, function)`.
type Row = (&'static str, String, Vec<(String, String)>);

/// Every row of both tables.
fn rows(text: &str) -> Vec<Row> {
    let mut out = Vec::new();
    let mut current: Option<&'static str> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = TABLES.iter().find(|h| **h == line) {
            current = Some(header);
            continue;
        }
        let Some(header) = current else { continue };
        if !line.starts_with('|') {
            current = None;
            continue;
        }
        if line.starts_with("|---") || line.starts_with("| ---") {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let width = header.matches(" | ").count() + 1;
        assert_eq!(cells.len(), width, "a row of `{header}` has {width} cells: {line}");
        if width == 5 {
            check_alert(cells[2], line);
        }
        let (test_cell, result_cell) = (cells[width - 2], cells[width - 1]);
        let tests = test_cell
            .split("<br>")
            .filter(|t| !t.trim().is_empty())
            .map(|t| {
                let t = t.trim().trim_matches('`');
                let (file, function) = t.rsplit_once("::").unwrap_or_else(|| panic!("`{t}` is not `path/file.rs::function` in: {line}"));
                (file.to_string(), function.to_string())
            })
            .collect();
        assert!(result_cell.starts_with("pass"), "every row states its result: {line}");
        out.push((header, line.to_string(), tests));
    }
    out
}

/// A fault row's alert cell: `none: why`, or alert names (in backquotes) that are rules.
fn check_alert(cell: &str, line: &str) {
    if cell.starts_with("none: ") {
        return;
    }
    let known: Vec<&str> = sentinel::alerts::rules::RULES.iter().map(|r| r.name).collect();
    let named: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
    assert!(!named.is_empty(), "a fault row names its alert in backquotes, or says `none: why`: {line}");
    for name in named {
        assert!(known.contains(&name), "`{name}` is not an alert rule (row: {line})");
    }
}

/// The test functions of a file: `fn name` right after a `#[test]`-like attribute, unless
/// `#[ignore]` is among its attributes; and the rules a `contract!(..)` list runs once per store
/// (`store_contract.rs`), named by the rule.
fn test_functions(file: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut found = BTreeSet::new();
    if text.contains("macro_rules! contract") {
        let rules = lines.iter().skip_while(|l| !l.starts_with("contract!(")).skip(1).take_while(|l| !l.starts_with(");"));
        found.extend(rules.map(|l| l.trim_end_matches(',').to_string()));
    }
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("fn ").or_else(|| line.strip_prefix("async fn ")) else { continue };
        let name = rest.split(['(', '<']).next().unwrap_or("").to_string();
        let attributes: Vec<&str> = lines[..i].iter().rev().take_while(|l| l.starts_with("#[") || l.starts_with("//")).copied().collect();
        let is_test = attributes.iter().any(|a| a.starts_with("#[test]") || a.starts_with("#[tokio::test"));
        if is_test && !attributes.iter().any(|a| a.starts_with("#[ignore")) {
            found.insert(name);
        }
    }
    found
}

#[test]
fn every_row_names_existing_tests_and_every_fault_and_bad_input_test_has_a_row() {
    let path = workspace().join("RELIABILITY.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows = rows(&text);
    for header in TABLES {
        assert!(rows.iter().any(|(h, _, _)| *h == header), "RELIABILITY.md has the table `{header}` with rows");
    }
    let mut named = BTreeSet::new();
    for (_, line, tests) in &rows {
        for (file, function) in tests {
            let functions = test_functions(&workspace().join(file));
            assert!(functions.contains(function), "RELIABILITY.md names `{file}::{function}`, which is no test there (row: {line})");
            named.insert((file.clone(), function.clone()));
        }
    }
    for file in suites() {
        for function in test_functions(&workspace().join(&file)) {
            assert!(named.contains(&(file.clone(), function.clone())), "`{file}::{function}` has no row in RELIABILITY.md");
        }
    }
}

#[test]
fn the_checker_sees_tests_and_ignores_helpers_and_ignored_tests() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("sample.rs");
    std::fs::write(
        &file,
        "#[test]\nfn counted() {}\n\nfn helper() {}\n\n#[tokio::test(flavor = \"multi_thread\")]\nasync fn counted_too() {}\n\n#[test]\n#[ignore]\nfn skipped() {}\n",
    )
    .expect("writing the sample");
    let found: Vec<String> = test_functions(&file).into_iter().collect();
    assert_eq!(found, ["counted", "counted_too"]);
    // A contract's rules count by name, each run once per store by the macro.
    let contract = dir.path().join("contract.rs");
    std::fs::write(&contract, "macro_rules! contract { () => {} }\ncontract!(\n    rule_one,\n    rule_two,\n);\nasync fn rule_one() {}\n")
        .expect("writing the contract sample");
    assert_eq!(test_functions(&contract).into_iter().collect::<Vec<_>>(), ["rule_one", "rule_two"]);
    let table = format!("{}\n|---|---|---|---|\n| a | b | `x.rs::f`<br>`y.rs::g` | pass: 2 |\n\nafter\n", TABLES[1]);
    let parsed = rows(&table);
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].2, [("x.rs".to_string(), "f".to_string()), ("y.rs".to_string(), "g".to_string())]);
    // A fault row names a real alert, or says none and why.
    let fault = format!("{}\n|---|---|---|---|---|\n| a | b | `SentinelNotPublishing` after 3 min | `x.rs::f` | pass |\n", TABLES[0]);
    assert_eq!(rows(&fault)[0].2, [("x.rs".to_string(), "f".to_string())]);
    rows(&fault.replace("`SentinelNotPublishing` after 3 min", "none: by design"));
    for bad in ["`SentinelNoSuchAlert`", "an alert without backquotes"] {
        let refused = std::panic::catch_unwind(|| rows(&fault.replace("`SentinelNotPublishing` after 3 min", bad)));
        assert!(refused.is_err(), "{bad} is refused");
    }
}
