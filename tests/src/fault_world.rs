//! A whole production-shaped sentinel for fault injection: a real PostgreSQL store, Prometheus
//! for metrics (constant PromQL such as `vector(90)`, which answers at any instant, so the
//! sped-up simulated clock can run ahead of the wall clock), Redis and SSM (moto) channels,
//! and a signed 1.0.0 policy. `sentinel run --speed 60` ticks once a second with JSON logs and
//! its metrics endpoint; the test kills, hangs and restores servers under it, then reads back
//! what each tick logged, what was counted, what the store recorded and what SSM received.

use crate::paths::target_dir;
use crate::sentinel_bin::sentinel;
use crate::servers::free_port;
use crate::servers::hung::HungServer;
use crate::servers::moto::Moto;
use crate::servers::postgres::Postgres;
use crate::servers::prometheus::Prometheus;
use crate::servers::redis::Redis;
use crate::signed::SignedPolicies;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Every network call of the sentinel under test is bounded by this.
pub const TIMEOUT: &str = "3s";
pub const PARAMETER: &str = "/capacity/faults/state";
pub const KEY: &str = "capacity:faults";

pub struct World {
    pub pg: Postgres,
    pub prometheus: Prometheus,
    pub redis: Redis,
    pub moto: Moto,
    /// A listener standing in for a server on its port, accepting and never answering.
    pub hung: Option<HungServer>,
    pub dir: tempfile::TempDir,
}

impl World {
    /// Starts the four servers and writes a config whose readings are `cpu_pct` (PromQL).
    pub fn start(cpu_pct: &str) -> World {
        let pg = Postgres::start();
        let prometheus = Prometheus::start("none", &[], Duration::from_secs(1));
        let redis = Redis::start();
        let moto = Moto::start();
        let dir = tempfile::tempdir().expect("temp dir");
        let policy = target_dir().join("policies/capacity-policy-1.0.0.wasm");
        let policies = SignedPolicies::install(dir.path(), &[policy]);
        let config = format!(
            r#"tick_deadline = "10s"

[store]
kind = "postgres"
url = "{pg}"
timeout = "{TIMEOUT}"

[metrics]
kind = "prometheus"
url = "{prometheus}"
timeout = "{TIMEOUT}"
[metrics.queries]
cpu_pct = '{cpu_pct}'

[publish]
timeout = "{TIMEOUT}"
[publish.cache]
kind = "redis"
url = "{redis}"
key = "{KEY}"
expiry = "5m"
[publish.parameter]
kind = "ssm"
name = "{PARAMETER}"

{policies}"#,
            pg = pg.url(),
            prometheus = prometheus.url(),
            redis = redis.url(),
            policies = policies.toml("1.0.0"),
        );
        std::fs::write(dir.path().join("sentinel.toml"), config).expect("writing the config");
        World { pg, prometheus, redis, moto, hung: None, dir }
    }

    /// PostgreSQL back on its port with its data, once it answers queries (it listens a
    /// moment before it has recovered).
    pub fn restart_postgres(&mut self) {
        self.pg.restart();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let deadline = Instant::now() + Duration::from_secs(30);
        runtime.block_on(async {
            loop {
                if let Ok((client, connection)) = tokio_postgres::connect(&self.pg.dsn(), tokio_postgres::NoTls).await {
                    tokio::spawn(connection);
                    if client.simple_query("SELECT 1").await.is_ok() {
                        return;
                    }
                }
                assert!(Instant::now() < deadline, "PostgreSQL did not answer after its restart");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("sentinel.toml")
    }

    /// `sentinel run --speed 60` (a simulated minute a second) with JSON logs and metrics.
    pub fn run(&self) -> Running {
        let metrics_port = free_port();
        let log = self.dir.path().join("run.log");
        let child = Command::new(sentinel())
            .args(["--log-format", "json", "run", "--speed", "60", "--metrics-addr"])
            .arg(format!("127.0.0.1:{metrics_port}"))
            .arg("--config")
            .arg(self.config())
            .envs(self.moto.aws_env())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(&log).expect("creating the log")))
            .spawn()
            .expect("sentinel starts");
        let running = Running { child, log, metrics_port, started: Instant::now() };
        running.await_ticks(1);
        running
    }

    /// The values SSM holds for the parameter, oldest first (moto keeps the history of a
    /// parameter until it is restarted), read with boto3, independently of the sentinel.
    pub fn ssm_history(&self) -> Vec<Value> {
        let out = Command::new("python3").args(["-c", SSM_HISTORY, PARAMETER, &self.moto.endpoint()]).output().expect("python3 runs");
        assert!(out.status.success(), "reading the parameter history: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("each version holds JSON")).collect()
    }

    /// The document Redis holds now.
    pub fn redis_document(&self) -> Option<Value> {
        let client = redis::Client::open(self.redis.url()).expect("redis url");
        let mut conn = client.get_connection_with_timeout(Duration::from_secs(3)).ok()?;
        let text: Option<String> = redis::cmd("GET").arg(KEY).query(&mut conn).ok()?;
        text.map(|t| serde_json::from_str(&t).expect("the cached document is JSON"))
    }

    /// `(sequence, at, publication outcomes)` of every stored tick, in order.
    pub fn stored_ticks(&self) -> Vec<(i64, i64, Value)> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&self.pg.dsn(), tokio_postgres::NoTls).await.expect("connects to the store");
            tokio::spawn(connection);
            let rows =
                client.query("SELECT sequence, at, publication::text FROM ticks ORDER BY sequence", &[]).await.expect("the ticks table");
            rows.iter()
                .map(|r| {
                    let publication: Option<String> = r.get(2);
                    (r.get(0), r.get(1), publication.map_or(Value::Null, |p| serde_json::from_str(&p).expect("JSON")))
                })
                .collect()
        })
    }
}

