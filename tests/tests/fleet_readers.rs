//! A fleet of readers through a Redis outage (docs/behaviour.md §9.1, "Remembered" and "At fleet
//! scale"), whole system: a real `sentinel run`, pinned critical, publishes every minute to a real
//! Redis and to moto's SSM; `READERS` Node `BulkFactorReader`s (async, up to 250 in each of a few
//! processes, `tests/consumers/fleet.mjs`) read the cache, and the parameter through a proxy that
//! throttles `GetParameter` above SSM's 40 calls a second, scaled to the fleet (40 per 1,000
//! readers). Redis is killed for `OUTAGE` seconds and started again on its port.
//!
//! What must hold: no reader acts at full capacity while the sentinel publishes (each acts on
//! the parameter's document or the one it remembers); after the outage's first 45 s the fleet
//! asks the parameter no more often a second than it serves; and every reader is back on the
//! cache within a minute (the sentinel's next publication to the new Redis) and a refresh of
//! Redis returning.
//!
//! Small by default (100 readers, a 2-minute outage: about 3.5 minutes, in `tests/run`); in full on
//! demand: `FLEET_READERS=1000 FLEET_OUTAGE_S=600 cargo nextest run -p capacity-tests
//! fleet_readers` (about 12 minutes). Each run writes `target/fleet/fleet-READERS.md`, `.svg` and
//! `.csv` (the figures in RELIABILITY.md).

use capacity_tests::fleet_report::{Run, Sources};
use capacity_tests::paths::{target_dir, workspace};
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::moto::Moto;
use capacity_tests::servers::redis::Redis;
use capacity_tests::servers::throttling::ThrottlingSsm;
use capacity_tests::signed::SignedPolicies;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const KEY: &str = "capacity:fleet";
const PARAMETER: &str = "/capacity/fleet/state";
const PER_PROCESS: usize = 250;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("{name}={v:?}: expected a whole number")))
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_secs()
}

/// One Node process of readers, printing a JSON line a second.
struct Share {
    index: usize,
    child: Child,
    lines: Receiver<Value>,
    /// Its latest line (its memory and CPU so far).
    last: Value,
    log: std::path::PathBuf,
}

impl Share {
    fn spawn(index: usize, readers: usize, redis: &str, ssm: &ThrottlingSsm, moto: &Moto, dir: &std::path::Path) -> Share {
        let log = dir.join(format!("readers-{index}.log"));
        let mut child = Command::new("node")
            .arg(workspace().join("tests/consumers/fleet.mjs"))
            .args([redis, &format!("ssm:{PARAMETER}"), KEY, &readers.to_string()])
            .envs(moto.aws_env())
            .env("AWS_ENDPOINT_URL_SSM", ssm.endpoint())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("reader log"))
            .spawn()
            .expect("node runs the readers");
        let stdout = child.stdout.take().expect("piped");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("the readers printed {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Share { index, child, lines, last: Value::Null, log }
    }

