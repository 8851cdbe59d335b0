//! The whole sentinel against real servers: a PostgreSQL under a burst of connections, scraped
//! by Prometheus through the PostgreSQL exporter; the sentinel (real `sentinel tick` processes)
//! keeps its memory in that PostgreSQL, publishes to Redis and to SSM (moto), and decides with
//! a fixture policy with low thresholds and no waiting (`tests/policies/9.0.0`). The load makes
//! it escalate, both channels hold the new state, the load stops and it steps back down.

use capacity_tests::paths::target_dir;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::moto::Moto;
use capacity_tests::servers::postgres::Postgres;
use capacity_tests::servers::prometheus::{PostgresExporter, Prometheus};
use capacity_tests::servers::redis::Redis;
use capacity_tests::signed::SignedPolicies;
use sentinel_adapters::prometheus_metrics::{PrometheusMetrics, PrometheusQueries, PrometheusSource};
use sentinel_core::ports::metrics::MetricsSource;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const CONNECTIONS: &str = "100 * sum(pg_stat_activity_count) / max(pg_settings_max_connections)";
const PARAMETER: &str = "/capacity/e2e/state";
const KEY: &str = "capacity:e2e";

fn e2e_policy() -> PathBuf {
    let path = target_dir().join("test-policies/capacity-policy-e2e-9.0.0.wasm");
    assert!(path.is_file(), "{} is missing: run `cargo policies` first", path.display());
    path
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_secs() as i64
}

fn rfc3339(at: i64) -> String {
    sentinel_core::instants::format_rfc3339(at)
}

struct World {
    pg: Postgres,
    prometheus: Prometheus,
    redis: Redis,
    moto: Moto,
    dir: tempfile::TempDir,
    _exporter: PostgresExporter,
    /// The instant of the last tick: each tick decides a later one (a repeated instant would
    /// only publish its recorded document again).
    last_at: std::cell::Cell<i64>,
}

impl World {
    fn start() -> World {
        let pg = Postgres::start();
        let exporter = PostgresExporter::start(&pg.url());
        let prometheus = Prometheus::start("postgres", &[exporter.target()], Duration::from_secs(1));
        let redis = Redis::start();
        let moto = Moto::start();
        let dir = tempfile::tempdir().expect("temp dir");
        // Outside the embedded default only signed policies run.
        let policies = SignedPolicies::install(dir.path(), &[e2e_policy()]);
        let config = format!(
            r#"
tick_deadline = "15s"

[store]
kind = "postgres"
url = "{pg}"
timeout = "3s"

[metrics]
kind = "prometheus"
url = "{prometheus}"
timeout = "3s"
[metrics.queries]
connections_pct = '{CONNECTIONS}'

[publish]
timeout = "3s"
[publish.cache]
kind = "redis"
url = "{redis}"
key = "{KEY}"
expiry = "5m"
[publish.parameter]
kind = "ssm"
name = "{PARAMETER}"

{policies}"#,
            policies = policies.toml("9.0.0"),
            pg = pg.url(),
            prometheus = prometheus.url(),
            redis = redis.url(),
        );
        std::fs::write(dir.path().join("sentinel.toml"), config).expect("writing the config");
        World { pg, prometheus, redis, moto, dir, _exporter: exporter, last_at: std::cell::Cell::new(0) }
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("sentinel.toml")
    }

