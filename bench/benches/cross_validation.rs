//! Leave-one-series-out cross-validation (`sentinel policy tune`, docs/behaviour.md §10.8,
//! "Hold-out by series") on the repository's evidence, as policy 1.2.0 was chosen: its search
//! space (495 candidates, flap damping) over the eight real series. The sweep runs once; then the
//! robust choice and every fold, two ways: as `Scores::cross_validate` does it (each candidate's
//! score on each series summed once, a fold regroups them) and as it was done before issue 53
//! (every fold re-summed every series for every candidate; `capacity_tests::refolding`, the
//! reference, which must give the same choice and folds). The table prints both times and their ratio. Under
//! `cargo test`, 4 candidates over the CloudWatch series only.

use capacity_bench::measuring;
use capacity_bench::results::Note;
use capacity_tests::paths::workspace;
use capacity_tests::refolding;
use criterion::{Criterion, SamplingMode};
use sentinel::tune::cross_validation::Scores;
use sentinel::tune::evidence::{EvidenceSpec, Split, load};
use sentinel::tune::space::{SEED_FLOORS, SearchSpace};
use sentinel_core::trace::RepeatedTimestamps;
use std::time::Duration;
use vocabulary::PolicyDescription;

fn cross_validation(c: &mut Criterion, note: &mut Note) {
    let root = workspace();
    let spec = |text: String| text.parse().expect("a trace spec");
    let mut traces = vec![spec(root.join("tests/data/cloudwatch").display().to_string())];
    let space = if measuring() {
        traces.insert(0, spec(root.join("tests/data/known-cause/cpu_utilization_asg_misconfiguration.csv").display().to_string()));
        traces.push(spec(format!(
            "latency:requests={}",
            root.join("tests/data/known-cause/ec2_request_latency_system_failure.csv").display()
        )));
        std::fs::read_to_string(root.join("policies/tune-space-damping.toml")).expect("1.2.0's search space")
    } else {
        "[thresholds]\ncpu_pct.resolve_band = [0, 5]\nrecover_readings = [5, 8]\n".to_string()
    };
    // As 1.2.0's command reads them (`--repeated-timestamps last`: the latency series has a clock change).
    let evidence = load(EvidenceSpec { traces, split: Split::Series, repeated_timestamps: RepeatedTimestamps::Last, ..Default::default() })
        .expect("the real series load");
    let base: PolicyDescription =
        toml::from_str(&std::fs::read_to_string(root.join("policies/1.0.0/policy.toml")).expect("policy 1.0.0")).expect("it parses");
    let space = SearchSpace::parse("bench", &space).expect("the space parses");
    let candidates = space.candidates(&base.thresholds, &SEED_FLOORS).expect("the space's candidates");
    let found = sentinel::tune::sweep::sweep(&evidence, &base, &candidates, &SEED_FLOORS, &indicatif::ProgressBar::hidden())
        .expect("the sweep runs");
    let gate = vec![Ok(()); candidates.len()];
    let scores = Scores { evidence: &evidence, base: &found.base, candidates: &found.candidates, rule: &space.choose, gate: &gate };
    let series = evidence.iter().map(|e| e.series).max().map_or(0, |s| s + 1);
    let (choice, cv) = scores.choose_and_cross_validate();
    assert_eq!(format!("{cv:?}"), format!("{:?}", refolding::cross_validate(&scores)), "the regrouping changed the cross-validation");
    assert_eq!(choice, refolding::choose(&scores, &|_| true), "the regrouping changed the choice");
    note.set("candidates", (candidates.len() as u64).into());
    note.set("series", (series as u64).into());
    note.set("traces", (evidence.len() as u64).into());

    let mut group = c.benchmark_group("cross-validation");
    group.sampling_mode(SamplingMode::Flat).sample_size(10);
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(if measuring() { 10 } else { 1 }));
    group.bench_function("regrouped", |b| b.iter(|| scores.choose_and_cross_validate()));
    group.bench_function("refolding", |b| b.iter(|| (refolding::choose(&scores, &|_| true), refolding::cross_validate(&scores))));
    group.finish();
}

fn main() {
    let mut note = Note::start("cross_validation");
    let mut c = Criterion::default().configure_from_args();
    cross_validation(&mut c, &mut note);
    c.final_summary();
    note.finish();
}
