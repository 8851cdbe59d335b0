//! Hop 3: bring each stage toward the policy's intent (docs/behaviour.md §11.3). Planning is
//! pure; applying follows the write-ahead protocol of [`crate::ports::stage_ledger`]:
//!
//! 1. read the stage's limits now (GetStage);
//! 2. write the change down (the first engage of a target stores what was read as the
//!    original; later ones keep it);
//! 3. change the stage (an engage sets the target's limits, a restore the record's original);
//! 4. write down how it ended (an applied restore removes the record).
//!
//! A failure at any step leaves the record as it was written, and the next tick picks the
//! target up again: a re-engage never records throttled limits as the original, and a restore
//! is retried until it succeeds. Targets no longer declared are restored too.

use super::{Sentinel, backstop};
use crate::ports::stage_ledger::{StageChangeKind, StagePhase, StageRecord};
use crate::ports::stages::{StageLimits, StageRef, StageTarget};
use std::collections::BTreeMap;
use vocabulary::Instant;

/// One stage to change this tick: where, what to do, and the limits the change sets (`None`:
/// the record's original, for a restore).
#[derive(Debug, Clone, PartialEq)]
pub struct StageStep {
    /// The API stage to change (REST API id and stage name).
    pub stage: StageRef,
    /// Whether the step engages the stage's throttle or restores its original limits.
    pub kind: StageChangeKind,
    /// The stage-wide limits an engage sets (the target's throttled rate and burst); `None` for a
    /// restore, which puts back the original its record holds.
    pub limits: Option<StageLimits>,
}

/// The stages whose record differs from what the policy wants, and what to do to each.
/// Engaged: every declared target not yet engaged is engaged, every recorded target no longer
/// declared is restored. Not engaged: every recorded target is restored.
pub(crate) fn plan_stages(targets: &[StageTarget], records: &BTreeMap<String, StageRecord>, engaged: bool) -> Vec<StageStep> {
    let mut plan = Vec::new();
    if engaged {
        for t in targets {
            if records.get(&t.id()).is_none_or(|r| r.phase != StagePhase::Engaged) {
                plan.push(StageStep { stage: t.stage_ref(), kind: StageChangeKind::Engage, limits: Some(t.throttled()) });
            }
        }
    }
    for (id, record) in records {
        let declared = targets.iter().any(|t| t.id() == *id);
        if !engaged || !declared {
            plan.push(StageStep { stage: record.target.clone(), kind: StageChangeKind::Restore, limits: None });
        }
    }
    plan
}

/// What reconciling did.
#[derive(Debug, Default)]
pub struct StageOutcomes {
    /// One line per target that failed (retried next tick).
    pub failures: Vec<String>,
    /// Targets with a record after this tick (throttled, or possibly so), with their record;
    /// `None` when the records could not be read.
    pub left: Option<BTreeMap<String, StageRecord>>,
}

/// Applies the plan against the records read at the start of the tick.
pub(crate) async fn reconcile(
    s: &Sentinel,
    records: Result<&BTreeMap<String, StageRecord>, &str>,
    engaged: bool,
    now: Instant,
) -> StageOutcomes {
    let records = match records {
        Ok(records) => records,
        Err(why) => {
            s.telemetry.stage_failures.inc();
            return StageOutcomes {
                failures: vec![format!("the stage records are unreadable ({why}); no stage was changed this tick")],
                left: None,
            };
        }
    };
    let mut left = records.clone();
    let mut failures = Vec::new();
    for step in plan_stages(&s.settings.stage_targets, records, engaged) {
        let id = step.stage.id();
        match change(s, &step, records.get(&id), now).await {
            Ok(Some(record)) => {
                left.insert(id, record);
            }
            Ok(None) => {
                left.remove(&id);
            }
            Err(e) => {
                s.telemetry.stage_failures.inc();
                failures.push(e);
            }
        }
    }
    StageOutcomes { failures, left: Some(left) }
}

