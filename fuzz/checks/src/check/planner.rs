//! The planner of docs/behaviour.md §9: every queued batch is either admitted or waiting (waiting
//! ones in queue order), the total stays within the service and cluster room, each workspace within
//! its ceiling (a workspace without a profile admits nothing), each workspace's oldest batches go
//! first, round robin leaves no hungry workspace more than one batch behind another, and every
//! waiting batch names a limit that is really full.

use super::Findings;
use super::admission::{budgets, ceiling, first_full, usable};
use std::collections::{BTreeMap, BTreeSet};
use vocabulary::{AdmissionOutcome as O, AdmissionPlan, PlanRequest};

pub fn violations(r: &PlanRequest, p: &AdmissionPlan) -> Vec<String> {
    let mut f = Findings::default();
    let (factor, failed) = usable(r.factor);
    f.ensure(p.factor_used.to_bits() == factor.to_bits() && p.factor_read_failed == failed, || {
        format!("factor_used {} / read_failed {}, expected {factor} / {failed}", p.factor_used, p.factor_read_failed)
    });
    f.ensure(p.admitted.len() + p.waiting.len() == r.queue.len(), || {
        format!("{} admitted + {} waiting for {} queued", p.admitted.len(), p.waiting.len(), r.queue.len())
    });
    let mut queued: Vec<&str> = r.queue.iter().map(|b| b.id.as_str()).collect();
    let mut answered: Vec<&str> = p.admitted.iter().map(String::as_str).chain(p.waiting.iter().map(|w| w.id.as_str())).collect();
    queued.sort_unstable();
    answered.sort_unstable();
    f.ensure(queued == answered, || "admitted and waiting ids are not the queued ids".into());
    let mut order = r.queue.iter().map(|b| b.id.as_str());
    f.ensure(p.waiting.iter().all(|w| order.any(|id| id == w.id)), || "waiting batches are not in queue order".into());
    if factor == 0.0 {
        f.ensure(p.admitted.is_empty(), || "a zero factor admitted batches".into());
        f.ensure(p.waiting.iter().all(|w| w.outcome == O::WaitCapacityZero), || "a zero factor's batches must wait for capacity".into());
        return f.into_vec();
    }

    let (cluster, service) = budgets(factor, r.cluster_batches, r.service_batches);
    let got = (i64::from(p.cluster_budget), i64::from(p.service_budget));
    f.ensure(got == (cluster, service), || format!("budgets {got:?}, expected {:?}", (cluster, service)));
    let global_room = (cluster - i64::from(r.cluster_in_flight)).max(0).min((service - i64::from(r.service_in_flight)).max(0));
    let admitted = p.admitted.len() as i64;
    f.ensure(admitted <= global_room, || format!("{admitted} admitted, but the cluster and service room is {global_room}"));

    // Per workspace, when ids tell batches apart.
    let unique: BTreeSet<&str> = r.queue.iter().map(|b| b.id.as_str()).collect();
    if unique.len() != r.queue.len() {
        return f.into_vec();
    }
    let mut room: BTreeMap<&str, i64> = BTreeMap::new();
    for w in &r.workspaces {
        room.entry(w.workspace.as_str()).or_insert_with(|| (ceiling(w.share, service) - i64::from(w.in_flight)).max(0));
    }
    let batch: BTreeMap<&str, _> = r.queue.iter().map(|b| (b.id.as_str(), b)).collect();
    let mut count: BTreeMap<&str, i64> = BTreeMap::new();
    for id in &p.admitted {
        *count.entry(batch[id.as_str()].workspace.as_str()).or_default() += 1;
    }
    for (w, n) in &count {
        let limit = room.get(w).copied().unwrap_or(0);
        f.ensure(*n <= limit, || format!("workspace {w:?} admitted {n}, above its room {limit}"));
    }
    let global_left = global_room - admitted;
    let cluster_left = (cluster - i64::from(r.cluster_in_flight)).max(0) - admitted;
    let service_left = (service - i64::from(r.service_in_flight)).max(0) - admitted;
    let most = count.values().copied().max().unwrap_or(0);
    let mut youngest_admitted: BTreeMap<&str, i64> = BTreeMap::new();
    for id in &p.admitted {
        let b = batch[id.as_str()];
        let at = youngest_admitted.entry(b.workspace.as_str()).or_insert(b.enqueued_at);
        *at = (*at).max(b.enqueued_at);
    }
    for w in &p.waiting {
        let b = batch[w.id.as_str()];
        let ws = b.workspace.as_str();
        let ws_left = room.get(ws).copied().unwrap_or(0) - count.get(ws).copied().unwrap_or(0);
        let expected = first_full([cluster_left, service_left, ws_left]);
        f.ensure(w.outcome == expected && expected != O::WaitCapacityZero, || {
            let left = (cluster_left, service_left, ws_left);
            format!("batch {:?} waits with {:?}, expected {expected:?} (rooms left {left:?})", w.id, w.outcome)
        });
        f.ensure(youngest_admitted.get(ws).is_none_or(|at| *at <= b.enqueued_at), || {
            format!("workspace {ws:?}: batch {:?} waits while a younger one was admitted", w.id)
        });
        if ws_left > 0 && global_left == 0 {
            let mine = count.get(ws).copied().unwrap_or(0);
            f.ensure(mine + 1 >= most, || format!("round robin: workspace {ws:?} got {mine} while another got {most}"));
        }
    }
    f.into_vec()
}
