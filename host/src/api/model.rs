//! The API's JSON, one type per document, each with its OpenAPI schema derived from it.
//! Times are RFC 3339 in UTC; states and causes are named as in docs/behaviour.md §2 and §5.7.

use sentinel_core::instants::format_rfc3339;
use sentinel_core::ports::pins::{AuditAction, AuditRecord};
use sentinel_core::ports::publisher::StateDocument;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use vocabulary::{Cause, Factors, Instant, Pin, ProtectionState};

/// The policy that decided.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PolicyView {
    /// The policy's name (`capacity-policy`).
    pub name: String,
    /// The policy's semantic version (`1.0.0`).
    pub version: String,
    /// sha256 of the policy module.
    pub digest: String,
}

/// The last published document (docs/behaviour.md §7), as the cache and parameter channels got it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StateView {
    /// The protection state decided: `normal`, `constrained`, `critical` or `emergency`.
    pub state: ProtectionState,
    /// The workload factors of that state (`bulk`, `heavy`, `write`, `read`), each from 0 to 1.
    pub factors: Factors,
    /// The minute the tick decided for, RFC 3339 in UTC.
    #[schema(format = DateTime)]
    pub decided_at: String,
    /// The policy version that decided.
    pub policy: PolicyView,
    /// Whether a pin decided the state.
    pub pinned: bool,
    /// When the deciding pin expires; null when not pinned.
    #[schema(format = DateTime, required)]
    pub pin_expires_at: Option<String>,
    /// Why this state was decided: the first cause that applied (docs/behaviour.md §5.7), such as
    /// `escalate`, `pinned` or `hold`.
    pub cause: Cause,
    /// Grows by one each tick.
    #[schema(minimum = 0)]
    pub sequence: u64,
}

impl From<StateDocument> for StateView {
    fn from(d: StateDocument) -> StateView {
        StateView {
            state: d.state,
            factors: d.factors,
            decided_at: d.decided_at,
            policy: PolicyView { name: d.policy.name, version: d.policy.version, digest: d.policy.digest },
            pinned: d.pinned,
            pin_expires_at: d.pin_expires_at,
            cause: d.cause,
            sequence: d.sequence,
        }
    }
}

/// A pin as stored.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PinView {
    /// The state the pin holds the sentinel in while it is in force.
    pub state: ProtectionState,
    /// Why it was set, as the person who set it wrote it.
    pub reason: String,
    /// When the pin ends, RFC 3339 in UTC: from then on it no longer decides.
    #[schema(format = DateTime)]
    pub expires_at: String,
    /// Who set it (the name of the caller's token).
    pub actor: String,
}

impl From<&Pin> for PinView {
    fn from(p: &Pin) -> PinView {
        PinView { state: p.state, reason: p.reason.clone(), expires_at: format_rfc3339(p.expires_at), actor: p.actor.clone() }
    }
}

/// The stored pin, with whether it is still in force.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CurrentPin {
    /// The stored pin's fields (`state`, `reason`, `expires_at`, `actor`), inline in this object.
    #[serde(flatten)]
    #[schema(inline)]
    pub pin: PinView,
    /// False once `expires_at` has passed (the next tick removes it).
    pub active: bool,
}

/// The pin, or null when there is none.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PinStatus {
    /// The stored pin with whether it is in force; null when no pin is stored.
    #[schema(required)]
    pub pin: Option<CurrentPin>,
}

impl PinStatus {
    /// The status of the stored `pin` (none: no pin) at `now` (unix seconds): active while its
    /// `expires_at` is after `now`.
    pub fn new(pin: Option<&Pin>, now: Instant) -> PinStatus {
        PinStatus { pin: pin.map(|p| CurrentPin { pin: p.into(), active: p.expires_at > now }) }
    }
}

/// A pin to set (it replaces any pin). The actor is the caller; it is not part of the body.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PinBody {
    /// Read as text so that an unknown state is refused by the policy's pin rule, naming the field.
    #[schema(value_type = ProtectionState)]
    pub state: String,
    /// Why; not blank, without control characters (no line break or tab) or bidirectional
    /// formatting characters (the longest the policy allows is given by maxLength).
    #[schema(min_length = 1)]
    pub reason: String,
    /// When the pin ends: in the future and at most the policy's limit ahead (24 hours in v1).
    #[schema(format = DateTime)]
    pub expires_at: String,
}

/// One audit record: the pin before and after a change, who made it and when.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AuditEntry {
    /// Grows with every record; `before` pages by it.
    #[schema(minimum = 1)]
    pub id: i64,
    /// When it happened (the change, the expiry or the refused attempt), RFC 3339 in UTC.
    #[schema(format = DateTime)]
    pub at: String,
    /// Who did it: the API caller's name (`oidc:<subject>` for an OpenID Connect token), the CLI's
    /// `--actor`, or `sentinel (expiry)` when a tick removed an expired pin.
    pub actor: String,
    /// What happened: `set`, `replace`, `clear`, `expire`, or `refused` (an API attempt that changed
    /// nothing).
    pub action: AuditAction,
    /// The pin before; null when there was none.
    #[schema(required)]
    pub before: Option<PinView>,
    /// The pin after; null when it was removed (and for a refused attempt).
    #[schema(required)]
    pub after: Option<PinView>,
    /// For a `refused` attempt: what was asked and why it was refused; null otherwise.
    #[schema(required)]
    pub refusal: Option<String>,
}

impl From<&AuditRecord> for AuditEntry {
    fn from(r: &AuditRecord) -> AuditEntry {
        AuditEntry {
            id: r.id,
            at: format_rfc3339(r.at),
            actor: r.actor.clone(),
            action: r.action,
            before: r.before.as_ref().map(PinView::from),
            after: r.after.as_ref().map(PinView::from),
            refusal: r.refusal.clone(),
        }
    }
}

/// One page of the audit trail, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AuditPage {
    /// This page's records, newest (highest `id`) first: at most `limit`; empty when there are none.
    pub entries: Vec<AuditEntry>,
    /// Pass as `before` for the next (older) page; null on the last page.
    #[schema(required, minimum = 1)]
    pub next_before: Option<i64>,
}

/// The process is up.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Health {
    /// Always `ok` while the process answers.
    #[schema(example = "ok")]
    pub status: String,
}

/// Ready: the store answers and the policy is loaded.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Readiness {
    /// Always `ready`: when the store or the policy does not answer, the answer is a 503 problem.
    #[schema(example = "ready")]
    pub status: String,
    /// `name version` of the loaded policy.
    pub policy: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_actions_are_written_by_their_names() {
        for a in AuditAction::ALL {
            assert_eq!(serde_json::to_value(a).unwrap(), serde_json::json!(a.name()));
        }
    }
}
