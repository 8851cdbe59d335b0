//! The embedded stage controller: logs what it would change (the API Gateway one is real).

use crate::ports::stages::{StageController, StageError, StageTarget};

pub struct LogStageController;

#[async_trait::async_trait]
impl StageController for LogStageController {
    fn describe(&self) -> String {
        "log only (no stage is changed)".into()
    }

    async fn engage(&self, target: &StageTarget) -> Result<Option<serde_json::Value>, StageError> {
        tracing::warn!(
            target = %target.id(),
            rate_limit = target.rate_limit,
            burst_limit = target.burst_limit,
            "would engage the emergency stage throttle"
        );
        Ok(None)
    }

    async fn restore(&self, target: &StageTarget, _original: Option<&serde_json::Value>) -> Result<(), StageError> {
        tracing::warn!(target = %target.id(), "would restore the stage's original throttling");
        Ok(())
    }
}
