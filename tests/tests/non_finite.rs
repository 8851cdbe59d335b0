//! Values JSON cannot carry, so no vector file can: NaN and infinities. docs/behaviour.md §3: an
//! absent or non-finite value adds nothing to a reading's level; §9: a non-finite factor means full
//! capacity and `factor_read_failed`. Checked through the native modules and the component.

use capacity_tests::{native, shared_component};
use sentinel_core::policy::Policy;
use vocabulary::{AdmissionOutcome, AdmissionRequest, ApiLatency, DecisionInput, Level, Reading, Signal};

const NOW: i64 = 1_792_506_600;

fn level_of(policy: &mut dyn Policy, reading: Reading) -> Option<Level> {
    let input = DecisionInput {
        now: NOW,
        signal: Signal::Reading(reading),
        memory: None,
        pin: None,
        throttles_enabled: false,
        stages_throttled: false,
    };
    policy.decide(&input).expect("decide never fails").level
}

fn reading(cpu: Option<f64>, conn: Option<f64>, latency: Vec<(Option<f64>, Option<f64>)>) -> Reading {
    Reading {
        cpu_pct: cpu,
        connections_pct: conn,
        scaling: None,
        latency: latency.into_iter().map(|(p95_ms, baseline_ms)| ApiLatency { api: "crm".into(), p95_ms, baseline_ms }).collect(),
    }
}

#[test]
fn non_finite_values_contribute_nothing_to_the_level() {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let cases: Vec<(&str, Reading, Level)> = vec![
        ("cpu NaN", reading(Some(nan), None, vec![]), Level::Normal),
        ("cpu +inf", reading(Some(inf), None, vec![]), Level::Normal),
        ("connections -inf", reading(None, Some(-inf), vec![]), Level::Normal),
        ("cpu NaN beside critical connections", reading(Some(nan), Some(90.0), vec![]), Level::Critical),
        ("p95 +inf", reading(None, None, vec![(Some(inf), Some(100.0))]), Level::Normal),
        ("p95 NaN", reading(None, None, vec![(Some(nan), Some(100.0))]), Level::Normal),
        ("baseline +inf", reading(None, None, vec![(Some(500.0), Some(inf))]), Level::Normal),
        ("baseline NaN", reading(None, None, vec![(Some(500.0), Some(nan))]), Level::Normal),
        ("constrained cpu beside an infinite p95", reading(Some(75.0), None, vec![(Some(inf), Some(100.0))]), Level::Constrained),
    ];
    let mut native = native("1.0.0");
    let mut component = shared_component("1.0.0");
    for (what, r, expected) in cases {
        assert_eq!(level_of(native.as_mut(), r.clone()), Some(expected), "native: {what}");
        assert_eq!(level_of(component.as_mut(), r), Some(expected), "component: {what}");
    }
}

#[test]
fn non_finite_factor_means_full_capacity_and_a_read_failure() {
    let mut native = native("1.0.0");
    let mut component = shared_component("1.0.0");
    for factor in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let request = AdmissionRequest {
            factor: Some(factor),
            cluster_batches: 10,
            service_batches: 6,
            share: 3,
            cluster_in_flight: 0,
            service_in_flight: 0,
            workspace_in_flight: 0,
        };
        for (side, policy) in [("native", native.as_mut()), ("component", component.as_mut())] {
            let r = policy.resolve_budget(&request).expect("resolve_budget");
            assert!(r.factor_read_failed && r.factor_used == 1.0, "{side} {factor}: {r:?}");
            assert_eq!((r.admit, r.outcome, r.cluster_budget, r.service_budget), (3, AdmissionOutcome::Admit, 10, 6), "{side} {factor}");
        }
    }
}
