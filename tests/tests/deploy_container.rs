//! deploy/container/Containerfile builds from what it copies: every workspace member (cargo
//! loads the whole workspace before it builds the host) and every file the host carries into
//! the binary (`include_str!`, `include_bytes!`) must be under a path its build stage COPYs.
//! Both were missed once: a member added later, and files the host began to carry.

use capacity_tests::paths::workspace;
use std::path::{Path, PathBuf};

/// The sources of the build stage's COPY lines (before the runtime stage), relative to the root.
fn copied(root: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(root.join("deploy/container/Containerfile")).unwrap();
    let build = text.split("FROM docker.io/library/debian").next().unwrap();
    let mut out = Vec::new();
    for line in build.lines().filter_map(|l| l.strip_prefix("COPY ")) {
        let words: Vec<&str> = line.split_whitespace().filter(|w| !w.starts_with("--")).collect();
        out.extend(words[..words.len() - 1].iter().map(|w| PathBuf::from(w.trim_end_matches('/'))));
    }
    out
}

fn covered(copied: &[PathBuf], path: &Path) -> bool {
    copied.iter().any(|c| path.starts_with(c))
}

/// Every `include_str!("…")` and `include_bytes!("…")` under `dir`, as paths from the root.
fn carried(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            carried(root, &path, out);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for macro_name in ["include_str!(\"", "include_bytes!(\""] {
            for piece in text.split(macro_name).skip(1) {
                let relative = piece.split('"').next().unwrap();
                let file = path.parent().unwrap().join(relative);
                let file = file.canonicalize().unwrap_or_else(|e| panic!("{}: {relative}: {e}", path.display()));
                out.push(file.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
}

#[test]
fn the_containerfile_copies_every_workspace_member_and_every_file_the_host_carries() {
    let root = workspace().canonicalize().unwrap();
    let copied = copied(&root);
    let manifest: toml::Table = std::fs::read_to_string(root.join("Cargo.toml")).unwrap().parse().unwrap();
    let members = manifest["workspace"]["members"].as_array().unwrap();
    let missing: Vec<&str> = members.iter().filter_map(|m| m.as_str()).filter(|m| !covered(&copied, Path::new(m))).collect();
    assert!(missing.is_empty(), "workspace members the Containerfile does not copy: {missing:?}");
    let mut files = Vec::new();
    for src in ["host/src", "crates/core/src", "crates/adapters/src"] {
        carried(&root, &root.join(src), &mut files);
    }
    assert!(
        files.iter().any(|f| f.starts_with("deploy/ci")) && files.iter().any(|f| f.starts_with("crates/core/embedded")),
        "the scan finds what the host carries: {files:?}"
    );
    let missing: Vec<&PathBuf> = files.iter().filter(|f| !covered(&copied, f)).collect();
    assert!(missing.is_empty(), "files the host carries that the Containerfile does not copy: {missing:?}");
}
