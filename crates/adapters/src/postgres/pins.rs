//! `PinStore`: the single pin row and its audit trail, each change in one transaction with
//! its audit record (INV-05). Every change locks the pin row first (`SELECT ... FOR UPDATE`),
//! so changes from several processes happen one after the other: each sees the pin the
//! previous one left, and the audit records follow in that order.

use super::{Fail, PostgresStore};
use crate::stored_json::{parse_json, to_json};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::pins::{AuditAction, AuditRecord, PinStore};
use tokio_postgres::{Client, Row};
use vocabulary::{Instant, Pin};

const PIN_ADVICE: &str = "set a new pin or clear it to replace the row";

/// A stored pin's JSON: `None` when there is none, `Some(Err)` when it does not parse.
fn parse_pin(text: Option<String>) -> Option<Result<Pin, Fail>> {
    text.map(|text| parse_json("pin", "the pin row", &text, PIN_ADVICE).map_err(Fail::from))
}

/// Locks the pin row until the transaction ends and returns the stored pin. The row is created
/// by the first migration; should it have been deleted by hand, it is put back first.
pub(super) async fn lock_pin(c: &Client) -> Result<Option<Result<Pin, Fail>>, Fail> {
    const LOCK: &str = "SELECT pin::text FROM pin WHERE id = 1 FOR UPDATE";
    let row = match c.query_opt(LOCK, &[]).await? {
        Some(row) => row,
        None => {
            // Waits for a concurrent insert of the same row, if any, then locks whichever won.
            c.execute("INSERT INTO pin (id) VALUES (1) ON CONFLICT (id) DO NOTHING", &[]).await?;
            c.query_one(LOCK, &[]).await?
        }
    };
    Ok(parse_pin(row.try_get(0)?))
}

/// The pin before a change, for its audit record, with the row locked. An unparsable row is
/// replaced anyway (so that an operator can repair it), audited as `before: None`, and logged.
async fn pin_before_change(c: &Client, location: &str) -> Result<(bool, Option<Pin>), Fail> {
    match lock_pin(c).await? {
        None => Ok((false, None)),
        Some(Ok(pin)) => Ok((true, Some(pin))),
        Some(Err(fail)) => {
            tracing::warn!(store = location, error = ?fail, "replacing an unreadable pin row; its audit record has no `before`");
            Ok((true, None))
        }
    }
}

/// Appends one audit record and returns it with its id: the largest id plus one. Every caller
/// holds the pin row lock ([`lock_pin`]), so appends happen one at a time and each sees the one
/// before. Not the column's `bigserial` default: a sequence value is spent even when its
/// transaction rolls back (a sentinel killed mid-commit, a failed tick commit), which would
/// leave a gap in the audit ids that reads like a deleted record.
pub(super) async fn append_audit(
    c: &Client,
    at: Instant,
    actor: &str,
    action: AuditAction,
    before: Option<&Pin>,
    after: Option<&Pin>,
    refusal: Option<&str>,
) -> Result<AuditRecord, Fail> {
    let before_json = before.map(|p| to_json("pin", p)).transpose()?;
    let after_json = after.map(|p| to_json("pin", p)).transpose()?;
    let id: i64 = c
        .query_one(
            "INSERT INTO pin_audit (id, at, actor, action, before, after, refusal)
             SELECT COALESCE(MAX(id), 0) + 1, $1, $2, $3, $4::text::json, $5::text::json, $6 FROM pin_audit
             RETURNING id",
            &[&at, &actor, &action.name(), &before_json, &after_json, &refusal],
        )
        .await?
        .try_get(0)?;
    Ok(AuditRecord {
        id,
        at,
        actor: actor.to_string(),
        action,
        before: before.cloned(),
        after: after.cloned(),
        refusal: refusal.map(str::to_string),
    })
}

