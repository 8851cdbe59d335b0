//! Servers failing under a running sentinel. Each test starts the production-shaped world of
//! `capacity_tests::fault_world` (PostgreSQL store, Prometheus metrics, Redis and SSM channels,
//! a signed policy), runs `sentinel run` at a simulated minute a second, and then kills one
//! server (SIGKILL), brings it back on its port, replaces it with a listener that accepts and
//! never answers, and restores it. Throughout, the sentinel must keep its minute (every tick
//! bounded by the 1 s timeouts, no minute skipped or repeated), publish on what works, heal the
//! failed part on the next tick after it returns, and count every failure where an operator
//! looks: its log line per tick and its metrics endpoint.

use capacity_tests::fault_world::{Running, TickLine, World, wall_now};
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::servers::hung::HungServer;
use capacity_tests::servers::moto::Moto;
use capacity_tests::servers::redis::Redis;
use std::process::Command;

/// A simulated minute a second: the loop's pace.
const TICK: f64 = 1.0;
/// A tick in flight when a server fails ends at once (its connection is reset), so a tick's
/// length and a margin after the fault every tick logged is one that met the fault.
const SETTLE: f64 = TICK + 0.5;

/// One world at a time: each starts four servers and a sentinel, and their timing is what the
/// tests judge, so they do not compete with each other for the two cores. This lock serves
/// `cargo test` (one process); under nextest each test is its own process, and
/// `.config/nextest.toml` keeps the worlds apart instead.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One outage: the server failed at `from`, was still down at `down`, was back (and ready)
/// at `back`, and three more ticks had run at `until`.
#[derive(Debug, Clone, Copy)]
struct Phase {
    from: f64,
    down: f64,
    back: f64,
    until: f64,
}

impl Phase {
    /// Ticks logged well inside the outage (after a tick's length and a timeout of settling).
    fn inside<'a>(&self, ticks: &'a [TickLine]) -> Vec<&'a TickLine> {
        ticks.iter().filter(|t| t.logged > self.from + SETTLE && t.logged <= self.down).collect()
    }

    /// Every tick logged between the failure and the return.
    fn during<'a>(&self, ticks: &'a [TickLine]) -> Vec<&'a TickLine> {
        ticks.iter().filter(|t| t.logged > self.from && t.logged <= self.back).collect()
    }

    /// The ticks logged after the server was back, before the next phase, in order.
    fn after<'a>(&self, ticks: &'a [TickLine]) -> Vec<&'a TickLine> {
        ticks.iter().filter(|t| t.logged > self.back && t.logged <= self.until).collect()
    }
}

/// Breaks a server, lets `ticks` ticks run, restores it (ready to serve), then lets three more
/// run. The hung listener, if any, lives in `world.hung` between the two.
fn outage(world: &mut World, run: &Running, ticks: usize, break_it: impl FnOnce(&mut World), restore: impl FnOnce(&mut World)) -> Phase {
    let from = wall_now();
    break_it(world);
    run.await_ticks(ticks);
    let down = wall_now();
    world.hung = None;
    restore(world);
    let back = wall_now();
    run.await_ticks(3);
    Phase { from, down, back, until: wall_now() }
}

/// Every tick decided, none failed, each with `channel` failed, and the other one ok.
fn assert_channel_down(ticks: &[&TickLine], channel: &str, other: &str, what: &str) {
    assert!(ticks.len() >= 2, "{what}: at least two ticks ran while it was down, got {}", ticks.len());
    for t in ticks {
        assert!(!t.failed, "{what}: the tick still decides and publishes the other channel: {}", t.message());
        assert_eq!(t.channel_ok(channel), Some(false), "{what}: {channel} fails: {:?}", t.fields);
        assert_eq!(t.channel_ok(other), Some(true), "{what}: {other} keeps publishing: {:?}", t.fields);
    }
}

/// The first tick after the server came back may have started before it; every later one
/// has both channels again.
fn assert_healed(after: &[&TickLine], what: &str) {
    assert!(after.len() >= 2, "{what}: ticks ran after the server returned");
    for t in &after[1..] {
        assert!(!t.failed, "{what}: healed: {}", t.message());
        assert_eq!(t.channel_ok("cache"), Some(true), "{what}: the cache healed: {:?}", t.fields);
        assert_eq!(t.channel_ok("parameter"), Some(true), "{what}: the parameter healed: {:?}", t.fields);
    }
}

