//! The embedded default store: one SQLite file for memory, pins and their audit, latency
//! samples, baselines, tick records and stage status (docs/behaviour.md §11), and a sibling lock
//! file for leadership.
//!
//! The connection runs in WAL mode with `synchronous=NORMAL` and a busy timeout, so that a
//! second process (`sentinel pin`, `sentinel status`) can read while a tick writes. rusqlite is
//! blocking: every call runs on tokio's blocking pool over one `Arc<Lock<Connection>>`. One
//! connection per store is enough: the sentinel makes a handful of short calls a minute, and
//! the mutex also serialises this process's transactions so that they never see `SQLITE_BUSY`
//! from each other.

mod baselines;
mod lock;
mod memory;
mod pins;
mod schema;
mod stages;
#[cfg(test)]
mod tests;

pub use lock::{SqliteLease, SqliteLock};
pub use schema::{FIRST_SCHEMA, SCHEMA_VERSION};

use rusqlite::{Connection, ErrorCode};
use sentinel_core::ports::StoreError;
use sentinel_core::sync::Lock;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How long a statement waits for another process's write lock before it fails.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The SQLite store. Cheap to clone: clones share the connection.
#[derive(Clone)]
pub struct SqliteStore {
    shared: Arc<Shared>,
}

struct Shared {
    path: PathBuf,
    /// The path as errors name it.
    location: String,
    conn: Lock<Connection>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.shared.path).finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating it and its parent directories when missing) the store at `path`, and
    /// brings its schema up to [`SCHEMA_VERSION`]. A file written by a newer sentinel is
    /// refused with `StoreError::NewerSchema`.
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let location = path.display().to_string();
        let unavailable = |message: String| StoreError::Unavailable { location: location.clone(), message };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| unavailable(format!("cannot create its directory {}: {e}", parent.display())))?;
        }
        let mut conn = Connection::open(path).map_err(|e| sql_error(&location, "opening the database", e))?;
        configure(&conn).map_err(|e| sql_error(&location, "configuring the connection", e))?;
        schema::migrate(&mut conn).map_err(|fail| fail.into_store_error(&location, "migrating the schema"))?;
        Ok(SqliteStore { shared: Arc::new(Shared { path: path.to_path_buf(), location, conn: Lock::new("SQLite connection", conn) }) })
    }

    /// The schema's version of the database at `path` (`PRAGMA user_version`), read without
    /// changing it (opened read-only: no migration, no journal mode switched, no directory made);
    /// `None` when there is no database yet. What `sentinel check --connect` reports.
    pub fn schema_version(path: &Path) -> Result<Option<i64>, StoreError> {
        if !path.exists() {
            return Ok(None);
        }
        let location = path.display().to_string();
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| sql_error(&location, "opening the database read-only", e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| sql_error(&location, "configuring the connection", e))?;
        conn.query_row("PRAGMA user_version", [], |row| row.get(0))
            .map(Some)
            .map_err(|e| sql_error(&location, "reading the schema's version", e))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Runs `work` on the blocking pool with the connection; `doing` names the operation in
    /// errors ("committing the tick").
    async fn run<T, F>(&self, doing: &'static str, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, Fail> + Send + 'static,
    {
        let shared = Arc::clone(&self.shared);
        let location = self.shared.location.clone();
        let joined = tokio::task::spawn_blocking(move || {
            // A panic mid-transaction rolled it back when the transaction dropped; the
            // connection itself is still sound.
            let mut conn = shared.conn.lock();
            work(&mut conn).map_err(|fail| fail.into_store_error(&shared.location, doing))
        })
        .await;
        joined.unwrap_or_else(|e| {
            Err(StoreError::Unavailable {
                location,
                message: format!("{doing} stopped unexpectedly ({e}); the transaction was rolled back, retry"),
            })
        })
    }
}

/// WAL, `synchronous=NORMAL` and the busy timeout. WAL is a property of the file; the others
/// of this connection.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(mode, "SQLite did not switch to WAL journaling; readers may wait for writers");
    }
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    Ok(())
}

/// Why a SQLite call failed, before the location is known.
pub(super) type Fail = crate::store_fail::StoreFail<rusqlite::Error>;

impl From<rusqlite::Error> for Fail {
    fn from(e: rusqlite::Error) -> Fail {
        Fail::Backend(e)
    }
}

impl Fail {
    /// The port's error for the store at `location`, while `doing` something.
    fn into_store_error(self, location: &str, doing: &str) -> StoreError {
        self.described(location, doing, sql_error)
    }
}

/// Maps a SQLite error to the port's error, with advice for the common causes.
fn sql_error(location: &str, doing: &str, e: rusqlite::Error) -> StoreError {
    let location = location.to_string();
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            location,
            what: "the database file",
            message: format!("{doing}: {e}; move the file (and its -wal and -shm files) aside and the sentinel starts a new one"),
        },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Unavailable {
            location,
            message: format!(
                "{doing}: another process kept the database locked for more than {BUSY_TIMEOUT:?} ({e}); \
                 retry, and look for a stuck process using the file"
            ),
        },
        Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => StoreError::Unavailable {
            location,
            message: format!("{doing}: {e}; the sentinel needs to read and write the file and create files beside it"),
        },
        Some(ErrorCode::DiskFull) => StoreError::Unavailable { location, message: format!("{doing}: {e}; free disk space") },
        _ => StoreError::Unavailable { location, message: format!("{doing}: {e}") },
    }
}

/// Wall-clock unix seconds, for `created` columns (never used for decisions).
pub(super) fn wall_clock() -> i64 {
    sentinel_core::clock::now_seconds()
}