/// One change, written down before and after. `Ok(record)` is the target's record after it
/// (`None`: restored, no record); `Err` says which step failed. The record of a failed change
/// stays as it was written (re-read by the next tick).
async fn change(s: &Sentinel, step: &StageStep, record: Option<&StageRecord>, now: Instant) -> Result<Option<StageRecord>, String> {
    let id = step.stage.id();
    let kind = step.kind.name();
    let limit = s.settings.publish_timeout;
    let before = match backstop::within(limit, s.ports.stages.read(&step.stage)).await {
        Ok(Ok(limits)) => limits,
        Ok(Err(e)) => return Err(format!("{kind} {id}: reading its limits failed, nothing changed: {e}")),
        Err(waited) => return Err(format!("{kind} {id}: reading its limits did not end within {waited:?}, nothing changed")),
    };
    let after = match (&step.limits, record) {
        (Some(limits), _) => limits.clone(),
        (None, Some(record)) => record.original.clone(),
        (None, None) => return Err(format!("{kind} {id}: no record to restore from")),
    };
    let (mut written, change) = s
        .ports
        .stage_ledger
        .begin_stage_change(&step.stage, step.kind, &before, &after, now)
        .await
        .map_err(|e| format!("{kind} {id}: could not write the change down first, so the stage was not changed: {e}"))?;
    if step.kind == StageChangeKind::Engage && written.original != before {
        tracing::info!(
            target = %id,
            original = %written.original,
            now = %before,
            "re-engaging a stage recorded since {}: its first original is kept", written.since
        );
    }
    let applied = match backstop::within(limit, s.ports.stages.apply(&step.stage, &after)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(waited) => Err(format!("did not end within {waited:?} (its timeout {limit:?}); it may have reached the stage")),
    };
    let ended = s.ports.stage_ledger.end_stage_change(change, &step.stage, step.kind, applied.clone(), now).await;
    match (&applied, ended) {
        (Ok(()), Ok(())) => {
            tracing::info!(target = %id, before = %before, after = %after, "{kind}: the stage's stage-wide throttling is set");
            if step.kind == StageChangeKind::Restore {
                return Ok(None);
            }
            written.phase = StagePhase::Engaged;
            Ok(Some(written))
        }
        (Ok(()), Err(e)) => Err(format!("{kind} {id}: applied, but writing that down failed (done again next tick): {e}")),
        (Err(why), _) => Err(format!("{kind} {id}: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(stage: &str) -> StageTarget {
        StageTarget { rest_api_id: "api".into(), stage: stage.into(), rate_limit: 10.0, burst_limit: 20 }
    }

    fn record(stage: &str, phase: StagePhase) -> (String, StageRecord) {
        let target = StageRef { rest_api_id: "api".into(), stage: stage.into() };
        (target.id(), StageRecord { target, phase, original: StageLimits::none(), since: 0, updated_at: 0 })
    }

    fn summary(plan: &[StageStep]) -> Vec<(&str, &str)> {
        plan.iter().map(|s| (s.stage.stage.as_str(), s.kind.name())).collect()
    }

    #[test]
    fn engages_every_declared_target_not_yet_engaged() {
        let targets = [target("a"), target("b"), target("c")];
        let records = BTreeMap::from([record("a", StagePhase::Engaged), record("b", StagePhase::Engaging)]);
        let plan = plan_stages(&targets, &records, true);
        assert_eq!(summary(&plan), vec![("b", "engage"), ("c", "engage")]);
        assert_eq!(plan[0].limits, Some(targets[1].throttled()));
    }

    #[test]
    fn restores_every_recorded_target_when_released_declared_or_not() {
        let targets = [target("a")];
        let records = BTreeMap::from([record("a", StagePhase::Engaged), record("gone", StagePhase::Restoring)]);
        assert_eq!(summary(&plan_stages(&targets, &records, false)), vec![("a", "restore"), ("gone", "restore")]);
        // Engaged: a target no longer declared is restored all the same.
        assert_eq!(summary(&plan_stages(&targets, &records, true)), vec![("gone", "restore")]);
    }

    #[test]
    fn nothing_to_do_when_every_target_matches() {
        let targets = [target("a")];
        assert!(plan_stages(&targets, &BTreeMap::new(), false).is_empty());
        assert!(plan_stages(&targets, &BTreeMap::from([record("a", StagePhase::Engaged)]), true).is_empty());
    }
}
