//! The stage records and stage changes as both stores keep them: their stored columns read back
//! into the port's values, with one message per kind of damage, and how a change's end is
//! written. Each store reads its own rows (the SQL dialects differ) and hands the columns here.

use crate::store_fail::StoreFail;
use crate::stored_json::parse_json;
use sentinel_core::ports::stage_ledger::{StageChange, StageChangeKind, StageOutcome, StagePhase, StageRecord};
use sentinel_core::ports::stages::StageRef;
use vocabulary::Instant;

/// What an operator does about a stage record that cannot be read.
const RESTORE_BY_HAND: &str = "restore the stage's limits by hand, then delete its row from stage_throttles";

/// A stage record's columns as stored (`phase` and `original` as text).
pub(crate) struct RecordColumns {
    pub target: StageRef,
    pub phase: String,
    pub original: String,
    pub since: Instant,
    pub updated_at: Instant,
}

/// The record the columns hold; a phase this sentinel does not know or an unreadable original
/// is a damaged record, named with what to do.
pub(crate) fn record<B>(c: RecordColumns) -> Result<StageRecord, StoreFail<B>> {
    let RecordColumns { target, phase, original, since, updated_at } = c;
    let phase = StagePhase::parse(&phase)
        .ok_or_else(|| StoreFail::corrupt("a stage record", format!("{}: phase {phase:?} is not one this sentinel knows", target.id())))?;
    let original = parse_json("a stage record", format_args!("the original of {}", target.id()), &original, RESTORE_BY_HAND)?;
    Ok(StageRecord { target, phase, original, since, updated_at })
}

/// A stage change's columns as stored (`kind`, the limits and `outcome` as text).
pub(crate) struct ChangeColumns {
    pub id: i64,
    pub at: Instant,
    pub target: StageRef,
    pub kind: String,
    pub before: String,
    pub after: String,
    pub outcome: String,
    pub detail: Option<String>,
}

/// The change the columns hold; an unknown kind or outcome or unreadable limits is damage,
/// named with the change's id (the row is kept as written).
pub(crate) fn change<B>(c: ChangeColumns) -> Result<StageChange, StoreFail<B>> {
    let which = format!("stage change {}", c.id);
    let kind = StageChangeKind::parse(&c.kind)
        .ok_or_else(|| StoreFail::corrupt("a stage change", format!("{which}: unknown kind {:?}", c.kind)))?;
    let outcome = StageOutcome::parse(&c.outcome)
        .ok_or_else(|| StoreFail::corrupt("a stage change", format!("{which}: unknown outcome {:?}", c.outcome)))?;
    Ok(StageChange {
        id: c.id as u64,
        at: c.at,
        target: c.target,
        kind,
        before: parse_json("a stage change", &which, &c.before, "it is kept as written")?,
        after: parse_json("a stage change", &which, &c.after, "it is kept as written")?,
        outcome,
        detail: c.detail,
    })
}

/// The `outcome` and `detail` columns of a change that ended so.
pub(crate) fn ended(outcome: &Result<(), String>) -> (&'static str, Option<&str>) {
    match outcome {
        Ok(()) => (StageOutcome::Applied.name(), None),
        Err(why) => (StageOutcome::Failed.name(), Some(why.as_str())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sentinel_core::ports::StoreError;

    type Fail = StoreFail<std::convert::Infallible>;

    fn said(fail: Fail) -> String {
        match fail.described("db", "reading", |_, _, e| match e {}) {
            StoreError::Corrupt { what, message, .. } => format!("{what}: {message}"),
            other => panic!("not a damaged row: {other:?}"),
        }
    }

    fn target() -> StageRef {
        StageRef { rest_api_id: "api1".into(), stage: "prod".into() }
    }

    const LIMITS: &str = r#"{"existed":true,"rate_limit":100.0,"burst_limit":200}"#;

    fn change_columns() -> ChangeColumns {
        ChangeColumns {
            id: 7,
            at: 60,
            target: target(),
            kind: "engage".into(),
            before: LIMITS.into(),
            after: LIMITS.into(),
            outcome: "applied".into(),
            detail: None,
        }
    }

    #[test]
    fn stored_columns_read_back_and_each_damage_is_named_with_what_to_do() {
        let columns = |phase: &str, original: &str| RecordColumns {
            target: target(),
            phase: phase.into(),
            original: original.into(),
            since: 60,
            updated_at: 120,
        };
        let stored: StageRecord = record::<std::convert::Infallible>(columns("engaging", LIMITS)).unwrap();
        assert_eq!((stored.phase, stored.since, stored.updated_at), (StagePhase::Engaging, 60, 120));
        let phase = said(record(columns("paused", LIMITS)).unwrap_err());
        assert!(phase.contains("a stage record") && phase.contains("phase \"paused\" is not one this sentinel knows"), "{phase}");
        let original = said(record(columns("engaged", "{")).unwrap_err());
        assert!(original.contains("the original of") && original.contains("restore the stage's limits by hand"), "{original}");

        let read = change::<std::convert::Infallible>(change_columns()).unwrap();
        assert_eq!((read.id, read.kind, read.outcome), (7, StageChangeKind::Engage, StageOutcome::Applied));
        let kind = said(change(ChangeColumns { kind: "pause".into(), ..change_columns() }).unwrap_err());
        assert!(kind.contains("stage change 7: unknown kind \"pause\""), "{kind}");
        let outcome = said(change(ChangeColumns { outcome: "lost".into(), ..change_columns() }).unwrap_err());
        assert!(outcome.contains("stage change 7: unknown outcome \"lost\""), "{outcome}");
        let limits = said(change(ChangeColumns { after: "[]".into(), ..change_columns() }).unwrap_err());
        assert!(limits.contains("stage change 7") && limits.contains("it is kept as written"), "{limits}");
        assert_eq!(ended(&Ok(())), ("applied", None));
        assert_eq!(ended(&Err("throttled".into())), ("failed", Some("throttled")));
    }
}
