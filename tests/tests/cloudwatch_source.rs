//! The CloudWatch metrics source against moto's CloudWatch: datapoints put with the AWS SDK
//! (`PutMetricData`), read back live by a sentinel deciding minute after minute and as history
//! by `sentinel trace fetch`.
//!
//! moto answers `GetMetricData` with Average, Maximum, Minimum, Sum and SampleCount, but not
//! with a percentile (`p95` is an HTTP 500 in moto 5.2): the tests read latency as `Average`,
//! and the configuration's check of `latency_statistic = "p95"` (production's default) is a
//! unit test of the host.

use aws_sdk_cloudwatch::primitives::DateTime;
use aws_sdk_cloudwatch::types::{Dimension, MetricDatum, StandardUnit};
use capacity_tests::paths::workspace;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::lossy::LossyProxy;
use capacity_tests::servers::moto::Moto;
use capacity_tests::signed::SignedPolicies;
use sentinel_adapters::aws_client::{AwsOverrides, sdk_config};
use sentinel_core::trace::read_trace;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;
use vocabulary::{ApiLatency, Instant, Signal, TraceEvent};

/// 2026-09-21T00:00:00Z: minute 0.
const T0: Instant = 1_789_948_800;
const MINUTES: i64 = 40;
/// The database runs hot in these minutes.
const HOT: std::ops::Range<i64> = 10..25;
/// CloudWatch holds no datapoint of any metric in these minutes (the metrics stopped).
const NO_DATA: std::ops::Range<i64> = 30..37;

fn cpu(m: i64) -> f64 {
    if HOT.contains(&m) { 95.0 } else { 40.0 + (m % 3) as f64 }
}

fn connections(m: i64) -> f64 {
    100.0 + m as f64
}

fn latency(m: i64) -> f64 {
    120.0 + (m % 7) as f64
}

/// Every datapoint of minutes 0..MINUTES (but the gap), written at 30 s past its minute.
async fn put_history(endpoint: &str) {
    let config = sdk_config(Duration::from_secs(10), &AwsOverrides::emulator(endpoint, "us-east-1")).await;
    let client = aws_sdk_cloudwatch::Client::new(&config);
    let datum = |name: &str, dimension: (&str, &str), m: i64, value: f64, unit: StandardUnit| {
        MetricDatum::builder()
            .metric_name(name)
            .dimensions(Dimension::builder().name(dimension.0).value(dimension.1).build())
            .timestamp(DateTime::from_secs(T0 + m * 60 + 30))
            .value(value)
            .unit(unit)
            .build()
    };
    for m in (0..MINUTES).filter(|m| !NO_DATA.contains(m)) {
        let db = ("DBInstanceIdentifier", "orders-db");
        let rds = vec![
            datum("CPUUtilization", db, m, cpu(m), StandardUnit::Percent),
            datum("DatabaseConnections", db, m, connections(m), StandardUnit::Count),
        ];
        client.put_metric_data().namespace("AWS/RDS").set_metric_data(Some(rds)).send().await.expect("PutMetricData AWS/RDS");
        let api = datum("Latency", ("ApiName", "crm"), m, latency(m), StandardUnit::Milliseconds);
        client.put_metric_data().namespace("AWS/ApiGateway").metric_data(api).send().await.expect("PutMetricData AWS/ApiGateway");
    }
}

fn moto_with_history() -> Moto {
    let moto = Moto::start();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(put_history(&moto.endpoint()));
    moto
}

const METRICS: &str = "[metrics]\nkind = \"cloudwatch\"\ndb_instance = \"orders-db\"\nmax_connections = 500\napis = [\"crm\"]\n\
                       latency_statistic = \"Average\"\ntimeout = \"5s\"\n";

