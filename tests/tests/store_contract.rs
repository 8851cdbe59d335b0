//! The store contract: one suite, run against the SQLite store on real files and the PostgreSQL
//! store on a real server. Each rule is written once (a function over [`Backend`]) and run
//! once per store by `contract!`; what only one store has (SQLite's migrations and files,
//! PostgreSQL's servers down, hung or killed, racing processes) stays in `sqlite_store.rs`,
//! `crates/adapters/src/sqlite/tests.rs` and `postgres_store.rs`.
//!
//! Several stores opened on one database stand for separate sentinel processes; statements run
//! as the database's own shell would run them (the sqlite3 shell, psql).

use crate::postgres_common::{Db, T0, commit, pin, sample};
use sentinel_adapters::postgres::PostgresStore;
use sentinel_adapters::sqlite::SqliteStore;
use sentinel_core::ports::StoreError;
use sentinel_core::ports::baselines::BaselineStore;
use sentinel_core::ports::memory::{ChannelOutcome, MemoryStore, TickCommit};
use sentinel_core::ports::pins::{AuditAction, PinStore};
use std::path::PathBuf;
use vocabulary::{ApiBaseline, ApiSamples, ProtectionState};

/// One store under the contract: a database, and a way in beside the store.
trait Backend {
    type Store: MemoryStore + PinStore + BaselineStore;
    /// A store of its own on the database, as another sentinel process would have.
    async fn store(&self) -> Self::Store;
    /// Runs `statements` as the database's shell would.
    async fn sql(&self, statements: &str);
    /// The stored publication outcomes of every tick, by sequence, as text.
    async fn publications(&self) -> Vec<Option<String>>;
    /// A statement after which writing a tick at instant 1 fails inside the store's transaction.
    fn refuse_ticks_at_one(&self) -> &'static str;
    /// How the store's errors name the database (the end of its `location`).
    fn location_end(&self) -> String;
}

struct Sqlite {
    dir: tempfile::TempDir,
}

impl Sqlite {
    fn new() -> Sqlite {
        Sqlite { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().join("state/sentinel.db")
    }
}

impl Backend for Sqlite {
    type Store = SqliteStore;

    async fn store(&self) -> SqliteStore {
        SqliteStore::open(&self.path()).unwrap_or_else(|e| panic!("{e}"))
    }

    async fn sql(&self, statements: &str) {
        rusqlite::Connection::open(self.path()).unwrap().execute_batch(statements).unwrap();
    }

    async fn publications(&self) -> Vec<Option<String>> {
        let conn = rusqlite::Connection::open(self.path()).unwrap();
        let mut statement = conn.prepare("SELECT publication FROM ticks ORDER BY sequence").unwrap();
        statement.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    }

    fn refuse_ticks_at_one(&self) -> &'static str {
        "CREATE TRIGGER not_now BEFORE INSERT ON ticks WHEN NEW.at = 1 BEGIN SELECT RAISE(ABORT, 'not now'); END;"
    }

    fn location_end(&self) -> String {
        "sentinel.db".into()
    }
}

struct Postgres {
    db: Db,
}

impl Postgres {
    async fn new(name: &str) -> Postgres {
        Postgres { db: Db::create(name).await }
    }
}

impl Backend for Postgres {
    type Store = PostgresStore;

    async fn store(&self) -> PostgresStore {
        self.db.store().await
    }

    async fn sql(&self, statements: &str) {
        self.db.raw().await.batch_execute(statements).await.unwrap();
    }

    async fn publications(&self) -> Vec<Option<String>> {
        let rows = self.db.raw().await.query("SELECT publication::text FROM ticks ORDER BY sequence", &[]).await.unwrap();
        rows.iter().map(|r| r.get(0)).collect()
    }

    fn refuse_ticks_at_one(&self) -> &'static str {
        "ALTER TABLE ticks ADD CONSTRAINT not_now CHECK (at <> 1)"
    }

    fn location_end(&self) -> String {
        format!("/{}", self.db.name)
    }
}

/// Each rule, run once on SQLite and once on PostgreSQL (a database named after the rule).
macro_rules! contract {
    ($($rule:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $rule() {
                    super::$rule(&super::Sqlite::new()).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $rule() {
                    super::$rule(&super::Postgres::new(&format!("contract_{}", stringify!($rule))).await).await;
                }
            )*
        }
    };
}

