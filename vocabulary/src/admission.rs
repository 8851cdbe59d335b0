//! A service's admission question and the answer (docs/behaviour.md §9): one workspace's budget,
//! or a fair plan over a queue.

use crate::state::Instant;
use serde::{Deserialize, Serialize};

/// What one service asks for one workspace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AdmissionRequest {
    pub factor: Option<f64>,
    pub cluster_batches: u32,
    pub service_batches: u32,
    pub share: u32,
    pub cluster_in_flight: u32,
    pub service_in_flight: u32,
    pub workspace_in_flight: u32,
}

/// Admit, or which limit is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
pub enum AdmissionOutcome {
    #[serde(alias = "Admit")]
    Admit,
    #[serde(alias = "WaitClusterFull")]
    WaitClusterFull,
    #[serde(alias = "WaitServiceFull")]
    WaitServiceFull,
    #[serde(alias = "WaitWorkspaceFull")]
    WaitWorkspaceFull,
    #[serde(alias = "WaitCapacityZero")]
    WaitCapacityZero,
}

impl AdmissionOutcome {
    pub fn name(self) -> &'static str {
        match self {
            AdmissionOutcome::Admit => "admit",
            AdmissionOutcome::WaitClusterFull => "wait-cluster-full",
            AdmissionOutcome::WaitServiceFull => "wait-service-full",
            AdmissionOutcome::WaitWorkspaceFull => "wait-workspace-full",
            AdmissionOutcome::WaitCapacityZero => "wait-capacity-zero",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AdmissionResult {
    pub admit: u32,
    pub outcome: AdmissionOutcome,
    pub factor_used: f64,
    pub factor_read_failed: bool,
    pub cluster_budget: u32,
    pub service_budget: u32,
    pub workspace_ceiling: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedBatch {
    pub id: String,
    pub workspace: String,
    pub enqueued_at: Instant,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceLoad {
    pub workspace: String,
    pub share: u32,
    pub in_flight: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRequest {
    pub factor: Option<f64>,
    pub cluster_batches: u32,
    pub service_batches: u32,
    pub cluster_in_flight: u32,
    pub service_in_flight: u32,
    /// A workspace listed twice counts by its first entry; one not listed admits nothing.
    pub workspaces: Vec<WorkspaceLoad>,
    pub queue: Vec<QueuedBatch>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingBatch {
    pub id: String,
    pub outcome: AdmissionOutcome,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdmissionPlan {
    pub admitted: Vec<String>,
    pub waiting: Vec<WaitingBatch>,
    pub factor_used: f64,
    pub factor_read_failed: bool,
    pub cluster_budget: u32,
    pub service_budget: u32,
}
