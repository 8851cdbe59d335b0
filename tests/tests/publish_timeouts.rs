//! One timeout layer per concern on the publish path: the adapter bounds its own call and
//! cleans up when it gives up (Redis: the kept connection is dropped, so the next publish
//! connects afresh); the tick does not race it with a second timer of the same length, which
//! used to win and skip that cleanup. Through whole ticks, against a real Redis behind a proxy
//! that loses one answer: the tick that lost it fails on the cache, the next one publishes.

use capacity_tests::bad_input::{Sandbox, embedded_config, without_policy_file};
use capacity_tests::servers::lossy::LossyProxy;
use capacity_tests::servers::redis::Redis;
use capacity_tests::signed::SignedPolicies;
use sentinel::config::Config;

/// 2026-10-20T14:00:00Z.
const T0: i64 = 1_792_504_800;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_lost_redis_answer_the_next_tick_publishes_on_a_fresh_connection() {
    let redis = Redis::start();
    let port: u16 = redis.url().trim_start_matches("redis://127.0.0.1:").trim_end_matches('/').parse().unwrap();
    let proxy = LossyProxy::start(port);
    let sb = Sandbox::new();
    let signed = SignedPolicies::install(sb.dir.path(), &[capacity_tests::bad_input::policy()]);
    let base = without_policy_file(&embedded_config(""));
    let (head, tail) = base.split_once("[publish.cache]").unwrap();
    let (_, parameter) = tail.split_once("[publish.parameter]").unwrap();
    let text = format!(
        "{head}[publish]\ntimeout = \"1s\"\n[publish.cache]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:{}/\"\n[publish.parameter]{parameter}{}",
        proxy.port,
        signed.toml("1.0.0")
    );
    let config = Config::parse(&text, &sb.config()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let (s, _) = sentinel::setup::sentinel(&config, T0, None).await.unwrap_or_else(|e| panic!("{e:#}"));
    let cache_ok = |report: &sentinel_core::tick::TickReport| report.outcomes[0].ok;

    assert!(cache_ok(&s.tick(T0).await.unwrap()), "the first tick publishes to Redis");
    proxy.lose_next(1);
    let lost = s.tick(T0 + 60).await.unwrap();
    assert!(!cache_ok(&lost), "the lost answer fails the cache: {:?}", lost.outcomes);
    // The adapter's own timer gave up (and cleaned up), not a second timer in the tick.
    let error = lost.outcomes[0].error.clone().unwrap_or_default();
    assert!(error.contains("no answer within 1s") && !error.contains("timed out after"), "{error}");
    for minute in 2..5 {
        let report = s.tick(T0 + 60 * minute).await.unwrap();
        assert!(cache_ok(&report), "minute {minute}: the cache publishes again on a fresh connection: {:?}", report.outcomes);
    }
}