    /// One `sentinel tick` process at the current second; returns the published document.
    fn tick(&self) -> Value {
        let out = Command::new(sentinel())
            .arg("tick")
            .arg("--config")
            .arg(self.config())
            .arg("--at")
            .arg(rfc3339({
                let at = now().max(self.last_at.get() + 1);
                self.last_at.set(at);
                at
            }))
            .envs(self.moto.aws_env())
            .env("RUST_LOG", "info")
            .output()
            .expect("sentinel runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "sentinel tick failed:\n{stderr}");
        let cache = self.redis_document();
        let parameter = self.ssm_document();
        assert_eq!(cache, parameter, "both channels hold the same document\n{stderr}");
        cache
    }

    fn redis_document(&self) -> Value {
        let client = redis::Client::open(self.redis.url()).expect("redis url");
        let mut conn = client.get_connection_with_timeout(Duration::from_secs(3)).expect("redis connects");
        let text: String = redis::cmd("GET").arg(KEY).query(&mut conn).expect("the key is set");
        let ttl: i64 = redis::cmd("TTL").arg(KEY).query(&mut conn).expect("ttl");
        assert!((1..=300).contains(&ttl), "the cached state expires (ttl {ttl})");
        serde_json::from_str(&text).expect("the cached document is JSON")
    }

    fn ssm_document(&self) -> Value {
        let out = Command::new("python3").args(["-c", SSM_GET, PARAMETER, &self.moto.endpoint()]).output().expect("python3 runs");
        assert!(out.status.success(), "reading the parameter: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("the parameter holds JSON")
    }

    /// Waits until Prometheus reports a connection share for which `until` holds.
    fn await_connections(&self, what: &str, until: impl Fn(f64) -> bool) -> f64 {
        let queries = PrometheusQueries { connections_pct: Some(CONNECTIONS.into()), ..PrometheusQueries::default() };
        let checked = PrometheusSource::new(&self.prometheus.url(), queries).expect("queries are valid");
        let source = PrometheusMetrics::new(checked, Duration::from_secs(3)).expect("an HTTP client");
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(reading) = runtime.block_on(source.read(now()))
                && let Some(share) = reading.connections_pct
                && until(share)
            {
                return share;
            }
            assert!(Instant::now() < deadline, "Prometheus never showed {what}");
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// Reads an SSM parameter from moto with boto3 (moto's own dependency), independently of the
/// sentinel's SDK.
const SSM_GET: &str = r#"
import sys, boto3
ssm = boto3.client("ssm", endpoint_url=sys.argv[2], region_name="us-east-1",
                   aws_access_key_id="testing", aws_secret_access_key="testing")
print(ssm.get_parameter(Name=sys.argv[1])["Parameter"]["Value"])
"#;

/// Opens `n` idle sessions to the database, held until the returned guard drops.
fn burst(pg: &Postgres, n: usize) -> Vec<postgres_session::Session> {
    (0..n).map(|_| postgres_session::Session::open(&pg.dsn())).collect()
}

mod postgres_session {
    /// One idle PostgreSQL session on its own thread and runtime.
    pub struct Session {
        stop: Option<std::sync::mpsc::Sender<()>>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    impl Session {
        pub fn open(dsn: &str) -> Session {
            let (ready_tx, ready_rx) = std::sync::mpsc::channel();
            let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
            let dsn = dsn.to_string();
            let thread = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
                runtime.block_on(async move {
                    let (client, connection) = tokio_postgres::connect(&dsn, tokio_postgres::NoTls).await.expect("connects");
                    let task = tokio::spawn(connection);
                    client.simple_query("SELECT 1").await.expect("query");
                    ready_tx.send(()).expect("ready");
                    let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                    drop(client);
                    let _ = task.await;
                });
            });
            ready_rx.recv().expect("the session opened");
            Session { stop: Some(stop_tx), thread: Some(thread) }
        }
    }

    impl Drop for Session {
        fn drop(&mut self) {
            drop(self.stop.take());
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        }
    }
}

fn state(doc: &Value) -> &str {
    doc["state"].as_str().expect("a state")
}

#[test]
fn a_connection_burst_escalates_publishes_to_redis_and_ssm_and_relief_steps_back_down() {
    let world = World::start();
    let quiet = world.await_connections("a first scrape", |_| true);
    assert!(quiet < 20.0, "the idle database is below the constrained threshold ({quiet:.1}%)");

    let first = world.tick();
    assert_eq!(state(&first), "normal");
    assert_eq!(first["policy"]["version"], "9.0.0");
    let mut sequence = first["sequence"].as_u64().expect("sequence");

    // 50 sessions of max_connections = 100: critical (>= 40 %).
    let sessions = burst(&world.pg, 50);
    let loaded = world.await_connections("the burst", |share| share >= 40.0);
    let escalated = world.tick();
    assert_eq!(state(&escalated), "critical", "{loaded:.1}% connections escalate straight to critical");
    assert_eq!(escalated["cause"], "escalate");
    assert_eq!(escalated["factors"]["bulk"], 0.0);
    sequence += 1;
    assert_eq!(escalated["sequence"].as_u64(), Some(sequence), "one sequence step per tick");

    let emergency = world.tick();
    assert_eq!(state(&emergency), "emergency", "sustained critical pressure reaches emergency");
    assert_eq!(emergency["factors"]["write"], 0.5);

    // Relief: one state down per tick.
    drop(sessions);
    world.await_connections("the relief", |share| share < 20.0);
    let mut states = Vec::new();
    for _ in 0..3 {
        states.push(state(&world.tick()).to_string());
    }
    assert_eq!(states, ["critical", "constrained", "normal"], "recovery steps down one state at a time");
    let last = world.tick();
    assert_eq!(state(&last), "normal");
    assert_eq!(last["cause"], "hold");
    assert_eq!(last["sequence"].as_u64(), Some(sequence + 5));
    check_records(&world, sequence + 5);
}

/// The shared store kept one record per tick with the publication outcome of both channels.
fn check_records(world: &World, expected: u64) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&world.pg.dsn(), tokio_postgres::NoTls).await.expect("connects");
        tokio::spawn(connection);
        let rows = client.query("SELECT count(*) FROM ticks", &[]).await.expect("the ticks table exists");
        let count: i64 = rows[0].get(0);
        assert_eq!(count as u64, expected, "one tick record per tick");
    });
}
