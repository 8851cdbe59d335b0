//! The one service layer for staff pins, shared by the CLI and the API: validation through the
//! policy's exported function (one source of truth), then the store's atomic change + audit.
//! The host adds one check of its own before anything is stored: no control or bidirectional
//! formatting character in the reason or the actor (they would forge log lines). Invalid input
//! changes nothing (INV-04).

use crate::policy::PolicyError;
use crate::policy::active::SharedPolicy;
use crate::ports::StoreError;
use crate::ports::pins::{AuditRecord, PinStore, bounded_refusal};
use crate::user_text;
use std::sync::Arc;
use vocabulary::{Instant, Pin, PinRequest};

/// Why a pin could not be set, cleared, shown or audited.
#[derive(Debug, thiserror::Error)]
pub enum PinServiceError {
    /// The pin was refused; the message names the field (`expires_at: must be ...`).
    #[error("{field}: {message}")]
    Invalid {
        /// The request field refused: `state`, `reason`, `expires_at` or `actor`.
        field: &'static str,
        /// Why, shown escaped on one line (the policy may quote what was typed).
        message: String,
    },
    /// The policy failed while validating the pin (a trap, a timeout...); nothing was stored.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The pin store could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Sets, clears and shows the staff pin that overrides the decided protection state, and reads its
/// audit trail. Cheap to clone: clones share the store and the policy.
#[derive(Clone)]
pub struct PinService {
    pins: Arc<dyn PinStore>,
    policy: SharedPolicy,
}

impl PinService {
    /// A service storing pins in `pins` and validating them with `policy`, the policy the tick decides
    /// with.
    pub fn new(pins: Arc<dyn PinStore>, policy: SharedPolicy) -> PinService {
        PinService { pins, policy }
    }

    /// Validates and stores a pin (replacing any), returning its audit record. The policy's
    /// checks come first (a whitespace reason is blank, not a tab), then the host's: no control
    /// or bidirectional formatting character in the reason or the actor ([`user_text`]).
    pub async fn set(&self, request: PinRequest, now: Instant) -> Result<AuditRecord, PinServiceError> {
        let verdict = self.policy.lock().validate_pin(&request, now)?;
        // The policy may quote what was typed (an unknown state): shown escaped, on one line.
        let pin =
            verdict.map_err(|e| PinServiceError::Invalid { field: e.field.name(), message: user_text::escape(&e.message).into_owned() })?;
        plain_text("reason", &request.reason)?;
        plain_text("actor", &request.actor)?;
        Ok(self.pins.replace_pin(&pin, &pin.actor, now).await?)
    }

    /// Removes the pin; `None` when there was none.
    pub async fn clear(&self, actor: &str, now: Instant) -> Result<Option<AuditRecord>, PinServiceError> {
        if actor.trim().is_empty() {
            return Err(PinServiceError::Invalid { field: "actor", message: "must not be blank".into() });
        }
        plain_text("actor", actor)?;
        Ok(self.pins.clear_pin(actor.trim(), now).await?)
    }

    /// Records a refused attempt to change the pin (`what` was asked by `actor`, refused for
    /// `why`): nothing changes but the audit. Control characters are shown escaped and the
    /// text is bounded, so what a caller typed can neither forge a line nor fill the store.
    pub async fn record_refusal(&self, actor: &str, what: &str, why: &str, now: Instant) -> Result<AuditRecord, PinServiceError> {
        let text = bounded_refusal(&user_text::escape(&format!("{what}: {why}")));
        Ok(self.pins.record_refusal(&user_text::escape(actor), &text, now).await?)
    }

    /// The stored pin, expired or not; `None` when there is none.
    pub async fn show(&self) -> Result<Option<Pin>, PinServiceError> {
        Ok(self.pins.current_pin().await?)
    }

    /// Up to `limit` audit records of pin changes and refusals, newest first; with `before`, only those
    /// whose id is below it (for paging).
    pub async fn audit(&self, limit: u32, before: Option<i64>) -> Result<Vec<AuditRecord>, PinServiceError> {
        Ok(self.pins.audit(limit, before).await?)
    }
}

/// Refuses `text` with a control or bidirectional formatting character, naming `field`.
fn plain_text(field: &'static str, text: &str) -> Result<(), PinServiceError> {
    user_text::check(text).map_err(|message| PinServiceError::Invalid { field, message })
}