/// A live configuration on signed policies (1.0.0), file channels and a SQLite store in `dir`.
fn config(dir: &Path) -> PathBuf {
    let component = workspace().join("target/policies/capacity-policy-1.0.0.wasm");
    let signed = SignedPolicies::install(dir, &[component]);
    let text = format!(
        "{METRICS}\n[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n\n[publish.cache]\nkind = \"file\"\npath = \
         \"state/cache.json\"\n\n[publish.parameter]\nkind = \"file\"\npath = \"state/parameter.json\"\n\n{}state_dir = \"state/policy\"\n",
        signed.toml("1.0.0")
    );
    let path = dir.join("sentinel.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn sentinel_with(endpoint: &str, args: &[&str]) -> Output {
    let mut cmd = Command::new(sentinel());
    cmd.args(args).env("RUST_LOG", "info");
    for (k, v) in [
        ("AWS_ENDPOINT_URL", endpoint.to_string()),
        ("AWS_ACCESS_KEY_ID", "testing".into()),
        ("AWS_SECRET_ACCESS_KEY", "testing".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_EC2_METADATA_DISABLED", "true".into()),
    ] {
        cmd.env(k, v);
    }
    cmd.output().expect("sentinel runs")
}

fn rfc3339(at: Instant) -> String {
    sentinel_core::instants::format_rfc3339(at)
}

#[test]
fn history_from_cloudwatch_holds_the_datapoints_put_there_as_a_live_read_would_take_them() {
    let moto = moto_with_history();
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let file = dir.path().join("history.jsonl");
    let args = ["trace", "fetch", "--config", config.to_str().unwrap(), "--since", &rfc3339(T0), "--until", &rfc3339(T0 + MINUTES * 60)];
    let out = sentinel_with(&moto.endpoint(), &[&args[..], &["-o", file.to_str().unwrap()]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let trace = read_trace(&file).unwrap();
    assert_eq!(trace.events.len() as i64, MINUTES);
    for (k, event) in trace.events.iter().enumerate() {
        let k = k as i64;
        let TraceEvent::Tick { at, signal } = event else { panic!("minute {k}: {event:?}") };
        assert_eq!(*at, T0 + k * 60);
        // The newest datapoint of the five minutes before: minute k-1 back to k-5.
        let source = (1..=5).map(|back| k - back).find(|m| *m >= 0 && !NO_DATA.contains(m));
        match (source, signal) {
            (Some(m), Signal::Reading(r)) => {
                assert_eq!(r.cpu_pct, Some(cpu(m)), "minute {k}");
                assert_eq!(r.connections_pct, Some(connections(m) / 500.0 * 100.0), "minute {k}");
                assert_eq!(r.latency, vec![ApiLatency { api: "crm".into(), p95_ms: Some(latency(m)), baseline_ms: None }], "minute {k}");
                assert_eq!(r.scaling, None);
            }
            (None, Signal::Failed(why)) => {
                assert!(why.starts_with("no reading for this minute: cloudwatch has no datapoint in the 5 minutes before"), "{why}");
                assert!(why.contains("DBInstanceIdentifier orders-db, ApiName crm"), "{why}");
            }
            (want, got) => panic!("minute {k}: expected minute {want:?}'s datapoints, got {got:?}"),
        }
    }
    // Minute 0 (nothing before it) and minutes 35, 36 and 37 (the gap past the lookback).
    let failed = trace.events.iter().filter(|e| matches!(e, TraceEvent::Tick { signal: Signal::Failed(_), .. })).count();
    assert_eq!(failed, 4);
    let again = sentinel_with(&moto.endpoint(), &[&args[..], &["--quiet"]].concat());
    assert_eq!(again.stdout, std::fs::read(&file).unwrap(), "the same window fetched twice differs");

    // policy tune takes it as it is: the hot half and the calm half as two series.
    for (name, from, until) in [("first", 0, 20), ("second", 20, MINUTES)] {
        let window = ["--since", &rfc3339(T0 + from * 60), "--until", &rfc3339(T0 + until * 60)];
        let out_file = dir.path().join(format!("{name}.jsonl"));
        let half = ["trace", "fetch", "--config", config.to_str().unwrap(), "-o", out_file.to_str().unwrap()];
        let out = sentinel_with(&moto.endpoint(), &[&half[..], &window[..]].concat());
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // The second window starts mid-history: its first minutes reach back into the first window's
    // datapoints, and read exactly what the whole window read there.
    let whole = std::fs::read_to_string(&file).unwrap();
    let second = std::fs::read_to_string(dir.path().join("second.jsonl")).unwrap();
    assert_eq!(second.lines().collect::<Vec<_>>(), whole.lines().skip(20).collect::<Vec<_>>(), "a window cut in two reads the same");
    std::fs::write(dir.path().join("space.toml"), "[thresholds]\ncpu_pct.constrained = [70, 80]\n").unwrap();
    let tune = Command::new(sentinel())
        .current_dir(dir.path())
        .args(["policy", "tune", "--base"])
        .arg(workspace().join("policies/1.0.0"))
        .args(["--space", "space.toml", "--out", "tuned", "first.jsonl", "second.jsonl"])
        .output()
        .unwrap();
    assert!(tune.status.success(), "{}", String::from_utf8_lossy(&tune.stderr));
    let report = std::fs::read_to_string(dir.path().join("tuned/report.md")).unwrap();
    assert!(report.contains("first") && report.contains("second"), "the report names both series:\n{report}");
}

/// The published state and the reason of the last tick's decision, from its log line.
fn tick(endpoint: &str, config: &Path, at: Instant) -> (String, String) {
    let out = sentinel_with(endpoint, &["tick", "--config", config.to_str().unwrap(), "--at", &rfc3339(at)]);
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "tick at {}: {log}", rfc3339(at));
    let parameter = config.parent().unwrap().join("state/parameter.json");
    let document: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(parameter).unwrap()).unwrap();
    (document["state"].as_str().unwrap_or_default().to_string(), log)
}

#[test]
fn a_sentinel_on_cloudwatch_escalates_and_holds_then_releases_through_a_metric_outage() {
    let moto = moto_with_history();
    let proxy = LossyProxy::start(moto.process.port);
    let endpoint = format!("http://127.0.0.1:{}", proxy.port);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let mut states = Vec::new();
    for k in 1..MINUTES {
        // CloudWatch itself unreachable for four minutes, as well as the metrics' own gap.
        proxy.set_down((26..30).contains(&k));
        let (state, log) = tick(&endpoint, &config, T0 + k * 60);
        if (26..30).contains(&k) {
            assert!(log.contains("cloudwatch GetMetricData"), "minute {k}: the failed read does not name the call:\n{log}");
        }
        states.push((k, state));
    }
    let state_at = |k: i64| states.iter().find(|(m, _)| *m == k).map(|(_, s)| s.as_str()).unwrap();
    for k in 1..=HOT.start {
        assert_eq!(state_at(k), "normal", "minute {k}: {states:?}");
    }
    assert!((HOT.start + 1..=HOT.end).any(|k| state_at(k) == "critical"), "never critical while hot: {states:?}");
    // The first failed read holds the state, the second releases to normal (1.0.0).
    assert_eq!(state_at(26), state_at(25), "{states:?}");
    assert_eq!(state_at(27), "normal", "{states:?}");
    // Back after the outage: readings again (minute 30 reads minute 29's datapoints) ...
    assert_eq!(state_at(31), "normal", "{states:?}");
    // ... and the metrics' own gap is failed reads too, released to normal.
    assert_eq!(state_at(37), "normal", "{states:?}");
    assert_eq!(state_at(MINUTES - 1), "normal", "{states:?}");
}

fn source() -> sentinel::config::cloudwatch::CloudWatchSource {
    let raw = toml::from_str(METRICS.trim_start_matches("[metrics]\nkind = \"cloudwatch\"\n")).expect("the test's [metrics]");
    sentinel::config::cloudwatch::CloudWatchSource::new(raw).expect("a valid source")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_read_takes_the_newest_datapoint_before_its_minute_and_a_down_or_hung_endpoint_fails_in_time_naming_the_call() {
    use sentinel_adapters::cloudwatch_metrics::CloudWatchMetrics;
    use sentinel_core::ports::metrics::{MetricsError, MetricsSource};
    let moto = tokio::task::spawn_blocking(Moto::start).await.unwrap();
    put_history(&moto.endpoint()).await;
    let timeout = Duration::from_millis(800);
    let live = CloudWatchMetrics::with_overrides(source(), timeout, AwsOverrides::emulator(&moto.endpoint(), "us-east-1"));
    assert_eq!(live.describe(), "cloudwatch DBInstanceIdentifier orders-db (cpu, connections of 500, latency Average of crm)");
    let reading = live.read(T0 + 12 * 60).await.expect("a reading");
    assert_eq!((reading.cpu_pct, reading.connections_pct), (Some(cpu(11)), Some(connections(11) / 5.0)));
    let err = live.read(T0 + 36 * 60).await.expect_err("the gap");
    assert!(matches!(&err, MetricsError::NoData(why) if why.contains("before 2026-09-21T00:36:00Z")), "{err}");

    let nothing = format!("http://127.0.0.1:{}", capacity_tests::servers::free_port());
    let hung = capacity_tests::servers::hung::HungServer::start();
    for (what, endpoint) in [("down", nothing), ("hung", format!("http://{}", hung.addr()))] {
        let source = CloudWatchMetrics::with_overrides(source(), timeout, AwsOverrides::emulator(&endpoint, "us-east-1"));
        let started = std::time::Instant::now();
        let err = source.read(T0 + 12 * 60).await.expect_err("no answer");
        let took = started.elapsed();
        eprintln!("{what}: failed after {took:?}: {err}");
        assert!(took < timeout + Duration::from_millis(700), "{what}: {took:?}");
        let text = err.to_string();
        assert!(text.starts_with("metrics source unavailable: cloudwatch GetMetricData: "), "{what}: {text}");
        assert!(text.contains(&format!("endpoint {endpoint}")), "{what}: the message names the endpoint: {text}");
    }
}
