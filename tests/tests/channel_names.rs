//! A channel's name comes from where it is configured, not from the kind of system behind it:
//! either kind may serve either channel. With the parameter on Redis (and the cache on a file),
//! a tick's outcomes, its stored record and the publish-failure counter all say `parameter`
//! for the Redis publication, including when Redis fails.

use capacity_tests::bad_input::{STORE, Sandbox, embedded_config, without_policy_file};
use capacity_tests::servers::free_port;
use capacity_tests::servers::redis::Redis;
use capacity_tests::signed::SignedPolicies;
use sentinel::config::Config;
use sentinel_core::ports::memory::ChannelOutcome;
use sentinel_core::tick::{TickError, TickReport};

/// 2026-10-20T14:00:00Z.
const T0: i64 = 1_792_504_800;

/// The embedded default's config with the parameter channel on Redis at `url`.
fn config(sb: &Sandbox, url: &str) -> Config {
    let signed = SignedPolicies::install(sb.dir.path(), &[capacity_tests::bad_input::policy()]);
    let base = without_policy_file(&embedded_config(""));
    let (head, _) = base.split_once("[publish.parameter]").expect("the embedded config has a parameter channel");
    let text =
        format!("{head}[publish.parameter]\nkind = \"redis\"\nurl = \"{url}\"\nkey = \"capacity:parameter\"\n{}", signed.toml("1.0.0"));
    Config::parse(&text, &sb.config()).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The channel names of the newest tick's stored publication outcomes.
fn stored_channels(sb: &Sandbox) -> Vec<String> {
    let db = rusqlite::Connection::open(sb.path(STORE)).unwrap();
    let json: String = db.query_row("SELECT publication FROM ticks ORDER BY sequence DESC LIMIT 1", [], |r| r.get(0)).unwrap();
    let outcomes: Vec<ChannelOutcome> = serde_json::from_str(&json).unwrap();
    outcomes.into_iter().map(|o| o.channel).collect()
}

fn channels(report: &TickReport) -> Vec<(String, bool)> {
    report.outcomes.iter().map(|o| (o.channel.clone(), o.ok)).collect()
}

#[tokio::test]
async fn the_parameter_channel_on_redis_is_named_parameter_in_outcomes_records_and_metrics() {
    let redis = Redis::start();
    let sb = Sandbox::new();
    let (s, _) = sentinel::setup::sentinel(&config(&sb, &redis.url()), T0, None).await.unwrap_or_else(|e| panic!("{e:#}"));
    let report = s.tick(T0).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(channels(&report), [("cache".to_string(), true), ("parameter".to_string(), true)]);
    assert_eq!(stored_channels(&sb), ["cache", "parameter"], "the stored record");

    // Redis down: the failure is the parameter's, in the outcome, its message and the counter.
    let sb = Sandbox::new();
    let down = format!("redis://127.0.0.1:{}/0", free_port());
    let (s, _) = sentinel::setup::sentinel(&config(&sb, &down), T0, None).await.unwrap_or_else(|e| panic!("{e:#}"));
    let report = match s.tick(T0).await {
        Ok(report) => report,
        Err(TickError::BothChannelsFailed(report)) => panic!("the file cache cannot fail here: {report:?}"),
        Err(e) => panic!("{e}"),
    };
    assert_eq!(channels(&report), [("cache".to_string(), true), ("parameter".to_string(), false)]);
    let error = report.outcomes[1].error.as_deref().unwrap_or_default();
    assert!(error.starts_with("publishing to parameter (redis "), "{error}");
    let scrape = s.telemetry.render();
    assert!(scrape.contains("publish_failures_total{channel=\"parameter\"} 1"), "{scrape}");
    assert!(!scrape.contains("publish_failures_total{channel=\"cache\"}"), "{scrape}");
}