/// One `pin_audit` row as read (`id, at, actor, action, before::text, after::text, refusal`).
fn parse_audit(row: &Row) -> Result<AuditRecord, Fail> {
    const WHAT: &str = "the pin audit";
    let id: i64 = row.try_get(0)?;
    let action: String = row.try_get(3)?;
    let which = format!("audit record {id}");
    let advice = "the record is kept as written; read it with psql";
    let action =
        AuditAction::parse(&action).ok_or_else(|| Fail::corrupt(WHAT, format!("{which} has the unknown action {action:?}; {advice}")))?;
    let pin = |text: Option<String>| -> Result<Option<Pin>, Fail> { Ok(text.map(|t| parse_json(WHAT, &which, &t, advice)).transpose()?) };
    Ok(AuditRecord {
        id,
        at: row.try_get(1)?,
        actor: row.try_get(2)?,
        action,
        before: pin(row.try_get(4)?)?,
        after: pin(row.try_get(5)?)?,
        refusal: row.try_get(6)?,
    })
}

#[async_trait::async_trait]
impl PinStore for PostgresStore {
    async fn current_pin(&self) -> Result<Option<Pin>, StoreError> {
        self.run_statement("reading the pin", |c| {
            Box::pin(async move {
                let row = c.query_typed_opt("SELECT pin::text FROM pin WHERE id = 1", &[]).await?;
                match row {
                    Some(row) => parse_pin(row.try_get(0)?).transpose(),
                    None => Ok(None),
                }
            })
        })
        .await
    }

    async fn replace_pin(&self, pin: &Pin, actor: &str, at: Instant) -> Result<AuditRecord, StoreError> {
        let (pin, actor) = (pin.clone(), actor.to_string());
        let location = self.shared.location.clone();
        self.run("replacing the pin", move |c| {
            Box::pin(async move {
                let (existed, before) = pin_before_change(c, &location).await?;
                c.execute("UPDATE pin SET pin = $1::text::json, set_at = $2 WHERE id = 1", &[&to_json("pin", &pin)?, &at]).await?;
                let action = if existed { AuditAction::Replace } else { AuditAction::Set };
                append_audit(c, at, &actor, action, before.as_ref(), Some(&pin), None).await
            })
        })
        .await
    }

    async fn clear_pin(&self, actor: &str, at: Instant) -> Result<Option<AuditRecord>, StoreError> {
        let actor = actor.to_string();
        let location = self.shared.location.clone();
        self.run("clearing the pin", move |c| {
            Box::pin(async move {
                let (existed, before) = pin_before_change(c, &location).await?;
                if !existed {
                    return Ok(None); // nothing written
                }
                c.execute("UPDATE pin SET pin = NULL, set_at = NULL WHERE id = 1", &[]).await?;
                append_audit(c, at, &actor, AuditAction::Clear, before.as_ref(), None, None).await.map(Some)
            })
        })
        .await
    }

    async fn record_refusal(&self, actor: &str, refusal: &str, at: Instant) -> Result<AuditRecord, StoreError> {
        let (actor, refusal) = (actor.to_string(), refusal.to_string());
        self.run("recording a refused pin change", move |c| {
            Box::pin(async move {
                // The row lock keeps the audit ids in the order of the changes.
                let pin = lock_pin(c).await?.and_then(Result::ok);
                append_audit(c, at, &actor, AuditAction::Refused, pin.as_ref(), None, Some(&refusal)).await
            })
        })
        .await
    }

    async fn audit(&self, limit: u32, before: Option<i64>) -> Result<Vec<AuditRecord>, StoreError> {
        self.run_statement("reading the pin audit", move |c| {
            Box::pin(async move {
                let rows = c
                    .query(
                        "SELECT id, at, actor, action, before::text, after::text, refusal FROM pin_audit
                         WHERE id < $1 ORDER BY id DESC LIMIT $2",
                        &[&before.unwrap_or(i64::MAX), &i64::from(limit)],
                    )
                    .await?;
                rows.iter().map(parse_audit).collect()
            })
        })
        .await
    }
}
