//! `sentinel trace fetch` against a real Prometheus holding known history: eight days written
//! into its blocks by `promtool tsdb create-blocks-from openmetrics` (more than the 11,000
//! points one range query may hold), with a gap, a value out of range and a NaN. The trace must
//! hold exactly what the live sentinel would have read each minute, the same bytes however the
//! fetch went: through a server restarted mid-fetch, or stopped and run again.

use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::lossy::LossyProxy;
use capacity_tests::servers::prometheus::Prometheus;
use sentinel_core::trace::read_trace;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;
use vocabulary::{ApiLatency, Instant, Reading, Signal, TraceEvent};

/// 2026-09-21T00:00:00Z: minute 0 of the history.
const START: Instant = 1_789_948_800;
const MINUTES: i64 = 8 * 1440;
const FROM: &str = "2026-09-21T00:00:00Z";
const UNTIL: &str = "2026-09-29T00:00:00Z";
/// No sample of any signal in these minutes.
const GAP: std::ops::Range<i64> = 5000..5020;
const OUT_OF_RANGE_AT: i64 = 7000;
const NAN_AT: i64 = 8000;

/// The samples of minute `i` (each written at 30 s past it, as a scrape never falls on the
/// minute): cpu, connections of servers a and b, scaling, latency of crm and (from minute
/// 2000) billing. `None` in the gap.
struct Minute {
    cpu: String,
    connections: [f64; 2],
    scaling: f64,
    crm: f64,
    billing: Option<f64>,
}

fn minute(i: i64) -> Option<Minute> {
    if GAP.contains(&i) {
        return None;
    }
    let cpu = match i {
        OUT_OF_RANGE_AT => "150".to_string(),
        NAN_AT => "NaN".to_string(),
        3000..3120 => format!("{}", 92.0 + (i % 7) as f64),
        _ => format!("{}", 20.0 + ((i * 37) % 600) as f64 / 10.0),
    };
    let connections = 10.0 + (i % 50) as f64;
    Some(Minute {
        cpu,
        connections: [connections, connections - 5.0],
        scaling: if (4000..4010).contains(&i) { 1.0 } else { 0.0 },
        crm: 100.0 + (i % 40) as f64,
        billing: (i >= 2000).then_some(200.5 + (i % 30) as f64),
    })
}

/// A metric family's samples of one minute: (labels, value) each.
type Samples = dyn Fn(i64, &Minute) -> Vec<(String, String)>;

fn openmetrics() -> String {
    let mut out = String::new();
    let mut family = |name: &str, samples: &Samples| {
        out.push_str(&format!("# TYPE {name} gauge\n"));
        for i in 0..MINUTES {
            let Some(m) = minute(i) else { continue };
            for (labels, value) in samples(i, &m) {
                out.push_str(&format!("{name}{labels} {value} {}\n", START + i * 60 + 30));
            }
        }
    };
    family("db_cpu_percent", &|_, m| vec![(String::new(), m.cpu.clone())]);
    family("db_connections_percent", &|_, m| {
        vec![("{server=\"a\"}".into(), m.connections[0].to_string()), ("{server=\"b\"}".into(), m.connections[1].to_string())]
    });
    family("db_scaling", &|_, m| vec![(String::new(), m.scaling.to_string())]);
    family("api_latency_p95_ms", &|_, m| {
        let mut v = vec![("{api=\"crm\"}".to_string(), m.crm.to_string())];
        if let Some(b) = m.billing {
            v.push(("{api=\"billing\"}".into(), b.to_string()));
        }
        v
    });
    out.push_str("# EOF\n");
    out
}

/// What the live sentinel reads at minute `k`: Prometheus's newest sample within its 5-minute
/// lookback, that is of minute k-1 back to k-5 (written at 30 s past each).
enum Expected {
    Reading(Reading),
    Failed(&'static str),
}

fn expected(k: i64) -> Expected {
    let Some(m) = (1..=5).filter(|back| k - back >= 0).find_map(|back| minute(k - back)) else {
        return Expected::Failed("no reading for this minute: prometheus answered every query with an empty result (cpu_pct");
    };
    let cpu: f64 = m.cpu.parse().unwrap();
    if cpu.is_nan() {
        return Expected::Failed("malformed metric cpu_pct: query `db_cpu_percent` gave \"NaN\" for {__name__=\"db_cpu_percent\"}");
    }
    if cpu > 100.0 {
        return Expected::Failed("malformed metric cpu_pct: 150 is not a percentage within 0..100");
    }
    let mut latency = Vec::new();
    if let Some(b) = m.billing {
        latency.push(ApiLatency { api: "billing".into(), p95_ms: Some(b), baseline_ms: None });
    }
    latency.push(ApiLatency { api: "crm".into(), p95_ms: Some(m.crm), baseline_ms: None });
    Expected::Reading(Reading { cpu_pct: Some(cpu), connections_pct: Some(m.connections[0]), scaling: Some(m.scaling > 0.0), latency })
}

/// A live configuration (signed policies, from `sentinel init --signed`) reading `url`.
fn live_config(dir: &Path, url: &str, cpu_query: &str) -> PathBuf {
    let live = dir.join("live");
    let init = Command::new(sentinel()).args(["init", "--signed"]).arg(&live).env("RUST_LOG", "off").output().unwrap();
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    let config = live.join("sentinel.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let synthetic = text.lines().find(|l| l.starts_with("kind = \"synthetic\"")).expect("init writes a synthetic source");
    let prometheus = format!(
        "kind = \"prometheus\"\nurl = \"{url}\"\n\n[metrics.queries]\ncpu_pct = \"{cpu_query}\"\nconnections_pct = \
         \"db_connections_percent\"\nscaling = \"db_scaling\"\nlatency_p95_ms = \"api_latency_p95_ms\"\n"
    );
    std::fs::write(&config, text.replacen(synthetic, &prometheus, 1)).unwrap();
    config
}