contract!(
    memory_round_trips_across_processes,
    a_corrupt_memory_row_is_corrupt_and_the_next_commit_repairs_it,
    pin_replace_and_clear_are_audited_with_before_and_after,
    a_corrupt_pin_row_is_corrupt_and_can_be_replaced,
    expiry_is_audited_only_when_the_stored_pin_is_unchanged,
    the_sequence_grows_across_processes_and_is_never_reused,
    tick_records_and_publication_outcomes,
    samples_are_grouped_by_api_and_baselines_replace_their_hour,
    a_commit_that_follows_an_older_tick_is_refused_and_writes_nothing,
);

async fn memory_round_trips_across_processes(b: &impl Backend) {
    let writer = b.store().await;
    assert_eq!(writer.load_memory().await.unwrap(), None);
    let first = commit(T0);
    writer.commit_tick(&first).await.unwrap();
    let reader = b.store().await; // while the writer is still open
    assert_eq!(reader.load_memory().await.unwrap(), Some(first.memory.clone()));
    let mut second = commit(T0 + 60);
    second.memory.state = ProtectionState::Critical;
    reader.commit_tick(&second).await.unwrap();
    assert_eq!(writer.load_memory().await.unwrap(), Some(second.memory.clone()));
    drop((writer, reader));
    let again = b.store().await;
    assert_eq!(again.load_memory().await.unwrap(), Some(second.memory));
    assert_eq!(again.recent_ticks(10).await.unwrap()[0].1, second.record);
}

