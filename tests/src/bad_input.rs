//! Shared by the bad-input suites (`tests/tests/bad_input_*.rs`): a sandbox folder with its own
//! config on the embedded default's adapters (a SQLite store, both channels as files), runs of
//! the real `sentinel` binary in it, and a snapshot of everything stored and published, so that
//! a test shows that refused input changed nothing: every row of every table of the store, and
//! the bytes of every other file in the folder (the published documents, the trace, the config).

use crate::paths::component_path;
use crate::sentinel_bin::sentinel;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The store of every sandbox, relative to its folder.
pub const STORE: &str = "state/sentinel.db";
pub const CACHE: &str = "out/cache.json";
pub const PARAMETER: &str = "out/parameter.json";

/// The built 1.0.0 policy component, by absolute path.
pub fn policy() -> PathBuf {
    component_path("capacity-policy-1.0.0.wasm")
}

/// A whole config on the embedded default's adapters: the 1.0.0 component, the SQLite store
/// at [`STORE`], `metrics` (a `[metrics]` table, or nothing for the synthetic workload), and
/// both channels as files ([`CACHE`], [`PARAMETER`]). Relative paths are the sandbox's.
pub fn embedded_config(metrics: &str) -> String {
    format!(
        "policy = {policy:?}\n\
         [store]\nkind = \"sqlite\"\npath = \"{STORE}\"\n\
         {metrics}\
         [publish.cache]\nkind = \"file\"\npath = \"{CACHE}\"\n\
         [publish.parameter]\nkind = \"file\"\npath = \"{PARAMETER}\"\n",
        policy = policy().display().to_string(),
    )
}

/// `text` without its top-level `policy = ...` line: a `[policies]` table replaces the single
/// policy file (a config may not name both).
pub fn without_policy_file(text: &str) -> String {
    text.lines().filter(|l| !l.starts_with("policy = ")).map(|l| format!("{l}\n")).collect()
}

/// One test's folder; everything lives in it and is removed with it.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    /// An empty folder.
    pub fn new() -> Sandbox {
        Sandbox { dir: tempfile::tempdir().expect("a temp dir") }
    }

    /// A folder with `sentinel.toml` holding `config`.
    pub fn with_config(config: &str) -> Sandbox {
        let sb = Sandbox::new();
        sb.write("sentinel.toml", config);
        sb
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    pub fn config(&self) -> PathBuf {
        self.path("sentinel.toml")
    }

    /// Writes a file of the sandbox (creating its folder).
    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("creating a sandbox folder");
        }
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }

    /// `sentinel ARGS --config sentinel.toml`, run in the folder with logs at warn.
    pub fn sentinel(&self, args: &[&str]) -> Ran {
        let mut all: Vec<&str> = args.to_vec();
        let config = self.config().display().to_string();
        all.extend(["--config", &config]);
        self.run(&all)
    }

    /// `sentinel ARGS`, exactly as given, run in the folder with logs at warn.
    pub fn run(&self, args: &[&str]) -> Ran {
        let output = Command::new(sentinel())
            .args(args)
            .current_dir(self.dir.path())
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .expect("sentinel runs");
        Ran {
            what: format!("sentinel {}", args.join(" ")),
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Every file under the folder, by relative path (the store's own files included).
    pub fn listing(&self) -> Vec<String> {
        files_under(self.dir.path(), self.dir.path()).into_keys().collect()
    }

    /// What is stored and published now.
    pub fn snapshot(&self) -> Snapshot {
        let store = self.path(STORE);
        let store_text = store.display().to_string();
        let files = files_under(self.dir.path(), self.dir.path())
            .into_iter()
            .filter(|(_, path)| !path.display().to_string().starts_with(&store_text))
            .map(|(name, path)| {
                let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
                (name, bytes)
            })
            .collect();
        let tables = store.is_file().then(|| tables(&store));
        Snapshot { files, tables }
    }

    /// The published document of a channel file, `None` when it does not exist.
    pub fn document(&self, relative: &str) -> Option<serde_json::Value> {
        let text = std::fs::read_to_string(self.path(relative)).ok()?;
        Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative} is not JSON ({e}): {text}")))
    }
}

/// Relative path -> absolute path of every file under `dir`.
fn files_under(root: &Path, dir: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(root, &path));
        } else {
            let name = path.strip_prefix(root).expect("under the root").display().to_string();
            out.insert(name, path);
        }
    }
    out
}

