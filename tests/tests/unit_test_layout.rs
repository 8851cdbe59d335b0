//! One layout for unit tests: a module's tests are its child module `tests`, inline at the end of
//! the file or in the file Rust gives that child (`x/tests.rs` beside `x.rs` or inside `x/`, or a
//! folder `x/tests/` when they are several files). No `#[path]` redirects a test module and no
//! sibling `*_tests.rs` module stands beside the module it tests (README, "Layout").

use capacity_tests::paths::workspace;
use std::path::{Path, PathBuf};

/// The Rust files under `dir`, build output left out.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "target" && entry.file_name() != "node_modules" {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What breaks the layout in one file: its name, or a `#[path]` that is not the guest's build
/// script reading the policy data region it writes.
fn breaks(path: &Path, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    if path.file_name().is_some_and(|n| n.to_string_lossy().ends_with("_tests.rs")) {
        found.push("a sibling *_tests.rs module: move it to the tested module's `tests` child".to_string());
    }
    for line in text.lines().map(str::trim).filter(|l| l.starts_with("#[path")) {
        if !(path.ends_with("guest/build.rs") && line.contains("src/policy_data.rs")) {
            found.push(format!("`{line}`: let the module sit where Rust looks for it"));
        }
    }
    found
}

#[test]
fn every_unit_test_module_is_its_modules_tests_child_where_rust_looks_for_it() {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ["crates", "host", "guest", "vocabulary", "policies/src", "fuzz/checks", "tests/src", "tests/tests", "bench"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 300, "the sources were found: {}", files.len());
    let found: Vec<String> = files
        .iter()
        .flat_map(|f| {
            let shown = f.strip_prefix(&root).unwrap().display().to_string();
            breaks(f, &std::fs::read_to_string(f).unwrap()).into_iter().map(move |b| format!("{shown}: {b}"))
        })
        .collect();
    assert!(found.is_empty(), "unit tests outside the one layout:\n  {}", found.join("\n  "));
}

#[test]
fn the_checker_sees_a_sibling_test_file_and_a_redirected_module() {
    assert_eq!(breaks(Path::new("src/parse_tests.rs"), "").len(), 1);
    assert_eq!(breaks(Path::new("src/parse.rs"), "#[cfg(test)]\n#[path = \"parse_tests.rs\"]\nmod tests;\n").len(), 1);
    assert!(breaks(Path::new("src/parse.rs"), "#[cfg(test)]\nmod tests;\n").is_empty());
    assert!(breaks(Path::new("guest/build.rs"), "#[path = \"src/policy_data.rs\"]\nmod policy_data;\n").is_empty());
}