    fn drain(&mut self, into: &mut Lines) {
        while let Ok(line) = self.lines.try_recv() {
            self.last = line.clone();
            // A process that printed twice in one second counts once, with its later line.
            into.insert((line["t"].as_u64().expect("t"), self.index), line);
        }
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("a reader process exited ({status}):\n{}", std::fs::read_to_string(&self.log).unwrap_or_default());
        }
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every process's line for each second: (unix second, process) -> line.
type Lines = BTreeMap<(u64, usize), Value>;

/// The processes' lines summed per second, for the seconds every process reported.
fn sources(lines: &Lines, processes: usize) -> BTreeMap<u64, Sources> {
    let mut out: BTreeMap<u64, Sources> = BTreeMap::new();
    let mut reported: BTreeMap<u64, usize> = BTreeMap::new();
    for (&(t, _), line) in lines {
        *reported.entry(t).or_default() += 1;
        let s = out.entry(t).or_default();
        let n = |k: &str| u32::try_from(line[k].as_u64().expect("a count")).expect("fits");
        s.cache += n("cache");
        s.parameter += n("parameter");
        s.remembered += n("remembered");
        s.full += n("full");
        s.none += n("none");
    }
    out.retain(|t, _| reported[t] == processes);
    out
}

#[test]
fn a_fleet_of_readers_keeps_the_sentinels_protection_through_a_redis_outage() {
    let readers = setting("FLEET_READERS", 100) as usize;
    let outage = setting("FLEET_OUTAGE_S", 120);
    let limit = (40 * readers).div_ceil(1000);
    let built = workspace().join("guest/bindings/js/gen/admission");
    assert!(built.is_dir(), "{} is missing: run tests/cross_language.sh first (tests/run does)", built.display());

    let mut redis = Redis::start();
    let redis_port = redis.process.port;
    let moto = Moto::start();
    let ssm = ThrottlingSsm::start(&moto.endpoint(), limit);
    let dir = tempfile::tempdir().expect("temp dir");
    let component = target_dir().join("policies/capacity-policy-1.0.0.wasm");
    assert!(component.is_file(), "{} is missing: run `cargo policies` first", component.display());
    let policies = SignedPolicies::install(dir.path(), &[component]);
    let config = dir.path().join("sentinel.toml");
    std::fs::write(
        &config,
        format!(
            "[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n\n[metrics]\nkind = \"synthetic\"\n\n[publish]\ntimeout = \"3s\"\n\
             [publish.cache]\nkind = \"redis\"\nurl = \"{}\"\nkey = \"{KEY}\"\nexpiry = \"10m\"\n[publish.parameter]\nkind = \"ssm\"\nname = \"{PARAMETER}\"\n\n{}",
            redis.url(),
            policies.toml("1.0.0")
        ),
    )
    .expect("writing the config");
    let cli = |args: &[&str]| {
        let out = Command::new(sentinel()).args(args).arg("--config").arg(&config).envs(moto.aws_env()).output().expect("sentinel runs");
        assert!(out.status.success(), "sentinel {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    };
    cli(&["pin", "set", "--state", "critical", "--reason", "fleet load test", "--expires-in", "2h", "--actor", "test"]);
    cli(&["tick"]); // published now, not at the next minute
    let mut sentinel = Command::new(sentinel())
        .args(["run", "--config"])
        .arg(&config)
        .envs(moto.aws_env())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("sentinel.log")).expect("log"))
        .spawn()
        .expect("sentinel runs");

    let started = now();
    let processes = readers.div_ceil(PER_PROCESS);
    let mut shares: Vec<Share> = (0..processes)
        .map(|i| Share::spawn(i, PER_PROCESS.min(readers - i * PER_PROCESS), &redis.url(), &ssm, &moto, dir.path()))
        .collect();
    let mut lines = Lines::new();
    let wait = |seconds: u64, lines: &mut Lines, shares: &mut [Share]| {
        let until = now() + seconds;
        while now() < until {
            std::thread::sleep(Duration::from_millis(250));
            shares.iter_mut().for_each(|s| s.drain(lines));
        }
    };
    wait(20, &mut lines, &mut shares);
    let warm = sources(&lines, processes);
    let last = warm.values().next_back().copied().unwrap_or_default();
    assert_eq!(last.cache as usize, readers, "every reader on the cache before the outage: {last:?}");

    redis.process.kill();
    let down = now();
    wait(outage, &mut lines, &mut shares);
    redis = Redis::start_on(redis_port);
    let up = now();
    let mut back = None;
    while back.is_none() && now() < up + 90 {
        wait(1, &mut lines, &mut shares);
        back = sources(&lines, processes).into_iter().find(|(t, s)| *t > up && s.cache as usize == readers).map(|(t, _)| t);
    }
    wait(5, &mut lines, &mut shares);
    let ended = now();
    let _ = sentinel.kill();
    let _ = sentinel.wait();

    let number = |share: &Share, key: &str| share.last[key].as_f64().unwrap_or_else(|| panic!("a reader process printed no {key}"));
    let memory: f64 = shares.iter().map(|s| number(s, "rss") - number(s, "baseline_rss")).sum();
    let cpu: f64 = shares.iter().map(|s| number(s, "cpu_s")).sum();
    let run = Run {
        readers,
        processes,
        limit,
        started,
        down,
        up,
        back,
        ended,
        sources: sources(&lines, processes),
        calls: ssm.seconds(),
        memory_per_reader: memory / readers as f64,
        cpu_per_reader: cpu / readers as f64,
    };
    let out = target_dir().join("fleet");
    std::fs::create_dir_all(&out).expect("target/fleet");
    let figure = format!("fleet-{readers}.svg");
    run.plot(&out.join(&figure)).expect("the figure is drawn");
    let report = run.markdown(&figure);
    std::fs::write(out.join(format!("fleet-{readers}.md")), &report).expect("the report is written");
    std::fs::write(out.join(format!("fleet-{readers}.csv")), run.csv()).expect("the seconds are written");
    eprintln!("{report}");
    drop(redis);

    assert_eq!(run.full_during_outage(), 0, "readers at full capacity while the sentinel published:\n{report}");
    // After the first calls of the outage (every reader at once, a refresh apart), the fleet asks
    // the parameter no more often than it serves: paced readers are a good citizen.
    let settled: Vec<u32> = run.calls.range(down + 45..up).map(|(_, c)| c.served + c.throttled).collect();
    let asked = f64::from(settled.iter().sum::<u32>()) / (up - down - 45) as f64;
    assert!(asked <= limit as f64, "the fleet asked the parameter {asked:.1} times a second, above the {limit} it serves:\n{report}");
    let back = run.back.unwrap_or_else(|| panic!("not every reader was back on the cache within 90 s:\n{report}"));
    assert!(back - up <= 60 + 13 + 5, "back on the cache {} s after Redis returned:\n{report}", back - up);
}
