//! docs/behaviour.md §9 for one request, computed here in wide integers: the factor used, the
//! budgets, the ceiling, `admit` (never below 0, never above any room) and the outcome.

use super::Findings;
use vocabulary::{AdmissionOutcome as O, AdmissionRequest, AdmissionResult};

/// The factor to compute with and whether the read failed: absent, non-finite or outside
/// [0, 1] means 1.0 and a failure.
pub fn usable(factor: Option<f64>) -> (f64, bool) {
    match factor {
        Some(f) if f.is_finite() && (0.0..=1.0).contains(&f) => (f, false),
        _ => (1.0, true),
    }
}

/// `(cluster_budget, service_budget)` for a factor above 0.
pub fn budgets(f: f64, cluster_batches: u32, service_batches: u32) -> (i64, i64) {
    let scaled = |batches: u32| ((f64::from(batches) * f).floor() as i64).max(1);
    let cluster = scaled(cluster_batches);
    (cluster, cluster.min(scaled(service_batches)))
}

/// A workspace's ceiling under a service budget of at least 1.
pub fn ceiling(share: u32, service_budget: i64) -> i64 {
    if service_budget > 1 { i64::from(share).min(service_budget - 1) } else { i64::from(share).min(1) }
}

/// The first full limit among (cluster, service, workspace) rooms, or capacity zero.
pub fn first_full(rooms: [i64; 3]) -> O {
    match rooms.iter().position(|r| *r <= 0) {
        Some(0) => O::WaitClusterFull,
        Some(1) => O::WaitServiceFull,
        Some(_) => O::WaitWorkspaceFull,
        None => O::WaitCapacityZero,
    }
}

pub fn violations(r: &AdmissionRequest, res: &AdmissionResult) -> Vec<String> {
    let mut f = Findings::default();
    let (factor, failed) = usable(r.factor);
    f.ensure(res.factor_used.to_bits() == factor.to_bits(), || format!("factor_used {}, expected {factor}", res.factor_used));
    f.ensure(res.factor_read_failed == failed, || format!("factor_read_failed {}, expected {failed}", res.factor_read_failed));
    if factor == 0.0 {
        f.ensure(res.admit == 0 && res.outcome == O::WaitCapacityZero, || {
            format!("a zero factor admits nothing and waits, got {} {:?}", res.admit, res.outcome)
        });
        return f.into_vec();
    }
    let (cluster, service) = budgets(factor, r.cluster_batches, r.service_batches);
    let ceiling = ceiling(r.share, service);
    let got = (i64::from(res.cluster_budget), i64::from(res.service_budget), i64::from(res.workspace_ceiling));
    f.ensure(got == (cluster, service, ceiling), || format!("budgets/ceiling {got:?}, expected {:?}", (cluster, service, ceiling)));
    let rooms =
        [cluster - i64::from(r.cluster_in_flight), service - i64::from(r.service_in_flight), ceiling - i64::from(r.workspace_in_flight)];
    let admit = rooms.iter().copied().min().unwrap_or(0).max(0);
    f.ensure(i64::from(res.admit) == admit, || format!("admit {}, expected {admit} (rooms {rooms:?})", res.admit));
    f.ensure(rooms.iter().all(|room| i64::from(res.admit) <= (*room).max(0)), || format!("admit {} above a room {rooms:?}", res.admit));
    let outcome = if admit > 0 { O::Admit } else { first_full(rooms) };
    f.ensure(res.outcome == outcome, || format!("outcome {:?}, expected {outcome:?}", res.outcome));
    f.into_vec()
}
