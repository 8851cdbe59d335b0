//! Leadership on a real PostgreSQL: a session advisory lock on a dedicated connection per
//! lease. One server for the file (started when the first test needs it, stopped when the last
//! one in flight is done); each test uses keys of its own, so tests in parallel do not meet.

use crate::postgres_common;

use capacity_tests::servers::free_port;
use capacity_tests::servers::hung::HungServer;
use postgres_common::{TIMEOUT, raw, server};
use sentinel_adapters::postgres::{PostgresLeadership, RETRY_EVERY};
use sentinel_core::ports::leadership::{Leadership, LockError};
use std::time::{Duration, Instant};

/// How many sessions hold advisory lock `key` (one-key form), as another session sees it.
async fn holders(client: &tokio_postgres::Client, key: i64) -> i64 {
    let (high, low) = (((key as u64) >> 32) as i64, ((key as u64) & 0xffff_ffff) as i64);
    let row = client
        .query_one(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
             AND classid::bigint = $1 AND objid::bigint = $2",
            &[&high, &low],
        )
        .await
        .unwrap();
    row.get(0)
}

/// Waits (up to 2 s) until `key` has `count` holders.
async fn until_holders(client: &tokio_postgres::Client, key: i64, count: i64) -> Duration {
    let started = Instant::now();
    while holders(client, key).await != count {
        assert!(started.elapsed() < Duration::from_secs(2), "lock {key} never got {count} holders");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    started.elapsed()
}

#[tokio::test]
async fn a_second_sentinel_is_refused_while_held_and_gets_in_once_released() {
    let server = server();
    let (first, second) = (PostgresLeadership::new(&server.url(), TIMEOUT, 4201), PostgresLeadership::new(&server.dsn(), TIMEOUT, 4201));
    let observer = raw(&server.url()).await;
    let lease = first.acquire(None).await.unwrap();
    assert_eq!(holders(&observer, 4201).await, 1, "the lock is in PostgreSQL, for every session to see");

    let started = Instant::now();
    let err = second.acquire(None).await.err().expect("held");
    eprintln!("held: {:?}: {err}", started.elapsed());
    assert!(started.elapsed() < Duration::from_millis(500), "{:?}", started.elapsed());
    match &err {
        LockError::Held { what } => {
            assert!(what.contains(&format!("pg_advisory_lock(4201) on 127.0.0.1:{}/postgres", server.process.port)), "{what}");
            let me = format!("capacity-sentinel[{}]", std::process::id());
            assert!(what.contains(&me), "names the holder: {what}");
        }
        other => panic!("expected Held, got {other:?}"),
    }
    assert!(err.to_string().contains("--wait"), "says what to do: {err}");
    // Each acquire is a session of its own: the holder's side cannot take it twice either.
    assert!(matches!(first.acquire(None).await, Err(LockError::Held { .. })));

    drop(lease);
    let released = until_holders(&observer, 4201, 0).await;
    eprintln!("released {released:?} after the drop");
    let again = second.acquire(None).await.unwrap();
    assert_eq!(holders(&observer, 4201).await, 1);
    drop(again);
    until_holders(&observer, 4201, 0).await;
}

#[tokio::test]
async fn waiting_times_out_while_held_and_a_waiter_gets_in_once_released() {
    let server = server();
    let lock = || PostgresLeadership::new(&server.url(), TIMEOUT, 4202);
    let lease = lock().acquire(None).await.unwrap();
    let started = Instant::now();
    let err = lock().acquire(Some(Duration::from_millis(350))).await.err().expect("times out");
    let elapsed = started.elapsed();
    match &err {
        LockError::TimedOut { waited, what } => {
            assert!(*waited >= Duration::from_millis(350), "{waited:?}");
            assert!(what.contains("pg_advisory_lock(4202)"), "{what}");
        }
        other => panic!("expected TimedOut, got {other:?}"),
    }
    assert!(elapsed >= Duration::from_millis(350) && elapsed < Duration::from_secs(2), "{elapsed:?}");

    let waiter = {
        let lock = lock();
        tokio::spawn(async move { lock.acquire(Some(Duration::from_secs(5))).await.map(drop) })
    };
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(!waiter.is_finished(), "waits while held");
    drop(lease);
    let started = Instant::now();
    waiter.await.unwrap().unwrap();
    eprintln!("waiter got in {:?} after the release", started.elapsed());
    assert!(started.elapsed() < Duration::from_secs(1), "retries about every {RETRY_EVERY:?}");
}

#[tokio::test]
async fn different_keys_do_not_conflict_and_every_key_works() {
    let server = server();
    let mut leases = Vec::new();
    // Keys with the high half set and negative ones map onto pg_locks too.
    for key in [4203, 4204, -4203, i64::MIN + 7, 0x7fff_ffff_0000_4203] {
        let lease = PostgresLeadership::new(&server.url(), TIMEOUT, key).acquire(None).await.unwrap();
        leases.push(lease);
        match PostgresLeadership::new(&server.url(), TIMEOUT, key).acquire(None).await {
            Err(LockError::Held { what }) => assert!(what.contains("held by server process"), "{key}: {what}"),
            other => panic!("key {key}: expected Held, got {:?}", other.map(|_| ())),
        }
    }
    assert_eq!(PostgresLeadership::new(&server.url(), TIMEOUT, 4203).lock_key(), 4203);
}

#[tokio::test]
async fn a_holder_whose_session_dies_frees_the_lock() {
    // A sentinel killed mid-tick: its session ends, and PostgreSQL frees the lock.
    let server = server();
    let lock = PostgresLeadership::new(&server.url(), TIMEOUT, 4205);
    let lease = lock.acquire(None).await.unwrap();
    let admin = raw(&server.url()).await;
    let pid: i32 =
        admin.query_one("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = 4205", &[]).await.unwrap().get(0);
    let killed = Instant::now();
    admin.execute("SELECT pg_terminate_backend($1)", &[&pid]).await.unwrap();
    let other = PostgresLeadership::new(&server.url(), TIMEOUT, 4205);
    let _next = other.acquire(Some(Duration::from_secs(2))).await.unwrap();
    eprintln!("taken over {:?} after the holder's session died", killed.elapsed());
    drop(lease); // unlocking a lock it no longer holds is harmless
}

#[tokio::test]
async fn an_unreachable_or_hung_server_fails_the_acquire_in_time() {
    let port = free_port();
    let started = Instant::now();
    let down = PostgresLeadership::new(&format!("postgres://sentinel:s3cret@127.0.0.1:{port}/db"), TIMEOUT, 1);
    let err = down.acquire(Some(Duration::from_secs(3))).await.err().expect("down");
    eprintln!("down: {:?}: {err}", started.elapsed());
    assert!(started.elapsed() < Duration::from_millis(500), "{:?}", started.elapsed());
    match &err {
        LockError::Failed { what, message } => {
            assert_eq!(what, &format!("pg_advisory_lock(1) on 127.0.0.1:{port}/db"));
            assert!(message.contains("check that PostgreSQL is running"), "{message}");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    assert!(!err.to_string().contains("s3cret"), "never the password: {err}");

    let hung = HungServer::start();
    let timeout = Duration::from_millis(400);
    let started = Instant::now();
    let err =
        PostgresLeadership::new(&format!("postgres://postgres@{}/db", hung.addr()), timeout, 1).acquire(None).await.err().expect("hung");
    let elapsed = started.elapsed();
    eprintln!("hung: {elapsed:?}: {err}");
    assert!(elapsed >= timeout && elapsed < timeout + Duration::from_millis(500), "{elapsed:?}");
    assert!(matches!(&err, LockError::Failed { message, .. } if message.contains("no answer")), "{err}");

    let err = PostgresLeadership::new("postgres://what:ever:x", TIMEOUT, 1).acquire(None).await.err().expect("bad url");
    assert!(matches!(&err, LockError::Failed { message, .. } if message.contains("does not parse")), "{err}");
}

/// The backend holding advisory lock `key`, as another session sees it.
async fn holder_pid(client: &tokio_postgres::Client, key: i64) -> Option<i32> {
    let (high, low) = (((key as u64) >> 32) as i64, ((key as u64) & 0xffff_ffff) as i64);
    let rows = client
        .query(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
             AND classid::bigint = $1 AND objid::bigint = $2",
            &[&high, &low],
        )
        .await
        .unwrap();
    rows.first().map(|r| r.get(0))
}

#[tokio::test]
async fn a_released_lease_leaves_no_lock_and_its_connection_serves_the_next_minute() {
    let server = server();
    let leadership = PostgresLeadership::new(&server.url(), TIMEOUT, 4206);
    let observer = raw(&server.url()).await;
    let lease = leadership.acquire(None).await.unwrap();
    let first = holder_pid(&observer, 4206).await.expect("held");
    lease.release().await;
    assert_eq!(holders(&observer, 4206).await, 0, "released at once, though the connection is kept");
    // Another sentinel gets in between two minutes of this one.
    let other = PostgresLeadership::new(&server.url(), TIMEOUT, 4206);
    other.acquire(None).await.unwrap().release().await;

    let started = Instant::now();
    let lease = leadership.acquire(None).await.unwrap();
    eprintln!("acquire on the kept connection: {:?}", started.elapsed());
    assert_eq!(holder_pid(&observer, 4206).await, Some(first), "the same backend, no new connection");
    lease.release().await;

    // A kept connection that died between minutes is replaced.
    observer.execute("SELECT pg_terminate_backend($1)", &[&first]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let lease = leadership.acquire(None).await.expect("a new connection after the kept one died");
    let second = holder_pid(&observer, 4206).await.expect("held");
    assert_ne!(second, first);
    lease.release().await;
    assert_eq!(holders(&observer, 4206).await, 0);
}
