//! One live tick against real servers on loopback (`capacity_bench::live`), and, in the same
//! criterion group, each round trip a tick contains, alone: the leadership lock (taken and
//! released), reading the memory, committing the tick, recording the publication (PostgreSQL),
//! the metric queries (Prometheus), the cache SET (Redis) and the parameter PutParameter (SSM
//! on moto). The tick is `Sentinel::tick`, built by `setup::sentinel` from a config as
//! `sentinel run` builds it. Target: a tick at most 1.5x its slowest round trip.
//! Under `cargo test` the same servers start and each step runs once.

use capacity_bench::live::{Backends, PARAMETER};
use capacity_bench::results::Note;
use capacity_tests::paths::component_path;
use capacity_tests::policies::component_file;
use criterion::Criterion;
use sentinel::config::Config;
use sentinel_adapters::ssm_publisher::SsmPublisher;
use sentinel_core::ports::memory::{TickCommit, TickRecord};
use sentinel_core::ports::publisher::{Channel, Publisher};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use vocabulary::{LatencySample, Signal};

fn live_tick(c: &mut Criterion, backends: &Backends) {
    let config = Config::load(Some(&backends.config_file(&component_path(&component_file("1.0.0"))))).expect("config");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio");
    // A week ago, so that a few thousand simulated minutes stay in the past.
    let wall = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs() as i64;
    let mut now = (wall - 7 * 86_400).div_euclid(60) * 60;
    let (mut sentinel, _) =
        rt.block_on(sentinel::setup::sentinel(&config, now, Some(Duration::from_secs(5)))).expect("the sentinel starts");
    // The same SSM publisher, pointed at moto explicitly (no process-wide environment).
    sentinel.ports.parameter =
        Box::new(rt.block_on(SsmPublisher::with_overrides(Channel::Parameter, PARAMETER, config.publish_timeout, &backends.aws())));
    let tick = |now: i64| rt.block_on(sentinel.tick(now)).expect("a live tick against the real servers");
    let mut report = tick(now);
    for _ in 0..3 {
        now += 60;
        report = tick(now);
    }
    assert!(report.outcomes.iter().all(|o| o.ok), "both channels publish: {:?}", report.outcomes);
    let reading = report.reading.clone().expect("Prometheus answers the constant queries");
    let commit = TickCommit {
        memory: report.decision.memory.clone(),
        expired_pin: None,
        expired_by: "bench".into(),
        samples: reading.latency.iter().map(|l| (l.api.clone(), LatencySample { at: now, p95_ms: 120.0 })).collect(),
        record: TickRecord {
            at: now,
            signal: Signal::Reading(reading),
            pin: None,
            throttles_enabled: false,
            stages_throttled: false,
            decision: report.decision.clone(),
            policy: report.document.policy.clone(),
        },
        follows: None,
    };
    let (document, outcomes) = (report.document.clone(), report.outcomes.clone());

    let mut group = c.benchmark_group("live-tick");
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5)).sample_size(30);
    group.bench_function("tick", |b| {
        b.iter(|| {
            now += 60;
            tick(now)
        })
    });
    let p = &sentinel.ports;
    // Taken and released as a tick does (the release is awaited; the lock's connection is
    // kept between leases, so this is the lock and the unlock, two round trips).
    let wait = Some(Duration::from_secs(5));
    group.bench_function("pg-lock", |b| b.iter(|| rt.block_on(async { p.leadership.acquire(wait).await.unwrap().release().await })));
    group.bench_function("pg-read-memory", |b| b.iter(|| rt.block_on(p.memory.load_memory()).unwrap()));
    group.bench_function("pg-commit", |b| b.iter(|| rt.block_on(p.memory.commit_tick(&commit)).unwrap()));
    let sequence = document.sequence;
    group.bench_function("pg-record-publication", |b| b.iter(|| rt.block_on(p.memory.record_publication(sequence, &outcomes)).unwrap()));
    group.bench_function("prometheus-query", |b| b.iter(|| rt.block_on(p.metrics.read(now)).unwrap()));
    // The channels never go back to a lower sequence, and the ticks above went past this
    // document's: publish it as a newer one (the same sequence again is written each time, as a
    // republished minute is). Each is the channel's whole fenced write: Redis's compare-and-set
    // script, SSM's read and then its put.
    let newest = sentinel_core::ports::publisher::StateDocument { sequence: u64::from(u32::MAX), ..document.clone() };
    group.bench_function("redis-set", |b| b.iter(|| rt.block_on(publish(p.cache.as_ref(), &newest))));
    group.bench_function("ssm-put", |b| b.iter(|| rt.block_on(publish(p.parameter.as_ref(), &newest))));
    group.finish();
}

async fn publish(publisher: &dyn Publisher, document: &sentinel_core::ports::publisher::StateDocument) {
    publisher.publish(document).await.unwrap_or_else(|e| panic!("{e}"));
}

fn main() {
    let note = Note::start("live_tick");
    let backends = Backends::start();
    let mut c = Criterion::default().configure_from_args();
    live_tick(&mut c, &backends);
    c.final_summary();
    note.finish();
}
