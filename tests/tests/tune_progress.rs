//! `sentinel policy tune`'s progress bar covers all the replaying, the gate included: it ends
//! at the candidate-ticks the command prints (it used to stop at about two thirds of them, at
//! the end of the sweep, while the gate's replays ran on with nothing moving).

use capacity_tests::paths::workspace;
use indicatif::ProgressBar;
use sentinel::tune::evidence::{self, EvidenceSpec, Split, TraceSpec};
use sentinel::tune::gate_check::GateTraces;
use sentinel::tune::space::{SEED_FLOORS, SearchSpace};
use sentinel_core::replay::gate::Gate;
use sentinel_core::trace::RepeatedTimestamps;
use vocabulary::PolicyDescription;

fn spec(relative: &str) -> TraceSpec {
    workspace().join(relative).display().to_string().parse().expect("a trace spec")
}

#[test]
fn the_bar_ends_at_the_candidate_ticks_printed_with_the_gate_included() {
    let root = workspace();
    let base: PolicyDescription =
        toml::from_str(&std::fs::read_to_string(root.join("policies/1.0.0/policy.toml")).unwrap()).expect("policy 1.0.0");
    let space = SearchSpace::parse("space", "[thresholds]\ncpu_pct.constrained = [70, 80]\n").unwrap();
    let candidates = space.candidates(&base.thresholds, &SEED_FLOORS).unwrap();
    let evidence = evidence::load(EvidenceSpec {
        traces: vec![
            spec("tests/data/cloudwatch/rds_cpu_utilization_cc0c53.csv"),
            spec("tests/data/cloudwatch/rds_cpu_utilization_e47b3b.csv"),
        ],
        split: Split::Series,
        ..Default::default()
    })
    .unwrap();
    let gate_traces = evidence::load_whole(&[spec("tests/traces")], RepeatedTimestamps::Refuse).unwrap();
    let gate = GateTraces::prepare(Gate::load(&root.join("policies/gate.toml")).unwrap(), "9.9.9", gate_traces, &base).unwrap();
    let gate_ticks = gate.ticks();
    assert!(gate_ticks > 0);
    let bar = ProgressBar::hidden();
    let tuning = sentinel::tune::tune(base, space, candidates, evidence, &SEED_FLOORS, Some(gate), &bar).unwrap();
    assert_eq!(bar.length(), Some(tuning.candidate_ticks), "the bar's end is the printed total");
    assert_eq!(bar.position(), tuning.candidate_ticks, "the bar reaches its end");
    assert!(bar.is_finished());
}
