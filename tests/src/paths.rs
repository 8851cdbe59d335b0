//! Where things are: the workspace, its target directory, the built components (which tests
//! never build themselves: `cargo policies` does) and the shared CloudWatch data.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The workspace root (the parent of this crate).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// This crate's folder (`<workspace>/tests`).
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The target directory `cargo policies` writes to: `CARGO_TARGET_DIR` when set (as the builder
/// itself does), else `<workspace>/target`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() { dir } else { workspace().join(dir) }
        }
        None => workspace().join("target"),
    }
}

/// `target/policies/`, where `cargo policies` puts the components and their manifests.
pub fn policies_dir() -> PathBuf {
    target_dir().join("policies")
}

/// A built component (`capacity-policy-1.0.0.wasm`, ...). Panics, saying to run
/// `cargo policies`, when it is missing.
pub fn component_path(file: &str) -> PathBuf {
    let path = policies_dir().join(file);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo policies` first (from {}); the tests use the built components \
         and never build them",
        path.display(),
        workspace().display()
    );
    path
}

/// `policies/<version>/`, the native modules' thresholds.
pub fn policy_folder(version: &str) -> PathBuf {
    let path = workspace().join("policies").join(version);
    assert!(path.join("policy.toml").is_file(), "{} has no policy.toml", path.display());
    path
}

/// A hint for mismatch messages: whether the component is older than the sources it is built
/// from (the guest's code or the policy's thresholds), in which case `cargo policies` is due.
pub fn stale_hint(component: &Path, version: &str) -> String {
    let built = modified(component);
    let mut sources = vec![workspace().join("policies").join(version).join("policy.toml")];
    sources.extend(files_under(&workspace().join("guest").join("src")));
    sources.extend(files_under(&workspace().join("wit")));
    let newer: Vec<String> = sources
        .iter()
        .filter(|s| matches!((built, modified(s)), (Some(b), Some(m)) if m > b))
        .map(|s| s.strip_prefix(workspace()).unwrap_or(s).display().to_string())
        .collect();
    if newer.is_empty() {
        String::new()
    } else {
        format!(
            " (note: {} is older than {}: run `cargo policies` again)",
            component.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            newer.join(", ")
        )
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The real CloudWatch series, `tests/data/cloudwatch` (NAB, MIT: see its README and
/// LICENSE.txt).
pub fn cloudwatch_dir() -> PathBuf {
    let dir = workspace().join("tests").join("data").join("cloudwatch");
    assert!(dir.is_dir(), "the CloudWatch series are missing at {} (they are part of the repository)", dir.display());
    dir
}

/// Every file in `dir` whose name ends with `suffix`, sorted by name.
pub fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(suffix)))
        .collect();
    files.sort();
    files
}
