//! Services following the sentinel, whole system (docs/behaviour.md §9.1): a real `sentinel run`
//! keeps its memory in PostgreSQL and publishes to Redis and to SSM (moto); a Python and a Node
//! service each read the bulk factor with their package's `BulkFactorReader` (both channels,
//! `tests/consumers/follow.{py,mjs}`). A staff pin holds the sentinel in critical (bulk 0).
//!
//! - The sentinel is killed: within `max_age + refresh` of its last decision every reader is at
//!   full capacity with a reason naming both channels, and not before the document is stale;
//!   started again, it decides at the next minute and every reader follows it.
//! - Its PostgreSQL store is stopped: it publishes nothing, and the same happens; when the store
//!   is back, the running sentinel decides again and the readers follow.
//!
//! Real time: the sentinel ticks on minute boundaries, so each test takes three to four minutes
//! (the two run side by side). Needs the packages built by `tests/cross_language.sh` (the Python
//! venv in target/cross-language/venv, the Node package's gen/), which `tests/run` runs first.

use capacity_tests::paths::{target_dir, workspace};
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::moto::Moto;
use capacity_tests::servers::postgres::Postgres;
use capacity_tests::servers::redis::Redis;
use capacity_tests::signed::SignedPolicies;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const KEY: &str = "capacity:follow";
const PARAMETER: &str = "/capacity/follow/state";
/// The readers' maximum age: above a minute, so a live sentinel's document (at most a minute
/// and a few seconds old before the next tick) is always fresh.
const MAX_AGE_S: f64 = 90.0;
const REFRESH_S: f64 = 2.0;
/// A tick happens at the next minute boundary: at most 60 s, plus its own work.
const NEXT_TICK: Duration = Duration::from_secs(80);

fn wall() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_secs_f64()
}

struct World {
    pg: Postgres,
    redis: Redis,
    moto: Moto,
    dir: tempfile::TempDir,
    followers: Vec<Follower>,
}

impl World {
    fn start() -> World {
        let pg = Postgres::start();
        let redis = Redis::start();
        let moto = Moto::start();
        let dir = tempfile::tempdir().expect("temp dir");
        let component = target_dir().join("policies/capacity-policy-1.0.0.wasm");
        assert!(component.is_file(), "{} is missing: run `cargo policies` first", component.display());
        let policies = SignedPolicies::install(dir.path(), &[component]);
        let config = format!(
            r#"
[store]
kind = "postgres"
url = "{pg}"
timeout = "3s"

[metrics]
kind = "synthetic"

[publish]
timeout = "3s"
[publish.cache]
kind = "redis"
url = "{redis}"
key = "{KEY}"
expiry = "10m"
[publish.parameter]
kind = "ssm"
name = "{PARAMETER}"

{policies}"#,
            pg = pg.url(),
            redis = redis.url(),
            policies = policies.toml("1.0.0"),
        );
        std::fs::write(dir.path().join("sentinel.toml"), config).expect("writing the config");
        let mut world = World { pg, redis, moto, dir, followers: Vec::new() };
        let config = world.config();
        let pinned = Command::new(sentinel())
            .args([
                "pin",
                "set",
                "--state",
                "critical",
                "--reason",
                "whole-system test",
                "--expires-in",
                "2h",
                "--actor",
                "test",
                "--config",
            ])
            .arg(&config)
            .envs(world.moto.aws_env())
            .output()
            .expect("sentinel runs");
        assert!(pinned.status.success(), "sentinel pin set failed: {}", String::from_utf8_lossy(&pinned.stderr));
        let cache = world.redis.url();
        let dir = world.dir.path().to_path_buf();
        world.followers = vec![Follower::python(&cache, &world.moto, &dir), Follower::node(&cache, &world.moto, &dir)];
        world
    }

    /// `decided_at` of the document in the cache now (unix seconds).
    fn cached_decided_at(&self) -> f64 {
        let client = redis::Client::open(self.redis.url()).expect("redis url");
        let mut conn = client.get_connection_with_timeout(Duration::from_secs(3)).expect("redis connects");
        let text: String = redis::cmd("GET").arg(KEY).query(&mut conn).expect("the key is set");
        let doc: Value = serde_json::from_str(&text).expect("JSON");
        let at = doc["decided_at"].as_str().expect("decided_at");
        sentinel_core::instants::parse_rfc3339(at).expect("RFC 3339") as f64
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("sentinel.toml")
    }

    fn sentinel(&self) -> Child {
        Command::new(sentinel())
            .args(["run", "--config"])
            .arg(self.config())
            .envs(self.moto.aws_env())
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.dir.path().join(format!("sentinel-{}.log", wall() as u64))).expect("log file"))
            .spawn()
            .expect("sentinel runs")
    }

    /// Waits until every follower's reading satisfies `want`; returns each one's first such reading.
    fn until(&mut self, within: Duration, what: &str, want: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + within;
        self.followers
            .iter_mut()
            .map(|f| {
                f.until(deadline, &want).unwrap_or_else(|| panic!("{}: not {what} within {within:?}; last reading {}", f.name, f.last))
            })
            .collect()
    }
}

fn critical_from_cache(r: &Value) -> bool {
    r["factor"] == 0.0 && r["state"] == "critical" && r["source"] == "cache"
}

