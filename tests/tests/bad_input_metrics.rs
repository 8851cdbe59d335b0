//! Bad metric responses from a real Prometheus (constant PromQL answers at any instant) and
//! from real servers that are not Prometheus, each through a whole tick of the library
//! (`sentinel::setup::sentinel` on an embedded SQLite store with file channels): a failed read
//! whose recorded reason names the signal and the problem, never a crash; the tick holds the
//! critical state, publishes it on both channels, and changes nothing else stored (pin,
//! audit, latency samples, baselines, stage status). What the adapter deliberately accepts
//! (several series, a scalar, one signal without data) is shown as accepted.

use capacity_tests::bad_input::{CACHE, PARAMETER, STORE, Sandbox, Snapshot, embedded_config};
use capacity_tests::servers::prometheus::Prometheus;
use capacity_tests::servers::redis::Redis;
use sentinel::config::Config;
use sentinel_adapters::prometheus_metrics::{PrometheusMetrics, PrometheusQueries, PrometheusSource};
use sentinel_core::pin_service::PinService;
use sentinel_core::ports::metrics::MetricsSource;
use sentinel_core::tick::{Sentinel, TickReport};
use std::time::{Duration, Instant};
use vocabulary::{ProtectionState, Signal};

/// 2026-10-20T14:00:00Z, the first simulated minute.
const T0: i64 = 1_792_504_800;
const GOOD: &str = "cpu_pct = 'vector(90)'";

/// One bad answer: the `[metrics]` url (`None`: the Prometheus), the queries, and what the
/// recorded reason must say.
struct Case {
    what: &'static str,
    url: Option<String>,
    queries: &'static str,
    signal: &'static str,
    says: &'static str,
}

fn case(what: &'static str, queries: &'static str, signal: &'static str, says: &'static str) -> Case {
    Case { what, url: None, queries, signal, says }
}

fn metrics_table(url: &str, queries: &str) -> String {
    format!("[metrics]\nkind = \"prometheus\"\nurl = \"{url}\"\ntimeout = \"5s\"\n[metrics.queries]\n{queries}\n")
}

