//! docs/behaviour.md §9: the admission math every adopting service computes from the bulk factor.

use capacity_guest::admission::{budgets, first_full, resolve_budget, room, usable_factor, workspace_ceiling};
use vocabulary::{AdmissionOutcome, AdmissionRequest};

fn request(factor: Option<f64>) -> AdmissionRequest {
    AdmissionRequest {
        factor,
        cluster_batches: 20,
        service_batches: 10,
        share: 4,
        cluster_in_flight: 0,
        service_in_flight: 0,
        workspace_in_flight: 0,
    }
}

#[test]
fn full_factor_admits_up_to_the_workspace_ceiling() {
    let r = resolve_budget(&request(Some(1.0)));
    assert_eq!((r.cluster_budget, r.service_budget, r.workspace_ceiling), (20, 10, 4));
    assert_eq!(r.admit, 4);
    assert_eq!(r.outcome, AdmissionOutcome::Admit);
    assert_eq!(r.factor_used, 1.0);
    assert!(!r.factor_read_failed);
}

#[test]
fn an_absent_factor_means_full_capacity_and_a_read_failure() {
    let r = resolve_budget(&request(None));
    assert_eq!(r.factor_used, 1.0);
    assert!(r.factor_read_failed);
    assert_eq!(r.admit, 4);
}

#[test]
fn a_non_finite_or_out_of_range_factor_means_full_capacity_and_a_read_failure() {
    for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.1, 1.0001, 2.0, -1.0] {
        let r = resolve_budget(&request(Some(f)));
        assert_eq!(r.factor_used, 1.0, "factor {f}");
        assert!(r.factor_read_failed, "factor {f}");
        assert_eq!((r.cluster_budget, r.service_budget), (20, 10));
        assert_eq!(r.outcome, AdmissionOutcome::Admit);
    }
}

#[test]
fn the_range_ends_zero_and_one_are_valid_factors() {
    assert_eq!(usable_factor(Some(0.0)), (0.0, false));
    assert_eq!(usable_factor(Some(1.0)), (1.0, false));
    assert_eq!(usable_factor(Some(0.25)), (0.25, false));
    assert_eq!(usable_factor(None), (1.0, true));
}

#[test]
fn a_zero_factor_is_a_wait_for_capacity_not_an_error() {
    let r = resolve_budget(&request(Some(0.0)));
    assert_eq!(r.admit, 0);
    assert_eq!(r.outcome, AdmissionOutcome::WaitCapacityZero);
    assert!(!r.factor_read_failed);
    assert_eq!((r.cluster_budget, r.service_budget, r.workspace_ceiling), (0, 0, 0));
}

#[test]
fn a_zero_factor_waits_for_capacity_even_with_everything_full() {
    let r =
        resolve_budget(&AdmissionRequest { cluster_in_flight: 99, service_in_flight: 99, workspace_in_flight: 99, ..request(Some(0.0)) });
    assert_eq!(r.outcome, AdmissionOutcome::WaitCapacityZero);
}

#[test]
fn budgets_are_the_floor_of_batches_times_factor() {
    assert_eq!(budgets(0.5, 20, 10), (10, 5));
    assert_eq!(budgets(0.25, 20, 10), (5, 2));
    assert_eq!(budgets(0.99, 10, 10), (9, 9));
}

#[test]
fn budgets_never_drop_below_one_while_the_factor_is_above_zero() {
    assert_eq!(budgets(0.01, 20, 10), (1, 1));
    assert_eq!(budgets(f64::MIN_POSITIVE, 5, 5), (1, 1));
    assert_eq!(budgets(1.0, 0, 0), (1, 1), "max(1, floor(0 * f))");
    assert_eq!(budgets(0.0, 20, 10), (0, 0));
}

#[test]
fn the_service_budget_never_exceeds_the_cluster_budget() {
    assert_eq!(budgets(0.5, 4, 100), (2, 2));
    assert_eq!(budgets(1.0, 3, 10), (3, 3));
}