/// Every row of every table of the SQLite file (`sqlite_sequence` too, so that even an
/// insert rolled back after taking an id shows), each table's rows sorted.
fn tables(store: &Path) -> BTreeMap<String, Vec<String>> {
    let conn = rusqlite::Connection::open(store).unwrap_or_else(|e| panic!("opening {}: {e}", store.display()));
    conn.busy_timeout(std::time::Duration::from_secs(5)).expect("busy timeout");
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("listing the store's tables");
    names
        .into_iter()
        .map(|name| {
            let mut stmt = conn.prepare(&format!("SELECT * FROM \"{name}\"")).expect("selecting a table");
            let width = stmt.column_count();
            let mut rows: Vec<String> = stmt
                .query_map([], |r| {
                    let values: Vec<rusqlite::types::Value> = (0..width).map(|i| r.get(i)).collect::<Result<_, _>>()?;
                    Ok(format!("{values:?}"))
                })
                .and_then(|rows| rows.collect())
                .expect("reading a table");
            rows.sort();
            (name, rows)
        })
        .collect()
}

/// Everything stored and published at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// Every file of the sandbox but the store's, with its bytes.
    pub files: BTreeMap<String, Vec<u8>>,
    /// Table -> rows of the store; `None` when there is no store file.
    pub tables: Option<BTreeMap<String, Vec<String>>>,
}

impl Snapshot {
    /// What differs from `earlier`, one line each (empty when nothing does).
    pub fn changes_since(&self, earlier: &Snapshot) -> Vec<String> {
        let mut out = Vec::new();
        let names: std::collections::BTreeSet<&String> = self.files.keys().chain(earlier.files.keys()).collect();
        for name in names {
            match (earlier.files.get(name), self.files.get(name)) {
                (None, Some(_)) => out.push(format!("file {name} was created")),
                (Some(_), None) => out.push(format!("file {name} was removed")),
                (Some(a), Some(b)) if a != b => out.push(format!("file {name} changed")),
                _ => {}
            }
        }
        match (&earlier.tables, &self.tables) {
            (None, Some(_)) => out.push(format!("the store {STORE} was created")),
            (Some(_), None) => out.push(format!("the store {STORE} was removed")),
            (Some(a), Some(b)) => {
                for (table, rows) in b {
                    if a.get(table) != Some(rows) {
                        out.push(format!("table {table}: {:?} -> {rows:?}", a.get(table)));
                    }
                }
            }
            (None, None) => {}
        }
        out
    }
}

/// A finished `sentinel` process.
#[derive(Debug)]
pub struct Ran {
    pub what: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Asserts the exit code, showing both streams otherwise.
    pub fn expect_code(self, code: i32) -> Ran {
        assert_eq!(self.code, Some(code), "`{}` exited {:?}\nstdout:\n{}\nstderr:\n{}", self.what, self.code, self.stdout, self.stderr);
        self
    }
}

/// An HTTP answer: status, `Content-Type`, body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

impl Answer {
    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// One HTTP/1.1 request over a fresh connection (`Connection: close`), written whole before
/// the answer is read. `content_type` `None` sends no `Content-Type`.
pub fn http(addr: &str, method: &str, path: &str, token: Option<&str>, content_type: Option<&str>, body: &[u8]) -> Answer {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap_or_else(|e| panic!("connecting to {addr}: {e}"));
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).expect("a read timeout");
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if let Some(token) = token {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    if let Some(content_type) = content_type {
        head.push_str(&format!("Content-Type: {content_type}\r\n"));
    }
    head.push_str("\r\n");
    // A server refusing a body early may close before reading all of it: what it answered
    // is still read below. (No half-close: hyper drops a request whose client shuts down.)
    let _ = stream.write_all(&[head.as_bytes(), body].concat());
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{method} {path}: no HTTP answer: {text:?}"));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("no status in {head:?}"));
    let content_type = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.trim().to_string()))
        .unwrap_or_default();
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { dechunk(body) } else { body.to_string() };
    Answer { status, content_type, body }
}

/// The payload of a chunked body.
fn dechunk(mut text: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = text.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        text = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The wall clock, in unix seconds.
pub fn wall_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs() as i64
}

/// What a reason with a newline (`ok\n...`) is refused with, through the CLI and the API alike.
pub const FORGED_REASON: &str = "reason: must not contain control characters (such as a line break or a tab) or bidirectional formatting characters (found U+000A at character 3)";
/// What a reason with a right-to-left override (`abc\u{202E}fed`) is refused with.
pub const REVERSED_REASON: &str = "reason: must not contain control characters (such as a line break or a tab) or bidirectional formatting characters (found U+202E at character 4)";
