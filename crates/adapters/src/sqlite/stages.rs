//! `StageLedger`: the stage throttles' write-ahead records and the audit of stage changes
//! (docs/behaviour.md §11.3), each call one transaction.

use super::{Fail, SqliteStore, wall_clock};
use crate::stage_rows::{self, ChangeColumns, RecordColumns};
use crate::stored_json::to_json;
use rusqlite::{Connection, TransactionBehavior, params};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::stage_ledger::{StageChange, StageChangeKind, StageLedger, StageRecord};
use sentinel_core::ports::stages::{StageLimits, StageRef};
use std::collections::BTreeMap;
use vocabulary::Instant;

const RECORD_COLUMNS: &str = "rest_api_id, stage, phase, original, since, updated_at";

fn record_of(row: &rusqlite::Row<'_>) -> Result<StageRecord, Fail> {
    stage_rows::record(RecordColumns {
        target: StageRef { rest_api_id: row.get(0)?, stage: row.get(1)? },
        phase: row.get(2)?,
        original: row.get(3)?,
        since: row.get(4)?,
        updated_at: row.get(5)?,
    })
}

fn read_record(conn: &Connection, id: &str) -> Result<Option<StageRecord>, Fail> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {RECORD_COLUMNS} FROM stage_throttles WHERE target = ?1"))?;
    let mut rows = stmt.query([id])?;
    rows.next()?.map(record_of).transpose()
}

#[async_trait::async_trait]
impl StageLedger for SqliteStore {
    async fn stage_records(&self) -> Result<BTreeMap<String, StageRecord>, StoreError> {
        self.run("reading the stage records", |conn| {
            let mut stmt = conn.prepare_cached(&format!("SELECT {RECORD_COLUMNS} FROM stage_throttles ORDER BY target"))?;
            let mut rows = stmt.query([])?;
            let mut records = BTreeMap::new();
            while let Some(row) = rows.next()? {
                let record = record_of(row)?;
                records.insert(record.target.id(), record);
            }
            Ok(records)
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
        let (target, before, after) = (target.clone(), before.clone(), after.clone());
        self.run("writing down a stage change", move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let id = target.id();
            tx.execute(
                "UPDATE stage_changes SET outcome = 'interrupted' WHERE outcome = 'pending' AND rest_api_id = ?1 AND stage = ?2",
                params![target.rest_api_id, target.stage],
            )?;
            let phase = kind.phase();
            match (read_record(&tx, &id)?, kind) {
                (Some(_), _) => {
                    tx.execute("UPDATE stage_throttles SET phase = ?2, updated_at = ?3 WHERE target = ?1", params![id, phase.name(), at])?;
                }
                (None, StageChangeKind::Engage) => {
                    tx.execute(
                        "INSERT INTO stage_throttles (target, rest_api_id, stage, phase, original, since, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                        params![id, target.rest_api_id, target.stage, phase.name(), to_json("original limits", &before)?, at],
                    )?;
                }
                (None, StageChangeKind::Restore) => {
                    return Err(Fail::corrupt("a stage record", format!("{id}: there is no record to restore from")));
                }
            }
            tx.execute(
                "INSERT INTO stage_changes (at, rest_api_id, stage, kind, before, after, outcome, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7)",
                params![
                    at,
                    target.rest_api_id,
                    target.stage,
                    kind.name(),
                    to_json("limits", &before)?,
                    to_json("limits", &after)?,
                    wall_clock()
                ],
            )?;
            let change = tx.last_insert_rowid() as u64;
            let record = read_record(&tx, &id)?.ok_or_else(|| Fail::corrupt("a stage record", format!("{id}: vanished mid-change")))?;
            tx.commit()?;
            Ok((record, change))
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
        self.run("writing down how a stage change ended", move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (name, detail) = stage_rows::ended(&outcome);
            tx.execute(
                "UPDATE stage_changes SET outcome = ?2, detail = ?3 WHERE id = ?1 AND outcome = 'pending'",
                params![change as i64, name, detail],
            )?;
            if outcome.is_ok() {
                match kind {
                    StageChangeKind::Engage => tx.execute(
                        "UPDATE stage_throttles SET phase = 'engaged', updated_at = ?2 WHERE target = ?1",
                        params![target.id(), at],
                    )?,
                    StageChangeKind::Restore => tx.execute("DELETE FROM stage_throttles WHERE target = ?1", [target.id()])?,
                };
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn stage_changes(&self, limit: u32) -> Result<Vec<StageChange>, StoreError> {
        self.run("reading the stage changes", move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT id, at, rest_api_id, stage, kind, before, after, outcome, detail FROM stage_changes ORDER BY id DESC LIMIT ?1",
            )?;
            let mut rows = stmt.query([limit])?;
            let mut changes = Vec::new();
            while let Some(row) = rows.next()? {
                changes.push(stage_rows::change(ChangeColumns {
                    id: row.get(0)?,
                    at: row.get(1)?,
                    target: StageRef { rest_api_id: row.get(2)?, stage: row.get(3)? },
                    kind: row.get(4)?,
                    before: row.get(5)?,
                    after: row.get(6)?,
                    outcome: row.get(7)?,
                    detail: row.get(8)?,
                })?);
            }
            Ok(changes)
        })
        .await
    }
}
