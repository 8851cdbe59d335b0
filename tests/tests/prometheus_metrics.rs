//! The Prometheus metrics source against real servers: Debian's Prometheus scraping Debian's
//! PostgreSQL exporter in front of a private PostgreSQL, real PromQL over the exporter's metrics,
//! sessions opened with tokio-postgres, and servers that are down or hung.

use capacity_tests::servers::free_port;
use capacity_tests::servers::hung::HungServer;
use capacity_tests::servers::postgres::Postgres;
use capacity_tests::servers::prometheus::{PostgresExporter, Prometheus};
use sentinel_adapters::prometheus_metrics::{PrometheusMetrics, PrometheusQueries, PrometheusSource};
use sentinel_core::ports::metrics::{MetricsError, MetricsSource};
use std::future::Future;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use vocabulary::{ApiLatency, Reading};

/// Connections in use as a share of `max_connections`, per server (the source takes the largest).
const CONNECTIONS: &str = "100 * sum by (server) (pg_stat_activity_count) / sum by (server) (pg_settings_max_connections)";
/// Database load: seconds per second spent executing SQL (average active sessions) over 4 vCPUs.
const CPU: &str = "100 * sum(rate(pg_stat_database_active_time[1m])) / 1000 / 4";
/// The database's capacity changed in the last five minutes (a restart with more connections).
const SCALING: &str = "max(changes(pg_settings_max_connections[5m]))";

fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_secs() as i64
}

fn source(url: &str, queries: PrometheusQueries, timeout: Duration) -> PrometheusMetrics {
    let checked = PrometheusSource::new(url, queries).unwrap_or_else(|e| panic!("{e}"));
    PrometheusMetrics::new(checked, timeout).unwrap_or_else(|e| panic!("{e}"))
}

fn only(set: impl FnOnce(&mut PrometheusQueries)) -> PrometheusQueries {
    let mut q = PrometheusQueries::default();
    set(&mut q);
    q
}

/// Polls `probe` every 200 ms until it gives something, for at most `limit`.
async fn poll<T, F: Future<Output = Option<T>>>(what: &str, limit: Duration, mut probe: impl FnMut() -> F) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = probe().await {
            eprintln!("{what}: after {:?}", start.elapsed());
            return v;
        }
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn read(s: &PrometheusMetrics) -> Result<Reading, MetricsError> {
    s.read(unix_now()).await
}

/// A Prometheus without targets, answering queries (PromQL needs no data for `vector(...)`).
async fn bare_prometheus() -> Prometheus {
    let prom = Prometheus::start("none", &[], Duration::from_secs(1));
    let probe = source(&prom.url(), only(|q| q.cpu_pct = Some("vector(1)".into())), Duration::from_secs(2));
    poll("prometheus ready", Duration::from_secs(20), || async { read(&probe).await.ok() }).await;
    prom
}

