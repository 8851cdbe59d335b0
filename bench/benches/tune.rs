//! The tuning sweep's throughput (`sentinel policy tune`, docs/behaviour.md §10.8): 48
//! candidates of the repository's search space (CPU's constrained boundary 70, 75 or 80, its
//! resolve band 0 to 15, 5 to 8 readings to recover) over the real series 1.1.0 was chosen on
//! (the hot auto-scaling series and the six CloudWatch series, cut into weeks), on every core and
//! on one. The table prints candidate-ticks per second, the speed-up of the cores, and what a
//! sweep of 1,000 candidates over the same series takes at that rate. Under `cargo test`, 2
//! candidates over the CloudWatch series only.

use capacity_bench::measuring;
use capacity_bench::results::Note;
use capacity_tests::paths::workspace;
use criterion::{Criterion, SamplingMode, Throughput};
use sentinel::tune::evidence::{EvidenceSpec, Split, load};
use sentinel::tune::space::{SEED_FLOORS, SearchSpace};
use std::time::Duration;
use vocabulary::PolicyDescription;

fn tune(c: &mut Criterion, note: &mut Note) {
    let root = workspace();
    let mut traces = vec![root.join("tests/data/cloudwatch").display().to_string().parse().expect("a trace spec")];
    let space = if measuring() {
        traces.insert(
            0,
            root.join("tests/data/known-cause/cpu_utilization_asg_misconfiguration.csv")
                .display()
                .to_string()
                .parse()
                .expect("a trace spec"),
        );
        "[thresholds]\ncpu_pct.constrained = [70, 75, 80]\ncpu_pct.resolve_band = [0, 5, 10, 15]\nrecover_readings = [5, 6, 7, 8]\n"
    } else {
        "[thresholds]\ncpu_pct.resolve_band = [0, 5]\n"
    };
    let evidence =
        load(EvidenceSpec { traces, segment_days: 7, split: Split::Series, ..Default::default() }).expect("the real series load");
    let base: PolicyDescription =
        toml::from_str(&std::fs::read_to_string(root.join("policies/1.0.0/policy.toml")).expect("policy 1.0.0")).expect("it parses");
    let space = SearchSpace::parse("bench", space).expect("the space parses");
    let candidates = space.size() as u64;
    let ticks: u64 = evidence.iter().map(|t| t.ticks).sum();
    let candidate_ticks = ticks * (candidates + 1);
    note.set("candidates", candidates.into());
    note.set("evidence_ticks", ticks.into());
    note.set("candidate_ticks", candidate_ticks.into());
    note.set("cores", std::thread::available_parallelism().map_or(1, |n| n.get()).into());
    let one_worker = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a pool of one");

    let mut group = c.benchmark_group("tune");
    group.throughput(Throughput::Elements(candidate_ticks)).sampling_mode(SamplingMode::Flat).sample_size(10);
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(if measuring() { 20 } else { 1 }));
    let all = space.candidates(&base.thresholds, &SEED_FLOORS).expect("the space's candidates");
    let sweep = || {
        sentinel::tune::tune(
            base.clone(),
            space.clone(),
            all.clone(),
            evidence.clone(),
            &SEED_FLOORS,
            None,
            &indicatif::ProgressBar::hidden(),
        )
        .expect("the sweep runs")
    };
    group.bench_function("sweep-all-cores", |b| b.iter(sweep));
    group.bench_function("sweep-one-core", |b| b.iter(|| one_worker.install(sweep)));
    group.finish();
}

fn main() {
    let mut note = Note::start("tune");
    let mut c = Criterion::default().configure_from_args();
    tune(&mut c, &mut note);
    c.final_summary();
    note.finish();
}
