//! What only the shared store on a real PostgreSQL has: its connection forms, migrations raced
//! by several processes, many processes changing the pin at once, commits racing past the fence,
//! and servers down, hung, or killed and restarted. The store's contract (the rules SQLite keeps
//! too) is `store_contract.rs`, run against both. One server per test binary (see
//! `postgres_common`), one database per test.

use crate::postgres_common;

use capacity_tests::servers::free_port;
use capacity_tests::servers::hung::HungServer;
use capacity_tests::servers::postgres::Postgres;
use postgres_common::{Db, T0, TIMEOUT, commit, pin, raw, unavailable, wait_for_backends_to_exit};
use sentinel_adapters::postgres::{SCHEMA_VERSION, connect};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::memory::{ChannelOutcome, MemoryStore, TickCommit};
use sentinel_core::ports::pins::{AuditAction, PinStore};
use std::time::Duration;
use vocabulary::{Instant, ProtectionState};

#[tokio::test]
async fn a_store_connects_by_url_or_key_value_form_and_names_its_database() {
    let db = Db::create("connect_forms").await;
    let by_dsn = connect(&db.dsn(), TIMEOUT).await.unwrap(); // libpq key=value form
    assert_eq!(by_dsn.location(), format!("127.0.0.1:{}/connect_forms", db.port));
    by_dsn.commit_tick(&commit(T0)).await.unwrap();
    let by_url = db.store().await;
    assert_eq!(by_url.location(), by_dsn.location());
    assert_eq!(by_url.load_memory().await.unwrap(), Some(commit(T0).memory));
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
