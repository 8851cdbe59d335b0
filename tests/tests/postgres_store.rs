//! The shared store on a real PostgreSQL: the SQLite store's semantics, several processes
//! (separate `PostgresStore`s) at once, and servers down, hung, or killed and restarted. One
//! server per test binary (see `postgres_common`), one database per test.
//!
//! Longer than 400 lines: the SQLite store's semantics replayed on PostgreSQL one test per
//! rule, beside the server faults, against one server per test binary.

use crate::postgres_common;

use capacity_tests::servers::free_port;
use capacity_tests::servers::hung::HungServer;
use capacity_tests::servers::postgres::Postgres;
use postgres_common::{Db, T0, TIMEOUT, commit, pin, raw, sample, unavailable, wait_for_backends_to_exit};
use sentinel_adapters::postgres::{SCHEMA_VERSION, connect};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::baselines::BaselineStore;
use sentinel_core::ports::memory::{ChannelOutcome, MemoryStore, TickCommit};
use sentinel_core::ports::pins::{AuditAction, PinStore};
use std::time::Duration;
use vocabulary::{ApiBaseline, ApiSamples, Instant, ProtectionState};

#[tokio::test]
async fn memory_round_trips_across_connects() {
    let db = Db::create("memory_round_trip").await;
    let writer = connect(&db.dsn(), TIMEOUT).await.unwrap(); // libpq key=value form
    assert_eq!(writer.location(), format!("127.0.0.1:{}/memory_round_trip", db.port));
    assert_eq!(writer.load_memory().await.unwrap(), None);
    let first = commit(T0);
    writer.commit_tick(&first).await.unwrap();
    let reader = db.store().await; // URL form, while the writer is still connected
    assert_eq!(reader.load_memory().await.unwrap(), Some(first.memory.clone()));
    let mut second = commit(T0 + 60);
    second.memory.state = ProtectionState::Critical;
    reader.commit_tick(&second).await.unwrap();
    assert_eq!(writer.load_memory().await.unwrap(), Some(second.memory.clone()));
    drop((writer, reader));
    let again = db.store().await;
    assert_eq!(again.load_memory().await.unwrap(), Some(second.memory));
    assert_eq!(again.recent_ticks(10).await.unwrap()[0].1, second.record);
}