async fn a_corrupt_memory_row_is_corrupt_and_the_next_commit_repairs_it(b: &impl Backend) {
    let store = b.store().await;
    store.commit_tick(&commit(T0)).await.unwrap();
    b.sql(r#"UPDATE memory SET memory = '{"state": "Sideways"}'"#).await;
    match store.load_memory().await {
        Err(StoreError::Corrupt { location, what, message }) => {
            assert_eq!(what, "memory");
            assert!(location.ends_with(&b.location_end()), "{location}");
            assert!(message.contains("starts fresh"), "says what happens: {message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    let next = commit(T0 + 60);
    assert_eq!(store.commit_tick(&next).await.unwrap().sequence, 2, "a corrupt memory row keeps the sequence");
    assert_eq!(store.load_memory().await.unwrap(), Some(next.memory));
}

async fn pin_replace_and_clear_are_audited_with_before_and_after(b: &impl Backend) {
    let store = b.store().await;
    let (p1, p2) = (pin(ProtectionState::Critical, "db failover", T0 + 3600), pin(ProtectionState::Normal, "all clear", T0 + 7200));
    assert_eq!(store.current_pin().await.unwrap(), None);
    assert_eq!(store.clear_pin("ops", T0).await.unwrap(), None, "clearing nothing writes nothing");
    assert!(store.audit(10, None).await.unwrap().is_empty());

    let set = store.replace_pin(&p1, "alice", T0).await.unwrap();
    assert_eq!((set.action, set.actor.as_str(), set.at), (AuditAction::Set, "alice", T0));
    assert_eq!((set.before.clone(), set.after.clone()), (None, Some(p1.clone())));
    assert_eq!(store.current_pin().await.unwrap(), Some(p1.clone()));
    let replaced = store.replace_pin(&p2, "bob", T0 + 10).await.unwrap();
    assert_eq!(replaced.action, AuditAction::Replace);
    assert_eq!((replaced.before.clone(), replaced.after.clone()), (Some(p1), Some(p2.clone())));
    assert_eq!(b.store().await.current_pin().await.unwrap(), Some(p2.clone()), "another process sees it");

    let cleared = store.clear_pin("carol", T0 + 20).await.unwrap().expect("a pin was there");
    assert_eq!((cleared.action, cleared.before.clone(), cleared.after.clone()), (AuditAction::Clear, Some(p2), None));
    assert_eq!(store.current_pin().await.unwrap(), None);
    assert_eq!(store.clear_pin("carol", T0 + 30).await.unwrap(), None);

    let all = store.audit(10, None).await.unwrap();
    assert_eq!(all, vec![cleared.clone(), replaced.clone(), set.clone()], "newest first");
    assert!(set.id < replaced.id && replaced.id < cleared.id);
    assert_eq!(store.audit(1, None).await.unwrap(), vec![cleared.clone()]);
    assert_eq!(store.audit(10, Some(cleared.id)).await.unwrap(), vec![replaced.clone(), set.clone()]);
    assert_eq!(store.audit(1, Some(replaced.id)).await.unwrap(), vec![set]);
    assert_eq!(store.audit(0, None).await.unwrap(), vec![]);
}

async fn a_corrupt_pin_row_is_corrupt_and_can_be_replaced(b: &impl Backend) {
    let store = b.store().await;
    store.replace_pin(&pin(ProtectionState::Critical, "x", T0 + 60), "alice", T0).await.unwrap();
    b.sql(r#"UPDATE pin SET pin = '"garbage"'"#).await;
    assert!(matches!(store.current_pin().await, Err(StoreError::Corrupt { what: "pin", .. })));
    let p = pin(ProtectionState::Normal, "repair", T0 + 60);
    let record = store.replace_pin(&p, "bob", T0 + 1).await.unwrap();
    assert_eq!((record.action, record.before, record.after), (AuditAction::Replace, None, Some(p.clone())));
    assert_eq!(store.current_pin().await.unwrap(), Some(p));
}

async fn expiry_is_audited_only_when_the_stored_pin_is_unchanged(b: &impl Backend) {
    let store = b.store().await;
    let old = pin(ProtectionState::Emergency, "incident", T0);
    store.replace_pin(&old, "alice", T0 - 3600).await.unwrap();
    // Stored JSON with other spacing, key order and an earlier release's case name is still the
    // same pin: values are compared, not text.
    b.sql(r#"UPDATE pin SET pin = '{ "actor": "ops@example", "expires_at": 1792504980, "reason": "incident", "state": "Emergency" }'"#)
        .await;

    let mut tick = commit(T0 + 60);
    tick.expired_pin = Some(old.clone());
    tick.expired_by = "sentinel@host-a".into();
    let audit = store.commit_tick(&tick).await.unwrap().expiry_audit.expect("the expired pin was removed");
    assert_eq!((audit.action, audit.actor.as_str(), audit.at), (AuditAction::Expire, "sentinel@host-a", T0 + 60));
    assert_eq!((audit.before.clone(), audit.after.clone()), (Some(old.clone()), None));
    assert_eq!(store.current_pin().await.unwrap(), None);
    assert_eq!(store.audit(1, None).await.unwrap(), vec![audit]);

    // An operator set a new pin between the tick's read and its commit: it stays.
    let new = pin(ProtectionState::Critical, "still busy", T0 + 7200);
    store.replace_pin(&old, "alice", T0 + 100).await.unwrap();
    b.store().await.replace_pin(&new, "bob", T0 + 110).await.unwrap();
    let mut tick = commit(T0 + 120);
    tick.expired_pin = Some(old);
    assert_eq!(store.commit_tick(&tick).await.unwrap().expiry_audit, None);
    assert_eq!(store.current_pin().await.unwrap(), Some(new));
    assert_eq!(store.audit(10, None).await.unwrap().len(), 4, "set, expire, set, replace");
    assert_eq!(store.load_memory().await.unwrap(), Some(tick.memory), "the rest of the tick committed");
}

async fn the_sequence_grows_across_processes_and_is_never_reused(b: &impl Backend) {
    let store = b.store().await;
    assert_eq!(store.commit_tick(&commit(T0)).await.unwrap().sequence, 1);
    assert_eq!(store.commit_tick(&commit(T0 + 60)).await.unwrap().sequence, 2);
    drop(store);
    let other = b.store().await;
    assert_eq!(other.commit_tick(&commit(T0 + 120)).await.unwrap().sequence, 3);
    // Memory reset by hand and even the tick rows deleted: sequences still only grow.
    b.sql("DELETE FROM memory; DELETE FROM ticks;").await;
    drop(other);
    let again = b.store().await;
    assert_eq!(again.load_memory().await.unwrap(), None);
    assert_eq!(again.commit_tick(&commit(T0 + 180)).await.unwrap().sequence, 4);
    // A failed commit uses no sequence number.
    b.sql(b.refuse_ticks_at_one()).await;
    assert!(again.commit_tick(&commit(1)).await.is_err());
    assert_eq!(again.commit_tick(&commit(T0 + 240)).await.unwrap().sequence, 5);
}

async fn tick_records_and_publication_outcomes(b: &impl Backend) {
    let store = b.store().await;
    assert!(store.recent_ticks(5).await.unwrap().is_empty());
    let ticks: Vec<TickCommit> = (0..3).map(|i| commit(T0 + 60 * i)).collect();
    for t in &ticks {
        store.commit_tick(t).await.unwrap();
    }
    let recent = store.recent_ticks(2).await.unwrap();
    assert_eq!(recent, vec![(3, ticks[2].record.clone()), (2, ticks[1].record.clone())], "newest first");

    let outcomes = vec![
        ChannelOutcome { channel: "cache".into(), ok: true, error: None },
        ChannelOutcome { channel: "parameter".into(), ok: false, error: Some("timed out".into()) },
    ];
    store.record_publication(2, &outcomes).await.unwrap();
    let stored = b.publications().await;
    assert_eq!(serde_json::from_str::<Vec<ChannelOutcome>>(stored[1].as_ref().unwrap()).unwrap(), outcomes);
    assert_eq!((&stored[0], &stored[2]), (&None, &None), "the other ticks are untouched");
    let err = store.record_publication(99, &outcomes).await.unwrap_err();
    assert!(err.to_string().contains("no tick 99"), "{err}");
}

async fn samples_are_grouped_by_api_and_baselines_replace_their_hour(b: &impl Backend) {
    let store = b.store().await;
    assert_eq!(store.latest_baselines().await.unwrap(), None);
    assert!(store.samples_since(0).await.unwrap().is_empty());
    for (i, at) in [T0, T0 + 60, T0 + 120].into_iter().enumerate() {
        let mut tick = commit(at);
        let ms = 100.0 + i as f64;
        tick.samples = vec![("orders".into(), sample(at, ms)), ("accounts".into(), sample(at, ms * 2.0))];
        store.commit_tick(&tick).await.unwrap();
    }
    // A repeated tick for the same minute replaces its samples; a non-finite one is skipped.
    let mut again = commit(T0 + 120);
    again.samples = vec![("orders".into(), sample(T0 + 120, 250.0)), ("orders".into(), sample(T0 + 180, f64::NAN))];
    store.commit_tick(&again).await.unwrap();
    let expected = vec![
        ApiSamples { api: "accounts".into(), samples: vec![sample(T0 + 60, 202.0), sample(T0 + 120, 204.0)] },
        ApiSamples { api: "orders".into(), samples: vec![sample(T0 + 60, 101.0), sample(T0 + 120, 250.0)] },
    ];
    assert_eq!(store.samples_since(T0 + 60).await.unwrap(), expected);

    let h1 = T0 - T0 % 3600 + 3600;
    let first = vec![
        ApiBaseline { api: "orders".into(), baseline_ms: Some(101.0), samples: 3 },
        ApiBaseline { api: "accounts".into(), baseline_ms: None, samples: u32::MAX },
    ];
    store.save_baselines(h1, &first, 0).await.unwrap();
    assert_eq!(store.latest_baselines().await.unwrap(), Some((h1, vec![first[1].clone(), first[0].clone()])), "by api");
    // Recomputing the hour replaces its rows; pruning drops samples before `prune_before`.
    let again = vec![ApiBaseline { api: "orders".into(), baseline_ms: Some(150.0), samples: 4 }];
    store.save_baselines(h1, &again, T0 + 60).await.unwrap();
    assert_eq!(store.latest_baselines().await.unwrap(), Some((h1, again.clone())));
    assert_eq!(store.samples_since(0).await.unwrap().iter().map(|g| g.samples.len()).sum::<usize>(), 4);
    // An older hour saved later does not hide the newer one; an hour with no API still counts.
    store.save_baselines(h1 - 3600, &first, 0).await.unwrap();
    assert_eq!(store.latest_baselines().await.unwrap(), Some((h1, again)));
    store.save_baselines(h1 + 3600, &[], 0).await.unwrap();
    assert_eq!(b.store().await.latest_baselines().await.unwrap(), Some((h1 + 3600, vec![])));
}

/// Issue 34, finding 4: a tick that decided on memory another tick has replaced since (a frozen
/// leader that resumes) is refused and writes nothing; before the fence its commit put the
/// memory back in time. (Racing commits: `postgres_store.rs`.)
async fn a_commit_that_follows_an_older_tick_is_refused_and_writes_nothing(b: &impl Backend) {
    let store = b.store().await;
    assert_eq!(store.commit_tick(&TickCommit { follows: Some(0), ..commit(T0) }).await.unwrap().sequence, 1);
    let newer = TickCommit { follows: Some(1), ..commit(T0 + 60) };
    assert_eq!(store.commit_tick(&newer).await.unwrap().sequence, 2);

    let mut stale = TickCommit { follows: Some(1), ..commit(T0 + 60) }; // it read tick 1 and decided
    stale.memory.state = ProtectionState::Normal;
    match b.store().await.commit_tick(&stale).await {
        Err(StoreError::Superseded { follows: 1, newest: 2, .. }) => {}
        other => panic!("expected Superseded, got {other:?}"),
    }
    assert_eq!(store.load_memory().await.unwrap(), Some(newer.memory.clone()), "the newer memory stands");
    assert_eq!(store.recent_ticks(5).await.unwrap().len(), 2, "no tick record either");
    // Up to date, and unchecked (the newest tick could not be read), commit with the next number.
    assert_eq!(store.commit_tick(&TickCommit { follows: Some(2), ..commit(T0 + 120) }).await.unwrap().sequence, 3);
    assert_eq!(store.commit_tick(&commit(T0 + 180)).await.unwrap().sequence, 4);
}
