//! Failover as real processes (issue 34, finding 4): two sentinels on one PostgreSQL store, the
//! leader frozen (SIGSTOP) in the middle of its tick while it holds the leadership lock and its
//! Redis write is held on the network by a proxy. The second sentinel must decide the next
//! minute within the lease (before the fix it waited until the leader resumed), and when the
//! held write finally lands, neither channel may go back to the older sequence (before the fix,
//! Redis then held the frozen leader's sequence 2, bulk 1.0, over the successor's sequence 3,
//! bulk 0.0).
//!
//! The failover time printed here is the figure RELIABILITY.md and docs/threat-model.md quote.

use capacity_tests::fault_world::World;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::lossy::LossyProxy;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The lease of the test's sentinels: a holder silent this long loses the lock.
const LEASE: &str = "2s";

fn at(minute: u64) -> String {
    // Minutes of the last hour: the pin, set at the wall clock for a day, is in force at them.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let base = (now / 60 - 30) * 60;
    sentinel_core::instants::format_rfc3339((base + 60 * minute) as i64)
}

fn tick(world: &World, config: &Path, at: &str, wait: Option<&str>) -> Command {
    let mut command = Command::new(sentinel());
    command.args(["tick", "--config"]).arg(config).args(["--at", at]).envs(world.moto.aws_env());
    if let Some(wait) = wait {
        command.args(["--wait", wait]);
    }
    command
}

fn finished(out: Output, what: &str) -> Output {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn signal(child: &Child, signal: &str) {
    let ok = Command::new("kill").args([signal, &child.id().to_string()]).status().expect("kill runs").success();
    assert!(ok, "kill {signal} {}", child.id());
}

#[test]
fn a_frozen_leader_loses_the_lock_within_its_lease_and_its_held_write_never_wins() {
    let world = World::start("vector(20)");
    let base = std::fs::read_to_string(world.config())
        .unwrap()
        .replace("kind = \"postgres\"\n", &format!("kind = \"postgres\"\nlease = \"{LEASE}\"\n"));
    let successor = world.config();
    std::fs::write(&successor, &base).unwrap();
    // The leader reaches Redis through a proxy that can hold its write, and waits long for it
    // (so that it is still waiting when it freezes, after its SSM write has landed).
    let proxy = LossyProxy::start(world.redis.process.port);
    let leader = world.dir.path().join("leader.toml");
    let leader_config = base
        .replace(&world.redis.url(), &format!("redis://127.0.0.1:{}/", proxy.port))
        .replace("[publish]\ntimeout = \"3s\"", "[publish]\ntimeout = \"30s\"")
        .replace("tick_deadline = \"10s\"", "tick_deadline = \"45s\"");
    assert!(leader_config.contains("[publish]\ntimeout = \"30s\"") && leader_config.contains("tick_deadline = \"45s\""), "{leader_config}");
    std::fs::write(&leader, &leader_config).unwrap();

    finished(tick(&world, &leader, &at(0), None).output().unwrap(), "the leader's first tick");
    assert_eq!(world.redis_document().expect("published")["sequence"], 1);

    // The leader's second tick: committed as sequence 2 (normal, bulk 1.0); its Redis write is
    // held, and the leader freezes while it waits for the answer, holding the lock.
    proxy.hold_requests_containing("\"sequence\":2}");
    let mut frozen = tick(&world, &leader, &at(1), None).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while proxy.requests_held() == 0 {
        assert!(Instant::now() < deadline, "the leader's write never reached the proxy");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Its SSM write (sent beside the Redis one) has landed: freezing it between its SSM read and
    // write would test the race SSM cannot close (docs/behaviour.md §7), not the fence.
    while !world.ssm_history().iter().any(|v| v["sequence"] == 2) {
        assert!(Instant::now() < deadline, "the leader's SSM write never landed");
        std::thread::sleep(Duration::from_millis(50));
    }
    signal(&frozen, "-STOP");
    let stored: Vec<i64> = world.stored_ticks().iter().map(|t| t.0).collect();
    assert_eq!(stored, [1, 2], "the leader committed sequence 2 before freezing");

    // An operator pins critical; the successor must decide the next minute.
    let pinned = Command::new(sentinel())
        .args(["pin", "set", "--state", "critical", "--reason", "failover test", "--expires-in", "24h", "--actor", "ops", "--config"])
        .arg(&successor)
        .output()
        .unwrap();
    finished(pinned, "pin set");
    let started = Instant::now();
    let took_over = tick(&world, &successor, &at(2), Some("30s")).output().unwrap();
    let failover = started.elapsed();
    eprintln!("failover: the successor decided the next minute {failover:?} after the leader froze holding the lock (lease {LEASE})");
    finished(took_over, "the successor's tick (waiting for a frozen leader's lock)");
    assert!(failover < Duration::from_secs(10), "took {failover:?} with a lease of {LEASE}");

    // The held write lands now, then the leader resumes and finishes its tick as it can.
    proxy.release_held();
    let deadline = Instant::now() + Duration::from_secs(10);
    while proxy.requests_held() > 0 {
        assert!(Instant::now() < deadline, "the held write was never let through");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&frozen, "-CONT");
    let status = frozen.wait().unwrap();
    let mut leader_log = String::new();
    std::io::Read::read_to_string(frozen.stderr.as_mut().unwrap(), &mut leader_log).unwrap();
    eprintln!("the resumed leader ({status}):\n{leader_log}");

    let cached = world.redis_document().expect("the cache holds a document");
    assert_eq!((cached["sequence"].as_i64(), cached["factors"]["bulk"].as_f64()), (Some(3), Some(0.0)), "the cache: {cached}");
    let history: Vec<Value> = world.ssm_history();
    let sequences: Vec<i64> = history.iter().map(|v| v["sequence"].as_i64().unwrap()).collect();
    assert_eq!(sequences.last(), Some(&3), "the parameter's versions: {sequences:?}");
    assert!(sequences.windows(2).all(|w| w[0] <= w[1]), "the parameter went back: {sequences:?}");
    let stored: Vec<i64> = world.stored_ticks().iter().map(|t| t.0).collect();
    assert_eq!(stored, [1, 2, 3], "one decision per minute in the store");
}
