//! Replay throughput on one core: a generated year of minute ticks (`capacity_tests::year`,
//! CPU, connections and one API's latency with baselines learnt every hour) through the 1.0.0
//! policy. End to end is the `sentinel replay --jobs 1` process (start, compile, read and
//! parse the file, replay, print); its phases are measured in-process beside it, and the
//! native modules for comparison. Target: above one million ticks per second end
//! to end. Under `cargo test`, three days of ticks.

use capacity_bench::measuring;
use capacity_bench::results::Note;
use capacity_tests::paths::{component_path, policy_folder, target_dir};
use capacity_tests::policies::component_file;
use capacity_tests::sentinel_bin::sentinel;
use capacity_tests::year::{YEAR, synthetic, text};
use criterion::{Criterion, SamplingMode, Throughput};
use indicatif::ProgressBar;
use sentinel::policy::{Limits, Runtime};
use sentinel::replay::parallel::{Options, PolicySource, replay_one};
use sentinel::trace::{TraceEvent, parse_trace};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn cli(spec: &str, file: &Path) {
    let out = Command::new(sentinel())
        .env("RUST_LOG", "off")
        .args(["replay", "--jobs", "1", "--format", "table", "--policy", spec])
        .arg(file)
        .output()
        .expect("sentinel runs");
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

    let mut group = c.benchmark_group("replay");
    group.throughput(Throughput::Elements(ticks)).sampling_mode(SamplingMode::Flat).sample_size(10);
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(if measuring() { 8 } else { 1 }));
    group.bench_function("cli-component", |b| b.iter(|| cli(&component, &file)));
    group.bench_function("cli-native", |b| b.iter(|| cli(&native, &file)));
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
