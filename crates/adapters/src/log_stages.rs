//! The embedded stage controller: logs what it would change (the API Gateway one is real). It
//! reads every stage as having no stage-wide settings, so a restore "puts back" none.

use sentinel_core::ports::stages::{StageController, StageError, StageLimits, StageRef};

/// The embedded stage controller: logs each change it would make and changes nothing; every stage
/// reads as having no stage-wide limits.
pub struct LogStageController;

#[async_trait::async_trait]
impl StageController for LogStageController {
    fn describe(&self) -> String {
        "log only (no stage is changed)".into()
    }

    async fn read(&self, _stage: &StageRef) -> Result<StageLimits, StageError> {
        Ok(StageLimits::none())
    }

    async fn apply(&self, stage: &StageRef, limits: &StageLimits) -> Result<(), StageError> {
        tracing::warn!(target = %stage.id(), limits = %limits, "would set the stage's stage-wide throttling");
        Ok(())
    }
}