/// The minute kept: every tick stored one minute after the previous one, and no tick ran
/// longer than two of the 3 s timeouts.
fn assert_minute_kept(world: &World, metrics: &str, decided: usize) {
    let stored = world.stored_ticks();
    assert_eq!(stored.len(), decided, "one stored record per decided tick");
    let sequences: Vec<i64> = stored.iter().map(|t| t.0).collect();
    assert_eq!(sequences, (1..=decided as i64).collect::<Vec<_>>(), "sequences without gap or repeat");
    for pair in stored.windows(2) {
        assert_eq!(pair[1].1 - pair[0].1, 60, "no minute skipped or repeated: {:?} then {:?}", pair[0], pair[1]);
    }
    let count = Running::sample(metrics, "sentinel_tick_seconds_count");
    let bounded = Running::sample(metrics, "sentinel_tick_seconds_bucket{le=\"8.192\"}");
    assert!(count >= decided as f64 && bounded == count, "every tick within 8 s: {bounded} of {count}");
}

fn failures(metrics: &str, channel: &str) -> f64 {
    Running::sample(metrics, &format!("sentinel_publish_failures_total{{channel=\"{channel}\"}}"))
}

#[test]
fn redis_killed_then_hung_the_parameter_keeps_publishing_and_the_cache_heals_on_the_next_tick() {
    let _one = one_at_a_time();
    let mut world = World::start("vector(40)");
    let run = world.run();
    run.await_ticks(2);
    let port = world.redis.process.port;
    let killed = outage(&mut world, &run, 4, |w| w.redis.process.kill(), |w| w.redis = Redis::start_on(port));
    let hang = outage(
        &mut world,
        &run,
        3,
        |w| {
            w.redis.process.kill();
            w.hung = Some(HungServer::start_on(port));
        },
        |w| w.redis = Redis::start_on(port),
    );

    let (metrics, ticks) = run.snapshot();
    let log = run.log_text();
    assert!(run.stop().success(), "SIGTERM ends the loop cleanly");

    assert_channel_down(&killed.inside(&ticks), "cache", "parameter", "redis killed");
    assert_healed(&killed.after(&ticks), "redis restarted");
    assert_channel_down(&hang.inside(&ticks), "cache", "parameter", "redis hung");
    assert_healed(&hang.after(&ticks), "redis restored");
    assert!(log.contains(&format!("127.0.0.1:{port}")), "the failures name the Redis server");

    let failed = ticks.iter().filter(|t| t.channel_ok("cache") == Some(false)).count();
    eprintln!("redis: {} ticks, {failed} with the cache failed and the parameter published, healed on the next tick twice", ticks.len());
    assert_eq!(failures(&metrics, "cache"), failed as f64, "every cache failure counted");
    let other = ticks.iter().filter(|t| t.channel_ok("parameter") == Some(false)).count();
    assert_eq!(failures(&metrics, "parameter"), other as f64, "the parameter's failures counted too");
    assert_eq!(Running::sample(&metrics, "sentinel_tick_failures_total"), 0.0, "one channel down fails no tick");
    assert_minute_kept(&world, &metrics, ticks.len());

    // SSM received every document it acknowledged, in order; Redis holds the newest one again.
    let history = world.ssm_history();
    let sequences: Vec<u64> = history.iter().map(|d| d["sequence"].as_u64().expect("a sequence")).collect();
    assert!(sequences.windows(2).all(|w| w[0] < w[1]), "in order: {sequences:?}");
    for t in ticks.iter().filter(|t| t.channel_ok("parameter") == Some(true)) {
        let sequence = t.fields["sequence"].as_u64().expect("a sequence");
        assert!(sequences.contains(&sequence), "the parameter holds every acknowledged tick ({sequence}): {sequences:?}");
    }
    assert!(sequences.len() >= ticks.len() - other, "the parameter got every tick but its own failures");
    assert_eq!(world.redis_document().as_ref(), history.last(), "the healed cache holds the newest document");
}

