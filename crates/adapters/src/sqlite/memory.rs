//! `MemoryStore`: the memory row and tick records, and the one transaction
//! that ends each tick (docs/behaviour.md §11.4).

use super::pins::{append_audit, stored_pin};
use super::{Fail, SqliteStore, wall_clock};
use crate::stored_json::{parse_json, to_json};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::memory::{ChannelOutcome, Committed, MemoryStore, TickCommit, TickRecord};
use sentinel_core::ports::pins::AuditAction;
use vocabulary::Memory;

#[async_trait::async_trait]
impl MemoryStore for SqliteStore {
    async fn load_memory(&self) -> Result<Option<Memory>, StoreError> {
        self.run("reading the memory", |conn| {
            let text: Option<String> = conn.query_row("SELECT memory FROM memory WHERE id = 1", [], |row| row.get(0)).optional()?;
            Ok(text
                .map(|t| parse_json("memory", "the memory row", &t, "the tick starts fresh and its commit replaces the row"))
                .transpose()?)
        })
        .await
    }

    async fn commit_tick(&self, commit: &TickCommit) -> Result<Committed, StoreError> {
        let commit = commit.clone();
        let location = self.shared.location.clone();
        self.run("committing the tick", move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let committed = write_tick(&tx, &commit, &location)?;
            tx.commit()?;
            Ok(committed)
        })
        .await
    }

    async fn record_publication(&self, sequence: u64, outcomes: &[ChannelOutcome]) -> Result<(), StoreError> {
        let outcomes = outcomes.to_vec();
        self.run("recording the publication", move |conn| {
            let json = to_json("publication outcomes", &outcomes)?;
            let changed = match i64::try_from(sequence) {
                Ok(seq) => conn.execute("UPDATE ticks SET publication = ?1 WHERE sequence = ?2", params![json, seq])?,
                Err(_) => 0,
            };
            if changed == 0 {
                return Err(Fail::corrupt(
                    "a tick record",
                    format!("there is no tick {sequence} to record its publication on; was the file replaced mid-tick?"),
                ));
            }
            Ok(())
        })
        .await
    }

    async fn recent_ticks(&self, limit: u32) -> Result<Vec<(u64, TickRecord)>, StoreError> {
        self.run("reading the tick records", move |conn| {
            let mut stmt = conn.prepare_cached("SELECT sequence, record FROM ticks ORDER BY sequence DESC LIMIT ?1")?;
            let rows = stmt.query_map([limit], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))?;
            rows.map(|row| {
                let (sequence, text) = row?;
                let record = parse_json(
                    "a tick record",
                    format_args!("tick {sequence}"),
                    &text,
                    "it is kept as written; read it with the sqlite3 shell",
                )?;
                Ok((sequence as u64, record))
            })
            .collect()
        })
        .await
    }
}

/// Everything one tick writes, inside the caller's transaction.
fn write_tick(tx: &Transaction<'_>, commit: &TickCommit, location: &str) -> Result<Committed, Fail> {
    let at = commit.record.at;
    // The fence: the transaction is IMMEDIATE, so no other writer commits between this check
    // and the commit.
    if let Some(follows) = commit.follows {
        let newest: i64 = tx.query_row("SELECT COALESCE(MAX(sequence), 0) FROM ticks", [], |row| row.get(0))?;
        let newest = newest as u64;
        if newest != follows {
            return Err(Fail::Superseded { follows, newest });
        }
    }
    tx.execute(
        "INSERT INTO memory (id, memory, updated_at) VALUES (1, ?1, ?2)
         ON CONFLICT (id) DO UPDATE SET memory = excluded.memory, updated_at = excluded.updated_at",
        params![to_json("memory", &commit.memory)?, at],
    )?;

    let expiry_audit = match &commit.expired_pin {
        // Only the pin that expired: one set meanwhile by an operator stays.
        Some(expired) if still_stored(tx, expired)? => {
            tx.execute("DELETE FROM pin WHERE id = 1", [])?;
            Some(append_audit(tx, at, &commit.expired_by, AuditAction::Expire, Some(expired), None, None)?)
        }
        _ => None,
    };

    {
        let mut insert = tx.prepare_cached(
            "INSERT INTO latency_samples (api, at, p95_ms) VALUES (?1, ?2, ?3)
             ON CONFLICT (api, at) DO UPDATE SET p95_ms = excluded.p95_ms",
        )?;
        for (api, sample) in &commit.samples {
            if !sample.p95_ms.is_finite() {
                tracing::warn!(store = location, api, p95_ms = sample.p95_ms, "not storing a non-finite latency sample");
                continue;
            }
            insert.execute(params![api, sample.at, sample.p95_ms])?;
        }
    }

    // AUTOINCREMENT: the largest sequence ever used plus one, even if rows were deleted.
    tx.execute(
        "INSERT INTO ticks (at, record, created) VALUES (?1, ?2, ?3)",
        params![at, to_json("tick record", &commit.record)?, wall_clock()],
    )?;
    let sequence = tx.last_insert_rowid() as u64;
    Ok(Committed { sequence, expiry_audit })
}

/// Whether `pin` is the stored pin (an unreadable row is not).
fn still_stored(tx: &Transaction<'_>, pin: &vocabulary::Pin) -> Result<bool, Fail> {
    Ok(matches!(stored_pin(tx)?, Some(Ok(stored)) if stored == *pin))
}
