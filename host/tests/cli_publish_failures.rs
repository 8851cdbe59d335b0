//! The two channels publish independently (docs/behaviour.md §7, INV-07): a file channel that
//! cannot write (its parent is a regular file) is logged and counted while the other channel still
//! publishes and the tick succeeds; only both failing fails the tick (exit 1). A channel that can
//! write again is healed by the next tick.

use crate::support;

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;
use support::{Metrics, Sandbox, cpu, eventually, t};

/// A sandbox whose `blocker` is a regular file, so `blocker/...` can never be created.
fn blocked(cache: &str, parameter: &str) -> Sandbox {
    let sb = Sandbox::with_channels(Metrics::Trace((0..5).map(|m| cpu(t(m), 40.0)).collect()), cache, parameter);
    std::fs::write(sb.path("blocker"), "a file, not a folder\n").unwrap();
    sb
}

/// The stored publication outcomes of tick `sequence`.
fn publication(sb: &Sandbox, sequence: i64) -> Value {
    let text: String = sb.db().query_row("SELECT publication FROM ticks WHERE sequence = ?1", [sequence], |r| r.get(0)).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn one_failed_channel_is_logged_and_the_other_still_publishes() {
    let sb = blocked("blocker/cache.json", "out/parameter.json");
    let ran = sb.tick_ok(t(0));
    assert!(!sb.cache.exists());
    let doc = sb.parameter_doc();
    assert_eq!(doc["sequence"], 1);
    assert_eq!(doc["state"], "normal");
    let failed = ran.stderr.lines().find(|l| l.contains("publication failed"));
    let failed = failed.unwrap_or_else(|| panic!("no log line for the failed channel:\n{}", ran.stderr));
    assert!(failed.contains("ERROR") && failed.contains("channel=cache"), "{failed}");
    assert!(failed.contains("blocker/cache.json"), "names the target: {failed}");
    assert!(ran.stderr.contains("cache=FAILED parameter=ok"), "{}", ran.stderr);
    let outcomes = publication(&sb, 1);
    assert_eq!(outcomes[0]["channel"], "cache");
    assert_eq!(outcomes[0]["ok"], false);
    assert_eq!(outcomes[1]["ok"], true);

    // The other way round too.
    let sb = blocked("out/cache.json", "blocker/parameter.json");
    let ran = sb.tick_ok(t(0));
    assert_eq!(sb.cache_doc()["sequence"], 1);
    assert!(!sb.parameter.exists());
    assert!(ran.stderr.contains("channel=parameter"), "{}", ran.stderr);
}

#[test]
fn both_channels_failing_fails_the_tick_and_the_next_tick_heals() {
    let sb = blocked("blocker/cache.json", "blocker/parameter.json");
    let ran = sb.sentinel(&["tick", "--at", &support::rfc(t(0))]).expect_code(1);
    assert!(ran.stderr.contains("both channels failed"), "{}", ran.stderr);
    assert!(ran.stderr.contains("channel=cache") && ran.stderr.contains("channel=parameter"), "{}", ran.stderr);
    assert!(!sb.cache.exists() && !sb.parameter.exists());
    assert_eq!(sb.ticks().len(), 1, "the decision was stored before publishing");

    // Once the folder can be created, the next tick publishes both with the next sequence.
    std::fs::remove_file(sb.path("blocker")).unwrap();
    sb.tick_ok(t(1));
    assert_eq!(sb.cache_doc()["sequence"], 2);
    assert_eq!(sb.parameter_doc(), sb.cache_doc());
}

/// `GET /metrics` on `addr` with a bare HTTP/1.1 request; the body, or `None` when refused.
fn scrape(addr: &str) -> Option<String> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    Some(text)
}

/// The value of `sentinel_publish_failures_total{channel="cache"}`, 0 when absent.
fn cache_failures(metrics: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("sentinel_publish_failures_total{channel=\"cache\"} "))
        .map_or(0, |v| v.trim().parse().unwrap())
}

#[test]
fn failures_are_counted_per_channel_on_the_metrics_endpoint() {
    let sb = blocked("blocker/cache.json", "out/parameter.json");
    let addr = {
        let probe = TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().to_string()
    };
    // Three ticks a second apart; the endpoint lives as long as the loop.
    let mut run = sb.spawn(&["run", "--speed", "60", "--ticks", "3", "--metrics-addr", &addr], "run");
    let counted = eventually(Duration::from_secs(15), || scrape(&addr).is_some_and(|m| cache_failures(&m) >= 1));
    let metrics = scrape(&addr).unwrap_or_default();
    assert!(counted, "the cache failures were not counted:\n{metrics}\n{}", run.stderr());
    assert!(!metrics.contains("sentinel_publish_failures_total{channel=\"parameter\"}"), "the parameter channel never failed:\n{metrics}");
    assert!(metrics.contains("sentinel_channel_up{channel=\"parameter\"} 1"), "and is up:\n{metrics}");
    assert!(metrics.contains("sentinel_channel_up{channel=\"cache\"} 0"), "the cache is down:\n{metrics}");
    let status = run.wait_for_exit(Duration::from_secs(10)).expect("the run stops after its ticks");
    assert!(status.success(), "{status:?}\n{}", run.stderr());
    assert_eq!(sb.parameter_doc()["sequence"], 3);
    assert_eq!(publication(&sb, 3)[0]["ok"], false);
}
