//! The staff pin and its audit trail. Every change appends a record of the pin before and
//! after, the actor and the time, in the same transaction as the change (INV-05).

use super::StoreError;
use serde::{Deserialize, Serialize};
use vocabulary::{Instant, Pin};

/// What a change did. (Also the API's schema for it.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AuditAction {
    /// A pin was set where there was none.
    Set,
    /// A pin was set in place of the one before.
    Replace,
    /// A person cleared the pin.
    Clear,
    /// A tick removed the pin once it had expired (actor `sentinel (expiry)`).
    Expire,
    /// An attempt through the API that was refused (a viewer's token, an invalid pin): nothing
    /// changed; `refusal` says what was asked and why it was refused.
    Refused,
}

impl AuditAction {
    /// Every action, in the enum's order: what `parse` looks names up in.
    pub const ALL: [AuditAction; 5] =
        [AuditAction::Set, AuditAction::Replace, AuditAction::Clear, AuditAction::Expire, AuditAction::Refused];

    /// The name stores keep and APIs show: the serde name.
    pub fn name(self) -> &'static str {
        match self {
            AuditAction::Set => "set",
            AuditAction::Replace => "replace",
            AuditAction::Clear => "clear",
            AuditAction::Expire => "expire",
            AuditAction::Refused => "refused",
        }
    }

    /// The action a stored name stands for (the reverse of `name`); `None` for a name this
    /// sentinel does not know.
    pub fn parse(name: &str) -> Option<AuditAction> {
        AuditAction::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// One entry of the pin audit trail: who changed the pin (or tried to), when, how, and the pin
/// before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Grows with every record; pages go by it.
    pub id: i64,
    /// When the change was made (Unix seconds): for an `expire`, the minute of the tick that
    /// removed the pin.
    pub at: Instant,
    /// Who made it: the CLI's `--actor`, the API caller's token name (or `oidc:<sub>`), or
    /// `sentinel (expiry)`.
    pub actor: String,
    /// What the change did.
    pub action: AuditAction,
    /// The whole pin before the change; `None` when there was none (or its row was unreadable).
    pub before: Option<Pin>,
    /// The whole pin after it; `None` after a clear, an expiry or a refusal.
    pub after: Option<Pin>,
    /// What was asked and why it was refused (`refused` records only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

/// The longest refusal text kept in a record (characters); longer ones end in `…`.
pub const REFUSAL_MAX_CHARS: usize = 400;

/// `text` cut to [`REFUSAL_MAX_CHARS`].
pub(crate) fn bounded_refusal(text: &str) -> String {
    if text.chars().count() <= REFUSAL_MAX_CHARS {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(REFUSAL_MAX_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// The store's side of the staff pin: at most one pin, and an audit trail that only grows.
/// Every change and its audit record are written in one transaction (INV-05).
#[async_trait::async_trait]
pub trait PinStore: Send + Sync {
    /// The stored pin, expired or not.
    async fn current_pin(&self) -> Result<Option<Pin>, StoreError>;
    /// Sets or replaces the pin (already validated) and appends the audit record atomically.
    async fn replace_pin(&self, pin: &Pin, actor: &str, at: Instant) -> Result<AuditRecord, StoreError>;
    /// Removes the pin with its audit record; `Ok(None)` when there was none (nothing written).
    async fn clear_pin(&self, actor: &str, at: Instant) -> Result<Option<AuditRecord>, StoreError>;
    /// Appends a `refused` record (the pin unchanged, shown as `before`); `refusal` is already
    /// bounded and free of control characters.
    async fn record_refusal(&self, actor: &str, refusal: &str, at: Instant) -> Result<AuditRecord, StoreError>;
    /// Audit records, newest first, with ids below `before` when given.
    async fn audit(&self, limit: u32, before: Option<i64>) -> Result<Vec<AuditRecord>, StoreError>;
}
