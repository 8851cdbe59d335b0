//! What only the SQLite store's files have, on real files: opening creates the folder and the
//! file, migrations run once and keep the data, and a file of a newer schema is refused and left
//! alone. The store's contract is `store_contract.rs`, run against SQLite and PostgreSQL.

use crate::postgres_common::{T0, commit};
use rusqlite::Connection;
use sentinel_adapters::sqlite::{SCHEMA_VERSION, SqliteStore};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::memory::MemoryStore;
use std::path::{Path, PathBuf};

fn db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("state/sentinel.db")
}

/// The schema version a file holds, read as the sqlite3 shell would.
fn user_version(path: &Path) -> i64 {
    Connection::open(path).unwrap().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap()
}

#[tokio::test]
async fn opening_creates_the_folder_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
    assert!(db(&dir).exists(), "open creates the parent directory and the file");
    assert_eq!(store.load_memory().await.unwrap(), None);
}

#[tokio::test]
async fn migrations_are_idempotent_and_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
    store.commit_tick(&commit(T0)).await.unwrap();
    assert_eq!(user_version(&db(&dir)), SCHEMA_VERSION);
    let mode: String = Connection::open(db(&dir)).unwrap().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    for _ in 0..2 {
        let again = SqliteStore::open(&db(&dir)).unwrap();
        assert_eq!(again.load_memory().await.unwrap(), Some(commit(T0).memory), "reopening keeps the data");
    }
    assert_eq!(user_version(&db(&dir)), SCHEMA_VERSION);

    Connection::open(db(&dir)).unwrap().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    match SqliteStore::open(&db(&dir)) {
        Err(err @ StoreError::NewerSchema { .. }) => {
            let StoreError::NewerSchema { ref location, found, known } = err else { unreachable!() };
            assert_eq!((found, known), (SCHEMA_VERSION + 1, SCHEMA_VERSION));
            assert!(location.ends_with("sentinel.db"), "{location}");
            assert!(err.to_string().contains("upgrade the sentinel"), "{err}");
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    assert_eq!(user_version(&db(&dir)), SCHEMA_VERSION + 1, "a refused file is left alone");
}
