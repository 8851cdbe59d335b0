//! The write-ahead protocol of the stage records, checked the same way against every store
//! (`tests/tests/stage_ledger.rs`): the original is written once, before the first change, and
//! no later engage (after a lost answer, a failed restore, an interrupted change) overwrites it.

use sentinel_core::ports::stage_ledger::{StageChangeKind, StageLedger, StageOutcome, StagePhase};
use sentinel_core::ports::stages::{StageLimits, StageRef};
use vocabulary::Instant;

const T0: Instant = 1_792_504_980;

fn limits(rate: f64, burst: i64) -> StageLimits {
    StageLimits { existed: true, rate_limit: Some(rate), burst_limit: Some(burst) }
}

pub async fn write_ahead_protocol(ledger: &dyn StageLedger) {
    use StageChangeKind::{Engage, Restore};
    let stage = StageRef { rest_api_id: "a1b2c3".into(), stage: "prod".into() };
    let id = stage.id();
    let own = limits(1000.0, 2000);
    let throttled = limits(50.0, 100);
    assert!(ledger.stage_records().await.unwrap().is_empty());

    // The first engage writes the stage's own limits down before anything changes.
    let (record, first) = ledger.begin_stage_change(&stage, Engage, &own, &throttled, T0).await.unwrap();
    assert_eq!((record.phase, &record.original, record.since), (StagePhase::Engaging, &own, T0));
    // Its answer is lost (no end); the next tick reads the stage already throttled and engages
    // again: the original stays the first one, the lost change is marked interrupted.
    let (record, second) = ledger.begin_stage_change(&stage, Engage, &throttled, &throttled, T0 + 60).await.unwrap();
    assert_eq!((record.phase, &record.original, record.since), (StagePhase::Engaging, &own, T0), "a re-engage keeps the original");
    ledger.end_stage_change(second, &stage, Engage, Ok(()), T0 + 60).await.unwrap();
    let records = ledger.stage_records().await.unwrap();
    assert_eq!((records[&id].phase, &records[&id].original), (StagePhase::Engaged, &own));

    // A restore that fails leaves the record restoring, with its original.
    let (record, third) = ledger.begin_stage_change(&stage, Restore, &throttled, &own, T0 + 120).await.unwrap();
    assert_eq!((record.phase, &record.original), (StagePhase::Restoring, &own));
    ledger.end_stage_change(third, &stage, Restore, Err("GetStage: no answer".into()), T0 + 120).await.unwrap();
    assert_eq!(ledger.stage_records().await.unwrap()[&id].phase, StagePhase::Restoring);
    // Pressure comes back before the restore succeeds: engaging again keeps the first original.
    let (record, fourth) = ledger.begin_stage_change(&stage, Engage, &throttled, &throttled, T0 + 180).await.unwrap();
    assert_eq!(&record.original, &own);
    ledger.end_stage_change(fourth, &stage, Engage, Ok(()), T0 + 180).await.unwrap();
    // The restore that succeeds removes the record.
    let (_, fifth) = ledger.begin_stage_change(&stage, Restore, &throttled, &own, T0 + 240).await.unwrap();
    ledger.end_stage_change(fifth, &stage, Restore, Ok(()), T0 + 240).await.unwrap();
    assert!(ledger.stage_records().await.unwrap().is_empty());

    // A restore with nothing recorded is refused (nothing to put back).
    let err = ledger.begin_stage_change(&stage, Restore, &own, &own, T0 + 300).await.unwrap_err();
    assert!(err.to_string().contains("no record to restore from"), "{err}");

    // The audit: every attempt, newest first, with what was read before and what was set.
    let changes = ledger.stage_changes(10).await.unwrap();
    let summary: Vec<(u64, &str, StageOutcome)> = changes.iter().map(|c| (c.id, c.kind.name(), c.outcome)).collect();
    assert_eq!(
        summary,
        vec![
            (fifth, "restore", StageOutcome::Applied),
            (fourth, "engage", StageOutcome::Applied),
            (third, "restore", StageOutcome::Failed),
            (second, "engage", StageOutcome::Applied),
            (first, "engage", StageOutcome::Interrupted),
        ]
    );
    assert_eq!((&changes[0].before, &changes[0].after), (&throttled, &own));
    assert_eq!(changes[2].detail.as_deref(), Some("GetStage: no answer"));
    assert!(changes.iter().all(|c| c.target == stage));
    assert_eq!(ledger.stage_changes(2).await.unwrap().len(), 2);
}