async fn open_sessions(pg: &Postgres, n: usize) -> Vec<tokio_postgres::Client> {
    let mut clients = Vec::new();
    for _ in 0..n {
        let (client, connection) = tokio_postgres::connect(&pg.dsn(), tokio_postgres::NoTls).await.expect("connecting");
        tokio::spawn(connection);
        client.simple_query("SELECT 1").await.expect("a query on the new session");
        clients.push(client);
    }
    clients
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_follow_real_postgres_sessions() {
    let started = Instant::now();
    let pg = Postgres::start();
    let exporter = PostgresExporter::start(&pg.url());
    let prom = Prometheus::start("postgres", &[exporter.target()], Duration::from_secs(1));
    eprintln!("postgres, exporter and prometheus started in {:?}", started.elapsed());
    let queries = PrometheusQueries {
        cpu_pct: Some(CPU.into()),
        connections_pct: Some(CONNECTIONS.into()),
        scaling: Some(SCALING.into()),
        ..PrometheusQueries::default()
    };
    let s = source(&prom.url(), queries, Duration::from_secs(2));
    assert_eq!(s.describe(), format!("prometheus {} (cpu, connections, scaling)", prom.url()));

    // Prometheus's first scrape comes about 6 s after it starts (target discovery is applied
    // every 5 s), and rate() needs two: wait until every signal is there.
    let before = poll("first complete reading", Duration::from_secs(30), || async {
        read(&s).await.ok().filter(|r| r.cpu_pct.is_some() && r.connections_pct.is_some() && r.scaling.is_some())
    })
    .await;
    eprintln!("before: {before:?}");
    let base = before.connections_pct.unwrap();
    assert!(base > 0.0 && base < 10.0, "the exporter's own session(s) out of 100: {base}");
    let cpu = before.cpu_pct.unwrap();
    assert!(cpu.is_finite() && cpu >= 0.0, "{cpu}");
    assert_eq!(before.scaling, Some(false), "max_connections has not changed");
    assert!(before.latency.is_empty());

    let t = Instant::now();
    let read_took = {
        read(&s).await.expect("a read");
        t.elapsed()
    };
    eprintln!("one read (3 concurrent queries): {read_took:?}");

    let sessions = open_sessions(&pg, 20).await;
    let risen = poll("prometheus sees 20 more sessions", Duration::from_secs(15), || async {
        read(&s).await.ok().and_then(|r| r.connections_pct).filter(|c| *c >= base + 20.0)
    })
    .await;
    assert!(risen <= base + 25.0, "20 sessions of 100 took {base} to {risen}");

    drop(sessions);
    poll("prometheus sees them closed", Duration::from_secs(15), || async {
        read(&s).await.ok().and_then(|r| r.connections_pct).filter(|c| *c <= base + 2.0)
    })
    .await;

    // Asked about an earlier minute, Prometheus answers with what it had then: nothing was
    // scraped an hour ago, and no data for any signal is a failed read naming the queries.
    let earlier = s.read(unix_now() - 3600).await.expect_err("no data an hour back");
    assert!(
        matches!(&earlier, MetricsError::NoData(why) if why.contains("connections_pct") && why.contains("empty result")),
        "{earlier:?}"
    );

    // The exporter's address by mistake: it answers any path with its HTML landing page.
    let wrong =
        source(&format!("http://{}", exporter.target()), only(|q| q.connections_pct = Some(CONNECTIONS.into())), Duration::from_secs(2));
    let err = read(&wrong).await.expect_err("not Prometheus");
    eprintln!("the exporter's address: {err}");
    assert!(
        matches!(&err, MetricsError::Malformed { field, message } if field == "connections_pct" && message.contains(CONNECTIONS)),
        "{err:?}"
    );
    drop(prom);
}

#[tokio::test]
async fn empty_results_are_absent_signals_and_promql_errors_are_failed_reads() {
    let mut prom = bare_prometheus().await;
    // No exporter is scraped here: real queries find no series.
    let queries = PrometheusQueries {
        cpu_pct: Some("vector(12.5)".into()),
        connections_pct: Some(CONNECTIONS.into()),
        scaling: Some(SCALING.into()),
        latency_p95_ms: Some(
            r#"histogram_quantile(0.95, sum by (api, le) (rate(http_request_duration_seconds_bucket[5m]))) * 1000"#.into(),
        ),
        ..PrometheusQueries::default()
    };
    let r = read(&source(&prom.url(), queries, Duration::from_secs(2))).await.expect("a read");
    assert_eq!(r, Reading { cpu_pct: Some(12.5), connections_pct: None, scaling: None, latency: vec![] });

    // A syntax error: HTTP 400, bad_data.
    let broken = r#"100 * (1 - avg(rate(node_cpu_seconds_total{mode="idle"}[1m]))"#;
    let s = source(
        &prom.url(),
        only(|q| {
            q.cpu_pct = Some(broken.into());
            q.connections_pct = Some(CONNECTIONS.into());
        }),
        Duration::from_secs(2),
    );
    let t = Instant::now();
    let err = read(&s).await.expect_err("a syntax error");
    eprintln!("syntax error after {:?}: {err}", t.elapsed());
    let text = err.to_string();
    assert!(matches!(err, MetricsError::Unavailable(_)), "{err:?}");
    assert!(text.contains("cpu_pct") && text.contains(broken) && text.contains("bad_data"), "{text}");
    assert!(text.contains("parse error"), "{text}");

    // A valid query that fails when evaluated: HTTP 422, execution.
    let ambiguous = r#"vector(1) / on() (label_replace(vector(1), "a", "x", "", "") or label_replace(vector(2), "a", "y", "", ""))"#;
    let err = read(&source(&prom.url(), only(|q| q.scaling = Some(ambiguous.into())), Duration::from_secs(2)))
        .await
        .expect_err("a many-to-many match");
    let text = err.to_string();
    assert!(text.contains("scaling") && text.contains("execution") && text.contains("422"), "{text}");

    // The server dies: the next read fails at once.
    prom.process.kill();
    let s = source(&prom.url(), only(|q| q.connections_pct = Some(CONNECTIONS.into())), Duration::from_secs(2));
    let t = Instant::now();
    let err = read(&s).await.expect_err("prometheus is gone");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert!(matches!(err, MetricsError::Unavailable(_)), "{err:?}");
}

#[tokio::test]
async fn latency_is_one_entry_per_series_keyed_by_the_label() {
    let prom = bare_prometheus().await;
    let one = r#"label_replace(vector(180), "api", "crm", "", "")"#;
    let r = read(&source(&prom.url(), only(|q| q.latency_p95_ms = Some(one.into())), Duration::from_secs(2))).await.unwrap();
    assert_eq!(r.latency, vec![ApiLatency { api: "crm".into(), p95_ms: Some(180.0), baseline_ms: None }]);
    assert_eq!((r.cpu_pct, r.connections_pct, r.scaling), (None, None, None));

    // Several APIs, by name; the same API twice (two instances) keeps the slower.
    let three = r#"label_replace(vector(180), "route", "crm", "", "")
        or label_replace(label_replace(vector(95.5), "route", "billing", "", ""), "instance", "a", "", "")
        or label_replace(label_replace(vector(120), "route", "billing", "", ""), "instance", "b", "", "")"#;
    let s = source(
        &prom.url(),
        only(|q| {
            q.latency_p95_ms = Some(three.into());
            q.latency_label = "route".into();
        }),
        Duration::from_secs(2),
    );
    assert_eq!(s.describe(), format!("prometheus {} (latency by route)", prom.url()));
    let r = read(&s).await.unwrap();
    let got: Vec<(String, Option<f64>)> = r.latency.iter().map(|l| (l.api.clone(), l.p95_ms)).collect();
    assert_eq!(got, vec![("billing".into(), Some(120.0)), ("crm".into(), Some(180.0))]);
    assert!(r.latency.iter().all(|l| l.baseline_ms.is_none()));

    // A series without the label cannot be attributed to an API.
    let unlabelled = r#"vector(180) or label_replace(vector(1), "other", "x", "", "")"#;
    let err = read(&source(&prom.url(), only(|q| q.latency_p95_ms = Some(unlabelled.into())), Duration::from_secs(2)))
        .await
        .expect_err("no api label");
    assert!(matches!(&err, MetricsError::Malformed { field, .. } if field == "latency_p95_ms"), "{err:?}");
    assert!(err.to_string().contains("without the label `api`"), "{err}");
}

#[tokio::test]
async fn non_finite_and_non_vector_values_are_malformed() {
    let prom = bare_prometheus().await;
    let read_one = |set: fn(&mut PrometheusQueries)| {
        let s = source(&prom.url(), only(set), Duration::from_secs(2));
        async move { read(&s).await }
    };
    let err = read_one(|q| q.cpu_pct = Some("vector(NaN)".into())).await.expect_err("NaN");
    assert!(matches!(&err, MetricsError::Malformed { field, message } if field == "cpu_pct" && message.contains("\"NaN\"")), "{err:?}");
    assert!(err.to_string().contains("vector(NaN)"), "{err}");

    let err = read_one(|q| q.connections_pct = Some("vector(1) / vector(0)".into())).await.expect_err("+Inf");
    assert!(
        matches!(&err, MetricsError::Malformed { field, message } if field == "connections_pct" && message.contains("+Inf")),
        "{err:?}"
    );

    let err = read_one(|q| q.latency_p95_ms = Some(r#"label_replace(vector(-Inf), "api", "crm", "", "")"#.into())).await.expect_err("-Inf");
    assert!(matches!(&err, MetricsError::Malformed { field, .. } if field == "latency[crm].p95_ms"), "{err:?}");

    // A range vector is not a reading.
    let err = read_one(|q| q.cpu_pct = Some("pg_up[1m]".into())).await.expect_err("a matrix");
    assert!(matches!(&err, MetricsError::Malformed { field, message } if field == "cpu_pct" && message.contains("matrix")), "{err:?}");

    // A scalar is one value; scaling is a value above zero; out-of-range values are the host's to refuse.
    let r = read_one(|q| {
        q.cpu_pct = Some("42".into());
        q.scaling = Some("vector(1)".into());
        q.connections_pct = Some("vector(140)".into());
    })
    .await
    .unwrap();
    assert_eq!((r.cpu_pct, r.connections_pct, r.scaling), (Some(42.0), Some(140.0), Some(true)));
}

#[tokio::test]
async fn a_server_that_is_down_fails_quickly() {
    let url = format!("http://127.0.0.1:{}", free_port());
    let s = source(&url, only(|q| q.connections_pct = Some(CONNECTIONS.into())), Duration::from_secs(2));
    let t = Instant::now();
    let err = read(&s).await.expect_err("nothing listens");
    eprintln!("refused after {:?}: {err}", t.elapsed());
    assert!(t.elapsed() < Duration::from_millis(500), "{:?}", t.elapsed());
    let text = err.to_string();
    assert!(matches!(err, MetricsError::Unavailable(_)), "{err:?}");
    assert!(text.contains("connections_pct") && text.contains(CONNECTIONS) && text.contains("connect"), "{text}");
}

/// An `https://` URL goes through the sentinel's own TLS setup (rustls, ring, the system's
/// roots): against the real Prometheus, which speaks plain HTTP, the handshake fails as a failed
/// read naming the signal, never a panic for a missing crypto provider.
#[tokio::test]
async fn an_https_url_makes_a_tls_handshake_that_a_plain_server_fails() {
    let prometheus = bare_prometheus().await;
    let url = prometheus.url().replacen("http://", "https://", 1);
    let s = source(&url, only(|q| q.connections_pct = Some(CONNECTIONS.into())), Duration::from_secs(2));
    let err = read(&s).await.expect_err("a plain HTTP server cannot complete a TLS handshake");
    let text = err.to_string();
    assert!(matches!(err, MetricsError::Unavailable(_)), "{err:?}");
    assert!(text.contains("connections_pct") && text.contains(&url), "{text}");
    assert!(text.contains("corrupt message"), "rustls read the plain answer as a bad TLS record: {text}");
}

#[tokio::test]
async fn a_hung_server_fails_within_the_timeout() {
    let hung = HungServer::start();
    let queries = PrometheusQueries {
        cpu_pct: Some(CPU.into()),
        connections_pct: Some(CONNECTIONS.into()),
        scaling: Some(SCALING.into()),
        latency_p95_ms: Some(r#"label_replace(vector(180), "api", "crm", "", "")"#.into()),
        ..PrometheusQueries::default()
    };
    let timeout = Duration::from_millis(500);
    let s = source(&format!("http://{}", hung.addr()), queries, timeout);
    let t = Instant::now();
    let err = read(&s).await.expect_err("no answer");
    let took = t.elapsed();
    eprintln!("hung server: failed after {took:?}: {err}");
    assert_eq!(err, MetricsError::Timeout(timeout));
    // Four queries, concurrently: one timeout, not four.
    assert!(took >= Duration::from_millis(450) && took < Duration::from_millis(1000), "{took:?}");
}

/// The example of the README: node_exporter for CPU, the PostgreSQL exporter for connections,
/// CloudWatch (via cloudwatch_exporter) for Aurora Serverless capacity, and the API gateway's
/// request-duration histogram for latency.
const PRODUCTION_TOML: &str = r#"
cpu_pct = '100 * (1 - avg(rate(node_cpu_seconds_total{job="node", instance="db-1:9100", mode="idle"}[1m])))'
connections_pct = '100 * sum by (server) (pg_stat_activity_count{job="postgres"}) / sum by (server) (pg_settings_max_connections{job="postgres"})'
scaling = 'max(deriv(aws_rds_serverless_database_capacity_average{dbcluster_identifier="crm-prod"}[10m]))'
latency_p95_ms = '1000 * histogram_quantile(0.95, sum by (api, le) (rate(http_request_duration_seconds_bucket{job="gateway"}[5m])))'
latency_label = "api"
"#;

#[test]
fn queries_deserialize_strictly_and_the_source_is_checked() {
    let q: PrometheusQueries = toml::from_str(PRODUCTION_TOML).unwrap();
    assert!(q.cpu_pct.as_deref().unwrap().starts_with("100 * (1 - avg("));
    let s = source("https://prometheus.internal:9090/", q, Duration::from_secs(5));
    assert_eq!(s.describe(), "prometheus https://prometheus.internal:9090 (cpu, connections, scaling, latency by api)");

    let q: PrometheusQueries = toml::from_str("connections_pct = 'up'").unwrap();
    assert_eq!(q.latency_label, "api");
    let s = source("http://u:secret@prom:9090/prefix", q.clone(), Duration::from_secs(5));
    assert_eq!(s.describe(), "prometheus http://u:***@prom:9090/prefix (connections)");
    let err = toml::from_str::<PrometheusQueries>("cpu = 'up'").unwrap_err().to_string();
    assert!(err.contains("unknown field `cpu`"), "{err}");

    for bad in ["", "prom:9090", "ftp://prom:9090", "http://", "http://prom:9090/?x=1"] {
        let err = PrometheusSource::new(bad, q.clone()).expect_err(bad);
        assert!(err.to_string().starts_with("metrics.url: "), "{bad}: {err}");
    }
    let err = PrometheusSource::new("http://prom:9090", PrometheusQueries::default()).unwrap_err();
    assert!(err.to_string().contains("no query configured"), "{err}");
    let blank = only(|q| q.cpu_pct = Some("  ".into()));
    let err = PrometheusSource::new("http://prom:9090", blank).unwrap_err();
    assert!(err.to_string().contains("metrics.queries.cpu_pct: is empty"), "{err}");
}