#[test]
fn moto_killed_then_hung_the_cache_keeps_publishing_and_the_parameter_heals_on_the_next_tick() {
    let _one = one_at_a_time();
    let mut world = World::start("vector(40)");
    let run = world.run();
    run.await_ticks(2);
    let port = world.moto.process.port;
    let killed = outage(&mut world, &run, 4, |w| w.moto.process.kill(), |w| w.moto = Moto::start_on(port));
    let hang = outage(
        &mut world,
        &run,
        3,
        |w| {
            w.moto.process.kill();
            w.hung = Some(HungServer::start_on(port));
        },
        |w| w.moto = Moto::start_on(port),
    );

    let (metrics, ticks) = run.snapshot();
    assert!(run.stop().success());

    assert_channel_down(&killed.inside(&ticks), "parameter", "cache", "moto killed");
    assert_healed(&killed.after(&ticks), "moto restarted");
    assert_channel_down(&hang.inside(&ticks), "parameter", "cache", "moto hung");
    assert_healed(&hang.after(&ticks), "moto restored");

    let failed = ticks.iter().filter(|t| t.channel_ok("parameter") == Some(false)).count();
    eprintln!("moto: {} ticks, {failed} with the parameter failed and the cache published, healed on the next tick twice", ticks.len());
    assert_eq!(failures(&metrics, "parameter"), failed as f64, "every parameter failure counted");
    let other = ticks.iter().filter(|t| t.channel_ok("cache") == Some(false)).count();
    assert_eq!(failures(&metrics, "cache"), other as f64, "the cache's failures counted too");
    assert_eq!(Running::sample(&metrics, "sentinel_tick_failures_total"), 0.0);
    assert_minute_kept(&world, &metrics, ticks.len());
    // A restarted moto starts empty: what it holds is what the healed ticks wrote.
    let newest = world.ssm_history().last().cloned().expect("the parameter was written again");
    assert_eq!(Some(newest), world.redis_document(), "both channels agree again");
}

#[test]
fn prometheus_killed_then_hung_failed_reads_hold_then_release_and_readings_resume() {
    // Critical readings: 1.0.0 escalates on the third one.
    let _one = one_at_a_time();
    let mut world = World::start("vector(90)");
    let run = world.run();
    run.await_ticks(5);
    let port = world.prometheus.process.port;
    let killed = outage(&mut world, &run, 4, |w| w.prometheus.process.kill(), |w| w.prometheus.restart());
    let hang = outage(
        &mut world,
        &run,
        3,
        |w| {
            w.prometheus.process.kill();
            w.hung = Some(HungServer::start_on(port));
        },
        |w| w.prometheus.restart(),
    );

    let (metrics, ticks) = run.snapshot();
    assert!(run.stop().success());

    let before: Vec<&TickLine> = ticks.iter().filter(|t| t.logged < killed.from).collect();
    assert_eq!(before.last().map(|t| t.fields["state"].clone()), Some("critical".into()), "critical before the outage");
    for (phase, what) in [(killed, "prometheus killed"), (hang, "prometheus hung")] {
        let down = phase.during(&ticks);
        let failed_reads: Vec<&&TickLine> = down.iter().filter(|t| t.fields.get("level").is_none()).collect();
        assert!(failed_reads.len() >= 3, "{what}: reads fail: {down:?}");
        assert_eq!(failed_reads[0].fields["cause"], "signal-held", "{what}: the first failed read holds the state");
        assert_eq!(failed_reads[1].fields["cause"], "signal-lost-release", "{what}: the second releases");
        assert_eq!(failed_reads[1].fields["state"], "normal", "{what}: released to normal, full factors");
        for t in &down {
            assert_eq!((t.channel_ok("cache"), t.channel_ok("parameter")), (Some(true), Some(true)), "{what}: still published");
        }
        let back = phase.after(&ticks);
        assert!(back.len() >= 2 && back[1..].iter().all(|t| t.fields["level"] == "critical"), "{what}: readings resume: {back:?}");
        assert_eq!(phase.inside(&ticks).iter().filter(|t| t.fields.get("level").is_some()).count(), 0, "{what}: no reading while down");
    }
    let failed = ticks.iter().filter(|t| !t.failed && t.fields.get("level").is_none()).count();
    eprintln!("prometheus: {} ticks, {failed} failed reads (held, then released to normal), all published", ticks.len());
    assert_eq!(Running::sample(&metrics, "sentinel_failed_reads_total"), failed as f64, "every failed read counted");
    assert_eq!(Running::sample(&metrics, "sentinel_tick_failures_total"), 0.0, "a failed read fails no tick");
    assert_minute_kept(&world, &metrics, ticks.len());
}

