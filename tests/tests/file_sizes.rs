//! Small rooms: no source file of the repository (Rust, Python, JavaScript and TypeScript,
//! shell, and scripts without an extension that start with `#!`) is longer
//! than 400 lines unless it says why near its top, in a line starting `Longer than 400 lines:`.

use capacity_tests::paths::workspace;
use std::path::{Path, PathBuf};

const LIMIT: usize = 400;
/// Build output, fuzz data and generated bindings (`gen/`: jco's output) are not written by hand.
const SKIP: [&str; 7] = ["target", ".git", "node_modules", "corpus", "artifacts", "__pycache__", "gen"];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !SKIP.contains(&name.as_str()) && !name.starts_with('.') || name == ".ci" {
                sources(&path, out);
            }
        } else if ["rs", "py", "js", "mjs", "ts", "sh"].iter().any(|e| path.extension().is_some_and(|x| x == *e))
            || path.extension().is_none() && std::fs::read(&path).is_ok_and(|b| b.starts_with(b"#!"))
        {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_is_longer_than_400_lines_without_saying_why() {
    let root = workspace();
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() > 100, "the sources were found: {}", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()));
            let lines = text.lines().count();
            let says_why =
                text.lines().take(20).any(|l| l.trim_start_matches(['/', '!', '#', '*', ' ']).starts_with("Longer than 400 lines:"));
            (lines > LIMIT && !says_why).then(|| format!("{} ({lines} lines)", f.strip_prefix(&root).unwrap().display()))
        })
        .collect();
    assert!(long.is_empty(), "longer than {LIMIT} lines without a reason at the top:\n  {}", long.join("\n  "));
}
