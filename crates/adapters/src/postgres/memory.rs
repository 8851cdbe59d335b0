//! `MemoryStore`: the memory row and tick records, and the one transaction
//! that ends each tick (docs/behaviour.md §11.4).

use super::pins::{append_audit, lock_pin};
use super::{Fail, PostgresStore};
use crate::stored_json::{parse_json, to_json};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::memory::{ChannelOutcome, Committed, MemoryStore, TickCommit, TickRecord};
use sentinel_core::ports::pins::AuditAction;
use tokio_postgres::Client;
use tokio_postgres::types::Type;
use vocabulary::Memory;

#[async_trait::async_trait]
impl MemoryStore for PostgresStore {
    async fn load_memory(&self) -> Result<Option<Memory>, StoreError> {
        self.run_statement("reading the memory", |c| {
            Box::pin(async move {
                let row = c.query_typed_opt("SELECT memory::text FROM memory WHERE id = 1", &[]).await?;
                let Some(row) = row else { return Ok(None) };
                let text: String = row.try_get(0)?;
                Ok(Some(parse_json("memory", "the memory row", &text, "the tick starts fresh and its commit replaces the row")?))
            })
        })
        .await
    }

    async fn commit_tick(&self, commit: &TickCommit) -> Result<Committed, StoreError> {
        let commit = commit.clone();
        let location = self.shared.location.clone();
        self.run("committing the tick", move |c| Box::pin(async move { write_tick(c, &commit, &location).await })).await
    }

    async fn record_publication(&self, sequence: u64, outcomes: &[ChannelOutcome]) -> Result<(), StoreError> {
        const DOING: &str = "recording the publication";
        let json =
            to_json("publication outcomes", &outcomes).map_err(|fail| Fail::from(fail).into_store_error(&self.shared.location, DOING))?;
        // Setting the same outcome twice is harmless: one statement, repeated on a new
        // connection if the old one turns out dead.
        self.run_statement(DOING, move |c| {
            let json = json.clone();
            Box::pin(async move {
                let changed = match i64::try_from(sequence) {
                    Ok(seq) => {
                        c.execute_typed(
                            "UPDATE ticks SET publication = $1::text::json WHERE sequence = $2",
                            &[(&json, Type::TEXT), (&seq, Type::INT8)],
                        )
                        .await?
                    }
                    Err(_) => 0,
                };
                if changed == 0 {
                    return Err(Fail::corrupt(
                        "a tick record",
                        format!("there is no tick {sequence} to record its publication on; was the database reset mid-tick?"),
                    ));
                }
                Ok(())
            })
        })
        .await
    }

    async fn recent_ticks(&self, limit: u32) -> Result<Vec<(u64, TickRecord)>, StoreError> {
        self.run_statement("reading the tick records", move |c| {
            Box::pin(async move {
                let rows = c
                    .query_typed(
                        "SELECT sequence, record::text FROM ticks ORDER BY sequence DESC LIMIT $1",
                        &[(&i64::from(limit), Type::INT8)],
                    )
                    .await?;
                rows.into_iter()
                    .map(|row| {
                        let sequence: i64 = row.try_get(0)?;
                        let text: String = row.try_get(1)?;
                        let record = parse_json(
                            "a tick record",
                            format_args!("tick {sequence}"),
                            &text,
                            "it is kept as written; read it with psql",
                        )?;
                        Ok((sequence as u64, record))
                    })
                    .collect()
            })
        })
        .await
    }
}

/// Everything one tick writes, inside the caller's transaction.
async fn write_tick(c: &Client, commit: &TickCommit, location: &str) -> Result<Committed, Fail> {
    let at = commit.record.at;
    // The largest sequence ever handed out plus one (the counter row is locked until the
    // commit). Should the row have been deleted by hand, it restarts above the stored ticks.
    let sequence: i64 = c
        .query_one(
            "INSERT INTO tick_counter (id, last) SELECT 1, COALESCE(MAX(sequence), 0) + 1 FROM ticks
             ON CONFLICT (id) DO UPDATE SET last = tick_counter.last + 1
             RETURNING last",
            &[],
        )
        .await?
        .try_get(0)?;
    // The fence. The counter row stays locked until the commit, so a tick committed by another
    // session is either visible here (read committed: this statement starts after its commit) or
    // waits for this one to end.
    if let Some(follows) = commit.follows {
        let newest: i64 = c.query_one("SELECT COALESCE(MAX(sequence), 0) FROM ticks", &[]).await?.try_get(0)?;
        let newest = newest as u64;
        if newest != follows {
            return Err(Fail::Superseded { follows, newest });
        }
    }
    c.execute(
        "INSERT INTO memory (id, memory, updated_at) VALUES (1, $1::text::json, $2)
         ON CONFLICT (id) DO UPDATE SET memory = excluded.memory, updated_at = excluded.updated_at",
        &[&to_json("memory", &commit.memory)?, &at],
    )
    .await?;

    let expiry_audit = match &commit.expired_pin {
        // Only the pin that expired: one set meanwhile by an operator stays. The pin row stays
        // locked until the commit, so no change can slip in between the check and the delete.
        Some(expired) => match lock_pin(c).await? {
            Some(Ok(stored)) if stored == *expired => {
                c.execute("UPDATE pin SET pin = NULL, set_at = NULL WHERE id = 1", &[]).await?;
                Some(append_audit(c, at, &commit.expired_by, AuditAction::Expire, Some(expired), None, None).await?)
            }
            _ => None,
        },
        None => None,
    };

    let finite: Vec<_> = commit
        .samples
        .iter()
        .filter(|(api, sample)| {
            let ok = sample.p95_ms.is_finite();
            if !ok {
                tracing::warn!(store = location, api, p95_ms = sample.p95_ms, "not storing a non-finite latency sample");
            }
            ok
        })
        .collect();
    if !finite.is_empty() {
        let insert = c
            .prepare(
                "INSERT INTO latency_samples (api, at, p95_ms) VALUES ($1, $2, $3)
                 ON CONFLICT (api, at) DO UPDATE SET p95_ms = excluded.p95_ms",
            )
            .await?;
        for (api, sample) in finite {
            c.execute(&insert, &[api, &sample.at, &sample.p95_ms]).await?;
        }
    }

    c.execute(
        "INSERT INTO ticks (sequence, at, record) VALUES ($1, $2, $3::text::json)",
        &[&sequence, &at, &to_json("tick record", &commit.record)?],
    )
    .await?;
    let sequence = u64::try_from(sequence).map_err(|_| {
        Fail::corrupt("the tick counter", format!("it handed out {sequence}; set tick_counter.last to MAX(ticks.sequence)"))
    })?;
    Ok(Committed { sequence, expiry_audit })
}
