//! The sandbox of the fault-injection tests (`tests/tests/faults_*.rs`): a config on the
//! embedded store (SQLite) or on a real PostgreSQL, the synthetic workload and two file
//! channels; real `sentinel` processes started against it (and killed); the store read back
//! through the sentinel's own adapters; and ([`checks`]) the invariants no crash or race may
//! break, each check naming what broke.

pub mod checks;

use crate::sentinel_bin::sentinel;
use crate::servers::postgres::Postgres;
use crate::signed::SignedPolicies;
use sentinel_adapters::postgres::PostgresStore;
use sentinel_adapters::sqlite::SqliteStore;
use sentinel_adapters::synthetic::Synthetic;
use sentinel_core::ports::StoreError;
use sentinel_core::ports::memory::{MemoryStore, TickRecord};
use sentinel_core::ports::pins::{AuditRecord, PinStore};
use sentinel_core::ports::publisher::StateDocument;
use sentinel_core::trace::{TraceEvent, write_event};
use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};
use vocabulary::{Memory, Signal};

/// A small seeded generator (splitmix64): the same seed gives the same kills.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The seed from `var` when set, else from the clock; printed so that a failure reproduces.
    pub fn from_env(var: &str) -> Rng {
        let seed = std::env::var(var)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64));
        eprintln!("random seed {seed} (rerun with {var}={seed} to repeat these kills)");
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// True `num` times in `den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// A duration uniform in `0..limit`, to the microsecond.
    pub fn delay(&mut self, limit: Duration) -> Duration {
        Duration::from_micros(self.below(limit.as_micros() as u64))
    }
}

/// An unsigned count from an environment variable, else `default`.
pub fn env_count(var: &str, default: usize) -> usize {
    std::env::var(var).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(default)
}

static SERVER: Mutex<Weak<Postgres>> = Mutex::new(Weak::new());

/// The test binary's PostgreSQL: started by the first test that needs it, stopped when the
/// last one holding it is done.
pub fn postgres_server() -> Arc<Postgres> {
    let mut shared = SERVER.lock().unwrap_or_else(PoisonError::into_inner);
    shared.upgrade().unwrap_or_else(|| {
        let server = Arc::new(Postgres::start());
        *shared = Arc::downgrade(&server);
        server
    })
}

/// Which store a sandbox's sentinels share.
enum Backend {
    Sqlite(SqliteStore),
    Postgres { store: PostgresStore, _server: Arc<Postgres> },
}

/// One test's sentinel world: its folder, config, channels and store.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
    pub cache: PathBuf,
    pub parameter: PathBuf,
    /// `sqlite` or `postgres`, for messages.
    pub label: &'static str,
    /// The PostgreSQL database's URL (`None` on SQLite).
    pub url: Option<String>,
    runtime: tokio::runtime::Runtime,
    backend: Backend,
}

fn policy_component() -> PathBuf {
    crate::paths::component_path("capacity-policy-1.0.0.wasm")
}

/// Where a sandbox's readings come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metrics {
    /// The built-in synthetic workload (an 80-minute incident cycle from its cycle start).
    Synthetic,
    /// `trace.jsonl`, which the test writes ([`Sandbox::write_trace`]): a sped-up run starts
    /// at its first minute.
    Trace,
}

/// The config: `store_toml` for the store, then `tail` (a last table, or nothing).
fn write_config(dir: &std::path::Path, store_toml: &str, metrics: Metrics, tail: &str) -> PathBuf {
    let metrics = match metrics {
        Metrics::Synthetic => "kind = \"synthetic\"",
        Metrics::Trace => "kind = \"trace\"\npath = \"trace.jsonl\"",
    };
    // A `[policies]` tail replaces the single policy file (a config may not name both).
    let policy_line =
        if tail.contains("[policies]") { String::new() } else { format!("policy = {:?}\n", policy_component().display().to_string()) };
    let text = format!(
        "{policy_line}\
         tick_deadline = \"20s\"\n\
         throttles_enabled = false\n\
         {store_toml}\
         [metrics]\n{metrics}\ntimeout = \"10s\"\n\
         [publish]\ntimeout = \"10s\"\n\
         [publish.cache]\nkind = \"file\"\npath = \"out/cache.json\"\n\
         [publish.parameter]\nkind = \"file\"\npath = \"out/parameter.json\"\n\
         {tail}",
    );
    let config = dir.join("sentinel.toml");
    std::fs::write(&config, text).expect("writing the sandbox config");
    config
}

