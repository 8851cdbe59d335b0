//! `StageLedger`: the stage throttles' write-ahead records and the audit of stage changes
//! (docs/behaviour.md §11.3), each call one transaction. A target's record row is locked
//! (`FOR UPDATE`) for the length of a change's transaction.

use super::{Fail, PostgresStore};
use crate::stage_rows::{self, ChangeColumns, RecordColumns};
use crate::stored_json::to_json;
use sentinel_core::ports::StoreError;
use sentinel_core::ports::stage_ledger::{StageChange, StageChangeKind, StageLedger, StageRecord};
use sentinel_core::ports::stages::{StageLimits, StageRef};
use std::collections::BTreeMap;
use tokio_postgres::{Client, Row};
use vocabulary::Instant;

const RECORD_COLUMNS: &str = "rest_api_id, stage, phase, original::text, since, updated_at";

fn record_of(row: &Row) -> Result<StageRecord, Fail> {
    stage_rows::record(RecordColumns {
        target: StageRef { rest_api_id: row.try_get(0)?, stage: row.try_get(1)? },
        phase: row.try_get(2)?,
        original: row.try_get(3)?,
        since: row.try_get(4)?,
        updated_at: row.try_get(5)?,
    })
}

async fn lock_record(c: &Client, id: &str) -> Result<Option<StageRecord>, Fail> {
    let sql = format!("SELECT {RECORD_COLUMNS} FROM stage_throttles WHERE target = $1 FOR UPDATE");
    c.query_opt(&sql, &[&id]).await?.map(|row| record_of(&row)).transpose()
}

#[async_trait::async_trait]
impl StageLedger for PostgresStore {
    async fn stage_records(&self) -> Result<BTreeMap<String, StageRecord>, StoreError> {
        self.run_statement("reading the stage records", |c| {
            Box::pin(async move {
                let rows = c.query_typed(&format!("SELECT {RECORD_COLUMNS} FROM stage_throttles ORDER BY target"), &[]).await?;
                let mut records = BTreeMap::new();
                for row in rows {
                    let record = record_of(&row)?;
                    records.insert(record.target.id(), record);
                }
                Ok(records)
            })
        })
        .await
    }

    async fn begin_stage_change(
        &self,
        target: &StageRef,
        kind: StageChangeKind,
        before: &StageLimits,
        after: &StageLimits,
        at: Instant,
    ) -> Result<(StageRecord, u64), StoreError> {
        const DOING: &str = "writing down a stage change";
        let location = &self.shared.location;
        let before_json = to_json("limits", before).map_err(|f| Fail::from(f).into_store_error(location, DOING))?;
        let after_json = to_json("limits", after).map_err(|f| Fail::from(f).into_store_error(location, DOING))?;
        let target = target.clone();
        self.run(DOING, move |c| {
            Box::pin(async move {
                let id = target.id();
                c.execute(
                    "UPDATE stage_changes SET outcome = 'interrupted' WHERE outcome = 'pending' AND rest_api_id = $1 AND stage = $2",
                    &[&target.rest_api_id, &target.stage],
                )
                .await?;
                let phase = kind.phase();
                match (lock_record(c, &id).await?, kind) {
                    (Some(_), _) => {
                        c.execute("UPDATE stage_throttles SET phase = $2, updated_at = $3 WHERE target = $1", &[&id, &phase.name(), &at])
                            .await?;
                    }
                    (None, StageChangeKind::Engage) => {
                        // A concurrent first engage (another sentinel without the lease) keeps
                        // the original it wrote: never overwritten.
                        c.execute(
                            "INSERT INTO stage_throttles (target, rest_api_id, stage, phase, original, since, updated_at)
                             VALUES ($1, $2, $3, $4, $5::text::json, $6, $6)
                             ON CONFLICT (target) DO UPDATE SET phase = excluded.phase, updated_at = excluded.updated_at",
                            &[&id, &target.rest_api_id, &target.stage, &phase.name(), &before_json, &at],
                        )
                        .await?;
                    }
                    (None, StageChangeKind::Restore) => {
                        return Err(Fail::corrupt("a stage record", format!("{id}: there is no record to restore from")));
                    }
                }
                let change: i64 = c
                    .query_one(
                        "INSERT INTO stage_changes (at, rest_api_id, stage, kind, before, after, outcome)
                         VALUES ($1, $2, $3, $4, $5::text::json, $6::text::json, 'pending') RETURNING id",
                        &[&at, &target.rest_api_id, &target.stage, &kind.name(), &before_json, &after_json],
                    )
                    .await?
                    .try_get(0)?;
                let record =
                    lock_record(c, &id).await?.ok_or_else(|| Fail::corrupt("a stage record", format!("{id}: vanished mid-change")))?;
                Ok((record, change as u64))
            })
        })
        .await
    }

    async fn end_stage_change(
        &self,
        change: u64,
        target: &StageRef,
        kind: StageChangeKind,
        outcome: Result<(), String>,
        at: Instant,
    ) -> Result<(), StoreError> {
        let target = target.clone();
        self.run("writing down how a stage change ended", move |c| {
            Box::pin(async move {
                let (name, detail) = stage_rows::ended(&outcome);
                c.execute(
                    "UPDATE stage_changes SET outcome = $2, detail = $3 WHERE id = $1 AND outcome = 'pending'",
                    &[&(change as i64), &name, &detail],
                )
                .await?;
                if outcome.is_ok() {
                    match kind {
                        StageChangeKind::Engage => {
                            c.execute(
                                "UPDATE stage_throttles SET phase = 'engaged', updated_at = $2 WHERE target = $1",
                                &[&target.id(), &at],
                            )
                            .await?
                        }
                        StageChangeKind::Restore => c.execute("DELETE FROM stage_throttles WHERE target = $1", &[&target.id()]).await?,
                    };
                }
                Ok(())
            })
        })
        .await
    }

    async fn stage_changes(&self, limit: u32) -> Result<Vec<StageChange>, StoreError> {
        self.run_statement("reading the stage changes", move |c| {
            Box::pin(async move {
                let rows = c
                    .query(
                        "SELECT id, at, rest_api_id, stage, kind, before::text, after::text, outcome, detail
                         FROM stage_changes ORDER BY id DESC LIMIT $1",
                        &[&i64::from(limit)],
                    )
                    .await?;
                rows.iter()
                    .map(|row| {
                        stage_rows::change(ChangeColumns {
                            id: row.try_get(0)?,
                            at: row.try_get(1)?,
                            target: StageRef { rest_api_id: row.try_get(2)?, stage: row.try_get(3)? },
                            kind: row.try_get(4)?,
                            before: row.try_get(5)?,
                            after: row.try_get(6)?,
                            outcome: row.try_get(7)?,
                            detail: row.try_get(8)?,
                        })
                    })
                    .collect()
            })
        })
        .await
    }
}
