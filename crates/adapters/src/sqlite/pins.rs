//! `PinStore`: the single pin row and its audit trail, each change in one transaction with
//! its audit record (INV-05).

use super::{Fail, SqliteStore};
use crate::stored_json::{parse_json, to_json};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::pins::{AuditAction, AuditRecord, PinStore};
use vocabulary::{Instant, Pin};

const PIN_ADVICE: &str = "set a new pin or clear it to replace the row";

/// The stored pin row: `None` when there is none, `Some(Err)` when it does not parse.
pub(super) fn stored_pin(conn: &Connection) -> Result<Option<Result<Pin, Fail>>, Fail> {
    let text: Option<String> = conn.query_row("SELECT pin FROM pin WHERE id = 1", [], |row| row.get(0)).optional()?;
    Ok(text.map(|text| parse_json("pin", "the pin row", &text, PIN_ADVICE).map_err(Fail::from)))
}

/// The pin before a change, for its audit record. An unparsable row is replaced anyway (so
/// that an operator can repair it), audited as `before: None`, and logged.
fn pin_before_change(conn: &Connection, location: &str) -> Result<(bool, Option<Pin>), Fail> {
    match stored_pin(conn)? {
        None => Ok((false, None)),
        Some(Ok(pin)) => Ok((true, Some(pin))),
        Some(Err(fail)) => {
            tracing::warn!(store = location, error = ?fail, "replacing an unreadable pin row; its audit record has no `before`");
            Ok((true, None))
        }
    }
}

/// Appends one audit record and returns it with its id.
pub(super) fn append_audit(
    conn: &Connection,
    at: Instant,
    actor: &str,
    action: AuditAction,
    before: Option<&Pin>,
    after: Option<&Pin>,
    refusal: Option<&str>,
) -> Result<AuditRecord, Fail> {
    let before_json = before.map(|p| to_json("pin", p)).transpose()?;
    let after_json = after.map(|p| to_json("pin", p)).transpose()?;
    conn.execute(
        "INSERT INTO pin_audit (at, actor, action, before, after, refusal) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![at, actor, action.name(), before_json, after_json, refusal],
    )?;
    Ok(AuditRecord {
        id: conn.last_insert_rowid(),
        at,
        actor: actor.to_string(),
        action,
        before: before.cloned(),
        after: after.cloned(),
        refusal: refusal.map(str::to_string),
    })
}

/// One `pin_audit` row as read.
struct AuditRow {
    id: i64,
    at: Instant,
    actor: String,
    action: String,
    before: Option<String>,
    after: Option<String>,
    refusal: Option<String>,
}

impl AuditRow {
    fn parse(self) -> Result<AuditRecord, Fail> {
        const WHAT: &str = "the pin audit";
        let which = format!("audit record {}", self.id);
        let advice = "the record is kept as written; read it with the sqlite3 shell";
        let action = AuditAction::parse(&self.action)
            .ok_or_else(|| Fail::corrupt(WHAT, format!("{which} has the unknown action {:?}; {advice}", self.action)))?;
        let pin =
            |text: Option<String>| -> Result<Option<Pin>, Fail> { Ok(text.map(|t| parse_json(WHAT, &which, &t, advice)).transpose()?) };
        Ok(AuditRecord {
            id: self.id,
            at: self.at,
            actor: self.actor,
            action,
            before: pin(self.before)?,
            after: pin(self.after)?,
            refusal: self.refusal,
        })
    }
}

#[async_trait::async_trait]
impl PinStore for SqliteStore {
    async fn current_pin(&self) -> Result<Option<Pin>, StoreError> {
        self.run("reading the pin", |conn| stored_pin(conn)?.transpose()).await
    }

    async fn replace_pin(&self, pin: &Pin, actor: &str, at: Instant) -> Result<AuditRecord, StoreError> {
        let (pin, actor) = (pin.clone(), actor.to_string());
        let location = self.shared.location.clone();
        self.run("replacing the pin", move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (existed, before) = pin_before_change(&tx, &location)?;
            tx.execute(
                "INSERT INTO pin (id, pin, set_at) VALUES (1, ?1, ?2)
                 ON CONFLICT (id) DO UPDATE SET pin = excluded.pin, set_at = excluded.set_at",
                params![to_json("pin", &pin)?, at],
            )?;
            let action = if existed { AuditAction::Replace } else { AuditAction::Set };
            let record = append_audit(&tx, at, &actor, action, before.as_ref(), Some(&pin), None)?;
            tx.commit()?;
            Ok(record)
        })
        .await
    }

    async fn clear_pin(&self, actor: &str, at: Instant) -> Result<Option<AuditRecord>, StoreError> {
        let actor = actor.to_string();
        let location = self.shared.location.clone();
        self.run("clearing the pin", move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (existed, before) = pin_before_change(&tx, &location)?;
            if !existed {
                return Ok(None); // nothing written; the transaction rolls back empty
            }
            tx.execute("DELETE FROM pin WHERE id = 1", [])?;
            let record = append_audit(&tx, at, &actor, AuditAction::Clear, before.as_ref(), None, None)?;
            tx.commit()?;
            Ok(Some(record))
        })
        .await
    }

    async fn record_refusal(&self, actor: &str, refusal: &str, at: Instant) -> Result<AuditRecord, StoreError> {
        let (actor, refusal) = (actor.to_string(), refusal.to_string());
        self.run("recording a refused pin change", move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            // The pin as it stayed; an unreadable row is shown as none (the refusal still counts).
            let pin = stored_pin(&tx)?.and_then(Result::ok);
            let record = append_audit(&tx, at, &actor, AuditAction::Refused, pin.as_ref(), None, Some(&refusal))?;
            tx.commit()?;
            Ok(record)
        })
        .await
    }

    async fn audit(&self, limit: u32, before: Option<i64>) -> Result<Vec<AuditRecord>, StoreError> {
        self.run("reading the pin audit", move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT id, at, actor, action, before, after, refusal FROM pin_audit
                 WHERE id < ?1 ORDER BY id DESC LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![before.unwrap_or(i64::MAX), limit], |row| {
                Ok(AuditRow {
                    id: row.get(0)?,
                    at: row.get(1)?,
                    actor: row.get(2)?,
                    action: row.get(3)?,
                    before: row.get(4)?,
                    after: row.get(5)?,
                    refusal: row.get(6)?,
                })
            })?;
            rows.map(|row| row.map_err(Fail::from).and_then(AuditRow::parse)).collect()
        })
        .await
    }
}
