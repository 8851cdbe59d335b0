//! Shared helpers for the process-level tests: a temp dir per test with its own config, trace,
//! SQLite store and file publishers, and runs of the built `sentinel` binary against them.
//! Each test binary uses a different part of this module.
#![allow(dead_code, reason = "each test file uses a different part of the shared helpers")]

use sentinel_core::instants::{format_rfc3339, parse_rfc3339};
use serde_json::Value;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant as Clock};

/// A fixed minute the trace-driven tests start at.
pub const T0: &str = "2026-10-20T14:00:00Z";

/// A config's text without its top-level `policy = ...` line (a `[policies]` table replaces
/// the single file: a config may not name both).
pub fn without_policy_file(text: &str) -> String {
    text.lines().filter(|l| !l.starts_with("policy = ")).map(|l| format!("{l}\n")).collect()
}

/// `T0` plus `minutes`, as unix seconds.
pub fn t(minutes: i64) -> i64 {
    parse_rfc3339(T0).unwrap() + minutes * 60
}

/// RFC 3339 text of unix seconds, as `--at` takes it.
pub fn rfc(at: i64) -> String {
    format_rfc3339(at)
}

/// The wall clock, in unix seconds.
pub fn wall_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// The minute `at` falls in.
pub fn minute_of(at: i64) -> i64 {
    at.div_euclid(60) * 60
}

/// The built policy component, by absolute path.
pub fn policy() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/policies/capacity-policy-1.0.0.wasm");
    assert!(path.is_file(), "{} is missing: run `cargo policies` first", path.display());
    path.canonicalize().unwrap()
}

/// The folder `cargo policies` builds the policy components and their manifests into.
pub fn built_policies() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/policies")
}

/// One trace line: a reading with only `cpu_pct`.
pub fn cpu(at: i64, cpu_pct: f64) -> String {
    serde_json::json!({ "at": rfc(at), "reading": { "cpu_pct": cpu_pct } }).to_string()
}

/// One trace line: a failed read.
pub fn read_error(at: i64, why: &str) -> String {
    serde_json::json!({ "at": rfc(at), "read_error": why }).to_string()
}

/// Where the readings come from.
pub enum Metrics {
    Synthetic,
    /// Trace lines, written to `trace.jsonl` in the temp dir.
    Trace(Vec<String>),
}

/// One test's sandbox; everything lives in `dir` and is removed with it.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
    pub db: PathBuf,
    pub cache: PathBuf,
    pub parameter: PathBuf,
    pub trace: PathBuf,
}

impl Sandbox {
    /// The usual layout: `state/sentinel.db`, `out/cache.json`, `out/parameter.json`.
    pub fn new(metrics: Metrics) -> Sandbox {
        Sandbox::with_channels(metrics, "out/cache.json", "out/parameter.json")
    }

