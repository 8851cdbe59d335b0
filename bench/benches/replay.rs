//! Replay throughput on one core: a generated year of minute ticks (`capacity_tests::year`,
//! CPU, connections and one API's latency with baselines learnt every hour) through the 1.0.0
//! policy. End to end is the `sentinel replay --jobs 1` process (start, compile, read and
//! parse the file, replay, print); its phases are measured in-process beside it, and the
//! native modules for comparison. Target: above one million ticks per second end
//! to end. Under `cargo test`, three days of ticks.
//!
//! The A/B (docs/behaviour.md §10.2): `sentinel replay` of the year through two components
//! (1.0.0 against 1.1.0) on every core, end to end, beside the same through the native modules,
//! and its peak resident memory; the batch session in process on one core (component, native,
//! and the component tick by tick through `decide`).

use capacity_bench::measuring;
use capacity_bench::results::Note;
use capacity_tests::paths::{component_path, policy_folder, target_dir};
use capacity_tests::policies::component_file;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::year::{YEAR, synthetic, text};
use criterion::{Criterion, SamplingMode, Throughput};
use indicatif::ProgressBar;
use sentinel_core::policy::source::PolicySource;
use sentinel_core::policy::{Limits, Runtime};
use sentinel_core::replay::lane::Options;
use sentinel_core::replay::parallel::replay_one;
use sentinel_core::replay::{CHUNK_EVENTS, PerTick};
use sentinel_core::trace::{TraceEvent, parse_trace};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use vocabulary::SessionStart;

fn cli(spec: &str, file: &Path) {
    let out = Command::new(sentinel())
        .env("RUST_LOG", "off")
        .args(["replay", "--jobs", "1", "--format", "table", "--policy", spec])
        .arg(file)
        .output()
        .expect("sentinel runs");
    assert!(out.status.success(), "sentinel replay failed: {}", String::from_utf8_lossy(&out.stderr));
}

/// `sentinel replay` of `file` through two policies on every core.
fn ab(baseline: &str, candidate: &str, file: &Path) -> Command {
    let mut command = Command::new(sentinel());
    command.env("RUST_LOG", "off").args(["replay", "--format", "table", "--baseline", baseline, "--candidate", candidate]).arg(file);
    command
}

fn run_ab(baseline: &str, candidate: &str, file: &Path) {
    let out = ab(baseline, candidate, file).output().expect("sentinel runs");
    assert!(out.status.success(), "sentinel replay failed: {}", String::from_utf8_lossy(&out.stderr));
}

fn replay(c: &mut Criterion, note: &mut Note) {
    let minutes = if measuring() { YEAR } else { 3 * 1440 };
    let trace_text = text(&synthetic(minutes, true));
    let dir = target_dir().join("tmp");
    std::fs::create_dir_all(&dir).expect("target/tmp");
    let file = dir.join(format!("bench-replay-{minutes}.jsonl"));
    std::fs::write(&file, &trace_text).expect("writing the generated trace");
    let trace = parse_trace("year", &trace_text).expect("the generated trace parses");
    let ticks = trace.events.iter().filter(|e| matches!(e, TraceEvent::Tick { .. })).count() as u64;
    note.set("ticks", ticks.into());
    note.set("trace_bytes", trace_text.len().into());

    let runtime = Runtime::new(Limits::default()).expect("engine");
    let component = component_path(&component_file("1.0.0")).display().to_string();
    let native = format!("1.0.0={}", policy_folder("1.0.0").display());
    let sources = [
        ("component", PolicySource::open(&component, &runtime).expect("component")),
        ("native", PolicySource::open(&native, &runtime).expect("native modules")),
    ];
    let hidden = ProgressBar::hidden();
    let candidate = component_path(&component_file("1.1.0")).display().to_string();
    let native_candidate = format!("1.1.0={}", policy_folder("1.1.0").display());
    let (peak_kib, ok) = capacity_bench::rss::peak_of(ab(&component, &candidate, &file));
    assert!(ok, "the A/B of two components failed");
    note.set("ab_peak_rss_kib", peak_kib.into());
    note.set("cores", std::thread::available_parallelism().map_or(1, |n| n.get()).into());

    let mut group = c.benchmark_group("replay");
    group.throughput(Throughput::Elements(ticks)).sampling_mode(SamplingMode::Flat).sample_size(10);
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(if measuring() { 8 } else { 1 }));
    group.bench_function("cli-component", |b| b.iter(|| cli(&component, &file)));
    group.bench_function("cli-native", |b| b.iter(|| cli(&native, &file)));
    group.bench_function("ab-cli-components", |b| b.iter(|| run_ab(&component, &candidate, &file)));
    group.bench_function("ab-cli-native", |b| b.iter(|| run_ab(&native, &native_candidate, &file)));
    group.bench_function("parse", |b| b.iter(|| parse_trace("year", &trace_text).unwrap()));
    for (kind, source) in &sources {
        group.bench_function(format!("replay-{kind}"), |b| {
            b.iter(|| {
                let mut policy = source.take().unwrap();
                let run = replay_one(&trace, policy.as_mut(), source, Options::default(), &hidden).unwrap();
                source.give_back(policy);
                run
            })
        });
    }
    // The batch session alone, a chunk of events a call, as replay feeds it.
    for (kind, source) in &sources {
        group.bench_function(format!("session-{kind}"), |b| {
            b.iter(|| {
                let mut policy = source.take().unwrap();
                let mut session = policy.batch_session(SessionStart::fresh(false)).unwrap();
                let outcomes: usize = trace.events.chunks(CHUNK_EVENTS).map(|chunk| session.feed(chunk).unwrap().outcomes.len()).sum();
                drop(session);
                source.give_back(policy);
                outcomes
            })
        });
    }
    let (_, component_source) = &sources[0];
    group.bench_function("per-tick-component", |b| {
        b.iter(|| {
            let mut policy = component_source.take().unwrap();
            let mut session = PerTick::new(policy.as_mut(), SessionStart::fresh(false));
            let outcomes: usize = trace
                .events
                .chunks(CHUNK_EVENTS)
                .map(|chunk| sentinel_core::policy::ReplaySession::feed(&mut session, chunk).unwrap().outcomes.len())
                .sum();
            drop(session);
            component_source.give_back(policy);
            outcomes
        })
    });
    group.finish();
    if std::env::var_os("BENCH_KEEP_TRACE").is_none() {
        let _ = std::fs::remove_file(&file);
    }
}

fn main() {
    let mut note = Note::start("replay");
    let mut c = Criterion::default().configure_from_args();
    replay(&mut c, &mut note);
    c.final_summary();
    note.finish();
}
