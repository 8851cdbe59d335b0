//! Fixtures shared by the store tests (a directory module, so it is not a test target of its
//! own): one PostgreSQL server per test binary, a database per test, and the records a tick
//! writes, which the store contract writes to SQLite too.

use capacity_tests::servers::postgres::Postgres;
use sentinel_adapters::postgres::{PostgresStore, connect};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::memory::{PolicyRef, TickCommit, TickRecord};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;
use vocabulary::{
    Cause, Decision, Factors, FlapRecord, Instant, LatencySample, Level, Memory, Pin, ProtectionState, Reading, RecentEntry, Signal,
    ThrottleIntent,
};

pub const T0: Instant = 1_792_504_980; // 2026-10-20T14:03:00Z
pub const TIMEOUT: Duration = Duration::from_secs(5);

static SERVER: Mutex<Weak<Postgres>> = Mutex::new(Weak::new());

/// The test binary's server: started by the first test that needs it, and stopped (killed, its
/// directory removed) when the last test holding it is done, so none outlives the binary.
pub fn server() -> Arc<Postgres> {
    let mut shared = SERVER.lock().unwrap_or_else(PoisonError::into_inner);
    shared.upgrade().unwrap_or_else(|| {
        let server = Arc::new(Postgres::start());
        *shared = Arc::downgrade(&server);
        server
    })
}

/// A connection of its own, as psql would have.
pub async fn raw(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(conn);
    client
}

/// A database of its own on the binary's server.
pub struct Db {
    _server: Arc<Postgres>,
    pub port: u16,
    pub name: String,
}

impl Db {
    /// Creates the database `name` (one per test: tests run in parallel).
    pub async fn create(name: &str) -> Db {
        let server = server();
        raw(&server.url()).await.batch_execute(&format!("CREATE DATABASE {name}")).await.unwrap();
        Db { port: server.process.port, _server: server, name: name.into() }
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{}", self.port, self.name)
    }

    pub fn dsn(&self) -> String {
        format!("host=127.0.0.1 port={} user=postgres dbname={}", self.port, self.name)
    }

    /// A store of its own, as another sentinel process would have.
    pub async fn store(&self) -> PostgresStore {
        connect(&self.url(), TIMEOUT).await.unwrap_or_else(|e| panic!("{e}"))
    }

    pub async fn raw(&self) -> tokio_postgres::Client {
        raw(&self.url()).await
    }
}

pub fn pin(state: ProtectionState, reason: &str, expires_at: Instant) -> Pin {
    Pin { state, reason: reason.into(), expires_at, actor: "ops@example".into() }
}

pub fn sample(at: Instant, p95_ms: f64) -> LatencySample {
    LatencySample { at, p95_ms }
}

/// What one tick at `at` writes (the store contract's fixture, for both stores).
pub fn commit(at: Instant) -> TickCommit {
    let memory = Memory {
        state: ProtectionState::Constrained,
        state_since: at - 600,
        last_auto_change: Some(at - 600),
        recent: vec![RecentEntry::new(at, Level::Constrained)],
        // A flap-damping record, so that every store test round-trips it with the memory.
        flap: Some(FlapRecord { penalty: 2.5, updated_at: at - 120, suppressed: true, last_change: None }),
        ..Memory::fresh(at)
    };
    let decision = Decision {
        state: ProtectionState::Constrained,
        factors: Factors { bulk: 0.5, heavy: 0.75, write: 1.0, read: 1.0 },
        changed: false,
        previous: ProtectionState::Constrained,
        cause: Cause::Hold,
        level: Some(Level::Constrained),
        pending: None,
        throttles: ThrottleIntent::None,
        supporting: vec![],
        memory: memory.clone(),
        explanation: "holding constrained".into(),
        damping_hold: None,
    };
    let reading = Reading { cpu_pct: Some(71.5), connections_pct: None, scaling: Some(false), latency: vec![] };
    TickCommit {
        memory,
        expired_pin: None,
        expired_by: "sentinel".into(),
        samples: vec![],
        record: TickRecord {
            at,
            signal: Signal::Reading(reading),
            pin: None,
            throttles_enabled: false,
            stages_throttled: false,
            decision,
            policy: PolicyRef { name: "default".into(), version: "1.0.0".into(), digest: "sha256:ab".into() },
        },
        follows: None,
    }
}

/// The location and message of an `Unavailable` error.
pub fn unavailable(result: Result<impl std::fmt::Debug, StoreError>) -> (String, String) {
    match result {
        Err(StoreError::Unavailable { location, message }) => (location, message),
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

/// After a SIGKILL of the postmaster its children take a moment to notice and exit; until they
/// have, a new postmaster refuses the data directory ("pre-existing shared memory block").
/// They run in the data directory, so wait until no process does.
pub fn wait_for_backends_to_exit(data_dir: &str) {
    let started = std::time::Instant::now();
    let in_dir = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .any(|p| std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd == std::path::Path::new(data_dir)))
    };
    while in_dir() {
        assert!(started.elapsed() < Duration::from_secs(10), "old PostgreSQL processes still run in {data_dir}");
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("old server processes gone after {:?}", started.elapsed());
}