fn full_capacity(r: &Value) -> bool {
    r["factor"].is_null()
}

/// Every follower reached full capacity only once the document was stale, and at most
/// `max_age + refresh` (and a little for the reading's own pace and fetch) after its decision.
fn went_to_full_capacity_on_time(readings: &[Value], decided_at: f64) {
    for r in readings {
        let at = r["at"].as_f64().unwrap();
        let error = r["error"].as_str().unwrap_or_default();
        assert!(at >= decided_at + MAX_AGE_S - 1.0, "full capacity at {at}, before the document of {decided_at} was stale: {r}");
        // Up to a refresh late (+25 % jitter), plus the follower's pace (0.25 s) and a fetch that
        // may wait out both channels' timeouts (1 s each), plus a second for a loaded machine.
        assert!(at <= decided_at + MAX_AGE_S + REFRESH_S * 1.25 + 3.5, "full capacity only at {at}, document of {decided_at}: {r}");
        assert!(error.contains("cache: stale") && error.contains("parameter: stale"), "the reason names both channels: {r}");
        eprintln!("full capacity {:.1} s after the last decision: {error}", at - decided_at);
    }
}

#[test]
fn readers_fall_to_full_capacity_when_the_sentinel_dies_and_follow_it_when_it_returns() {
    let mut world = World::start();
    let mut first = world.sentinel();
    world.until(NEXT_TICK + Duration::from_secs(5), "critical from the cache", critical_from_cache);
    first.kill().expect("kill -9");
    first.wait().expect("reaped");
    let stale = world.until(Duration::from_secs(MAX_AGE_S as u64 + 70), "at full capacity", full_capacity);
    // What the dead sentinel published last is still in the cache (stale, not yet expired).
    let decided_at = world.cached_decided_at();
    went_to_full_capacity_on_time(&stale, decided_at);
    let mut second = world.sentinel();
    world.until(NEXT_TICK + Duration::from_secs(5), "following again", |r| {
        critical_from_cache(r) && r["decided_at"].as_f64().unwrap() > decided_at
    });
    second.kill().expect("kill");
    second.wait().expect("reaped");
}

#[test]
fn readers_fall_to_full_capacity_while_the_sentinels_store_is_down_and_follow_it_after() {
    let mut world = World::start();
    let mut sentinel = world.sentinel();
    world.until(NEXT_TICK + Duration::from_secs(5), "critical from the cache", critical_from_cache);
    world.pg.kill();
    let stale = world.until(Duration::from_secs(MAX_AGE_S as u64 + 70), "at full capacity", full_capacity);
    // The sentinel publishes nothing while its store is down: the cache holds its last document.
    let decided_at = world.cached_decided_at();
    went_to_full_capacity_on_time(&stale, decided_at);
    world.pg.restart();
    world.until(NEXT_TICK + Duration::from_secs(5), "following again", |r| {
        critical_from_cache(r) && r["decided_at"].as_f64().unwrap() > decided_at
    });
    sentinel.kill().expect("kill");
    sentinel.wait().expect("reaped");
}

/// One service process printing a JSON reading per line.
struct Follower {
    name: &'static str,
    child: Child,
    lines: Receiver<Value>,
    last: Value,
    /// Its stderr.
    log: PathBuf,
}

impl Follower {
    fn python(cache: &str, moto: &Moto, dir: &std::path::Path) -> Follower {
        let python = workspace().join("target/cross-language/venv/bin/python");
        assert!(python.is_file(), "{} is missing: run tests/cross_language.sh first (tests/run does)", python.display());
        Follower::spawn("python", Command::new(python).arg(workspace().join("tests/consumers/follow.py")), cache, moto, dir)
    }

    fn node(cache: &str, moto: &Moto, dir: &std::path::Path) -> Follower {
        let built = workspace().join("guest/bindings/js/gen/admission");
        assert!(built.is_dir(), "{} is missing: run tests/cross_language.sh first (tests/run does)", built.display());
        Follower::spawn("node", Command::new("node").arg(workspace().join("tests/consumers/follow.mjs")), cache, moto, dir)
    }

    fn spawn(name: &'static str, cmd: &mut Command, cache: &str, moto: &Moto, dir: &std::path::Path) -> Follower {
        let log = dir.join(format!("{name}.log"));
        let mut child = cmd
            .args([cache, &format!("ssm:{PARAMETER}"), KEY, &format!("{}", MAX_AGE_S as u64), &format!("{REFRESH_S}")])
            .envs(moto.aws_env())
            // boto3 reads AWS_DEFAULT_REGION (the AWS SDKs for Rust and Node read AWS_REGION).
            .env("AWS_DEFAULT_REGION", "us-east-1")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("follower log"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start the {name} follower: {e}"));
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{name} printed {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Follower { name, child, lines, last: Value::Null, log }
    }

    fn until(&mut self, deadline: Instant, want: &impl Fn(&Value) -> bool) -> Option<Value> {
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(reading) => {
                    self.last = reading.clone();
                    if want(&reading) {
                        return Some(reading);
                    }
                }
                Err(_) => {
                    let status = self.child.try_wait().ok().flatten();
                    let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                    assert!(status.is_none(), "the {} follower exited ({status:?}):\n{log}", self.name);
                }
            }
        }
        None
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
