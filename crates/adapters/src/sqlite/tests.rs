//! The SQLite store on real files. Several `SqliteStore`s on one file stand for separate
//! processes: each has its own connection.

use super::*;
use sentinel_core::ports::baselines::BaselineStore;
use sentinel_core::ports::memory::{ChannelOutcome, MemoryStore, PolicyRef, TickCommit, TickRecord};
use sentinel_core::ports::pins::{AuditAction, PinStore};
use vocabulary::{
    ApiBaseline, ApiSamples, Cause, Decision, Factors, FlapRecord, Instant, LatencySample, Level, Memory, Pin, ProtectionState, Reading,
    RecentEntry, Signal, ThrottleIntent,
};
const T0: Instant = 1_792_504_980; // 2026-10-20T14:03:00Z

fn db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("state/sentinel.db")
}

/// A second connection, as the sqlite3 shell or another process would have.
fn raw(dir: &tempfile::TempDir) -> Connection {
    Connection::open(db(dir)).unwrap()
}

fn memory(at: Instant, state: ProtectionState) -> Memory {
    Memory {
        state,
        state_since: at - 600,
        last_auto_change: Some(at - 600),
        recent: vec![RecentEntry::new(at, Level::Constrained)],
        // A flap-damping record, so that every store test round-trips it with the memory.
        flap: Some(FlapRecord { penalty: 2.5, updated_at: at - 120, suppressed: true, last_change: None }),
        ..Memory::fresh(at)
    }
}

fn pin(state: ProtectionState, reason: &str, expires_at: Instant) -> Pin {
    Pin { state, reason: reason.into(), expires_at, actor: "ops@example".into() }
}

