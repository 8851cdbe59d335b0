//! The stage records' write-ahead protocol (tests/src/stage_ledger.rs) against the SQLite store
//! and a real PostgreSQL server, and the upgrade of a store whose stage status predates it.

use crate::postgres_common;

use capacity_tests::stage_ledger::write_ahead_protocol;
use postgres_common::Db;
use sentinel_adapters::sqlite::SqliteStore;
use sentinel_core::ports::stage_ledger::{StageLedger, StagePhase};
use sentinel_core::ports::stages::StageLimits;

#[tokio::test]
async fn the_sqlite_store_keeps_the_first_original() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("sentinel.db")).unwrap();
    write_ahead_protocol(&store).await;
}

#[tokio::test]
async fn the_postgres_store_keeps_the_first_original() {
    let db = Db::create("stage_ledger").await;
    write_ahead_protocol(&db.store().await).await;
}

/// A store written before the records (schema 1: `stage_status`, engaged and an original) comes
/// up with its engaged targets as engaged records, to be restored to the same original.
#[tokio::test]
async fn engaged_targets_of_an_older_store_carry_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(sentinel_adapters::sqlite::FIRST_SCHEMA).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute_batch(
            r#"INSERT INTO stage_status VALUES ('a1/prod', 1, '{"method_settings_key":"*/*","existed":true,"rate_limit":100.0,"burst_limit":200}', 60);
               INSERT INTO stage_status VALUES ('a1/live', 1, NULL, 60);
               INSERT INTO stage_status VALUES ('a1/test', 0, NULL, 60);"#,
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    let records = store.stage_records().await.unwrap();
    assert_eq!(records.keys().collect::<Vec<_>>(), ["a1/live", "a1/prod"]);
    let prod = &records["a1/prod"];
    assert_eq!((prod.phase, prod.target.rest_api_id.as_str(), prod.target.stage.as_str()), (StagePhase::Engaged, "a1", "prod"));
    assert_eq!(prod.original, StageLimits { existed: true, rate_limit: Some(100.0), burst_limit: Some(200) });
    assert_eq!(records["a1/live"].original, StageLimits { existed: true, rate_limit: None, burst_limit: None });
}