#[test]
fn postgres_killed_then_hung_no_minute_is_decided_without_the_lock_and_the_next_tick_resumes_from_stored_memory() {
    let _one = one_at_a_time();
    let mut world = World::start("vector(90)");
    let run = world.run();
    run.await_ticks(5);
    let port = world.pg.process.port;
    let killed = outage(&mut world, &run, 4, |w| w.pg.kill(), |w| w.restart_postgres());
    let hang = outage(
        &mut world,
        &run,
        3,
        |w| {
            w.pg.kill();
            w.hung = Some(HungServer::start_on(port));
        },
        |w| w.restart_postgres(),
    );

    let (metrics, ticks) = run.snapshot();
    assert!(run.stop().success(), "the loop outlived both outages");

    for (phase, what) in [(killed, "postgres killed"), (hang, "postgres hung")] {
        let down = phase.inside(&ticks);
        assert!(down.len() >= 2 && down.iter().all(|t| t.failed), "{what}: no minute decided without the store's lock: {down:?}");
        for t in &down {
            let message = t.message();
            assert!(
                message.contains("pg_advisory_lock") && message.contains(&format!("127.0.0.1:{port}")),
                "{what}: names the lock and the server: {message}"
            );
        }
        let back = phase.after(&ticks);
        let first = back.iter().find(|t| !t.failed).unwrap_or_else(|| panic!("{what}: decided again: {back:?}"));
        assert_ne!(first.fields["cause"], "fresh", "{what}: the stored memory was read back, not started afresh");
        let last = ticks.iter().rfind(|t| !t.failed && t.logged < phase.from).expect("decided before the outage");
        assert_eq!(last.fields["state"], first.fields["state"], "{what}: the stored state holds (the gap broke the streak)");
        assert_ne!(last.fields["state"], "normal", "{what}: a protected state was carried across the outage");
        assert!(back.len() >= 2 && back[1..].iter().all(|t| !t.failed), "{what}: healed on the next tick: {back:?}");
    }
    let failed = ticks.iter().filter(|t| t.failed).count();
    eprintln!("postgres: {} minutes, {failed} failed without the lock (counted), the rest decided in sequence", ticks.len());
    assert_eq!(Running::sample(&metrics, "sentinel_tick_failures_total"), failed as f64, "every failed minute counted (the alarm)");

    // The store holds exactly the decided minutes, in sequence; SSM got each of them.
    let decided = ticks.iter().filter(|t| !t.failed).count();
    let stored = world.stored_ticks();
    assert_eq!(
        stored.iter().map(|t| t.0).collect::<Vec<_>>(),
        (1..=decided as i64).collect::<Vec<_>>(),
        "a record per decided minute, in sequence"
    );
    let published: Vec<u64> = world.ssm_history().iter().map(|d| d["sequence"].as_u64().expect("a sequence")).collect();
    assert_eq!(published, (1..=decided as u64).collect::<Vec<_>>(), "published exactly the decided minutes");
    assert_eq!(Running::sample(&metrics, "sentinel_tick_failures_total{reason=\"lock\"}"), failed as f64, "counted as lock failures");

    // Each failed minute left a dead letter naming the lock; the first decided tick after each
    // outage ended the ones before it.
    let listed = Command::new(sentinel())
        .args(["failures", "--json", "--limit", "1000", "--config"])
        .arg(world.config())
        .output()
        .expect("sentinel failures runs");
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let letters: Vec<serde_json::Value> =
        String::from_utf8_lossy(&listed.stdout).lines().map(|l| serde_json::from_str(l).expect("JSON lines")).collect();
    assert_eq!(letters.len(), failed, "a dead letter per failed minute: {letters:#?}");
    for letter in &letters {
        assert_eq!(letter["reason"], "lock", "{letter}");
        assert!(letter["error"].as_str().is_some_and(|e| e.contains("pg_advisory_lock")), "{letter}");
        assert!(letter["decided"].is_null(), "nothing was decided without the lock: {letter}");
        let ended = letter["ended_by"]["sequence"].as_i64().expect("ended by a later decided tick");
        assert!(ended >= 1 && ended <= decided as i64, "{letter}");
    }
}