fn fetch(config: &Path, args: &[&str]) -> Output {
    Command::new(sentinel())
        .args(["trace", "fetch", "--config"])
        .arg(config)
        .args(args)
        .env("RUST_LOG", "info")
        .output()
        .expect("sentinel runs")
}

fn ok(out: Output) -> Output {
    assert!(out.status.success(), "fetch failed\nstderr:\n{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_trace_holds_what_the_live_sentinel_would_have_read_and_tune_and_replay_take_it() {
    let prom = Prometheus::backfilled(&openmetrics());
    let dir = tempfile::tempdir().unwrap();
    let config = live_config(dir.path(), &prom.url(), "db_cpu_percent");

    // One range query over the window is more than Prometheus holds: the fetch must cut it.
    let window = [
        ("query", "db_cpu_percent".to_string()),
        ("start", START.to_string()),
        ("end", (START + MINUTES * 60).to_string()),
        ("step", "60".into()),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let one_query = runtime.block_on(async {
        let client = sentinel_adapters::tls::http_client().unwrap().build().unwrap();
        let response = client.get(format!("{}/api/v1/query_range", prom.url())).query(&window).send().await.unwrap();
        response.text().await.unwrap()
    });
    assert!(one_query.contains("exceeded maximum resolution of 11,000 points"), "{one_query}");

    let file = dir.path().join("history.jsonl");
    let out = ok(fetch(&config, &["--since", FROM, "--until", UNTIL, "-o", file.to_str().unwrap()]));
    assert!(stderr(&out).contains("in 8 requests of at most 1440 steps"), "{}", stderr(&out));
    let trace = read_trace(&file).expect("the fetched trace parses");
    assert_eq!(trace.events.len() as i64, MINUTES);
    let (mut readings, mut failed) = (0, 0);
    for (k, event) in trace.events.iter().enumerate() {
        let k = k as i64;
        let TraceEvent::Tick { at, signal } = event else { panic!("minute {k}: not a reading: {event:?}") };
        assert_eq!(*at, START + k * 60);
        match (expected(k), signal) {
            (Expected::Reading(want), Signal::Reading(got)) => {
                assert_eq!(got, &want, "minute {k}");
                readings += 1;
            }
            (Expected::Failed(want), Signal::Failed(got)) => {
                assert!(got.starts_with(want), "minute {k}: {got:?} does not start with {want:?}");
                failed += 1;
            }
            (Expected::Reading(want), Signal::Failed(got)) => panic!("minute {k}: expected {want:?}, got the failed read {got:?}"),
            (Expected::Failed(want), Signal::Reading(got)) => panic!("minute {k}: expected a failed read ({want}), got {got:?}"),
        }
    }
    // Minute 0 (nothing before it), the gap past the lookback (5005..5020) and the two bad
    // values, each read for one minute.
    assert_eq!(failed, 1 + 16 + 1 + 1, "failed reads");
    assert_eq!(readings + failed, MINUTES);
    assert!(!dir.path().join("history.jsonl.partial").exists() && !dir.path().join("history.jsonl.partial.json").exists());

    // The same window is the same trace, byte for byte, to stdout too.
    let again = ok(fetch(&config, &["--since", FROM, "--until", UNTIL, "--quiet"]));
    assert_eq!(again.stdout, std::fs::read(&file).unwrap(), "a second fetch of the same window differs");

    // replay and policy tune take the result as it is.
    let base = capacity_tests::paths::workspace().join("policies/1.0.0");
    let replay = Command::new(sentinel()).args(["replay", "--policy"]).arg(&base).arg(&file).output().unwrap();
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    assert!(String::from_utf8_lossy(&replay.stdout).contains("history"), "{}", String::from_utf8_lossy(&replay.stdout));
    let halves = ["2026-09-25T00:00:00Z", UNTIL];
    let second = dir.path().join("second-half.jsonl");
    ok(fetch(&config, &["--since", halves[0], "--until", halves[1], "-o", second.to_str().unwrap()]));
    std::fs::write(dir.path().join("space.toml"), "[thresholds]\ncpu_pct.constrained = [70, 80]\n").unwrap();
    let tune = Command::new(sentinel())
        .current_dir(dir.path())
        .args(["policy", "tune", "--base"])
        .arg(&base)
        .args(["--space", "space.toml", "--out", "tuned", "history.jsonl", "second-half.jsonl"])
        .output()
        .unwrap();
    assert!(tune.status.success(), "{}", String::from_utf8_lossy(&tune.stderr));
    assert!(dir.path().join("tuned/report.md").is_file());
}

/// The reference trace of the whole window, fetched straight from the server.
fn reference(config: &Path, dir: &Path) -> Vec<u8> {
    let file = dir.join("reference.jsonl");
    ok(fetch(config, &["--since", FROM, "--until", UNTIL, "-o", file.to_str().unwrap()]));
    std::fs::read(file).unwrap()
}

/// Waits until the fetch into `out` has written its first request.
fn first_request_written(out: &Path) {
    let partial = PathBuf::from(format!("{}.partial", out.display()));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(&partial).map_or(0, |m| m.len()) == 0 {
        assert!(std::time::Instant::now() < deadline, "the fetch wrote nothing into {} in 30 s", partial.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A fetch through a proxy that holds each of Prometheus's answers back 300 ms (so that a test
/// can act mid-fetch), into `dir`, with `more` arguments, started in the background.
fn slow_fetch(prom: &Prometheus, dir: &Path, more: &[&str]) -> (LossyProxy, PathBuf, PathBuf, std::process::Child) {
    let proxy = LossyProxy::start(prom.process.port);
    proxy.slow_answers_to("GET ", Duration::from_millis(300));
    let config = live_config(dir, &format!("http://127.0.0.1:{}", proxy.port), "db_cpu_percent");
    let out = dir.join("history.jsonl");
    let child = Command::new(sentinel())
        .args(["trace", "fetch", "--config"])
        .arg(&config)
        .args(["--since", FROM, "--until", UNTIL, "-o", out.to_str().unwrap()])
        .args(more)
        .env("RUST_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    (proxy, config, out, child)
}

#[test]
fn a_server_restarted_mid_fetch_is_asked_again_and_the_trace_is_the_same() {
    let mut prom = Prometheus::backfilled(&openmetrics());
    let dir = tempfile::tempdir().unwrap();
    let want = reference(&live_config(dir.path(), &prom.url(), "db_cpu_percent"), dir.path());

    let slow = tempfile::tempdir().unwrap();
    let (_proxy, _config, out, child) = slow_fetch(&prom, slow.path(), &[]);
    first_request_written(&out);
    // Down for 2.5 s (the fetch meets refused connections), then up again with its data.
    prom.process.kill();
    std::thread::sleep(Duration::from_millis(2500));
    prom.restart();
    let done = child.wait_with_output().unwrap();
    let log = stderr(&done);
    assert!(done.status.success(), "{log}");
    assert!(log.contains("a request failed, asking again in 1s"), "the restart was not seen:\n{log}");
    assert_eq!(std::fs::read(&out).unwrap(), want, "the trace fetched across the restart differs");
}

#[test]
fn a_fetch_that_stops_goes_on_where_it_stopped_when_run_again() {
    let prom = Prometheus::backfilled(&openmetrics());
    let dir = tempfile::tempdir().unwrap();
    let want = reference(&live_config(dir.path(), &prom.url(), "db_cpu_percent"), dir.path());

    let stopped = tempfile::tempdir().unwrap();
    let (proxy, config, out, child) = slow_fetch(&prom, stopped.path(), &["--retries", "0"]);
    first_request_written(&out);
    proxy.set_down(true);
    let failed = child.wait_with_output().unwrap();
    let log = stderr(&failed);
    assert_eq!(failed.status.code(), Some(2), "{log}");
    assert!(
        log.contains("failed 1 times")
            && log.contains(&format!("run the command again with --since {FROM} --until {UNTIL} to go on from there")),
        "{log}"
    );
    assert!(!out.exists(), "a stopped fetch left a partial {} behind", out.display());
    let partial = std::fs::read_to_string(format!("{}.partial", out.display())).unwrap();
    let kept = partial.lines().count();
    assert!(kept > 0 && kept % 1440 == 0 && (kept as i64) < MINUTES, "whole requests are kept: {kept} lines");

    proxy.set_down(false);
    let args = ["--since", FROM, "--until", UNTIL, "--retries", "0", "-o", out.to_str().unwrap()];
    let resumed = ok(fetch(&config, &args));
    assert!(stderr(&resumed).contains(&format!("({kept} steps were fetched before)")), "{}", stderr(&resumed));
    assert_eq!(std::fs::read(&out).unwrap(), want, "the resumed trace differs from one fetched at once");
    assert!(!PathBuf::from(format!("{}.partial", out.display())).exists());
}

#[test]
fn a_query_prometheus_refuses_is_not_asked_again_and_a_source_without_history_is_refused() {
    let prom = Prometheus::backfilled(&openmetrics());
    let dir = tempfile::tempdir().unwrap();
    let config = live_config(dir.path(), &prom.url(), "rate(db_cpu_percent");
    let out = fetch(&config, &["--since", "1d", "-o", dir.path().join("never.jsonl").to_str().unwrap()]);
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(log.contains("query `rate(db_cpu_percent`") && log.contains("asking again will not help"), "{log}");
    assert!(!log.contains("asking again in"), "a refused query was retried:\n{log}");

    let synthetic = dir.path().join("synthetic.toml");
    std::fs::write(&synthetic, "[metrics]\nkind = \"synthetic\"\n").unwrap();
    let out = fetch(&synthetic, &["--since", "1d"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("has no history to fetch: point --config at the live configuration"), "{}", stderr(&out));

    let out = fetch(&config, &["--since", "yesterday"]);
    assert!(stderr(&out).contains("--since \"yesterday\": expected a duration"), "{}", stderr(&out));
}

#[test]
fn a_redirect_is_not_followed_and_names_where_it_pointed() {
    // Where the redirect points: a real Prometheus, which must never be asked (security review, 9).
    let elsewhere = Prometheus::backfilled(&openmetrics());
    // The configured address answers every request with a redirect there.
    let redirecting = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = redirecting.local_addr().unwrap().port();
    let target = elsewhere.url();
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = answered.clone();
    std::thread::spawn(move || {
        for stream in redirecting.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let _ = std::io::Read::read(&mut stream, &mut request);
            let answer =
                format!("HTTP/1.1 302 Found\r\nLocation: {target}/api/v1/query_range\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = std::io::Write::write_all(&mut stream, answer.as_bytes());
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let config = live_config(dir.path(), &format!("http://127.0.0.1:{port}"), "db_cpu_percent");
    let out = fetch(&config, &["--since", FROM, "--until", "2026-09-21T01:00:00Z", "-o", dir.path().join("never.jsonl").to_str().unwrap()]);
    let log = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{log}");
    assert!(log.contains(&format!("a redirect to {}/api/v1/query_range", elsewhere.url())) && log.contains("set [metrics] url"), "{log}");
    assert!(answered.load(std::sync::atomic::Ordering::SeqCst) >= 1, "the redirecting server was asked");
    assert!(!dir.path().join("never.jsonl").exists());
}

#[test]
fn a_server_that_finds_a_day_too_many_samples_is_asked_in_smaller_requests() {
    let dir = tempfile::tempdir().unwrap();
    let day = ["--since", FROM, "--until", "2026-09-22T00:00:00Z"];
    let normal = Prometheus::backfilled(&openmetrics());
    let want_file = dir.path().join("want.jsonl");
    ok(fetch(&live_config(dir.path(), &normal.url(), "db_cpu_percent"), &[&day[..], &["-o", want_file.to_str().unwrap()]].concat()));
    drop(normal);

    // A server that loads at most 1,000 samples for a query: a day of one series is 1,440.
    let small = Prometheus::backfilled_with(&openmetrics(), &["--query.max-samples=1000"]);
    let other = tempfile::tempdir().unwrap();
    let config = live_config(other.path(), &small.url(), "db_cpu_percent");
    let file = other.path().join("day.jsonl");
    let refused = fetch(&config, &[&day[..], &["-o", file.to_str().unwrap()]].concat());
    let log = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{log}");
    assert!(
        log.contains("too many samples")
            && log.contains("ask for fewer steps per request with --request-steps N (this one asked for 1440)"),
        "{log}"
    );
    assert!(!log.contains("asking again in"), "{log}");
    std::fs::remove_file(format!("{}.partial", file.display())).unwrap();
    std::fs::remove_file(format!("{}.partial.json", file.display())).unwrap();
    let smaller = ok(fetch(&config, &[&day[..], &["--request-steps", "400", "-o", file.to_str().unwrap()]].concat()));
    assert!(stderr(&smaller).contains("in 4 requests of at most 400 steps"), "{}", stderr(&smaller));
    assert_eq!(std::fs::read(&file).unwrap(), std::fs::read(&want_file).unwrap(), "smaller requests, the same trace");
}
