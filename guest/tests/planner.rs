//! docs/behaviour.md §9, the planner: round robin across workspaces ordered by their oldest waiting
//! batch, each within its ceiling, all within the service and cluster room; deterministic.

use capacity_guest::planner::plan;
use vocabulary::{AdmissionOutcome, PlanRequest, QueuedBatch, WaitingBatch, WorkspaceLoad};

fn batch(id: &str, workspace: &str, enqueued_at: i64) -> QueuedBatch {
    QueuedBatch { id: id.into(), workspace: workspace.into(), enqueued_at }
}

fn ws(workspace: &str, share: u32, in_flight: u32) -> WorkspaceLoad {
    WorkspaceLoad { workspace: workspace.into(), share, in_flight }
}

/// Factor 1, cluster 100 and service 50 batches, nothing in flight, shares of 10.
fn request(queue: Vec<QueuedBatch>) -> PlanRequest {
    PlanRequest {
        factor: Some(1.0),
        cluster_batches: 100,
        service_batches: 50,
        cluster_in_flight: 0,
        service_in_flight: 0,
        workspaces: vec![ws("a", 10, 0), ws("b", 10, 0), ws("c", 10, 0)],
        queue,
    }
}

/// Three batches each for a (oldest at 50), b (oldest at 10) and c (oldest at 30).
fn three_each() -> Vec<QueuedBatch> {
    vec![
        batch("a1", "a", 50),
        batch("a2", "a", 51),
        batch("a3", "a", 52),
        batch("b1", "b", 10),
        batch("b2", "b", 60),
        batch("b3", "b", 61),
        batch("c1", "c", 30),
        batch("c2", "c", 31),
        batch("c3", "c", 32),
    ]
}

fn ids(p: &[String]) -> Vec<&str> {
    p.iter().map(String::as_str).collect()
}

#[test]
fn round_robin_across_workspaces_ordered_by_their_oldest_batch() {
    let p = plan(&request(three_each()));
    assert_eq!(ids(&p.admitted), vec!["b1", "c1", "a1", "b2", "c2", "a2", "b3", "c3", "a3"]);
    assert!(p.waiting.is_empty());
    assert!(!p.factor_read_failed);
}

#[test]
fn within_a_workspace_the_oldest_batch_goes_first_whatever_the_queue_order() {
    let queue = vec![batch("late", "a", 90), batch("early", "a", 10), batch("mid", "a", 50)];
    let p = plan(&request(queue));
    assert_eq!(ids(&p.admitted), vec!["early", "mid", "late"]);
}

#[test]
fn equal_times_break_ties_by_workspace_name_and_batch_id() {
    let queue = vec![batch("z", "c", 5), batch("y", "b", 5), batch("x2", "a", 5), batch("x1", "a", 5)];
    let p = plan(&request(queue));
    assert_eq!(ids(&p.admitted), vec!["x1", "y", "z", "x2"]);
}

#[test]
fn each_workspace_stays_within_its_ceiling() {
    let mut r = request(three_each());
    r.workspaces = vec![ws("a", 1, 0), ws("b", 2, 0), ws("c", 10, 1)];
    let p = plan(&r);
    // c has room for 9 more, so c3 goes in the third round with nobody else left.
    assert_eq!(ids(&p.admitted), vec!["b1", "c1", "a1", "b2", "c2", "c3"]);
    let waiting: Vec<(&str, AdmissionOutcome)> = p.waiting.iter().map(|w| (w.id.as_str(), w.outcome)).collect();
    assert_eq!(
        waiting,
        vec![
            ("a2", AdmissionOutcome::WaitWorkspaceFull),
            ("a3", AdmissionOutcome::WaitWorkspaceFull),
            ("b3", AdmissionOutcome::WaitWorkspaceFull)
        ]
    );
}

#[test]
fn in_flight_batches_count_against_a_workspace_ceiling() {
    let mut r = request(three_each());
    r.workspaces = vec![ws("a", 2, 2), ws("b", 2, 1), ws("c", 2, 0)];
    let p = plan(&r);
    assert_eq!(ids(&p.admitted), vec!["b1", "c1", "c2"]);
}