fn commit(at: Instant) -> TickCommit {
    let mem = memory(at, ProtectionState::Constrained);
    let factors = Factors { bulk: 0.5, heavy: 0.75, write: 1.0, read: 1.0 };
    let decision = Decision {
        state: ProtectionState::Constrained,
        factors,
        changed: false,
        previous: ProtectionState::Constrained,
        cause: Cause::Hold,
        level: Some(Level::Constrained),
        pending: None,
        throttles: ThrottleIntent::None,
        supporting: vec![],
        memory: mem.clone(),
        explanation: "holding constrained".into(),
        damping_hold: None,
    };
    let reading = Reading { cpu_pct: Some(71.5), connections_pct: None, scaling: Some(false), latency: vec![] };
    TickCommit {
        memory: mem,
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

fn sample(at: Instant, p95_ms: f64) -> LatencySample {
    LatencySample { at, p95_ms }
}

#[tokio::test]
async fn memory_round_trips_across_opens() {
    let dir = tempfile::tempdir().unwrap();
    let writer = SqliteStore::open(&db(&dir)).unwrap();
    assert!(db(&dir).exists(), "open creates the parent directory and the file");
    assert_eq!(writer.load_memory().await.unwrap(), None);

    let first = commit(T0);
    writer.commit_tick(&first).await.unwrap();
    let reader = SqliteStore::open(&db(&dir)).unwrap(); // while the writer is still open
    assert_eq!(reader.load_memory().await.unwrap(), Some(first.memory.clone()));

    let mut second = commit(T0 + 60);
    second.memory.state = ProtectionState::Critical;
    reader.commit_tick(&second).await.unwrap();
    assert_eq!(writer.load_memory().await.unwrap(), Some(second.memory.clone()));

    drop((writer, reader));
    let reopened = SqliteStore::open(&db(&dir)).unwrap();
    assert_eq!(reopened.load_memory().await.unwrap(), Some(second.memory));
    assert_eq!(reopened.recent_ticks(10).await.unwrap()[0].1, second.record);
}

#[tokio::test]
async fn corrupt_memory_row_is_corrupt_and_the_next_commit_repairs_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
    store.commit_tick(&commit(T0)).await.unwrap();
    raw(&dir).execute("UPDATE memory SET memory = '{\"state\": \"Sideways\"'", []).unwrap();

    match store.load_memory().await {
        Err(StoreError::Corrupt { location, what, message }) => {
            assert_eq!(what, "memory");
            assert!(location.ends_with("sentinel.db"), "{location}");
            assert!(message.contains("starts fresh"), "says what happens: {message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }

    let next = commit(T0 + 60);
    let committed = store.commit_tick(&next).await.unwrap();
    assert_eq!(committed.sequence, 2, "a corrupt memory row does not reset the sequence");
    assert_eq!(store.load_memory().await.unwrap(), Some(next.memory));
}

#[tokio::test]
async fn pin_replace_and_clear_are_audited_with_before_and_after() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
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
    assert_eq!((replaced.before.clone(), replaced.after.clone()), (Some(p1.clone()), Some(p2.clone())));
    // Another process sees the same pin.
    assert_eq!(SqliteStore::open(&db(&dir)).unwrap().current_pin().await.unwrap(), Some(p2.clone()));

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

#[tokio::test]
async fn corrupt_pin_row_is_corrupt_and_can_be_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
    store.replace_pin(&pin(ProtectionState::Critical, "x", T0 + 60), "alice", T0).await.unwrap();
    raw(&dir).execute("UPDATE pin SET pin = 'garbage'", []).unwrap();
    assert!(matches!(store.current_pin().await, Err(StoreError::Corrupt { what: "pin", .. })));

    let p = pin(ProtectionState::Normal, "repair", T0 + 60);
    let record = store.replace_pin(&p, "bob", T0 + 1).await.unwrap();
    assert_eq!((record.action, record.before, record.after), (AuditAction::Replace, None, Some(p.clone())));
    assert_eq!(store.current_pin().await.unwrap(), Some(p));
}

#[tokio::test]
async fn expiry_is_audited_only_when_the_stored_pin_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
    let old = pin(ProtectionState::Emergency, "incident", T0);
    store.replace_pin(&old, "alice", T0 - 3600).await.unwrap();

    let mut tick = commit(T0 + 60);
    tick.expired_pin = Some(old.clone());
    tick.expired_by = "sentinel@host-a".into();
    let committed = store.commit_tick(&tick).await.unwrap();
    let audit = committed.expiry_audit.expect("the expired pin was removed");
    assert_eq!((audit.action, audit.actor.as_str(), audit.at), (AuditAction::Expire, "sentinel@host-a", T0 + 60));
    assert_eq!((audit.before.clone(), audit.after.clone()), (Some(old.clone()), None));
    assert_eq!(store.current_pin().await.unwrap(), None);
    assert_eq!(store.audit(1, None).await.unwrap(), vec![audit]);

    // An operator set a new pin between the tick's read and its commit: it stays.
    let new = pin(ProtectionState::Critical, "still busy", T0 + 7200);
    store.replace_pin(&old, "alice", T0 + 100).await.unwrap();
    store.replace_pin(&new, "bob", T0 + 110).await.unwrap();
    let mut tick = commit(T0 + 120);
    tick.expired_pin = Some(old);
    let committed = store.commit_tick(&tick).await.unwrap();
    assert_eq!(committed.expiry_audit, None);
    assert_eq!(store.current_pin().await.unwrap(), Some(new));
    assert_eq!(store.audit(10, None).await.unwrap().len(), 4, "set, expire, set, replace");
    assert_eq!(store.load_memory().await.unwrap(), Some(tick.memory), "the rest of the tick committed");
}

#[tokio::test]
async fn sequence_grows_across_reopens_and_is_never_reused() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
    assert_eq!(store.commit_tick(&commit(T0)).await.unwrap().sequence, 1);
    assert_eq!(store.commit_tick(&commit(T0 + 60)).await.unwrap().sequence, 2);
    drop(store);

    let other = SqliteStore::open(&db(&dir)).unwrap();
    assert_eq!(other.commit_tick(&commit(T0 + 120)).await.unwrap().sequence, 3);
    // Memory reset by hand and even the tick rows deleted: sequences still only grow.
    raw(&dir).execute_batch("DELETE FROM memory; DELETE FROM ticks;").unwrap();
    drop(other);
    let reopened = SqliteStore::open(&db(&dir)).unwrap();
    assert_eq!(reopened.load_memory().await.unwrap(), None);
    assert_eq!(reopened.commit_tick(&commit(T0 + 180)).await.unwrap().sequence, 4);
}

#[tokio::test]
async fn tick_records_and_publication_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
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
    let stored: Option<String> = raw(&dir).query_row("SELECT publication FROM ticks WHERE sequence = 2", [], |r| r.get(0)).unwrap();
    assert_eq!(serde_json::from_str::<Vec<ChannelOutcome>>(&stored.unwrap()).unwrap(), outcomes);
    let untouched: Option<String> = raw(&dir).query_row("SELECT publication FROM ticks WHERE sequence = 3", [], |r| r.get(0)).unwrap();
    assert_eq!(untouched, None);

    let err = store.record_publication(99, &outcomes).await.unwrap_err();
    assert!(err.to_string().contains("no tick 99"), "{err}");
}