#[tokio::test]
async fn corrupt_memory_row_is_corrupt_and_the_next_commit_repairs_it() {
    let db = Db::create("corrupt_memory").await;
    let store = db.store().await;
    store.commit_tick(&commit(T0)).await.unwrap();
    db.raw().await.batch_execute(r#"UPDATE memory SET memory = '{"state": "Sideways"}'"#).await.unwrap();
    match store.load_memory().await {
        Err(StoreError::Corrupt { location, what, message }) => {
            assert_eq!(what, "memory");
            assert!(location.ends_with("/corrupt_memory"), "{location}");
            assert!(message.contains("starts fresh"), "says what happens: {message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    let next = commit(T0 + 60);
    assert_eq!(store.commit_tick(&next).await.unwrap().sequence, 2, "a corrupt memory row keeps the sequence");
    assert_eq!(store.load_memory().await.unwrap(), Some(next.memory));
}

#[tokio::test]
async fn pin_replace_and_clear_are_audited_with_before_and_after() {
    let db = Db::create("pin_audit").await;
    let store = db.store().await;
    let p1 = pin(ProtectionState::Critical, "db failover", T0 + 3600);
    let p2 = pin(ProtectionState::Normal, "all clear", T0 + 7200);
    assert_eq!(store.current_pin().await.unwrap(), None);
    assert_eq!(store.clear_pin("ops", T0).await.unwrap(), None, "clearing nothing writes nothing");
    assert!(store.audit(10, None).await.unwrap().is_empty());

    let set = store.replace_pin(&p1, "alice", T0).await.unwrap();
    assert_eq!((set.action, set.actor.as_str(), set.at), (AuditAction::Set, "alice", T0));
    assert_eq!((set.before.clone(), set.after.clone()), (None, Some(p1.clone())));
    let replaced = store.replace_pin(&p2, "bob", T0 + 10).await.unwrap();
    assert_eq!(replaced.action, AuditAction::Replace);
    assert_eq!((replaced.before.clone(), replaced.after.clone()), (Some(p1), Some(p2.clone())));
    assert_eq!(db.store().await.current_pin().await.unwrap(), Some(p2.clone()), "another process sees it");

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

    // An unreadable pin row is Corrupt, and can be replaced (audited without `before`).
    store.replace_pin(&pin(ProtectionState::Critical, "x", T0 + 60), "alice", T0).await.unwrap();
    db.raw().await.batch_execute(r#"UPDATE pin SET pin = '"garbage"'"#).await.unwrap();
    assert!(matches!(store.current_pin().await, Err(StoreError::Corrupt { what: "pin", .. })));
    let p = pin(ProtectionState::Normal, "repair", T0 + 60);
    let record = store.replace_pin(&p, "bob", T0 + 1).await.unwrap();
    assert_eq!((record.action, record.before, record.after), (AuditAction::Replace, None, Some(p.clone())));
    assert_eq!(store.current_pin().await.unwrap(), Some(p));
}

#[tokio::test]
async fn expiry_is_audited_only_when_the_stored_pin_is_unchanged() {
    let db = Db::create("pin_expiry").await;
    let store = db.store().await;
    let old = pin(ProtectionState::Emergency, "incident", T0);
    store.replace_pin(&old, "alice", T0 - 3600).await.unwrap();
    // Stored JSON with other spacing and key order is still the same pin: values are compared.
    db.raw()
        .await
        .batch_execute(
            r#"UPDATE pin SET pin = '{ "actor": "ops@example", "expires_at": 1792504980, "reason": "incident", "state": "Emergency" }'"#,
        )
        .await
        .unwrap();

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
    db.store().await.replace_pin(&new, "bob", T0 + 110).await.unwrap();
    let mut tick = commit(T0 + 120);
    tick.expired_pin = Some(old);
    assert_eq!(store.commit_tick(&tick).await.unwrap().expiry_audit, None);
    assert_eq!(store.current_pin().await.unwrap(), Some(new));
    assert_eq!(store.audit(10, None).await.unwrap().len(), 4, "set, expire, set, replace");
    assert_eq!(store.load_memory().await.unwrap(), Some(tick.memory), "the rest of the tick committed");
}

#[tokio::test]
async fn sequence_grows_across_reconnects_and_is_never_reused() {
    let db = Db::create("sequence").await;
    let store = db.store().await;
    assert_eq!(store.commit_tick(&commit(T0)).await.unwrap().sequence, 1);
    assert_eq!(store.commit_tick(&commit(T0 + 60)).await.unwrap().sequence, 2);
    drop(store);
    let other = db.store().await;
    assert_eq!(other.commit_tick(&commit(T0 + 120)).await.unwrap().sequence, 3);
    // Memory reset by hand and even the tick rows deleted: sequences still only grow.
    db.raw().await.batch_execute("DELETE FROM memory; DELETE FROM ticks;").await.unwrap();
    let again = db.store().await;
    assert_eq!(again.load_memory().await.unwrap(), None);
    assert_eq!(again.commit_tick(&commit(T0 + 180)).await.unwrap().sequence, 4);
    // A failed commit uses no sequence number.
    db.raw().await.batch_execute("ALTER TABLE ticks ADD CONSTRAINT not_now CHECK (at <> 1)").await.unwrap();
    assert!(again.commit_tick(&commit(1)).await.is_err());
    assert_eq!(again.commit_tick(&commit(T0 + 240)).await.unwrap().sequence, 5);
}

#[tokio::test]
async fn tick_records_and_publication_outcomes() {
    let db = Db::create("tick_records").await;
    let store = db.store().await;
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
    let raw = db.raw().await;
    let rows = raw.query("SELECT publication::text FROM ticks ORDER BY sequence", &[]).await.unwrap();
    let stored: Vec<Option<String>> = rows.iter().map(|r| r.get(0)).collect();
    assert_eq!(serde_json::from_str::<Vec<ChannelOutcome>>(stored[1].as_ref().unwrap()).unwrap(), outcomes);
    assert_eq!((&stored[0], &stored[2]), (&None, &None), "the other ticks are untouched");
    let err = store.record_publication(99, &outcomes).await.unwrap_err();
    assert!(err.to_string().contains("no tick 99"), "{err}");
}

#[tokio::test]
async fn samples_are_grouped_by_api_and_baselines_replace_their_hour() {
    let db = Db::create("baselines").await;
    let store = db.store().await;
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
    assert_eq!(db.store().await.latest_baselines().await.unwrap(), Some((h1 + 3600, vec![])));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrations_are_idempotent_and_race_free_and_a_newer_schema_is_refused() {
    let db = Db::create("migrations").await;
    // Replicas starting together on an empty database.
    let url = db.url();
    let mut starting = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let url = url.clone();
        starting.spawn(async move { connect(&url, TIMEOUT).await.map(drop) });
    }
    for started in starting.join_all().await {
        started.unwrap_or_else(|e| panic!("{e}"));
    }
    let raw = db.raw().await;
    let versions = || async {
        let rows = raw.query("SELECT version FROM schema_migrations ORDER BY version", &[]).await.unwrap();
        rows.iter().map(|r| r.get::<_, i64>(0)).collect::<Vec<_>>()
    };
    assert_eq!(versions().await, (1..=SCHEMA_VERSION).collect::<Vec<_>>(), "each step applied once");
    let store = db.store().await;
    store.commit_tick(&commit(T0)).await.unwrap();
    assert_eq!(db.store().await.load_memory().await.unwrap(), Some(commit(T0).memory), "reconnecting keeps the data");
    assert_eq!(versions().await, (1..=SCHEMA_VERSION).collect::<Vec<_>>());

    let newer = SCHEMA_VERSION + 1;
    let future = "INSERT INTO schema_migrations (version, applied_by) VALUES ($1, 'the future')";
    raw.execute(future, &[&newer]).await.unwrap();
    match connect(&url, TIMEOUT).await {
        Err(err @ StoreError::NewerSchema { .. }) => {
            let StoreError::NewerSchema { ref location, found, known } = err else { unreachable!() };
            assert_eq!((found, known), (newer, SCHEMA_VERSION));
            assert!(location.ends_with("/migrations"), "{location}");
            assert!(err.to_string().contains("upgrade the sentinel"), "{err}");
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    assert_eq!(versions().await.last(), Some(&newer), "a refused database is left alone");
    let absent = format!("postgres://postgres@127.0.0.1:{}/absent", db.port);
    let (_, message) = unavailable(connect(&absent, TIMEOUT).await);
    assert!(message.contains(r#"database "absent" does not exist"#) && message.contains("createdb"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_pin_changes_from_many_processes_leave_one_pin_and_a_gapless_audit() {
    let db = Db::create("pin_race").await;
    let mut stores = Vec::new();
    for _ in 0..50 {
        stores.push(db.store().await);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (i, store) in stores.into_iter().enumerate() {
        tasks.spawn(async move {
            let at = T0 + i as Instant;
            if i % 3 == 2 {
                store.clear_pin(&format!("op{i}"), at).await.unwrap().is_some() as usize
            } else {
                let p = pin(ProtectionState::Critical, &format!("by {i}"), T0 + 3600);
                store.replace_pin(&p, &format!("op{i}"), at).await.unwrap();
                1
            }
        });
    }
    let written: usize = tasks.join_all().await.into_iter().sum();
    let store = db.store().await;
    let mut audit = store.audit(1000, None).await.unwrap();
    audit.reverse(); // oldest first
    assert_eq!(audit.len(), written, "one record per change that wrote");
    let mut previous = None;
    for record in &audit {
        assert_eq!(record.before, previous, "record {} starts where the one before ended", record.id);
        let expected = match (&record.before, &record.after) {
            (None, Some(_)) => AuditAction::Set,
            (Some(_), Some(_)) => AuditAction::Replace,
            _ => AuditAction::Clear,
        };
        assert_eq!(record.action, expected, "record {}", record.id);
        previous = record.after.clone();
    }
    assert_eq!(store.current_pin().await.unwrap(), previous, "the last record's `after` is the stored pin");
    let rows: i64 = db.raw().await.query_one("SELECT count(*) FROM pin", &[]).await.unwrap().get(0);
    assert_eq!(rows, 1, "at most one pin");
}

#[tokio::test]
async fn a_server_that_is_down_fails_quickly_and_names_it_without_the_password() {
    let port = free_port();
    let started = std::time::Instant::now();
    let result = connect(&format!("postgres://sentinel:s3cret@127.0.0.1:{port}/state"), TIMEOUT).await;
    let elapsed = started.elapsed();
    let (location, message) = unavailable(result);
    eprintln!("down: {elapsed:?}: {message}");
    assert!(elapsed < Duration::from_millis(500), "{elapsed:?}");
    assert_eq!(location, format!("127.0.0.1:{port}/state"));
    assert!(message.contains("check that PostgreSQL is running"), "{message}");
    assert!(!format!("{location}{message}").contains("s3cret"), "never the password");
    let (location, message) = unavailable(connect("postgres://nowhere:what", TIMEOUT).await);
    assert!(message.contains("does not parse") && !message.contains("what"), "{location}: {message}");
}

#[tokio::test]
async fn a_hung_server_or_a_stuck_call_fails_within_the_timeout() {
    let hung = HungServer::start();
    let timeout = Duration::from_millis(500);
    let started = std::time::Instant::now();
    let (_, message) = unavailable(connect(&format!("postgres://postgres@{}/x", hung.addr()), timeout).await);
    let elapsed = started.elapsed();
    eprintln!("hung connect: {elapsed:?}: {message}");
    assert!(elapsed >= timeout && elapsed < timeout + Duration::from_millis(500), "{elapsed:?}");
    assert!(message.contains("no answer") && message.contains(&hung.addr()), "{message}");

    // A call stuck behind another session's lock gives up within the timeout, and the
    // store reconnects for the next call once the lock is gone.
    let db = Db::create("stuck_call").await;
    let store = connect(&db.url(), timeout).await.unwrap();
    store.commit_tick(&commit(T0)).await.unwrap();
    let mut locker = db.raw().await;
    let tx = locker.transaction().await.unwrap();
    tx.batch_execute("LOCK TABLE memory IN ACCESS EXCLUSIVE MODE").await.unwrap();
    let started = std::time::Instant::now();
    let (_, message) = unavailable(store.load_memory().await);
    let elapsed = started.elapsed();
    eprintln!("stuck call: {elapsed:?}: {message}");
    assert!(elapsed < timeout + Duration::from_millis(300), "{elapsed:?}");
    tx.rollback().await.unwrap();
    assert_eq!(store.load_memory().await.unwrap(), Some(commit(T0).memory));
}

#[tokio::test]
async fn a_killed_and_restarted_server_heals_on_the_next_call() {
    let mut server = Postgres::start();
    let store = connect(&server.url(), TIMEOUT).await.unwrap();
    // The fixture runs with synchronous_commit off: flush, or the crash loses the last commits.
    let url = server.url();
    let flush = || async { raw(&url).await.batch_execute("CHECKPOINT").await.unwrap() };
    assert_eq!(store.commit_tick(&commit(T0)).await.unwrap().sequence, 1);
    flush().await;
    let data_dir: String = raw(&url).await.query_one("SHOW data_directory", &[]).await.unwrap().get(0);
    // Killed and back before the next call: the dead connection is replaced on the spot.
    server.kill();
    wait_for_backends_to_exit(&data_dir);
    server.restart();
    let started = std::time::Instant::now();
    assert_eq!(store.load_memory().await.unwrap(), Some(commit(T0).memory), "the same store, reconnected");
    eprintln!("first call after a restart: {:?}", started.elapsed());
    assert_eq!(store.commit_tick(&commit(T0 + 60)).await.unwrap().sequence, 2);
    flush().await;
    // Calls while it is down fail at once, naming the server; the first one after it is back works.
    server.kill();
    let started = std::time::Instant::now();
    let (location, message) = unavailable(store.load_memory().await);
    eprintln!("killed: {:?}: {message}", started.elapsed());
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(location, format!("127.0.0.1:{}/postgres", server.process.port));
    wait_for_backends_to_exit(&data_dir);
    server.restart();
    assert_eq!(store.commit_tick(&commit(T0 + 120)).await.unwrap().sequence, 3);
    flush().await;
    // The first call after a restart is a lone write (no transaction of its own): repeated on
    // a fresh connection, it lands once.
    server.kill();
    wait_for_backends_to_exit(&data_dir);
    server.restart();
    let outcomes = vec![ChannelOutcome { channel: "cache".into(), ok: true, error: None }];
    store.record_publication(3, &outcomes).await.unwrap();
    let stored: Option<String> =
        raw(&server.url()).await.query_one("SELECT publication::text FROM ticks WHERE sequence = 3", &[]).await.unwrap().get(0);
    assert_eq!(serde_json::from_str::<Vec<ChannelOutcome>>(&stored.unwrap()).unwrap(), outcomes);
}

/// Issue 34, finding 4: sentinels that read the same newest tick and commit at once (a frozen
/// leader resuming beside its successor) commit one tick; the others are refused as superseded,
/// and the memory is the winner's.
#[tokio::test]
async fn of_commits_that_follow_the_same_tick_one_wins_and_the_rest_are_superseded() {
    let db = Db::create("fencing").await;
    let store = db.store().await;
    assert_eq!(store.commit_tick(&TickCommit { follows: Some(0), ..commit(T0) }).await.unwrap().sequence, 1);
    let mut racers = Vec::new();
    for i in 0..4u64 {
        let store = db.store().await;
        racers.push(tokio::spawn(async move {
            let mut tick = TickCommit { follows: Some(1), ..commit(T0 + 60) };
            tick.memory.failed_reads = i as u32;
            (tick.memory.clone(), store.commit_tick(&tick).await)
        }));
    }
    let mut won = Vec::new();
    for racer in racers {
        match racer.await.unwrap() {
            (memory, Ok(committed)) => won.push((memory, committed.sequence)),
            (_, Err(StoreError::Superseded { follows: 1, newest: 2, .. })) => {}
            (_, other) => panic!("expected a commit or Superseded, got {other:?}"),
        }
    }
    assert_eq!(won.len(), 1, "exactly one racer commits: {won:?}");
    assert_eq!(won[0].1, 2);
    assert_eq!(store.load_memory().await.unwrap(), Some(won[0].0.clone()), "the memory is the winner's");
    assert_eq!(store.recent_ticks(10).await.unwrap().len(), 2);
}
