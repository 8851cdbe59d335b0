//! The stage throttles' write-ahead records and the audit of every stage change
//! (docs/behaviour.md §11.3).
//!
//! Before the sentinel changes a stage it writes down, in the store, what it is about to do:
//! the first engage of a target records the stage's own limits as the `original`, and nothing
//! overwrites that original until a restore has put it back and removed the record. A change
//! whose answer is lost, a commit that fails or a process killed mid-change therefore leaves a
//! record that still holds the real original, and the next tick finishes the job from it.

use super::StoreError;
use super::stages::{StageLimits, StageRef};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use vocabulary::Instant;

/// Where a throttled target is in its life. No record: the sentinel has not touched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StagePhase {
    /// The engage was written down and may or may not have reached the stage.
    Engaging,
    /// The throttle is applied.
    Engaged,
    /// The restore was written down and may or may not have reached the stage.
    Restoring,
}

impl StagePhase {
    /// The name the stores keep and messages show: `engaging`, `engaged` or `restoring`.
    pub fn name(self) -> &'static str {
        match self {
            StagePhase::Engaging => "engaging",
            StagePhase::Engaged => "engaged",
            StagePhase::Restoring => "restoring",
        }
    }

    /// The phase a stored name stands for; `None` for a name this sentinel does not know.
    pub fn parse(text: &str) -> Option<StagePhase> {
        [StagePhase::Engaging, StagePhase::Engaged, StagePhase::Restoring].into_iter().find(|p| p.name() == text)
    }
}

/// One target the sentinel has throttled (or is about to, or is restoring).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// The stage the record is about.
    pub target: StageRef,
    /// Where its throttle is: being engaged, engaged, or being restored.
    pub phase: StagePhase,
    /// The stage's own limits before the first engage: what a restore puts back.
    pub original: StageLimits,
    /// When the first engage was written down.
    pub since: Instant,
    /// When a change of the target last set its phase (the tick's time).
    pub updated_at: Instant,
}

/// What a stage change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StageChangeKind {
    /// Sets the declared target's throttle (its `rate_limit` and `burst_limit`).
    Engage,
    /// Puts the stage's original limits back, exactly as recorded before the first engage.
    Restore,
}

impl StageChangeKind {
    /// The name the stores keep and messages show: `engage` or `restore`.
    pub fn name(self) -> &'static str {
        match self {
            StageChangeKind::Engage => "engage",
            StageChangeKind::Restore => "restore",
        }
    }

    /// The kind a stored name stands for; `None` for a name this sentinel does not know.
    pub fn parse(text: &str) -> Option<StageChangeKind> {
        [StageChangeKind::Engage, StageChangeKind::Restore].into_iter().find(|k| k.name() == text)
    }

    /// The phase a record is in while this change is on its way.
    pub fn phase(self) -> StagePhase {
        match self {
            StageChangeKind::Engage => StagePhase::Engaging,
            StageChangeKind::Restore => StagePhase::Restoring,
        }
    }
}

/// How a stage change ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StageOutcome {
    /// Written down; the call has not answered yet.
    Pending,
    /// The stage took the change.
    Applied,
    /// The call failed or did not answer in time: it may or may not have reached the stage.
    Failed,
    /// The sentinel stopped (killed, lost its lease) before the call answered.
    Interrupted,
}

impl StageOutcome {
    /// The name the stores keep and messages show: `pending`, `applied`, `failed` or
    /// `interrupted`.
    pub fn name(self) -> &'static str {
        match self {
            StageOutcome::Pending => "pending",
            StageOutcome::Applied => "applied",
            StageOutcome::Failed => "failed",
            StageOutcome::Interrupted => "interrupted",
        }
    }

    /// The outcome a stored name stands for; `None` for a name this sentinel does not know.
    pub fn parse(text: &str) -> Option<StageOutcome> {
        [StageOutcome::Pending, StageOutcome::Applied, StageOutcome::Failed, StageOutcome::Interrupted]
            .into_iter()
            .find(|o| o.name() == text)
    }
}

/// One attempt to change a stage, as audited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageChange {
    /// The change's number in the audit, growing with every change.
    pub id: u64,
    /// The tick's time.
    pub at: Instant,
    /// The stage changed.
    pub target: StageRef,
    /// Whether it engaged or restored the throttle.
    pub kind: StageChangeKind,
    /// The stage's limits as read just before the change.
    pub before: StageLimits,
    /// The limits the change sets.
    pub after: StageLimits,
    /// How it ended, or `pending` while the call has not answered.
    pub outcome: StageOutcome,
    /// Why it failed, when it did.
    pub detail: Option<String>,
}

/// The store's side of the stage throttles. Each method is one transaction.
#[async_trait::async_trait]
pub trait StageLedger: Send + Sync {
    /// Every target with a record, by [`StageRef::id`].
    async fn stage_records(&self) -> Result<BTreeMap<String, StageRecord>, StoreError>;
    /// Written before a change reaches the stage. Marks an earlier pending change of the target
    /// interrupted; for an engage, creates the record in phase engaging with `before` as its
    /// original, or, when a record exists, keeps its original and only sets the phase; for a
    /// restore, sets the existing record's phase to restoring. Appends the pending change and
    /// returns the record as it now stands and the change's id.
    async fn begin_stage_change(
        &self,
        target: &StageRef,
        kind: StageChangeKind,
        before: &StageLimits,
        after: &StageLimits,
        at: Instant,
    ) -> Result<(StageRecord, u64), StoreError>;
    /// Written after the call answered (or gave up). An applied engage makes the record engaged;
    /// an applied restore removes it; a failure leaves it as it is, for the next tick to finish.
    async fn end_stage_change(
        &self,
        change: u64,
        target: &StageRef,
        kind: StageChangeKind,
        outcome: Result<(), String>,
        at: Instant,
    ) -> Result<(), StoreError>;
    /// The newest stage changes, newest first.
    async fn stage_changes(&self, limit: u32) -> Result<Vec<StageChange>, StoreError>;
}