const SSM_HISTORY: &str = r#"
import sys, boto3
ssm = boto3.client("ssm", endpoint_url=sys.argv[2], region_name="us-east-1",
                   aws_access_key_id="testing", aws_secret_access_key="testing")
pages = ssm.get_paginator("get_parameter_history").paginate(Name=sys.argv[1])
for page in pages:
    for version in page["Parameters"]:
        print(version["Value"])
"#;

/// One running `sentinel run`.
pub struct Running {
    child: Child,
    log: PathBuf,
    metrics_port: u16,
    pub started: Instant,
}

/// What one tick logged, with the wall clock of the line.
#[derive(Debug, Clone)]
pub struct TickLine {
    /// Unix seconds (with fractions) when the line was written.
    pub logged: f64,
    /// The line's fields: sequence, state, cause, channels, ...; for a failed tick only message.
    pub fields: Value,
    pub failed: bool,
}

impl TickLine {
    pub fn channel_ok(&self, channel: &str) -> Option<bool> {
        let channels = self.fields["channels"].as_str()?;
        channels.split(' ').find_map(|c| c.strip_prefix(&format!("{channel}="))).map(|v| v == "ok")
    }

    pub fn message(&self) -> &str {
        self.fields["message"].as_str().unwrap_or("")
    }
}

impl Running {
    /// The process's log lines, parsed.
    pub fn log_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log).unwrap_or_default().lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Every tick so far: decided ones (their explanation line) and failed ones.
    pub fn ticks(&self) -> Vec<TickLine> {
        self.log_lines()
            .into_iter()
            .filter_map(|line| {
                let fields = line["fields"].clone();
                let message = fields["message"].as_str().unwrap_or("");
                let decided = fields.get("sequence").is_some() && fields.get("channels").is_some();
                let failed = line["level"] == "ERROR" && message.starts_with("tick at ");
                if !(decided || failed) {
                    return None;
                }
                let logged = unix_seconds(line["timestamp"].as_str().expect("a timestamp"));
                Some(TickLine { logged, fields, failed })
            })
            .collect()
    }

    /// Waits until `n` more ticks (decided or failed) have been logged.
    pub fn await_ticks(&self, n: usize) {
        let target = self.ticks().len() + n;
        let deadline = Instant::now() + Duration::from_secs(20 + 3 * n as u64);
        while self.ticks().len() < target {
            assert!(Instant::now() < deadline, "fewer than {target} ticks logged in time; the log:\n{}", self.log_text());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The Prometheus text of the metrics endpoint.
    pub fn scrape(&self) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.metrics_port)).expect("the metrics endpoint listens");
        stream.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
        write!(stream, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").expect("request");
        let mut text = String::new();
        stream.read_to_string(&mut text).expect("response");
        text
    }

    /// The metrics and the logged ticks as of one moment: scraped again until the log did not
    /// change during the scrape and the metrics have observed every logged tick (a tick logs
    /// its line a moment before its duration is observed, so a single scrape can be one behind).
    pub fn snapshot(&self) -> (String, Vec<TickLine>) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let before = self.ticks().len();
            let metrics = self.scrape();
            let ticks = self.ticks();
            let observed = Self::sample(&metrics, "sentinel_tick_seconds_count");
            if ticks.len() == before && observed == before as f64 {
                return (metrics, ticks);
            }
            assert!(
                Instant::now() < deadline,
                "the metrics never caught up with the log: {observed} ticks observed, {} logged",
                ticks.len()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// One sample's value from `scrape` text (`name` with its labels, exactly as exposed); a
    /// bare name sums every series of that name (`sentinel_tick_failures_total` over its reasons).
    pub fn sample(text: &str, name: &str) -> f64 {
        let bare = !name.contains('{');
        text.lines()
            .filter_map(|l| {
                let rest = l.strip_prefix(name)?;
                let value = match rest.strip_prefix(' ') {
                    Some(value) => value,
                    None if bare && rest.starts_with('{') => rest.split_once("} ")?.1,
                    None => return None,
                };
                Some(value.trim().parse::<f64>().expect("a number"))
            })
            .sum()
    }

    /// `127.0.0.1:PORT` of the metrics endpoint, as a scrape target.
    pub fn metrics_target(&self) -> String {
        format!("127.0.0.1:{}", self.metrics_port)
    }

    /// SIGKILL: the process dies mid-minute, as on a crash or an OOM kill.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then waits for the tick in flight to finish.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("waiting") {
                return status;
            }
            assert!(Instant::now() < deadline, "the sentinel did not stop on SIGTERM; its log:\n{}", self.log_text());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The wall clock now, in unix seconds with fractions (to compare with `TickLine::logged`).
pub fn wall_now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs_f64()
}

/// `2026-12-02T18:10:00.123456Z` as unix seconds with fractions.
fn unix_seconds(stamp: &str) -> f64 {
    let (whole, fraction) = match stamp.split_once('.') {
        Some((whole, rest)) => (format!("{whole}Z"), format!("0.{}", rest.trim_end_matches('Z'))),
        None => (stamp.to_string(), "0".to_string()),
    };
    let seconds = sentinel_core::instants::parse_rfc3339(&whole).unwrap_or_else(|e| panic!("log timestamp {stamp}: {e}"));
    seconds as f64 + fraction.parse::<f64>().unwrap_or(0.0)
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
