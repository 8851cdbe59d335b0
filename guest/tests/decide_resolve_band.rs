//! docs/behaviour.md §3 and §5.4: the resolve band, hysteresis on the level. A reading counts as calmer
//! for a recovery only below each boundary minus its signal's band; escalation still measures
//! against the boundaries themselves. A band of 0 (every version before 1.1.0) is the seeds' rule.

mod common;

use capacity_guest::decide::decide;
use common::*;
use vocabulary::{Cause, Decision, DecisionInput, Level, Memory, ProtectionState, Reading, Signal, Thresholds};

use ProtectionState::{Constrained, Critical, Normal};

/// 1.0.0's numbers with a CPU band of `band` points (constrained 70, critical 85).
fn with_cpu_band(band: f64) -> Thresholds {
    let mut t = T;
    t.cpu_pct.resolve_band = band;
    t
}

/// Runs one CPU reading a minute from `memory`, under `t`; the decisions.
fn run(t: &Thresholds, memory: Memory, cpus: &[f64]) -> Vec<Decision> {
    let mut memory = Some(memory);
    let mut out = Vec::new();
    for (i, &c) in cpus.iter().enumerate() {
        let input = DecisionInput {
            now: T0 + i as i64 * MIN,
            signal: Signal::Reading(cpu(c)),
            memory: memory.take(),
            pin: None,
            throttles_enabled: false,
            stages_throttled: false,
        };
        let d = decide(&input, t);
        memory = Some(d.memory.clone());
        out.push(d);
    }
    out
}

fn last_state(ds: &[Decision]) -> ProtectionState {
    ds.last().expect("ticks ran").state
}

#[test]
fn readings_inside_the_band_hold_constrained_where_the_seeds_rule_recovers() {
    let calm_but_inside = [67.0; 12];
    let seeds = run(&T, memory_in(Constrained), &calm_but_inside);
    assert_eq!(last_state(&seeds), Normal, "without a band, 67 % is below 70 % and recovers");
    let banded = run(&with_cpu_band(5.0), memory_in(Constrained), &calm_but_inside);
    assert!(banded.iter().all(|d| d.state == Constrained && d.cause == Cause::Hold), "67 % is not below 70 - 5");
    assert!(banded.iter().all(|d| d.level == Some(Level::Normal)), "the level itself is unchanged: {:?}", banded[0].level);
}

#[test]
fn readings_below_the_band_recover_after_the_same_count() {
    let below = [64.0; 12];
    let seeds = run(&T, memory_in(Constrained), &below);
    let banded = run(&with_cpu_band(5.0), memory_in(Constrained), &below);
    let when = |ds: &[Decision]| ds.iter().position(|d| d.cause == Cause::Recover);
    assert_eq!(when(&banded), Some(T.recover_readings as usize - 1), "five calmer readings, as without a band");
    assert_eq!(when(&banded), when(&seeds));
}

#[test]
fn recovery_from_critical_needs_readings_below_critical_minus_the_band() {
    let banded = with_cpu_band(5.0);
    let inside = run(&banded, memory_in(Critical), &[82.0; 10]);
    assert!(inside.iter().all(|d| d.state == Critical), "82 % is not below 85 - 5");
    let below = run(&banded, memory_in(Critical), &[78.0; 10]);
    assert_eq!(last_state(&below), Constrained, "78 % is below 80 %: one rank down");
}

#[test]
fn escalation_measures_against_the_boundaries_themselves() {
    for cpus in [[72.0; 6], [86.0; 6], [69.0; 6]] {
        let seeds = run(&T, memory_in(Normal), &cpus);
        let banded = run(&with_cpu_band(10.0), memory_in(Normal), &cpus);
        let states = |ds: &[Decision]| ds.iter().map(|d| (d.state, d.cause)).collect::<Vec<_>>();
        assert_eq!(states(&banded), states(&seeds), "{cpus:?}");
    }
}

#[test]
fn each_signal_has_its_own_band() {
    let mut t = T;
    t.latency_ratio.resolve_band = 0.5;
    // CPU at 67 % (no CPU band): calmer. Latency ratio 1.2: below 1.5 but not below 1.0.
    let reading = Reading { latency: vec![latency("crm", Some(120.0), Some(100.0))], ..cpu(67.0) };
    let mut memory = Some(memory_in(Constrained));
    for i in 0..10 {
        let input = DecisionInput {
            now: T0 + i * MIN,
            signal: Signal::Reading(reading.clone()),
            memory: memory.take(),
            pin: None,
            throttles_enabled: false,
            stages_throttled: false,
        };
        let d = decide(&input, &t);
        assert_eq!((d.state, d.level), (Constrained, Some(Level::Normal)), "the latency band holds it, tick {i}");
        memory = Some(d.memory);
    }
}

#[test]
fn memory_keeps_a_recovery_level_only_where_the_band_moved_it() {
    let banded = run(&with_cpu_band(5.0), memory_in(Constrained), &[67.0, 64.0, 75.0]);
    let recent = &banded[2].memory.recent;
    assert_eq!(recent[0].resolve_level, Some(Level::Constrained), "67 %: normal, but constrained for a recovery");
    assert_eq!(recent[1].resolve_level, None, "64 %: normal either way");
    assert_eq!(recent[2].resolve_level, None, "75 %: constrained either way");
    assert_eq!(recent[0].recovery_level(), Level::Constrained);
    let seeds = run(&T, memory_in(Constrained), &[67.0, 64.0, 75.0, 90.0, 10.0]);
    let stored = serde_json::to_string(&seeds[4].memory).unwrap();
    assert!(!stored.contains("resolve_level"), "without a band the memory is written as before: {stored}");
}