#[test]
fn the_service_room_bounds_the_whole_plan() {
    let mut r = request(three_each());
    r.service_batches = 6;
    r.service_in_flight = 2;
    let p = plan(&r);
    assert_eq!(p.service_budget, 6);
    assert_eq!(ids(&p.admitted), vec!["b1", "c1", "a1", "b2"]);
    assert!(p.waiting.iter().all(|w| w.outcome == AdmissionOutcome::WaitServiceFull));
    assert_eq!(p.waiting.len(), 5);
}

#[test]
fn the_cluster_room_bounds_the_whole_plan_and_is_reported_first() {
    let mut r = request(three_each());
    r.cluster_batches = 10;
    r.cluster_in_flight = 8;
    let p = plan(&r);
    assert_eq!(ids(&p.admitted), vec!["b1", "c1"]);
    assert!(p.waiting.iter().all(|w| w.outcome == AdmissionOutcome::WaitClusterFull));
}

#[test]
fn the_factor_scales_the_budgets() {
    let mut r = request(three_each());
    r.factor = Some(0.1); // cluster 10, service 5, ceilings min(10, 4)
    let p = plan(&r);
    assert_eq!((p.cluster_budget, p.service_budget), (10, 5));
    assert_eq!(ids(&p.admitted), vec!["b1", "c1", "a1", "b2", "c2"]);
}

#[test]
fn a_zero_factor_admits_nothing_and_every_batch_waits_for_capacity() {
    let mut r = request(three_each());
    r.factor = Some(0.0);
    let p = plan(&r);
    assert!(p.admitted.is_empty());
    assert_eq!(p.waiting.len(), 9);
    assert!(p.waiting.iter().all(|w| w.outcome == AdmissionOutcome::WaitCapacityZero));
    assert!(!p.factor_read_failed);
}

#[test]
fn an_unreadable_factor_plans_at_full_capacity_and_reports_it() {
    for factor in [None, Some(f64::NAN), Some(7.0)] {
        let mut r = request(three_each());
        r.factor = factor;
        let p = plan(&r);
        assert!(p.factor_read_failed, "{factor:?}");
        assert_eq!(p.factor_used, 1.0);
        assert_eq!(p.admitted.len(), 9);
    }
}

#[test]
fn a_workspace_not_listed_admits_nothing() {
    let mut queue = three_each();
    queue.push(batch("d1", "d", 0));
    let p = plan(&request(queue));
    assert!(!p.admitted.contains(&"d1".to_string()));
    assert_eq!(p.waiting, vec![WaitingBatch { id: "d1".into(), outcome: AdmissionOutcome::WaitWorkspaceFull }]);
}

#[test]
fn a_workspace_listed_twice_counts_by_its_first_entry() {
    let mut r = request(three_each());
    r.workspaces = vec![ws("a", 1, 0), ws("a", 10, 0), ws("b", 0, 0), ws("c", 0, 0)];
    let p = plan(&r);
    assert_eq!(ids(&p.admitted), vec!["a1"]);
}

#[test]
fn a_service_budget_of_one_admits_one_batch_from_the_oldest_workspace() {
    let mut r = request(three_each());
    r.factor = Some(0.01);
    let p = plan(&r);
    assert_eq!(p.service_budget, 1);
    assert_eq!(ids(&p.admitted), vec!["b1"]);
}

#[test]
fn waiting_batches_keep_their_queue_order() {
    let mut r = request(three_each());
    r.service_batches = 2; // service budget 2, so each ceiling is min(10, 1) = 1
    let p = plan(&r);
    assert_eq!(ids(&p.admitted), vec!["b1", "c1"]);
    let waiting: Vec<&str> = p.waiting.iter().map(|w| w.id.as_str()).collect();
    assert_eq!(waiting, vec!["a1", "a2", "a3", "b2", "b3", "c2", "c3"]);
    assert!(p.waiting.iter().all(|w| w.outcome == AdmissionOutcome::WaitServiceFull));
}

#[test]
fn an_empty_queue_plans_nothing() {
    let p = plan(&request(vec![]));
    assert!(p.admitted.is_empty() && p.waiting.is_empty());
}

#[test]
fn the_same_input_gives_the_same_plan() {
    let mut r = request(three_each());
    r.service_batches = 7;
    assert_eq!(plan(&r), plan(&r.clone()));
}
