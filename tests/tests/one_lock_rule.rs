//! One rule for the sentinel's locks (`crates/core/src/sync.rs`): every `std::sync::Mutex` of
//! the sentinel's crates is a `sentinel_core::sync::Lock`, which takes a poisoned lock, says so
//! once and clears it. Read from the source, outside tests: no file makes a mutex of its own or
//! decides about poisoning (`PoisonError`, `.lock().expect(..)`, `.lock().unwrap_or_else(..)`).

use capacity_tests::paths::workspace;
use std::path::{Path, PathBuf};

fn production_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" {
                production_files(&path, out);
            }
        } else if name.ends_with(".rs") && !name.ends_with("tests.rs") {
            out.push(path);
        }
    }
}

/// The lines of `text` that make a lock of their own or handle its poisoning, before the
/// file's first `#[cfg(test)]` (inline test modules come last).
fn own_locks(text: &str) -> Vec<String> {
    let uses_std_mutex = |l: &str| {
        l.contains("std::sync::Mutex<")
            || l.contains("std::sync::Mutex::")
            || l.trim_start().starts_with("use std::sync::") && l.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "Mutex")
    };
    text.lines()
        .take_while(|l| !l.trim_start().starts_with("#[cfg(test)]"))
        .filter(|l| !l.trim_start().starts_with("//"))
        .filter(|l| {
            uses_std_mutex(l) || l.contains("PoisonError") || l.contains(".lock().expect(") || l.contains(".lock().unwrap_or_else(")
        })
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn every_lock_of_the_sentinel_takes_the_one_poisoning_rule() {
    let root = workspace();
    let mut files = Vec::new();
    for src in ["crates/core/src", "crates/adapters/src", "host/src"] {
        production_files(&root.join(src), &mut files);
    }
    assert!(files.len() > 150, "the sources were found: {}", files.len());
    let rule = root.join("crates/core/src/sync.rs");
    let found: Vec<String> = files
        .iter()
        .filter(|f| **f != rule)
        .flat_map(|f| {
            let shown = f.strip_prefix(&root).unwrap().display().to_string();
            own_locks(&std::fs::read_to_string(f).unwrap()).into_iter().map(move |l| format!("{shown}: {l}"))
        })
        .collect();
    assert!(found.is_empty(), "locks outside sentinel_core::sync::Lock:\n  {}", found.join("\n  "));
}

#[test]
fn the_reader_sees_a_lock_of_its_own() {
    assert_eq!(own_locks("use std::sync::{Arc, Mutex};\n").len(), 1);
    assert_eq!(own_locks("    x: std::sync::Mutex<u8>,\n").len(), 1);
    assert_eq!(own_locks("let v = m.lock().expect(\"lock\");\n").len(), 1);
    assert_eq!(own_locks("let v = m.lock().unwrap_or_else(PoisonError::into_inner);\n").len(), 1);
    assert!(own_locks("use tokio::sync::Mutex;\nuse std::sync::{Arc, MutexGuard};\nx.lock().await;\n").is_empty());
    assert!(own_locks("#[cfg(test)]\nmod tests {\n    use std::sync::Mutex;\n}\n").is_empty());
}