    /// Channel paths relative to the temp dir (and to the config file in it).
    pub fn with_channels(metrics: Metrics, cache: &str, parameter: &str) -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let trace = root.join("trace.jsonl");
        let metrics_toml = match metrics {
            Metrics::Synthetic => "[metrics]\nkind = \"synthetic\"\n".to_string(),
            Metrics::Trace(lines) => {
                std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
                "[metrics]\nkind = \"trace\"\npath = \"trace.jsonl\"\n".to_string()
            }
        };
        // Relative paths: the sentinel resolves them against the config file's folder.
        let text = format!(
            "policy = {policy:?}\n\
             tick_deadline = \"20s\"\n\
             throttles_enabled = false\n\
             [store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n\
             {metrics_toml}\
             [publish]\ntimeout = \"5s\"\n\
             [publish.cache]\nkind = \"file\"\npath = {cache:?}\n\
             [publish.parameter]\nkind = \"file\"\npath = {parameter:?}\n",
            policy = policy().display().to_string(),
        );
        let config = root.join("sentinel.toml");
        std::fs::write(&config, text).unwrap();
        Sandbox { config, db: root.join("state/sentinel.db"), cache: root.join(cache), parameter: root.join(parameter), trace, dir }
    }

    /// Rewrites the config: `edit` gets its text and returns the new one.
    pub fn edit_config(&self, edit: impl FnOnce(String) -> String) {
        let before = std::fs::read_to_string(&self.config).unwrap();
        let after = edit(before.clone());
        assert_ne!(after, before, "the edit changed nothing");
        std::fs::write(&self.config, after).unwrap();
    }

    /// A policy directory `policies/` holding 1.0.0 (active) and 1.1.0 (in shadow), unsigned,
    /// copied from `built_policies()`; the config's single `policy` file gives way to a
    /// `[policies]` table, followed by `more` (further TOML tables, or "").
    pub fn with_shadow_policies(&self, more: &str) {
        let dir = self.path("policies");
        std::fs::create_dir_all(&dir).unwrap();
        for version in ["1.0.0", "1.1.0"] {
            for ext in ["wasm", "manifest.json"] {
                let name = format!("capacity-policy-{version}.{ext}");
                std::fs::copy(built_policies().join(&name), dir.join(&name))
                    .unwrap_or_else(|e| panic!("{name}: {e}; run `cargo policies`"));
            }
        }
        self.edit_config(|text| {
            format!(
                "{}[policies]\ndir = \"policies\"\nallow_unsigned = true\nactive = \"1.0.0\"\nshadow = \"1.1.0\"\n{more}",
                without_policy_file(&text)
            )
        });
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// `sentinel ARGS --config <this sandbox's config>`, run in the temp dir, logs at info.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sentinel"));
        cmd.args(args).arg("--config").arg(&self.config).current_dir(self.dir.path()).env_remove("RUST_LOG");
        cmd
    }

    /// Runs `sentinel ARGS` to completion.
    pub fn sentinel(&self, args: &[&str]) -> Ran {
        Ran::from(self.command(args).stdin(Stdio::null()).output().unwrap(), args)
    }

    /// `sentinel tick --at AT`, which must succeed.
    pub fn tick_ok(&self, at: i64) -> Ran {
        self.sentinel(&["tick", "--at", &rfc(at)]).success()
    }

    /// Starts `sentinel ARGS` in the background, stderr into `name.stderr` in the temp dir.
    pub fn spawn(&self, args: &[&str], name: &str) -> Background {
        let log = self.path(&format!("{name}.stderr"));
        let child =
            self.command(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::from(File::create(&log).unwrap())).spawn().unwrap();
        Background { child, log }
    }

    /// The published document of a channel, `None` when the file does not exist.
    pub fn document(&self, path: &Path) -> Option<Value> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => panic!("reading {}: {e}", path.display()),
        };
        Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON ({e}): {text}", path.display())))
    }

    pub fn cache_doc(&self) -> Value {
        self.document(&self.cache).expect("the cache document was published")
    }

    pub fn parameter_doc(&self) -> Value {
        self.document(&self.parameter).expect("the parameter document was published")
    }

    /// The store, opened directly.
    pub fn db(&self) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open(&self.db).unwrap();
        conn.busy_timeout(Duration::from_secs(5)).unwrap();
        conn
    }

    /// Every row of the `ticks` table: (sequence, record JSON), oldest first.
    pub fn ticks(&self) -> Vec<(u64, Value)> {
        let conn = self.db();
        let mut stmt = conn.prepare("SELECT sequence, record FROM ticks ORDER BY sequence").unwrap();
        stmt.query_map([], |row| Ok((row.get::<_, i64>(0)? as u64, row.get::<_, String>(1)?)))
            .unwrap()
            .map(|row| {
                let (sequence, text) = row.unwrap();
                (sequence, serde_json::from_str(&text).unwrap())
            })
            .collect()
    }
}

/// A finished process.
#[derive(Debug)]
pub struct Ran {
    pub what: String,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    fn from(output: Output, args: &[&str]) -> Ran {
        Ran {
            what: format!("sentinel {}", args.join(" ")),
            status: output.status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Asserts the exit code, showing the output otherwise.
    pub fn expect_code(self, code: i32) -> Ran {
        assert_eq!(self.code(), Some(code), "`{}` exited {:?}\nstdout:\n{}\nstderr:\n{}", self.what, self.status, self.stdout, self.stderr);
        self
    }

    pub fn success(self) -> Ran {
        self.expect_code(0)
    }

    /// stdout as one JSON value.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("`{}` printed no JSON ({e}): {}", self.what, self.stdout))
    }

    /// stdout as JSON lines.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

/// A background `sentinel` process; killed when dropped if still running.
pub struct Background {
    pub child: Child,
    pub log: PathBuf,
}

impl Background {
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends a signal by name (`TERM`, `INT`) with kill(1).
    pub fn signal(&self, name: &str) {
        let sent = Command::new("kill").arg(format!("-{name}")).arg(self.child.id().to_string()).status().unwrap();
        assert!(sent.success(), "kill -{name} {} failed", self.child.id());
    }

    /// Waits up to `limit` for the process to exit.
    pub fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let started = Clock::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if started.elapsed() >= limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Polls `condition` every 20 ms for up to `limit`; whether it became true.
pub fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let started = Clock::now();
    loop {
        if condition() {
            return true;
        }
        if started.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The decided state of a tick record, in its serde form (`"critical"`).
pub fn record_state(record: &Value) -> &str {
    record["decision"]["state"].as_str().unwrap()
}