impl Sandbox {
    /// The embedded store: `state/sentinel.db` (and its lock file) in a temp dir.
    pub fn sqlite(metrics: Metrics) -> Sandbox {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = write_config(dir.path(), "[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n", metrics, "");
        let store = SqliteStore::open(&dir.path().join("state/sentinel.db")).expect("opening the sandbox's SQLite store");
        Sandbox::new(dir, config, "sqlite", Backend::Sqlite(store))
    }

    /// A database of its own, `name`, on the test binary's PostgreSQL, deciding with the
    /// signed 1.0.0 component.
    pub fn postgres(name: &str, metrics: Metrics) -> Sandbox {
        let server = postgres_server();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let url = format!("postgres://postgres@127.0.0.1:{}/{name}", server.process.port);
        let store = runtime.block_on(async {
            // It listens a moment before it accepts sessions ("the database system is starting up").
            let deadline = Instant::now() + Duration::from_secs(60);
            let (client, conn) = loop {
                match tokio_postgres::connect(&server.url(), tokio_postgres::NoTls).await {
                    Ok(connected) => break connected,
                    Err(e) if Instant::now() < deadline => {
                        eprintln!("PostgreSQL not ready yet ({e}); retrying");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    Err(e) => panic!("connecting to PostgreSQL: {e}"),
                }
            };
            let task = tokio::spawn(conn);
            client.batch_execute(&format!("CREATE DATABASE {name}")).await.expect("creating the test database");
            drop(client);
            let _ = task.await;
            sentinel_adapters::postgres::connect(&url, Duration::from_secs(20)).await.expect("opening the store")
        });
        let dir = tempfile::tempdir().expect("temp dir");
        let store_toml = format!("[store]\nkind = \"postgres\"\nurl = {url:?}\ntimeout = \"20s\"\n");
        // A shared store runs only signed policies: 1.0.0, signed by a key of the sandbox's own.
        let policies = SignedPolicies::install(dir.path(), &[policy_component()]);
        let config = write_config(dir.path(), &store_toml, metrics, &policies.toml("1.0.0"));
        let mut sb = Sandbox::new(dir, config, "postgres", Backend::Postgres { store, _server: server });
        sb.runtime = runtime; // the store's connection lives on this runtime
        sb.url = Some(url);
        sb
    }

    fn new(dir: tempfile::TempDir, config: PathBuf, label: &'static str, backend: Backend) -> Sandbox {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        Sandbox {
            cache: dir.path().join("out/cache.json"),
            parameter: dir.path().join("out/parameter.json"),
            dir,
            config,
            label,
            url: None,
            runtime,
            backend,
        }
    }

    /// Writes `trace.jsonl`: the synthetic workload's readings (its outage as failed reads) for
    /// `minutes` minutes from `first`.
    pub fn write_trace(&self, first: i64, minutes: i64) {
        let lines: Vec<String> = (0..minutes)
            .map(|m| {
                let at = first + m * 60;
                let signal = match Synthetic::reading_at(Synthetic::around(at).phase(at)) {
                    Some(reading) => Signal::Reading(reading),
                    None => Signal::Failed("synthetic outage".into()),
                };
                write_event(&TraceEvent::Tick { at, signal })
            })
            .collect();
        std::fs::write(self.dir.path().join("trace.jsonl"), lines.join("\n") + "\n").expect("writing the trace");
    }

