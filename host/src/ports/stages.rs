//! Emergency API-stage throttles: applying a declared target and restoring it.

use serde::{Deserialize, Serialize};

/// One declared stage target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageTarget {
    pub rest_api_id: String,
    pub stage: String,
    /// Requests per second while engaged.
    pub rate_limit: f64,
    pub burst_limit: u32,
}

impl StageTarget {
    /// The key the store keeps its status under.
    pub fn id(&self) -> String {
        format!("{}/{}", self.rest_api_id, self.stage)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stage {target}: {message}")]
pub struct StageError {
    pub target: String,
    pub message: String,
}

#[async_trait::async_trait]
pub trait StageController: Send + Sync {
    fn describe(&self) -> String;
    /// Applies the target's throttle; returns the stage's settings from before, which the
    /// store keeps until the restore.
    async fn engage(&self, target: &StageTarget) -> Result<Option<serde_json::Value>, StageError>;
    /// Puts the stage's settings from before back (`original` as `engage` returned it).
    async fn restore(&self, target: &StageTarget, original: Option<&serde_json::Value>) -> Result<(), StageError>;
}
