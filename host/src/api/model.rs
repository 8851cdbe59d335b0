//! The API's JSON, one type per document, each with its OpenAPI schema derived from it.
//! Times are RFC 3339 in UTC; states and causes are named as in docs/behaviour.md §2 and §5.7.

use crate::bindings::{Instant, Pin};
use crate::instants::format_rfc3339;
use crate::policy::names;
use crate::ports::pins::{AuditAction, AuditRecord};
use crate::ports::publisher::StateDocument;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A protection state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StateName {
    Normal,
    Constrained,
    Critical,
    Emergency,
}

/// Why the state is what it is (docs/behaviour.md §5.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CauseName {
    Pinned,
    SignalHeld,
    SignalLostRelease,
    Escalate,
    Emergency,
    Recover,
    SpacingWait,
    RestoreThrottlesFirst,
    Fresh,
    Hold,
}

/// The capacity factor of each workload class, 0 to 1.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FactorsView {
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub bulk: f64,
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub heavy: f64,
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub write: f64,
    #[schema(minimum = 0.0, maximum = 1.0)]
    pub read: f64,
}

/// The policy that decided.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PolicyView {
    pub name: String,
    pub version: String,
    /// sha256 of the policy module.
    pub digest: String,
}

/// The last published document (docs/behaviour.md §7), as the cache and parameter channels got it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StateView {
    #[schema(value_type = StateName)]
    pub state: String,
    pub factors: FactorsView,
    #[schema(format = DateTime)]
    pub decided_at: String,
    pub policy: PolicyView,
    /// Whether a pin decided the state.
    pub pinned: bool,
    /// When the deciding pin expires; null when not pinned.
    #[schema(format = DateTime, required)]
    pub pin_expires_at: Option<String>,
    #[schema(value_type = CauseName)]
    pub cause: String,
    /// Grows by one each tick.
    #[schema(minimum = 0)]
    pub sequence: u64,
}

impl From<StateDocument> for StateView {
    fn from(d: StateDocument) -> StateView {
        StateView {
            state: d.state,
            factors: FactorsView { bulk: d.factors.bulk, heavy: d.factors.heavy, write: d.factors.write, read: d.factors.read },
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
    #[schema(value_type = StateName)]
    pub state: String,
    pub reason: String,
    #[schema(format = DateTime)]
    pub expires_at: String,
    /// Who set it (the name of the caller's token).
    pub actor: String,
}

impl From<&Pin> for PinView {
    fn from(p: &Pin) -> PinView {
        PinView {
            state: names::state(p.state).into(),
            reason: p.reason.clone(),
            expires_at: format_rfc3339(p.expires_at),
            actor: p.actor.clone(),
        }
    }
}

/// The stored pin, with whether it is still in force.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CurrentPin {
    #[serde(flatten)]
    #[schema(inline)]
    pub pin: PinView,
    /// False once `expires_at` has passed (the next tick removes it).
    pub active: bool,
}

/// The pin, or null when there is none.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PinStatus {
    #[schema(required)]
    pub pin: Option<CurrentPin>,
}

impl PinStatus {
    pub fn new(pin: Option<&Pin>, now: Instant) -> PinStatus {
        PinStatus { pin: pin.map(|p| CurrentPin { pin: p.into(), active: p.expires_at > now }) }
    }
}

/// A pin to set (it replaces any pin). The actor is the caller; it is not part of the body.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PinBody {
    #[schema(value_type = StateName)]
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
    #[schema(format = DateTime)]
    pub at: String,
    pub actor: String,
    pub action: AuditAction,
    /// The pin before; null when there was none.
    #[schema(required)]
    pub before: Option<PinView>,
    /// The pin after; null when it was removed.
    #[schema(required)]
    pub after: Option<PinView>,
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
        }
    }
}

/// One page of the audit trail, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AuditPage {
    pub entries: Vec<AuditEntry>,
    /// Pass as `before` for the next (older) page; null on the last page.
    #[schema(required, minimum = 1)]
    pub next_before: Option<i64>,
}

/// The process is up.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Health {
    #[schema(example = "ok")]
    pub status: String,
}

/// Ready: the store answers and the policy is loaded.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Readiness {
    #[schema(example = "ready")]
    pub status: String,
    /// `name version` of the loaded policy.
    pub policy: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bindings::Cause;

    /// Fails to compile when the WIT gains a cause, so that the schema's list is updated.
    fn _every_cause_is_listed(c: Cause) {
        match c {
            Cause::Pinned
            | Cause::SignalHeld
            | Cause::SignalLostRelease
            | Cause::Escalate
            | Cause::Emergency
            | Cause::Recover
            | Cause::SpacingWait
            | Cause::RestoreThrottlesFirst
            | Cause::Fresh
            | Cause::Hold => {}
        }
    }

    #[test]
    fn every_cause_has_its_schema_name() {
        for c in [
            Cause::Pinned,
            Cause::SignalHeld,
            Cause::SignalLostRelease,
            Cause::Escalate,
            Cause::Emergency,
            Cause::Recover,
            Cause::SpacingWait,
            Cause::RestoreThrottlesFirst,
            Cause::Fresh,
            Cause::Hold,
        ] {
            let name = names::cause(c);
            let parsed: CauseName = serde_json::from_value(serde_json::json!(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(serde_json::to_value(parsed).unwrap(), serde_json::json!(name));
        }
        for a in AuditAction::ALL {
            assert_eq!(serde_json::to_value(a).unwrap(), serde_json::json!(a.name()));
        }
        for s in names::STATES {
            let _: StateName = serde_json::from_value(serde_json::json!(names::state(s))).unwrap();
        }
    }
}