    /// `sentinel ARGS --config <config>` in the sandbox's folder, logging at info.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(sentinel());
        cmd.args(args).arg("--config").arg(&self.config).current_dir(self.dir.path()).env("RUST_LOG", "info");
        cmd
    }

    /// Starts `sentinel ARGS` with its stderr in `<name>.stderr`.
    pub fn spawn(&self, args: &[&str], name: &str) -> Proc {
        let log = self.dir.path().join(format!("{name}.stderr"));
        let child = self
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(File::create(&log).expect("creating the stderr file")))
            .spawn()
            .expect("starting sentinel");
        Proc { child, log, what: format!("sentinel {}", args.join(" ")), started: Instant::now() }
    }

    /// The document each channel holds (cache, parameter); `None` before the first publication.
    pub fn published(&self) -> [Option<StateDocument>; 2] {
        [&self.cache, &self.parameter].map(|path| match std::fs::read_to_string(path) {
            Ok(text) => Some(serde_json::from_str(&text).unwrap_or_else(|e| {
                panic!("{}: the published file {} is not a state document ({e}): {text:?}", self.label, path.display())
            })),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => panic!("reading {}: {e}", path.display()),
        })
    }

    fn memory_store(&self) -> &dyn MemoryStore {
        match &self.backend {
            Backend::Sqlite(s) => s,
            Backend::Postgres { store, .. } => store,
        }
    }

    fn pin_store(&self) -> &dyn PinStore {
        match &self.backend {
            Backend::Sqlite(s) => s,
            Backend::Postgres { store, .. } => store,
        }
    }

    /// A PostgreSQL session of its own on the sandbox's database, as psql would have; run its
    /// queries with [`Sandbox::block_on`] (its connection lives on the sandbox's runtime).
    pub fn sql(&self) -> tokio_postgres::Client {
        let url = self.url.as_deref().expect("a PostgreSQL sandbox");
        self.block_on(async {
            let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connecting to PostgreSQL");
            tokio::spawn(conn);
            client
        })
    }

    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// The stored memory, as the next tick would load it.
    pub fn memory(&self) -> Result<Option<Memory>, StoreError> {
        self.runtime.block_on(self.memory_store().load_memory())
    }

    /// The newest `limit` tick records, oldest first.
    pub fn recent_ticks(&self, limit: u32) -> Vec<(u64, TickRecord)> {
        let mut ticks = self
            .runtime
            .block_on(self.memory_store().recent_ticks(limit))
            .unwrap_or_else(|e| panic!("{}: the tick records are unreadable: {e}", self.label));
        ticks.reverse();
        ticks
    }

    /// Every tick record, oldest first.
    pub fn ticks(&self) -> Vec<(u64, TickRecord)> {
        self.recent_ticks(u32::MAX)
    }

    /// The newest tick record, if any.
    pub fn newest(&self) -> Option<(u64, TickRecord)> {
        self.recent_ticks(1).pop()
    }

    /// Every pin audit record, oldest first.
    pub fn audit(&self) -> Vec<AuditRecord> {
        let mut records = self
            .runtime
            .block_on(self.pin_store().audit(u32::MAX, None))
            .unwrap_or_else(|e| panic!("{}: the pin audit is unreadable: {e}", self.label));
        records.reverse();
        records
    }
}

/// A started `sentinel` process; SIGKILLed when dropped if still running.
pub struct Proc {
    pub child: Child,
    pub log: PathBuf,
    pub what: String,
    pub started: Instant,
}

impl Proc {
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL now (a crash: no handler runs), then reaps it.
    pub fn sigkill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits up to `limit` for the exit.
    pub fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.sigkill();
        }
    }
}

/// What a tick line in the log contains (decided or published again): the tick is complete.
pub const TICK_LOGGED: &str = "sequence=";

/// Quantiles of durations, for the report lines.
pub fn spread(mut samples: Vec<Duration>) -> String {
    if samples.is_empty() {
        return "none".into();
    }
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    format!("median {:.2?}, p90 {:.2?}, max {:.2?} (n={})", at(0.5), at(0.9), at(1.0), samples.len())
}
