//! What only the SQLite store's files have: a file that is not a database, a path that cannot
//! be created, and the audit table's migration. The store's contract (memory, pins, sequence,
//! ticks, baselines, fencing) is one suite run against SQLite and PostgreSQL
//! (`tests/tests/store_contract.rs`); the schema's migrations across opens are
//! `tests/tests/sqlite_store.rs`.

use super::*;
use sentinel_core::ports::pins::{AuditAction, PinStore};

fn db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("state/sentinel.db")
}

/// A second connection, as the sqlite3 shell or another process would have.
fn raw(dir: &tempfile::TempDir) -> Connection {
    Connection::open(db(dir)).unwrap()
}

#[test]
fn unusable_files_name_the_path_and_the_remedy() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("not-a-db.db");
    std::fs::write(&garbage, vec![b'x'; 4096]).unwrap();
    match SqliteStore::open(&garbage) {
        Err(StoreError::Corrupt { location, what, message }) => {
            assert_eq!(what, "the database file");
            assert!(location.ends_with("not-a-db.db"), "{location}");
            assert!(message.contains("move the file"), "{message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }

    // The path's parent is a file: neither the directory nor the database can be created.
    let under_file = garbage.join("sentinel.db");
    let err = SqliteStore::open(&under_file).unwrap_err();
    assert!(matches!(err, StoreError::Unavailable { .. }), "{err:?}");
    assert!(err.to_string().contains(&under_file.display().to_string()), "{err}");
}

/// Migration 3 rebuilds the audit table to take `refused` records: a store written before it
/// keeps every record and id, and the next id follows on.
#[tokio::test]
async fn an_audit_written_before_refusals_were_kept_migrates_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(db(&dir).parent().unwrap()).unwrap();
    {
        let conn = Connection::open(db(&dir)).unwrap();
        conn.execute_batch(FIRST_SCHEMA).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        let pin = r#"{"state":"critical","reason":"old","expires_at":1800003600,"actor":"alice"}"#;
        conn.execute("INSERT INTO pin_audit (at, actor, action, before, after) VALUES (1800000000, 'alice', 'set', NULL, ?1)", [pin])
            .unwrap();
        conn.execute("INSERT INTO pin_audit (at, actor, action, before, after) VALUES (1800000060, 'bob', 'clear', ?1, NULL)", [pin])
            .unwrap();
        let refused = conn.execute("INSERT INTO pin_audit (at, actor, action) VALUES (1, 'x', 'refused')", []);
        assert!(refused.is_err(), "the first schema does not know `refused`");
    }
    let store = SqliteStore::open(&db(&dir)).unwrap();
    assert_eq!(schema::user_version(&raw(&dir)).unwrap(), SCHEMA_VERSION);
    let audit = store.audit(10, None).await.unwrap();
    let kept: Vec<(i64, &str, AuditAction, Option<&str>)> =
        audit.iter().map(|r| (r.id, r.actor.as_str(), r.action, r.refusal.as_deref())).collect();
    assert_eq!(kept, [(2, "bob", AuditAction::Clear, None), (1, "alice", AuditAction::Set, None)]);
    assert_eq!(audit[1].after.as_ref().map(|p| p.reason.as_str()), Some("old"));
    let refused = store.record_refusal("dash", "set a pin: not staff (403)", 1800000120).await.unwrap();
    assert_eq!((refused.id, refused.action, refused.refusal.as_deref()), (3, AuditAction::Refused, Some("set a pin: not staff (403)")));
    assert_eq!(store.audit(1, None).await.unwrap(), vec![refused]);
    let unknown = raw(&dir).execute("INSERT INTO pin_audit (at, actor, action) VALUES (1, 'x', 'sideways')", []);
    assert!(unknown.is_err(), "the rebuilt table still checks the action");
}
