//! The cache channel against Debian's redis-server: the document under its key with an expiry,
//! and the failure modes a tick must survive: nothing listening, a server that accepts and
//! never answers, and a server that dies and comes back on the same port.

use capacity_tests::servers::free_port;
use capacity_tests::servers::hung::HungServer;
use capacity_tests::servers::redis::Redis;
use sentinel_adapters::redis_publisher::RedisPublisher;
use sentinel_core::ports::memory::PolicyRef;
use sentinel_core::ports::publisher::{Channel, Publisher, StateDocument};
use std::time::{Duration, Instant};
use vocabulary::{Cause, Factors, ProtectionState};

const KEY: &str = "capacity:state";
const EXPIRY: Duration = Duration::from_secs(300);

fn document(sequence: u64) -> StateDocument {
    StateDocument {
        state: ProtectionState::Constrained,
        factors: Factors { bulk: 0.25, heavy: 0.5, write: 0.75, read: 1.0 },
        decided_at: "2026-03-01T12:00:00Z".into(),
        policy: PolicyRef { name: "default".into(), version: "2.0.0".into(), digest: "ab".repeat(32) },
        pinned: false,
        pin_expires_at: None,
        cause: Cause::Escalate,
        sequence,
    }
}

fn publisher(url: &str, timeout: Duration) -> RedisPublisher {
    RedisPublisher::new(Channel::Cache, url, KEY, EXPIRY, timeout).unwrap_or_else(|e| panic!("{e}"))
}

/// What the key holds now, and its remaining time to live in seconds.
async fn read_back(url: &str) -> (StateDocument, i64) {
    let client = redis::Client::open(url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let value: String = redis::cmd("GET").arg(KEY).query_async(&mut conn).await.unwrap();
    let ttl: i64 = redis::cmd("TTL").arg(KEY).query_async(&mut conn).await.unwrap();
    (serde_json::from_str(&value).unwrap(), ttl)
}

#[tokio::test]
async fn publishes_the_document_with_its_expiry_and_keeps_the_connection() {
    let redis = Redis::start();
    let p = publisher(&redis.url(), Duration::from_secs(2));
    assert_eq!(p.channel(), Channel::Cache);
    assert_eq!(p.target(), format!("redis {} key {KEY}", redis.url()));

    p.publish(&document(1)).await.unwrap_or_else(|e| panic!("{e}"));
    let (doc, ttl) = read_back(&redis.url()).await;
    assert_eq!(doc, document(1));
    assert!(ttl > 0 && ttl <= EXPIRY.as_secs() as i64, "TTL {ttl}");
    assert!(ttl >= EXPIRY.as_secs() as i64 - 5, "TTL {ttl} well under the expiry");

    // The second publish overwrites, on the kept connection, and renews the expiry.
    p.publish(&document(2)).await.unwrap_or_else(|e| panic!("{e}"));
    let (doc, ttl) = read_back(&redis.url()).await;
    assert_eq!(doc.sequence, 2);
    assert!(ttl > 0 && ttl <= EXPIRY.as_secs() as i64, "TTL {ttl}");
}

#[tokio::test]
async fn nothing_listening_fails_fast_and_never_shows_the_password() {
    let port = free_port();
    let url = format!("redis://sentinel:hunter2@127.0.0.1:{port}/");
    let timeout = Duration::from_secs(2);
    // Constructing does not connect: a dead Redis at startup is fine.
    let p = publisher(&url, timeout);
    assert_eq!(p.target(), format!("redis redis://sentinel:***@127.0.0.1:{port}/ key {KEY}"));

    let start = Instant::now();
    let err = p.publish(&document(1)).await.unwrap_err();
    let elapsed = start.elapsed();
    eprintln!("redis, nothing listening: failed in {elapsed:?}: {err}");
    assert!(elapsed < Duration::from_millis(500), "refusal took {elapsed:?}");
    let text = err.to_string();
    assert_eq!(err.channel, Channel::Cache);
    assert!(text.contains("refused"), "{text}");
    assert!(text.contains("check"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}

#[tokio::test]
async fn a_hung_server_costs_one_timeout() {
    let hung = HungServer::start();
    let timeout = Duration::from_millis(800);
    let p = publisher(&format!("redis://{}/", hung.addr()), timeout);
    for attempt in 1..=2 {
        let start = Instant::now();
        let err = p.publish(&document(attempt)).await.unwrap_err();
        let elapsed = start.elapsed();
        eprintln!("redis, hung server, attempt {attempt}: failed in {elapsed:?}: {err}");
        assert!(elapsed >= timeout - Duration::from_millis(50), "gave up before the timeout: {elapsed:?}");
        assert!(elapsed < timeout * 2, "{elapsed:?} is past the {timeout:?} deadline");
        assert!(err.to_string().contains("no answer within"), "{err}");
    }
}

#[tokio::test]
async fn the_next_publish_after_redis_comes_back_succeeds() {
    let port = free_port();
    let url = format!("redis://127.0.0.1:{port}/");
    let p = publisher(&url, Duration::from_secs(2));

    // Down at startup, then up.
    p.publish(&document(1)).await.unwrap_err();
    let mut redis = Redis::start_on(port);
    p.publish(&document(2)).await.unwrap_or_else(|e| panic!("after the start: {e}"));
    assert_eq!(read_back(&url).await.0.sequence, 2);

    // Killed while the publisher holds a connection: the next publish fails quickly, and the
    // one after the restart reconnects.
    redis.process.kill();
    let start = Instant::now();
    let err = p.publish(&document(3)).await.unwrap_err();
    eprintln!("redis, killed under a kept connection: failed in {:?}: {err}", start.elapsed());
    assert!(start.elapsed() < Duration::from_secs(1), "{:?}", start.elapsed());
    drop(redis);
    let _redis = Redis::start_on(port);
    p.publish(&document(4)).await.unwrap_or_else(|e| panic!("after the restart: {e}"));
    let (doc, ttl) = read_back(&url).await;
    assert_eq!(doc.sequence, 4);
    assert!(ttl > 0 && ttl <= EXPIRY.as_secs() as i64, "TTL {ttl}");
}

/// Issue 34, finding 4: a stale leader's write that lands late must not put the key back to a
/// lower sequence. Before the fence, a plain SET overwrote sequence 3 with sequence 2.
#[tokio::test]
async fn the_key_never_goes_back_to_a_lower_sequence() {
    let redis = Redis::start();
    let p = publisher(&redis.url(), Duration::from_secs(2));
    p.publish(&document(3)).await.unwrap_or_else(|e| panic!("{e}"));

    let stale = p.publish(&document(2)).await.expect_err("a lower sequence is refused");
    let message = stale.to_string();
    assert!(message.contains("superseded: the key holds sequence 3, newer than this document's 2"), "{message}");
    assert_eq!(read_back(&redis.url()).await.0.sequence, 3, "the newer document stays");

    // The same sequence again (a minute published twice) and a higher one are written.
    p.publish(&document(3)).await.unwrap_or_else(|e| panic!("{e}"));
    p.publish(&document(4)).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(read_back(&redis.url()).await.0.sequence, 4);

    // A value that is not one of ours (not JSON, or without a sequence) is overwritten.
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    for foreign in ["not json", r#"{"state":"normal"}"#, r#"{"sequence":"99"}"#] {
        redis::cmd("SET").arg(KEY).arg(foreign).query_async::<()>(&mut conn).await.unwrap();
        p.publish(&document(1)).await.unwrap_or_else(|e| panic!("{foreign}: {e}"));
        assert_eq!(read_back(&redis.url()).await.0.sequence, 1, "{foreign}");
    }
}