#[tokio::test]
async fn samples_are_grouped_by_api_and_baselines_replace_their_hour() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
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

    let all = store.samples_since(T0 + 60).await.unwrap();
    assert_eq!(
        all,
        vec![
            ApiSamples { api: "accounts".into(), samples: vec![sample(T0 + 60, 202.0), sample(T0 + 120, 204.0)] },
            ApiSamples { api: "orders".into(), samples: vec![sample(T0 + 60, 101.0), sample(T0 + 120, 250.0)] },
        ]
    );

    let h1 = T0 - T0 % 3600 + 3600;
    let first = vec![
        ApiBaseline { api: "orders".into(), baseline_ms: Some(101.0), samples: 3 },
        ApiBaseline { api: "accounts".into(), baseline_ms: None, samples: 2 },
    ];
    store.save_baselines(h1, &first, 0).await.unwrap();
    let (hour, saved) = store.latest_baselines().await.unwrap().unwrap();
    assert_eq!(hour, h1);
    assert_eq!(saved, vec![first[1].clone(), first[0].clone()], "sorted by api");

    // Recomputing the hour replaces its rows; pruning drops samples before `prune_before`.
    let again = vec![ApiBaseline { api: "orders".into(), baseline_ms: Some(150.0), samples: 4 }];
    store.save_baselines(h1, &again, T0 + 60).await.unwrap();
    assert_eq!(store.latest_baselines().await.unwrap(), Some((h1, again.clone())));
    assert_eq!(store.samples_since(0).await.unwrap().iter().map(|g| g.samples.len()).sum::<usize>(), 4);

    // An older hour saved later does not hide the newer one; an hour with no API still counts.
    store.save_baselines(h1 - 3600, &first, 0).await.unwrap();
    assert_eq!(store.latest_baselines().await.unwrap(), Some((h1, again)));
    store.save_baselines(h1 + 3600, &[], 0).await.unwrap();
    let reopened = SqliteStore::open(&db(&dir)).unwrap();
    assert_eq!(reopened.latest_baselines().await.unwrap(), Some((h1 + 3600, vec![])));
}

#[tokio::test]
async fn migrations_are_idempotent_and_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
    store.commit_tick(&commit(T0)).await.unwrap();
    let version = |conn: &Connection| schema::user_version(conn).unwrap();
    assert_eq!(version(&raw(&dir)), SCHEMA_VERSION);
    let mode: String = raw(&dir).query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    for _ in 0..2 {
        let again = SqliteStore::open(&db(&dir)).unwrap();
        assert_eq!(again.load_memory().await.unwrap(), Some(commit(T0).memory), "reopening keeps the data");
    }
    assert_eq!(version(&raw(&dir)), SCHEMA_VERSION);

    raw(&dir).pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
    match SqliteStore::open(&db(&dir)) {
        Err(err @ StoreError::NewerSchema { .. }) => {
            let StoreError::NewerSchema { ref location, found, known } = err else { unreachable!() };
            assert_eq!((found, known), (SCHEMA_VERSION + 1, SCHEMA_VERSION));
            assert!(location.ends_with("sentinel.db"), "{location}");
            assert!(err.to_string().contains("upgrade the sentinel"), "{err}");
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    assert_eq!(version(&raw(&dir)), SCHEMA_VERSION + 1, "a refused file is left alone");
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

/// Issue 34, finding 4: a tick that decided on memory another tick has replaced since (a frozen
/// leader that resumes) is refused and writes nothing; before the fence its commit put the
/// memory back in time.
#[tokio::test]
async fn a_commit_that_follows_an_older_tick_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&db(&dir)).unwrap();
    assert_eq!(store.commit_tick(&TickCommit { follows: Some(0), ..commit(T0) }).await.unwrap().sequence, 1);
    let newer = TickCommit { follows: Some(1), ..commit(T0 + 60) };
    assert_eq!(store.commit_tick(&newer).await.unwrap().sequence, 2);

    let mut stale = TickCommit { follows: Some(1), ..commit(T0 + 60) }; // it read tick 1 and decided
    stale.memory.state = ProtectionState::Normal;
    match store.commit_tick(&stale).await {
        Err(StoreError::Superseded { follows: 1, newest: 2, .. }) => {}
        other => panic!("expected Superseded, got {other:?}"),
    }
    assert_eq!(store.load_memory().await.unwrap(), Some(newer.memory.clone()), "the newer memory stands");
    assert_eq!(store.recent_ticks(5).await.unwrap().len(), 2, "no tick record either");
    // Up to date, and unchecked (the newest tick could not be read), commit with the next number.
    assert_eq!(store.commit_tick(&TickCommit { follows: Some(2), ..commit(T0 + 120) }).await.unwrap().sequence, 3);
    assert_eq!(store.commit_tick(&commit(T0 + 180)).await.unwrap().sequence, 4);
}
