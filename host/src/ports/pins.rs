//! The staff pin and its audit trail. Every change appends a record of the pin before and
//! after, the actor and the time, in the same transaction as the change (INV-05).

use super::StoreError;
use serde::{Deserialize, Serialize};
use vocabulary::{Instant, Pin};

/// What a change did. (Also the API's schema for it.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AuditAction {
    Set,
    Replace,
    Clear,
    Expire,
}

impl AuditAction {
    pub const ALL: [AuditAction; 4] = [AuditAction::Set, AuditAction::Replace, AuditAction::Clear, AuditAction::Expire];

    /// The name stores keep and APIs show: the serde name.
    pub fn name(self) -> &'static str {
        match self {
            AuditAction::Set => "set",
            AuditAction::Replace => "replace",
            AuditAction::Clear => "clear",
            AuditAction::Expire => "expire",
        }
    }

    pub fn parse(name: &str) -> Option<AuditAction> {
        AuditAction::ALL.into_iter().find(|a| a.name() == name)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Grows with every record; pages go by it.
    pub id: i64,
    pub at: Instant,
    pub actor: String,
    pub action: AuditAction,
    pub before: Option<Pin>,
    pub after: Option<Pin>,
}

#[async_trait::async_trait]
pub trait PinStore: Send + Sync {
    /// The stored pin, expired or not.
    async fn current_pin(&self) -> Result<Option<Pin>, StoreError>;
    /// Sets or replaces the pin (already validated) and appends the audit record atomically.
    async fn replace_pin(&self, pin: &Pin, actor: &str, at: Instant) -> Result<AuditRecord, StoreError>;
    /// Removes the pin with its audit record; `Ok(None)` when there was none (nothing written).
    async fn clear_pin(&self, actor: &str, at: Instant) -> Result<Option<AuditRecord>, StoreError>;
    /// Audit records, newest first, with ids below `before` when given.
    async fn audit(&self, limit: u32, before: Option<i64>) -> Result<Vec<AuditRecord>, StoreError>;
}
