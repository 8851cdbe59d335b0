//! Emergency API-stage throttles: the declared targets, a stage's stage-wide limits, and the
//! controller that reads and sets them. What to change and when is the tick's (`tick/stages.rs`),
//! what was there before is the store's (`stage_ledger.rs`).

use serde::{Deserialize, Serialize};

/// One declared stage target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageTarget {
    /// The id of the API Gateway REST API the stage belongs to.
    pub rest_api_id: String,
    /// The stage's name within that REST API.
    pub stage: String,
    /// Requests per second while engaged.
    pub rate_limit: f64,
    /// The burst limit while engaged: how many requests may arrive at once.
    pub burst_limit: u32,
}

impl StageTarget {
    /// The key the store keeps its record under.
    pub fn id(&self) -> String {
        self.stage_ref().id()
    }

    /// Which stage it is, without the limits an engage sets.
    pub fn stage_ref(&self) -> StageRef {
        StageRef { rest_api_id: self.rest_api_id.clone(), stage: self.stage.clone() }
    }

    /// The limits an engage sets.
    pub fn throttled(&self) -> StageLimits {
        StageLimits { existed: true, rate_limit: Some(self.rate_limit), burst_limit: Some(i64::from(self.burst_limit)) }
    }
}

/// Which stage: enough to read it and to put its limits back, declared or not.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct StageRef {
    /// The id of the API Gateway REST API the stage belongs to.
    pub rest_api_id: String,
    /// The stage's name within that REST API.
    pub stage: String,
}

impl StageRef {
    /// `rest_api_id/stage`: the key the store keeps the stage's record under, and how
    /// messages name the stage.
    pub fn id(&self) -> String {
        format!("{}/{}", self.rest_api_id, self.stage)
    }
}

/// A stage's stage-wide throttling (every resource, every method). Stored as JSON; records
/// written before the write-ahead log also carry `method_settings_key`, which is ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageLimits {
    /// Whether the stage has a stage-wide entry at all. A restore of `false` removes the entry
    /// an engage created.
    pub existed: bool,
    /// Requests per second; `None`: no stage-level limit (the account's applies).
    pub rate_limit: Option<f64>,
    /// `None`: no stage-level limit.
    pub burst_limit: Option<i64>,
}

impl StageLimits {
    /// No stage-wide entry: what a stage the sentinel never saw is assumed to have had.
    pub fn none() -> StageLimits {
        StageLimits { existed: false, rate_limit: None, burst_limit: None }
    }
}

impl std::fmt::Display for StageLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.existed {
            return f.write_str("no stage-wide settings");
        }
        let rate = self.rate_limit.map_or("unset".to_string(), |r| format!("{r}/s"));
        let burst = self.burst_limit.map_or("unset".to_string(), |b| b.to_string());
        write!(f, "rate {rate}, burst {burst}")
    }
}

/// A stage controller's call that failed: the stage's limits could not be read or set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("stage {target}: {message}")]
pub struct StageError {
    /// The stage, as `rest_api_id/stage`.
    pub target: String,
    /// What failed, with what to check (the REST API id, the stage name, the IAM permission).
    pub message: String,
}

/// Reads and sets a stage's stage-wide throttling: API Gateway, or the embedded controller that
/// only logs what it would change. The tick bounds each call by the publish timeout; what to put
/// back is the stage ledger's, so a failed call is finished by a later tick.
#[async_trait::async_trait]
pub trait StageController: Send + Sync {
    /// What this controller changes (which service, where), for logs and messages.
    fn describe(&self) -> String;
    /// The stage's stage-wide limits now.
    async fn read(&self, stage: &StageRef) -> Result<StageLimits, StageError>;
    /// Sets the stage-wide limits to exactly `limits` (removing the entry when `existed` is false).
    /// Setting the same limits twice is harmless.
    async fn apply(&self, stage: &StageRef, limits: &StageLimits) -> Result<(), StageError>;
}
