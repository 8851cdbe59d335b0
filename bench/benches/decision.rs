//! One decision, four ways, in one criterion group (so their ratios come from the same run):
//! the native modules (the same rules compiled into the host, with the WIT-type conversions
//! the host needs), the 1.0.0 component in its long-lived instance, and the two no-op
//! component calls of `capacity_bench::noop` (empty, and echo: the same types lifted and
//! lowered, no rules). Target: component at most 25x native, within 3x of no-op.
//! A second group times the hourly baseline call (a day of samples), which replay also makes.

use capacity_bench::inputs::steady;
use capacity_bench::noop::{EmptyCall, echo};
use capacity_bench::results::Note;
use capacity_tests::{component, native, runtime};
use criterion::Criterion;
use std::hint::black_box;
use std::time::Duration;
use vocabulary::{ApiSamples, LatencySample};

fn decision(c: &mut Criterion) {
    let mut native = native("1.0.0");
    let mut component = component("1.0.0");
    let mut echo = echo(&runtime());
    let mut empty = EmptyCall::new(&runtime()).expect("the empty component instantiates");
    let input = steady(native.as_mut());
    assert_eq!(component.decide(&input).unwrap(), native.decide(&input).unwrap(), "component and native agree");

    let mut group = c.benchmark_group("decision");
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function("native", |b| b.iter(|| native.decide(black_box(&input)).unwrap()));
    group.bench_function("component", |b| b.iter(|| component.decide(black_box(&input)).unwrap()));
    group.bench_function("noop-echo", |b| b.iter(|| echo.decide(black_box(&input)).unwrap()));
    group.bench_function("noop-empty", |b| b.iter(|| empty.call().unwrap()));
    // Optional: another build of the component (an optimisation's "before"), same run.
    if let Some(path) = std::env::var_os("BENCH_BASELINE_COMPONENT") {
        let spec = format!("baseline={}", std::path::Path::new(&path).display());
        let mut baseline = sentinel_core::policy::open(&spec, &runtime()).expect("BENCH_BASELINE_COMPONENT opens");
        group.bench_function("component-baseline", |b| b.iter(|| baseline.decide(black_box(&input)).unwrap()));
    }
    group.finish();

    // The hourly baseline call a replay makes (a day of one API's samples), both ways.
    let hour = input.now.div_euclid(3600) * 3600 + 30 * 3600;
    let samples = [ApiSamples {
        api: "crm".into(),
        samples: (0..1440).map(|i| LatencySample { at: hour - 86_400 + i * 60, p95_ms: 100.0 + (i * 37 % 50) as f64 }).collect(),
    }];
    let mut group = c.benchmark_group("baselines");
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    group.bench_function("native", |b| b.iter(|| native.compute_baselines(hour, black_box(&samples)).unwrap()));
    group.bench_function("component", |b| b.iter(|| component.compute_baselines(hour, black_box(&samples)).unwrap()));
    group.finish();
}

fn main() {
    let note = Note::start("decision");
    let mut c = Criterion::default().configure_from_args();
    decision(&mut c);
    c.final_summary();
    note.finish();
}
