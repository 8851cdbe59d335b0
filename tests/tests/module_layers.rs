//! The sentinel's crates read downwards. Cargo keeps the crates in order (the core, the
//! adapters, the binary's application); inside each crate, no module imports one that imports
//! it back (directly or through others), at every depth: the top-level modules (`policy`, `tick`, ...),
//! the modules inside each (`policy::active`, `policy::lifecycle`, ...), the modules inside
//! those (`policy::lifecycle::manifest`, ...) and so on down to the deepest file, where a module
//! and its own parent or child are not counted (a parent declares and re-exports its children).
//! Read from the source: every `crate::` and `super::` path a file names outside its tests; a
//! cycle is reported with the files that make each of its edges.

use capacity_tests::paths::workspace;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "tests") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without its comments and its test items: the item after each
/// `#[cfg(test)]` (a `mod tests;` line, or a block up to its closing brace at the same indent).
fn code(text: &str) -> String {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed.starts_with("#[cfg(test)]") {
            let indent = line.len() - trimmed.len();
            let Some(item) = lines.next() else { break };
            if item.trim_end().ends_with('{') {
                let close = format!("{}}}", " ".repeat(indent));
                for inner in lines.by_ref() {
                    if inner.trim_end() == close {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(line);
    }
    out.join("\n")
}

fn ident(text: &str) -> String {
    text.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

/// Each path the code names from the crate's root, as its segments: `crate::a::b::C` and, from
/// the module `here`, `super::b::C`; one level of braces (`crate::a::{b, c}`) is followed.
fn named_paths(code: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", here[..here.len().saturating_sub(1)].to_vec())] {
        for (i, _) in code.match_indices(prefix) {
            if prefix == "super::" && i > 0 && code[..i].ends_with("::") {
                continue; // `super::super::` and `crate::...::super` are rare; the first part counts
            }
            let mut path = base.clone();
            let mut rest = &code[i + prefix.len()..];
            loop {
                let name = ident(rest);
                if name.is_empty() {
                    if let Some(group) = rest.strip_prefix('{') {
                        let inner = &group[..group.find('}').unwrap_or(group.len())];
                        for item in inner.split(',') {
                            let first = ident(item.trim());
                            if !first.is_empty() && first != "self" {
                                out.push([path.clone(), vec![first]].concat());
                            }
                        }
                    }
                    break;
                }
                rest = &rest[name.len()..];
                path.push(name);
                match rest.strip_prefix("::") {
                    Some(more) => rest = more,
                    None => break,
                }
            }
            if !path.is_empty() {
                out.push(path);
            }
        }
    }
    out
}

/// module -> (imported module -> files that import it).
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The graph at `depth` (1: top-level modules; 2: the modules inside each), over the modules
/// that exist as files or folders.
fn graph(src: &Path, depth: usize) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module_of = |file: &Path| -> Vec<String> {
        let relative = file.strip_prefix(src).unwrap().to_string_lossy().trim_end_matches(".rs").to_string();
        let mut segments: Vec<String> = relative.split('/').map(String::from).collect();
        if segments.last().is_some_and(|l| l == "mod") {
            segments.pop();
        }
        segments
    };
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    // The node a path belongs to: its longest prefix that is a module, cut to `depth`.
    let node = |path: &[String]| -> Option<String> {
        let known = (1..=path.len()).rev().map(|n| &path[..n]).find(|p| modules.contains(*p))?;
        Some(known[..known.len().min(depth)].join("::"))
    };
    let mut g = Graph::new();
    for file in &files {
        let here = module_of(file);
        let stem = here.last().cloned().unwrap_or_default();
        if here.len() == 1 && matches!(stem.as_str(), "lib" | "main") || stem.ends_with("tests") {
            continue;
        }
        let Some(from) = node(&here) else { continue };
        let relative = file.strip_prefix(src).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(file).unwrap();
        for path in named_paths(&code(&text), &here) {
            let Some(to) = node(&path) else { continue };
            let related = from == to || from.starts_with(&format!("{to}::")) || to.starts_with(&format!("{from}::"));
            if !related {
                g.entry(from.clone()).or_default().entry(to).or_default().insert(relative.clone());
            }
        }
    }
    g
}

/// The modules reachable from `from`.
fn reachable(g: &Graph, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(m) = todo.pop() {
        for next in g.get(&m).into_iter().flat_map(|e| e.keys()) {
            if seen.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    seen
}

/// Every edge of `g` that lies on a cycle, with its files.
fn cycles(g: &Graph) -> Vec<String> {
    let mut cycles = Vec::new();
    for (module, edges) in g {
        for (imported, files) in edges {
            if reachable(g, imported).contains(module) {
                cycles.push(format!(
                    "{module} -> {imported} (in {}), and {imported} reaches {module} back",
                    files.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    cycles
}

/// The sentinel's three crates, from the bottom: Cargo keeps their order (a lower crate cannot
/// name a higher one); this test keeps each crate's own modules in order.
const CRATES: [(&str, usize); 3] = [("crates/core/src", 3), ("crates/adapters/src", 2), ("host/src", 2)];

#[test]
fn no_module_of_a_sentinel_crate_imports_one_that_imports_it_back() {
    for (crate_src, expected_depth) in CRATES {
        let src = workspace().join(crate_src);
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let deepest = files.iter().map(|f| f.strip_prefix(&src).unwrap().components().count()).max().unwrap();
        assert!(deepest >= expected_depth, "{crate_src} has modules {expected_depth} deep: {deepest}");
        for depth in 1..=deepest {
            let g = graph(&src, depth);
            assert!(depth > 1 || g.len() > 3, "{crate_src}: the modules and their imports were found: {:?}", g.keys());
            let found = cycles(&g);
            assert!(found.is_empty(), "import cycles between {crate_src}'s modules (depth {depth}):\n  {}", found.join("\n  "));
        }
    }
}

/// The packages `package` depends on at run time (`cargo tree`), at any depth or, with
/// `direct`, its own dependencies only.
fn run_time_dependencies(package: &str, direct: bool) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut args = vec!["tree", "--offline", "-p", package, "-e", "normal", "--prefix", "none", "--format", "{p}"];
    if direct {
        args.extend(["--depth", "1"]);
    }
    let out = std::process::Command::new(cargo).args(args).current_dir(workspace()).output().unwrap();
    assert!(out.status.success(), "cargo tree: {}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8(out.stdout).unwrap();
    tree.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect()
}

/// What Cargo shows of the domain core: no network client, no HTTP server, no command-line
/// parser among its dependencies, at any depth (`cargo tree`, as an operator would look).
#[test]
fn the_core_crate_depends_on_no_network_client_http_server_or_command_line_parser() {
    let names = run_time_dependencies("capacity-sentinel-core", false);
    assert!(names.contains("wasmtime") && names.contains("capacity-vocabulary"), "the tree was read: {names:?}");
    let forbidden =
        ["tokio-postgres", "redis", "axum", "hyper", "reqwest", "clap", "rusqlite", "jsonwebtoken", "capacity-sentinel-adapters"];
    let found: Vec<&String> =
        names.iter().filter(|n| forbidden.contains(&n.as_str()) || n.starts_with("aws-") || *n == "capacity-sentinel").collect();
    assert!(found.is_empty(), "the core crate depends on {found:?}");
}

/// A tuning run walks the tune room and the crates below it only: no module of `host/src/tune/`
/// names another room of the binary (config, setup, the CLI, the API), so the tuner can be read,
/// tested and benched as the core's replay engine plus its own arithmetic.
#[test]
fn the_tune_room_uses_no_other_room_of_the_binary() {
    let g = graph(&workspace().join("host/src"), 1);
    assert!(workspace().join("host/src/tune/mod.rs").exists(), "the binary has a tune room");
    let others: Vec<String> = g.get("tune").into_iter().flatten().map(|(m, files)| format!("{m} (in {files:?})")).collect();
    assert!(others.is_empty(), "the tune room reaches other rooms of the binary: {others:?}");
    assert!(g.get("cli").is_some_and(|cli| cli.contains_key("tune")), "the graph was read: the CLI uses the tune room");
}

/// `anyhow` only at the binary's edge: the library crates return typed errors (wasmtime's own
/// use of it, deeper in the tree, is wasmtime's), and in the binary's crate only the commands
/// (`cli/`) and `main.rs` use it.
#[test]
fn anyhow_is_used_only_by_the_commands_of_the_binary() {
    for package in ["capacity-sentinel-core", "capacity-sentinel-adapters"] {
        let names = run_time_dependencies(package, true);
        assert!(names.contains("serde"), "the tree of {package} was read: {names:?}");
        assert!(!names.contains("anyhow"), "{package} depends on anyhow: return a typed error (thiserror) instead");
    }
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("host/src"), &mut files);
    assert!(files.len() > 50, "the binary's sources were found: {}", files.len());
    let edge = [root.join("host/src/cli"), root.join("host/src/main.rs")];
    let found: Vec<String> = files
        .iter()
        .filter(|f| !edge.iter().any(|e| f.starts_with(e)))
        .filter(|f| code(&std::fs::read_to_string(f).unwrap()).contains("anyhow"))
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(found.is_empty(), "anyhow outside the commands of the binary: {found:?}");
}

#[test]
fn the_reader_sees_an_import_cycle_when_there_is_one() {
    // The checker itself, on a made-up pair of files.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a")).unwrap();
    std::fs::write(dir.path().join("a/mod.rs"), "use crate::b::Thing;\n// crate::c in a comment\n").unwrap();
    std::fs::write(
        dir.path().join("b.rs"),
        "#[cfg(test)]\nmod tests;\nfn f() { crate::a::g() }\n#[cfg(test)]\nmod more {\n    use crate::c;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("c.rs"), "").unwrap();
    let g = graph(dir.path(), 1);
    assert!(reachable(&g, "a").contains("a"), "{g:?}");
    assert!(!g.contains_key("c") && !reachable(&g, "a").contains("c"), "comments and tests do not count: {g:?}");
    // Inside a module: siblings through `super::`, and braces; the parent does not count.
    std::fs::write(dir.path().join("a/x.rs"), "use super::{y::Y, Z};\n").unwrap();
    std::fs::write(dir.path().join("a/y.rs"), "use crate::a::x::f;\n").unwrap();
    let g = graph(dir.path(), 2);
    assert!(reachable(&g, "a::x").contains("a::x"), "{g:?}");
    assert_eq!(cycles(&g).len(), 4, "a <-> b and a::x <-> a::y: {g:?}");
    // Three deep, as policy::lifecycle::manifest and ::signing were: seen at depth 3 only.
    std::fs::create_dir_all(dir.path().join("a/z")).unwrap();
    std::fs::write(dir.path().join("a/z/mod.rs"), "").unwrap();
    std::fs::write(dir.path().join("a/z/m.rs"), "use super::s::Entry;\n").unwrap();
    std::fs::write(dir.path().join("a/z/s.rs"), "use crate::a::z::m::scan;\n").unwrap();
    let g = graph(dir.path(), 3);
    assert!(reachable(&g, "a::z::m").contains("a::z::m"), "{g:?}");
    assert!(!graph(dir.path(), 2).contains_key("a::z"), "inside a::z, not between a's modules");
}
