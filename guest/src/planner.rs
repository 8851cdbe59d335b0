//! docs/behaviour.md §9, the fair planner: admits a queue round robin across workspaces, ordered by
//! their oldest waiting batch, each within its ceiling, all within the service and cluster
//! room. Ties break by workspace name and batch id, so the plan is deterministic.

use crate::admission::{budgets, first_full, room, usable_factor, workspace_ceiling};
use std::collections::BTreeMap;
use vocabulary::{AdmissionOutcome, AdmissionPlan, PlanRequest, QueuedBatch, WaitingBatch};

pub fn plan(r: &PlanRequest) -> AdmissionPlan {
    let (f, factor_read_failed) = usable_factor(r.factor);
    let (cluster_budget, service_budget) = budgets(f, r.cluster_batches, r.service_batches);
    let mut cluster_room = room(cluster_budget, r.cluster_in_flight);
    let mut service_room = room(service_budget, r.service_in_flight);

    let mut workspace_room: BTreeMap<&str, u32> = BTreeMap::new();
    for w in &r.workspaces {
        workspace_room.entry(w.workspace.as_str()).or_insert_with(|| room(workspace_ceiling(w.share, service_budget), w.in_flight));
    }

    // Each workspace's batches, oldest first; workspaces by their oldest batch.
    let mut lanes: BTreeMap<&str, Vec<(usize, &QueuedBatch)>> = BTreeMap::new();
    for (i, b) in r.queue.iter().enumerate() {
        lanes.entry(b.workspace.as_str()).or_default().push((i, b));
    }
    let mut lanes: Vec<(&str, Vec<(usize, &QueuedBatch)>)> = lanes.into_iter().collect();
    for (_, batches) in &mut lanes {
        batches.sort_by(|a, b| (a.1.enqueued_at, &a.1.id, a.0).cmp(&(b.1.enqueued_at, &b.1.id, b.0)));
    }
    lanes.sort_by(|a, b| (a.1[0].1.enqueued_at, a.0).cmp(&(b.1[0].1.enqueued_at, b.0)));

    let mut admitted_index = vec![false; r.queue.len()];
    let mut admitted = Vec::new();
    let mut next = vec![0usize; lanes.len()];
    if f > 0.0 {
        loop {
            let mut progressed = false;
            for (lane, (workspace, batches)) in lanes.iter().enumerate() {
                if cluster_room == 0 || service_room == 0 {
                    break;
                }
                let ws_room = workspace_room.get_mut(workspace);
                let Some(ws_room) = ws_room.filter(|r| **r > 0) else { continue };
                let Some(&(index, batch)) = batches.get(next[lane]) else { continue };
                next[lane] += 1;
                *ws_room -= 1;
                cluster_room -= 1;
                service_room -= 1;
                admitted_index[index] = true;
                admitted.push(batch.id.clone());
                progressed = true;
            }
            if !progressed {
                break;
            }
        }
    }

    let waiting = r
        .queue
        .iter()
        .enumerate()
        .filter(|(i, _)| !admitted_index[*i])
        .map(|(_, b)| {
            let outcome = if f <= 0.0 {
                AdmissionOutcome::WaitCapacityZero
            } else {
                let ws = workspace_room.get(b.workspace.as_str()).copied().unwrap_or(0);
                first_full(cluster_room, service_room, ws)
            };
            WaitingBatch { id: b.id.clone(), outcome }
        })
        .collect();
    AdmissionPlan { admitted, waiting, factor_used: f, factor_read_failed, cluster_budget, service_budget }
}
