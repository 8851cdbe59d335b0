//! The built components against the native modules on random inputs, for every policy version:
//! random traces (streaky readings, same-minute repeats, gaps, failed reads, pins that expire or
//! are cleared, throttle switches, odd and non-finite values) must give the same replay lines and
//! the same decisions; random baseline, budget and plan requests the same answers.
//!
//! Cases: `PROPTEST_CASES` (default 1000). One component instance per version serves all cases.

use capacity_tests::paths::{crate_dir, target_dir};
use capacity_tests::policies::{VERSIONS, component_hint, runtime};
use capacity_tests::random_trace::{START, cases, runner, trace};
use capacity_tests::{first_difference, native, replay_lines, shared_component};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sentinel_core::policy::Policy;
use sentinel_core::replay::compare::Accumulator;
use sentinel_core::trace::{Trace, parse_trace, write_event};
use std::cell::RefCell;
use std::sync::MutexGuard;
use vocabulary::{AdmissionRequest, ApiSamples, Instant, LatencySample, PlanRequest, QueuedBatch, WorkspaceLoad};

type Pairs = RefCell<Vec<(Box<dyn Policy>, MutexGuard<'static, Box<dyn Policy>>)>>;

/// The fixtures no shipped version exercises yet, both ways: a resolve band on every signal
/// (`tests/policies/9.4.0`: it changes recoveries and the memory's entries) and flap damping
/// (`tests/policies/9.6.0`: the penalty crosses beside the memory, a hold beside the decision;
/// `9.7.0`: the longer calm while suppressed).
const FIXTURES: [(&str, &str); 3] = [
    ("9.4.0", "capacity-policy-band-9.4.0.wasm"),
    ("9.6.0", "capacity-policy-damping-9.6.0.wasm"),
    ("9.7.0", "capacity-policy-longer-calm-9.7.0.wasm"),
];

fn fixture(version: &str, file: &str) -> (Box<dyn Policy>, MutexGuard<'static, Box<dyn Policy>>) {
    let open = |path: std::path::PathBuf| {
        sentinel_core::policy::open(&format!("{version}={}", path.display()), &runtime())
            .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()))
    };
    let native = open(crate_dir().join("policies").join(version));
    let component: &'static std::sync::Mutex<Box<dyn Policy>> =
        Box::leak(Box::new(std::sync::Mutex::new(open(target_dir().join("test-policies").join(file)))));
    (native, component.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Both implementations of every version (and of the fixtures): the native modules and the
/// shared component.
fn pairs() -> Pairs {
    let mut pairs: Vec<_> = VERSIONS.iter().map(|v| (native(v), shared_component(v))).collect();
    pairs.extend(FIXTURES.iter().map(|(version, file)| fixture(version, file)));
    RefCell::new(pairs)
}

fn same_replay(pairs: &Pairs, trace: &Trace, throttles: bool) -> Result<(), TestCaseError> {
    for (native, component) in pairs.borrow_mut().iter_mut() {
        let version = native.identity().version.clone();
        let n = replay_lines(trace, native, throttles);
        let c = replay_lines(trace, &mut *component, throttles);
        if let Some(diff) = first_difference(&n, &c) {
            return Err(TestCaseError::fail(format!(
                "policy {version}: component lines differ from native ones (expected = native){}\n{diff}",
                component_hint(&version)
            )));
        }
    }
    Ok(())
}

#[test]
fn component_replays_random_traces_like_native_modules() {
    let pairs = pairs();
    runner(cases()).run(&trace(false), |(trace, throttles)| same_replay(&pairs, &trace, throttles)).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn random_traces_break_no_invariant() {
    let mut policies: Vec<Box<dyn Policy>> = VERSIONS.iter().map(|v| native(v)).collect();
    policies.extend(FIXTURES.iter().map(|(version, file)| fixture(version, file).0));
    let thresholds: Vec<_> = policies.iter_mut().map(|p| p.describe().expect("describe").thresholds).collect();
    let policies = RefCell::new(policies);
    runner(cases())
        .run(&trace(false), |(trace, throttles)| {
            for (policy, thresholds) in policies.borrow_mut().iter_mut().zip(&thresholds) {
                let version = policy.identity().version.clone();
                let mut acc = Accumulator::new(&version, &trace.name, thresholds);
                sentinel_core::replay::run(&trace, std::slice::from_mut(policy), throttles, &mut |_, tick| acc.add(&tick))
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let summary = acc.finish();
                prop_assert!(summary.violations.is_empty(), "policy {}: {:?}", version, summary.violations);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn component_replays_odd_values_like_native_modules() {
    let pairs = pairs();
    runner(cases().div_ceil(4))
        .run(&trace(true), |(trace, throttles)| same_replay(&pairs, &trace, throttles))
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn written_traces_parse_back_to_the_same_events() {
    runner(cases().div_ceil(4))
        .run(&trace(false), |(trace, _)| {
            let text: String = trace.events.iter().map(|e| write_event(e) + "\n").collect();
            let back = parse_trace("random", &text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(back.events, trace.events);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

// ---- random requests -------------------------------------------------------------------------

fn samples() -> impl Strategy<Value = (Instant, Vec<ApiSamples>)> {
    let hour = (0i64..48).prop_map(|h| START + h * 3600);
    let group =
        (prop_oneof![Just("crm"), Just("search"), Just("billing")], 0usize..140, 1.0f64..500.0).prop_flat_map(|(api, n, typical)| {
            prop::collection::vec(((0i64..26 * 60), (0.5f64..2.0)), n).prop_map(move |points| ApiSamples {
                api: api.to_string(),
                samples: points.into_iter().map(|(m, k)| LatencySample { at: START + m * 60, p95_ms: typical * k }).collect(),
            })
        });
    (hour, prop::collection::vec(group, 0..4))
}

fn factor() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        6 => (0.0f64..=1.0).prop_map(Some),
        2 => prop_oneof![Just(0.0), Just(0.25), Just(0.5), Just(1.0)].prop_map(Some),
        1 => Just(None),
        1 => prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(-0.5), Just(1.5)].prop_map(Some),
    ]
}

fn admission_request() -> impl Strategy<Value = AdmissionRequest> {
    (factor(), 0u32..40, 0u32..40, 0u32..12, 0u32..45, 0u32..45, 0u32..14).prop_map(
        |(factor, cluster_batches, service_batches, share, cluster_in_flight, service_in_flight, workspace_in_flight)| AdmissionRequest {
            factor,
            cluster_batches,
            service_batches,
            share,
            cluster_in_flight,
            service_in_flight,
            workspace_in_flight,
        },
    )
}

fn plan_request() -> impl Strategy<Value = PlanRequest> {
    let name = || prop_oneof![Just("acme"), Just("beta"), Just("corp"), Just("dune")].prop_map(str::to_string);
    let load = (name(), 0u32..6, 0u32..4).prop_map(|(workspace, share, in_flight)| WorkspaceLoad { workspace, share, in_flight });
    let batch = (name(), 0i64..50).prop_map(|(workspace, t)| (workspace, START + t * 60));
    (factor(), 0u32..30, 0u32..20, 0u32..25, 0u32..20, prop::collection::vec(load, 0..5), prop::collection::vec(batch, 0..20)).prop_map(
        |(factor, cluster_batches, service_batches, cluster_in_flight, service_in_flight, workspaces, queue)| PlanRequest {
            factor,
            cluster_batches,
            service_batches,
            cluster_in_flight,
            service_in_flight,
            workspaces,
            queue: queue
                .into_iter()
                .enumerate()
                .map(|(i, (workspace, enqueued_at))| QueuedBatch { id: format!("b{i}"), workspace, enqueued_at })
                .collect(),
        },
    )
}

/// NaN is the one value that is not equal to itself: compare through JSON, which writes it null.
fn same<T: serde::Serialize>(a: &T, b: &T) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

#[test]
fn component_computes_baselines_budgets_and_plans_like_native_modules() {
    let pairs = pairs();
    let n = cases().div_ceil(2);
    runner(n)
        .run(&samples(), |(hour, groups)| {
            for (native, component) in pairs.borrow_mut().iter_mut() {
                let a = native.compute_baselines(hour, &groups).expect("native baselines");
                let b = component.compute_baselines(hour, &groups).expect("component baselines");
                prop_assert_eq!(a, b, "baselines for hour {}", hour);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    runner(n)
        .run(&admission_request(), |request| {
            for (native, component) in pairs.borrow_mut().iter_mut() {
                let a = native.resolve_budget(&request).expect("native budget");
                let b = component.resolve_budget(&request).expect("component budget");
                prop_assert!(same(&a, &b), "{:?}\nnative:    {:?}\ncomponent: {:?}", request, a, b);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    runner(n)
        .run(&plan_request(), |request| {
            for (native, component) in pairs.borrow_mut().iter_mut() {
                let a = native.plan(&request).expect("native plan");
                let b = component.plan(&request).expect("component plan");
                prop_assert!(same(&a, &b), "{:?}\nnative:    {:?}\ncomponent: {:?}", request, a, b);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
