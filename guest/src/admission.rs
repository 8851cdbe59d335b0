//! docs/behaviour.md §9: how many bulk batches one workspace may start, from the published factor.
//! Budgets never reach zero while the factor is above zero, a workspace never takes a whole
//! service share above one, a share of one stays usable, and a zero factor is a wait (INV-06).

use vocabulary::{AdmissionOutcome, AdmissionRequest, AdmissionResult};

/// The factor to compute with: an absent, non-finite or out-of-range factor means full
/// capacity, reported as a read failure.
pub fn usable_factor(factor: Option<f64>) -> (f64, bool) {
    match factor {
        Some(f) if f.is_finite() && (0.0..=1.0).contains(&f) => (f, false),
        _ => (1.0, true),
    }
}

/// Cluster and service budgets for a usable factor: at least one each while `f > 0`.
pub fn budgets(f: f64, cluster_batches: u32, service_batches: u32) -> (u32, u32) {
    if f <= 0.0 {
        return (0, 0);
    }
    let scaled = |batches: u32| ((f64::from(batches) * f).floor() as u32).max(1);
    let cluster = scaled(cluster_batches);
    (cluster, cluster.min(scaled(service_batches)))
}

/// A workspace's ceiling: below a service budget above one, one within a budget of one.
pub fn workspace_ceiling(share: u32, service_budget: u32) -> u32 {
    match service_budget {
        0 => 0,
        1 => share.min(1),
        budget => share.min(budget - 1),
    }
}

/// The room left under a limit, never below zero.
pub fn room(limit: u32, in_flight: u32) -> u32 {
    limit.saturating_sub(in_flight)
}

/// The first full limit in the order cluster, service, workspace.
pub fn first_full(cluster_room: u32, service_room: u32, workspace_room: u32) -> AdmissionOutcome {
    if cluster_room == 0 {
        AdmissionOutcome::WaitClusterFull
    } else if service_room == 0 {
        AdmissionOutcome::WaitServiceFull
    } else if workspace_room == 0 {
        AdmissionOutcome::WaitWorkspaceFull
    } else {
        AdmissionOutcome::Admit
    }
}

/// How many batches one workspace may start now.
pub fn resolve_budget(r: &AdmissionRequest) -> AdmissionResult {
    let (f, factor_read_failed) = usable_factor(r.factor);
    let (cluster_budget, service_budget) = budgets(f, r.cluster_batches, r.service_batches);
    let workspace_ceiling = workspace_ceiling(r.share, service_budget);
    let result = |admit, outcome| AdmissionResult {
        admit,
        outcome,
        factor_used: f,
        factor_read_failed,
        cluster_budget,
        service_budget,
        workspace_ceiling,
    };
    if f <= 0.0 {
        return result(0, AdmissionOutcome::WaitCapacityZero);
    }
    let rooms = (
        room(cluster_budget, r.cluster_in_flight),
        room(service_budget, r.service_in_flight),
        room(workspace_ceiling, r.workspace_in_flight),
    );
    let admit = rooms.0.min(rooms.1).min(rooms.2);
    if admit > 0 { result(admit, AdmissionOutcome::Admit) } else { result(0, first_full(rooms.0, rooms.1, rooms.2)) }
}