#[test]
fn the_workspace_ceiling_stays_below_a_service_budget_above_one() {
    assert_eq!(workspace_ceiling(10, 5), 4, "no workspace takes a whole service share");
    assert_eq!(workspace_ceiling(2, 5), 2);
    assert_eq!(workspace_ceiling(10, 2), 1);
    assert_eq!(workspace_ceiling(0, 5), 0);
}

#[test]
fn a_service_budget_of_one_leaves_a_usable_share_of_one() {
    assert_eq!(workspace_ceiling(1, 1), 1);
    assert_eq!(workspace_ceiling(7, 1), 1);
    assert_eq!(workspace_ceiling(0, 1), 0);
    let r = resolve_budget(&AdmissionRequest { share: 3, ..request(Some(0.05)) });
    assert_eq!((r.service_budget, r.workspace_ceiling, r.admit), (1, 1, 1));
}

#[test]
fn admit_is_the_smallest_room() {
    let r = resolve_budget(&AdmissionRequest { cluster_in_flight: 17, ..request(Some(1.0)) });
    assert_eq!(r.admit, 3, "cluster room");
    let r = resolve_budget(&AdmissionRequest { service_in_flight: 8, ..request(Some(1.0)) });
    assert_eq!(r.admit, 2, "service room");
    let r = resolve_budget(&AdmissionRequest { workspace_in_flight: 3, ..request(Some(1.0)) });
    assert_eq!(r.admit, 1, "workspace room");
}

#[test]
fn admit_is_never_below_zero_when_over_budget() {
    let r = resolve_budget(&AdmissionRequest {
        cluster_in_flight: 500,
        service_in_flight: 500,
        workspace_in_flight: 500,
        ..request(Some(0.5))
    });
    assert_eq!(r.admit, 0);
    assert_eq!(room(3, 10), 0);
    assert_eq!(room(10, 3), 7);
}

#[test]
fn a_full_cluster_is_reported_first() {
    let r =
        resolve_budget(&AdmissionRequest { cluster_in_flight: 20, service_in_flight: 10, workspace_in_flight: 4, ..request(Some(1.0)) });
    assert_eq!(r.outcome, AdmissionOutcome::WaitClusterFull);
}

#[test]
fn a_full_service_is_reported_before_a_full_workspace() {
    let r = resolve_budget(&AdmissionRequest { service_in_flight: 10, workspace_in_flight: 4, ..request(Some(1.0)) });
    assert_eq!(r.outcome, AdmissionOutcome::WaitServiceFull);
}

#[test]
fn a_full_workspace_is_reported_last() {
    let r = resolve_budget(&AdmissionRequest { workspace_in_flight: 4, ..request(Some(1.0)) });
    assert_eq!(r.outcome, AdmissionOutcome::WaitWorkspaceFull);
    assert_eq!(r.admit, 0);
    let r = resolve_budget(&AdmissionRequest { share: 0, ..request(Some(1.0)) });
    assert_eq!(r.outcome, AdmissionOutcome::WaitWorkspaceFull, "a share of zero never admits");
}

#[test]
fn first_full_follows_cluster_service_workspace_order() {
    assert_eq!(first_full(0, 0, 0), AdmissionOutcome::WaitClusterFull);
    assert_eq!(first_full(1, 0, 0), AdmissionOutcome::WaitServiceFull);
    assert_eq!(first_full(1, 1, 0), AdmissionOutcome::WaitWorkspaceFull);
    assert_eq!(first_full(1, 1, 1), AdmissionOutcome::Admit);
}

#[test]
fn constrained_factor_halves_the_budgets() {
    let r = resolve_budget(&request(Some(0.5)));
    assert_eq!((r.cluster_budget, r.service_budget, r.workspace_ceiling, r.admit), (10, 5, 4, 4));
    let r = resolve_budget(&AdmissionRequest { share: 10, ..request(Some(0.5)) });
    assert_eq!(r.workspace_ceiling, 4, "service budget 5 minus one");
}