/// A sentinel on the sandbox's store and channels, reading `url` with `queries`.
async fn sentinel_reading(sb: &Sandbox, url: &str, queries: &str, now: i64) -> (Sentinel, PinService) {
    // The queries table goes last (the channel tables would follow it otherwise); the text is
    // parsed, not written, so that the sandbox's files stay as they were.
    // A Prometheus source is a deployment: it runs signed policies only, from `[policies]`.
    use capacity_tests::signed::SignedPolicies;
    let signed = match sb.dir.path().join("policies") {
        dir if dir.is_dir() => SignedPolicies { dir, public_key: sb.dir.path().join("keys/policy.pub") },
        _ => SignedPolicies::install(sb.dir.path(), &[capacity_tests::bad_input::policy()]),
    };
    let base = capacity_tests::bad_input::without_policy_file(&embedded_config(""));
    let text = format!("{base}{}{}", signed.toml("1.0.0"), metrics_table(url, queries));
    let config = Config::parse(&text, &sb.config()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    sentinel::setup::sentinel(&config, now, None).await.unwrap_or_else(|e| panic!("{e:#}"))
}

async fn tick(sb: &Sandbox, url: &str, queries: &str, now: i64) -> TickReport {
    let (s, _) = sentinel_reading(sb, url, queries, now).await;
    s.tick(now).await.unwrap_or_else(|e| panic!("the tick at {now} failed: {e}"))
}

/// The tables a failed read may change: its memory and its tick record.
const A_TICK_WRITES: [&str; 3] = ["memory", "ticks", "sqlite_sequence"];

async fn ready(url: &str) {
    let q = PrometheusQueries { cpu_pct: Some("vector(1)".into()), ..PrometheusQueries::default() };
    let probe = PrometheusMetrics::new(PrometheusSource::new(url, q).expect("a valid source"), Duration::from_secs(2)).unwrap();
    let started = Instant::now();
    while probe.read(T0).await.is_err() {
        assert!(started.elapsed() < Duration::from_secs(20), "prometheus at {url} never answered");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_metric_answer_is_a_failed_read_naming_the_signal_and_the_problem_and_holds_the_state() {
    let prom = Prometheus::start("none", &[], Duration::from_secs(1));
    ready(&prom.url()).await;
    let redis = Redis::start();
    let exporter = sentinel::exporter::serve("127.0.0.1:0".parse().unwrap(), Default::default()).await.expect("the exporter");
    let cases = vec![
        case("NaN", "cpu_pct = 'vector(NaN)'", "cpu_pct", "gave \"NaN\" for {}, not a finite number"),
        case("+Inf", "cpu_pct = 'vector(+Inf)'", "cpu_pct", "gave \"+Inf\" for {}, not a finite number"),
        case("-Inf", "connections_pct = 'vector(-Inf)'", "connections_pct", "gave \"-Inf\" for {}, not a finite number"),
        case("a negative percentage", "cpu_pct = 'vector(-5)'", "cpu_pct", "-5 is not a percentage within 0..100"),
        case("a huge percentage", "connections_pct = 'vector(1e300)'", "connections_pct", "1e300 is not a percentage within 0..100"),
        case(
            "a negative latency",
            "latency_p95_ms = 'label_replace(vector(-5), \"api\", \"crm\", \"\", \"\")'",
            "latency[crm].p95_ms",
            "-5 is not a non-negative number",
        ),
        case("a string result", "cpu_pct = '\"text\"'", "cpu_pct", "expected an instant vector or a scalar, got a string"),
        case("a scalar out of range (time())", "cpu_pct = 'time()'", "cpu_pct", "is not a percentage within 0..100"),
        case("a range vector", "cpu_pct = 'vector(1)[5m:1m]'", "cpu_pct", "got a matrix (a range selector needs a function"),
        case("no data for any signal", "cpu_pct = 'absent(vector(1))'\nscaling = 'absent(vector(1))'", "cpu_pct", "empty result"),
        case("a latency series without the api label", "latency_p95_ms = 'vector(180)'", "latency_p95_ms", "without the label `api`"),
        case("a PromQL syntax error", "cpu_pct = 'rate(up[1m]'", "cpu_pct", "bad_data"),
        case(
            "a PromQL evaluation error",
            "scaling = 'vector(1) / on() (label_replace(vector(1), \"a\", \"x\", \"\", \"\") or label_replace(vector(2), \"a\", \"y\", \"\", \"\"))'",
            "scaling",
            "execution",
        ),
        Case {
            what: "a Redis port",
            url: Some(redis.url().replace("redis://", "http://")),
            queries: GOOD,
            signal: "cpu_pct",
            says: "a Prometheus server? check [metrics] url",
        },
        Case {
            what: "the sentinel's own /metrics server",
            url: Some(format!("http://{exporter}")),
            queries: GOOD,
            signal: "cpu_pct",
            says: "HTTP 404 Not Found: an empty body (is http",
        },
    ];

    let sb = Sandbox::with_config(&embedded_config(""));
    let url = prom.url();
    // Critical from three critical readings; an audit with a pin set and cleared.
    for minute in 0..3 {
        tick(&sb, &url, GOOD, T0 + 60 * minute).await;
    }
    let (_, pins) = sentinel_reading(&sb, &url, GOOD, T0).await;
    let ask = vocabulary::PinRequest { state: "emergency".into(), reason: "drill".into(), expires_at: T0 + 3600, actor: "ops".into() };
    pins.set(ask, T0 + 150).await.expect("a valid pin");
    pins.clear("ops", T0 + 170).await.expect("cleared");
    assert_eq!(sb.document(CACHE).expect("published")["state"], "critical");

    let mut minute = 3;
    for case in &cases {
        let now = T0 + 60 * minute;
        let before = sb.snapshot();
        let report = tick(&sb, case.url.as_deref().unwrap_or(&url), case.queries, now).await;
        let what = case.what;
        assert!(report.reading.is_none(), "{what}: read as {:?}", report.reading);
        let reason = recorded_reason(&sb, report.sequence).await;
        assert!(reason.contains(case.signal), "{what}: the reason does not name {:?}: {reason}", case.signal);
        assert!(reason.contains(case.says), "{what}: the reason does not say {:?}: {reason}", case.says);
        assert_eq!(report.decision.state, ProtectionState::Critical, "{what}: the state is held");
        assert_eq!(report.decision.cause.name(), "signal-held", "{what}");
        assert_eq!(report.decision.memory.failed_reads, 1, "{what}");
        for channel in [CACHE, PARAMETER] {
            let doc = sb.document(channel).expect("published");
            assert_eq!((doc["state"].as_str(), doc["cause"].as_str()), (Some("critical"), Some("signal-held")), "{what}: {channel}");
            assert_eq!(doc["sequence"], report.sequence, "{what}: {channel} has this tick's document");
        }
        only_the_tick_changed(&before, &sb.snapshot(), what);
        eprintln!("{what}: {reason}");
        // A good reading before the next case, so that each case is a first failed read.
        let good = tick(&sb, &url, GOOD, now + 60).await;
        if good.reading.is_none() {
            panic!("{what}: the good reading after it failed: {}", recorded_reason(&sb, good.sequence).await);
        }
        assert_eq!(good.decision.state, ProtectionState::Critical, "{what}: {:?}", good.decision);
        minute += 2;
    }
    eprintln!("{} bad metric answers were failed reads", cases.len());
}

/// The failure reason of the stored tick `sequence`.
async fn recorded_reason(sb: &Sandbox, sequence: u64) -> String {
    let store = sentinel_adapters::sqlite::SqliteStore::open(&sb.path(STORE)).expect("the store opens");
    let ticks = sentinel_core::ports::memory::MemoryStore::recent_ticks(&store, 1).await.expect("tick records");
    let (stored, record) = ticks.into_iter().next().expect("a tick record");
    assert_eq!(stored, sequence, "the newest record is this tick's");
    match record.signal {
        Signal::Failed(reason) => reason,
        Signal::Reading(r) => panic!("recorded as a reading: {r:?}"),
    }
}

/// Between `before` and `after`, only a tick's own tables and the two documents changed.
fn only_the_tick_changed(before: &Snapshot, after: &Snapshot, what: &str) {
    let (Some(a), Some(b)) = (&before.tables, &after.tables) else { panic!("{what}: no store") };
    for (table, rows) in b {
        if !A_TICK_WRITES.contains(&table.as_str()) {
            assert_eq!(a.get(table), Some(rows), "{what}: table {table} changed");
        }
    }
    assert_eq!(b["ticks"].len(), a["ticks"].len() + 1, "{what}: one tick record");
    assert_eq!(a["pin"], Vec::<String>::new(), "{what}: no pin");
    assert_eq!(b["pin_audit"].len(), 2, "{what}: the audit of the set and clear pin, as it was");
    for (file, bytes) in &after.files {
        if file != CACHE && file != PARAMETER {
            assert_eq!(before.files.get(file), Some(bytes), "{what}: {file} changed");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_series_a_scalar_and_one_signal_without_data_are_read_as_documented() {
    let prom = Prometheus::start("none", &[], Duration::from_secs(1));
    ready(&prom.url()).await;
    let read = |queries: PrometheusQueries| {
        let source =
            PrometheusMetrics::new(PrometheusSource::new(&prom.url(), queries).expect("a valid source"), Duration::from_secs(2)).unwrap();
        async move { source.read(T0).await }
    };
    // Several series for one signal: the largest (the busiest server decides).
    let several = r#"vector(20) or label_replace(vector(75), "server", "b", "", "") or label_replace(vector(40), "server", "c", "", "")"#;
    let r = read(PrometheusQueries { cpu_pct: Some(several.into()), ..PrometheusQueries::default() }).await.expect("a reading");
    assert_eq!(r.cpu_pct, Some(75.0));
    // A scalar expression is one value.
    let r = read(PrometheusQueries { connections_pct: Some("scalar(vector(42))".into()), ..PrometheusQueries::default() }).await;
    assert_eq!(r.expect("a reading").connections_pct, Some(42.0));
    // One signal without data is absent while another has a value; none at all is a failed read.
    let partial =
        PrometheusQueries { cpu_pct: Some("vector(30)".into()), scaling: Some("absent(vector(1))".into()), ..PrometheusQueries::default() };
    let r = read(partial).await.expect("a reading");
    assert_eq!((r.cpu_pct, r.scaling), (Some(30.0), None));
    let none = PrometheusQueries { scaling: Some("absent(vector(1))".into()), ..PrometheusQueries::default() };
    let err = read(none).await.expect_err("no data at all");
    assert!(err.to_string().contains("scaling `absent(vector(1))`") && err.to_string().contains("check that it scrapes"), "{err}");
}
