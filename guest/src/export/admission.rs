//! Admission exports: the generated records converted to the vocabulary's and back (the only
//! place the admission world's bindings meet the rules).

use super::Component;
use super::exports::capacity::sentinel::admission::Guest;
use super::exports::capacity::sentinel::admission_types as wit;
use crate::admission as core;
use crate::planner;
use vocabulary::{self as v, AdmissionOutcome};

impl Guest for Component {
    fn resolve_budget(r: wit::AdmissionRequest) -> wit::AdmissionResult {
        result_out(core::resolve_budget(&request_in(r)))
    }

    fn resolve_budgets(requests: Vec<wit::AdmissionRequest>) -> Vec<wit::AdmissionResult> {
        requests.into_iter().map(|r| result_out(core::resolve_budget(&request_in(r)))).collect()
    }

    fn plan(r: wit::PlanRequest) -> wit::AdmissionPlan {
        let plan = planner::plan(&v::PlanRequest {
            factor: r.factor,
            cluster_batches: r.cluster_batches,
            service_batches: r.service_batches,
            cluster_in_flight: r.cluster_in_flight,
            service_in_flight: r.service_in_flight,
            workspaces: r
                .workspaces
                .into_iter()
                .map(|w| v::WorkspaceLoad { workspace: w.workspace, share: w.share, in_flight: w.in_flight })
                .collect(),
            queue: r.queue.into_iter().map(|b| v::QueuedBatch { id: b.id, workspace: b.workspace, enqueued_at: b.enqueued_at }).collect(),
        });
        wit::AdmissionPlan {
            admitted: plan.admitted,
            waiting: plan.waiting.into_iter().map(|w| wit::WaitingBatch { id: w.id, outcome: outcome(w.outcome) }).collect(),
            factor_used: plan.factor_used,
            factor_read_failed: plan.factor_read_failed,
            cluster_budget: plan.cluster_budget,
            service_budget: plan.service_budget,
        }
    }
}

fn request_in(r: wit::AdmissionRequest) -> v::AdmissionRequest {
    v::AdmissionRequest {
        factor: r.factor,
        cluster_batches: r.cluster_batches,
        service_batches: r.service_batches,
        share: r.share,
        cluster_in_flight: r.cluster_in_flight,
        service_in_flight: r.service_in_flight,
        workspace_in_flight: r.workspace_in_flight,
    }
}

fn result_out(r: v::AdmissionResult) -> wit::AdmissionResult {
    wit::AdmissionResult {
        admit: r.admit,
        outcome: outcome(r.outcome),
        factor_used: r.factor_used,
        factor_read_failed: r.factor_read_failed,
        cluster_budget: r.cluster_budget,
        service_budget: r.service_budget,
        workspace_ceiling: r.workspace_ceiling,
    }
}

fn outcome(o: AdmissionOutcome) -> wit::AdmissionOutcome {
    match o {
        AdmissionOutcome::Admit => wit::AdmissionOutcome::Admit,
        AdmissionOutcome::WaitClusterFull => wit::AdmissionOutcome::WaitClusterFull,
        AdmissionOutcome::WaitServiceFull => wit::AdmissionOutcome::WaitServiceFull,
        AdmissionOutcome::WaitWorkspaceFull => wit::AdmissionOutcome::WaitWorkspaceFull,
        AdmissionOutcome::WaitCapacityZero => wit::AdmissionOutcome::WaitCapacityZero,
    }
}
