//! Property tests of admission and the planner: nothing exceeds a budget, ceiling or room, the
//! outcomes follow the order of docs/behaviour.md §9, the plan is round robin and deterministic.
//! Cases: `PROPTEST_CASES` (default 1000).

mod common;

use capacity_guest::admission::{budgets, resolve_budget, room, usable_factor, workspace_ceiling};
use capacity_guest::planner::plan;
use common::config;
use proptest::prelude::*;
use std::collections::BTreeMap;
use vocabulary::{AdmissionOutcome, AdmissionRequest, PlanRequest, QueuedBatch, WorkspaceLoad};

fn factor() -> impl Strategy<Value = Option<f64>> {
    prop::option::of(prop_oneof![
        6 => 0.0f64..=1.0,
        2 => prop::sample::select(vec![0.0, 1.0, 0.5, 0.25]),
        1 => prop::num::f64::ANY,
        1 => -2.0f64..3.0,
    ])
}

fn counts() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0u32..40, 1 => any::<u32>()]
}

fn admission_request() -> impl Strategy<Value = AdmissionRequest> {
    (factor(), counts(), counts(), counts(), counts(), counts(), counts()).prop_map(
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

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

fn plan_request() -> impl Strategy<Value = PlanRequest> {
    let load = (prop::sample::select(NAMES[..4].to_vec()), 0u32..8, 0u32..6).prop_map(|(w, share, in_flight)| WorkspaceLoad {
        workspace: w.into(),
        share,
        in_flight,
    });
    // Workspace "e" is never listed; times tie often; ids are unique, in a random order.
    let queued = (0u32..30, prop::sample::select(NAMES.to_vec()), 0i64..20);
    (factor(), 0u32..30, 0u32..30, 0u32..30, 0u32..30, prop::collection::vec(load, 0..6), prop::collection::vec(queued, 0..40)).prop_map(
        |(factor, cluster_batches, service_batches, cluster_in_flight, service_in_flight, workspaces, queue)| {
            let queue = queue
                .into_iter()
                .enumerate()
                .map(|(i, (key, w, at))| QueuedBatch { id: format!("q{key}-{i}"), workspace: w.into(), enqueued_at: at })
                .collect();
            PlanRequest { factor, cluster_batches, service_batches, cluster_in_flight, service_in_flight, workspaces, queue }
        },
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn admission_never_exceeds_a_room_and_reports_the_first_full_limit(r in admission_request()) {
        let a = resolve_budget(&r);
        let (f, failed) = usable_factor(r.factor);
        prop_assert_eq!(a.factor_used, f);
        prop_assert_eq!(a.factor_read_failed, !r.factor.is_some_and(|f| f.is_finite() && (0.0..=1.0).contains(&f)));
        if f == 0.0 {
            prop_assert!(!failed);
            prop_assert_eq!((a.admit, a.outcome), (0, AdmissionOutcome::WaitCapacityZero));
            return Ok(());
        }
        prop_assert!(a.cluster_budget >= 1 && a.service_budget >= 1);
        prop_assert!(a.service_budget <= a.cluster_budget);
        prop_assert_eq!(a.cluster_budget, ((f64::from(r.cluster_batches) * f).floor() as u32).max(1));
        prop_assert!(a.workspace_ceiling <= r.share);
        if a.service_budget > 1 {
            prop_assert!(a.workspace_ceiling < a.service_budget);
        } else {
            prop_assert_eq!(a.workspace_ceiling, r.share.min(1));
        }
        let rooms = [
            room(a.cluster_budget, r.cluster_in_flight),
            room(a.service_budget, r.service_in_flight),
            room(a.workspace_ceiling, r.workspace_in_flight),
        ];
        prop_assert_eq!(a.admit, rooms.into_iter().min().unwrap());
        let expected = if a.admit > 0 {
            AdmissionOutcome::Admit
        } else if rooms[0] == 0 {
            AdmissionOutcome::WaitClusterFull
        } else if rooms[1] == 0 {
            AdmissionOutcome::WaitServiceFull
        } else {
            AdmissionOutcome::WaitWorkspaceFull
        };
        prop_assert_eq!(a.outcome, expected);
    }

    #[test]
    fn the_planner_stays_within_every_ceiling_and_room(r in plan_request()) {
        let p = plan(&r);
        let (f, _) = usable_factor(r.factor);
        let (cluster_budget, service_budget) = budgets(f, r.cluster_batches, r.service_batches);
        prop_assert_eq!((p.cluster_budget, p.service_budget), (cluster_budget, service_budget));
        prop_assert!(p.admitted.len() as u32 <= room(cluster_budget, r.cluster_in_flight));
        prop_assert!(p.admitted.len() as u32 <= room(service_budget, r.service_in_flight));
        if f == 0.0 {
            prop_assert!(p.admitted.is_empty());
            prop_assert!(p.waiting.iter().all(|w| w.outcome == AdmissionOutcome::WaitCapacityZero));
        }

        // Every queued batch is either admitted or waiting, exactly once.
        let mut queued: Vec<&str> = r.queue.iter().map(|b| b.id.as_str()).collect();
        let mut planned: Vec<&str> = p.admitted.iter().chain(p.waiting.iter().map(|w| &w.id)).map(String::as_str).collect();
        queued.sort_unstable();
        planned.sort_unstable();
        prop_assert_eq!(queued, planned);
        prop_assert!(p.waiting.iter().all(|w| w.outcome != AdmissionOutcome::Admit));

        // Per workspace: within its first listing's room, nothing for an unlisted one.
        let mut first: BTreeMap<&str, &WorkspaceLoad> = BTreeMap::new();
        for w in &r.workspaces {
            first.entry(w.workspace.as_str()).or_insert(w);
        }
        let mut admitted_in: BTreeMap<&str, u32> = BTreeMap::new();
        let mut pool: Vec<&QueuedBatch> = r.queue.iter().collect();
        for id in &p.admitted {
            let at = pool.iter().position(|b| &b.id == id).unwrap();
            *admitted_in.entry(pool.remove(at).workspace.as_str()).or_default() += 1;
        }
        for (w, n) in &admitted_in {
            let limit = first.get(w).map_or(0, |l| room(workspace_ceiling(l.share, service_budget), l.in_flight));
            prop_assert!(*n <= limit, "workspace {w}: {n} admitted, room {limit}");
        }
    }

    #[test]
    fn the_planner_is_round_robin_and_leaves_nothing_admissible_waiting(r in plan_request()) {
        let p = plan(&r);
        let (f, _) = usable_factor(r.factor);
        if f == 0.0 {
            return Ok(());
        }
        let (cluster_budget, service_budget) = budgets(f, r.cluster_batches, r.service_batches);
        let mut first: BTreeMap<&str, &WorkspaceLoad> = BTreeMap::new();
        for w in &r.workspaces {
            first.entry(w.workspace.as_str()).or_insert(w);
        }
        let mut admitted_in: BTreeMap<&str, u32> = BTreeMap::new();
        let mut pool: Vec<&QueuedBatch> = r.queue.iter().collect();
        for id in &p.admitted {
            let at = pool.iter().position(|b| &b.id == id).unwrap();
            *admitted_in.entry(pool.remove(at).workspace.as_str()).or_default() += 1;
        }
        let cluster_left = room(cluster_budget, r.cluster_in_flight) - p.admitted.len() as u32;
        let service_left = room(service_budget, r.service_in_flight) - p.admitted.len() as u32;
        let room_left = |w: &str| {
            first.get(w).map_or(0, |l| room(workspace_ceiling(l.share, service_budget), l.in_flight))
                - admitted_in.get(w).copied().unwrap_or(0)
        };
        // A batch left waiting always has a full limit in its way.
        for b in &pool {
            prop_assert!(cluster_left == 0 || service_left == 0 || room_left(&b.workspace) == 0);
        }
        // A workspace that still had batches and room was served every round, so no other
        // workspace got more than one batch more than it.
        for b in &pool {
            if room_left(&b.workspace) > 0 {
                let served = admitted_in.get(b.workspace.as_str()).copied().unwrap_or(0);
                for (w, n) in &admitted_in {
                    prop_assert!(*n <= served + 1, "{w} got {n}, still-waiting {} got {served}", b.workspace);
                }
            }
        }
    }

    #[test]
    fn the_planner_is_deterministic(r in plan_request()) {
        prop_assert_eq!(plan(&r), plan(&r.clone()));
    }

    #[test]
    fn with_unique_ids_the_queue_order_does_not_change_what_is_admitted(
        (r, shuffled) in plan_request().prop_flat_map(|r| {
            let queue = r.queue.clone();
            (Just(r), Just(queue).prop_shuffle())
        }),
    ) {
        let a = plan(&r);
        let b = plan(&PlanRequest { queue: shuffled, ..r.clone() });
        prop_assert_eq!(&a.admitted, &b.admitted);
        let waiting = |p: &vocabulary::AdmissionPlan| {
            let mut w: Vec<(String, AdmissionOutcome)> = p.waiting.iter().map(|w| (w.id.clone(), w.outcome)).collect();
            w.sort_by(|x, y| x.0.cmp(&y.0));
            w
        };
        prop_assert_eq!(waiting(&a), waiting(&b));
    }
}
