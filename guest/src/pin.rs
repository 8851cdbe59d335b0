//! docs/behaviour.md §6: the one validation every pin entry point uses.

use crate::model::{Instant, Pin, State};
use crate::thresholds::Thresholds;

/// A pin as an operator typed it.
#[derive(Debug, Clone, PartialEq)]
pub struct PinRequest {
    pub state: String,
    pub reason: String,
    pub expires_at: Instant,
    pub actor: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PinField {
    State,
    Reason,
    ExpiresAt,
    Actor,
}

impl PinField {
    pub fn name(self) -> &'static str {
        match self {
            PinField::State => "state",
            PinField::Reason => "reason",
            PinField::ExpiresAt => "expires_at",
            PinField::Actor => "actor",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PinError {
    pub field: PinField,
    pub message: String,
}

impl core::fmt::Display for PinError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.field.name(), self.message)
    }
}

/// Accepts the request as a pin, or names the first field that is wrong (in the order state,
/// reason, expires_at, actor).
pub fn validate(request: &PinRequest, now: Instant, t: &Thresholds) -> Result<Pin, PinError> {
    let refuse = |field, message: String| Err(PinError { field, message });
    let Some(state) = State::parse(request.state.trim()) else {
        return refuse(
            PinField::State,
            format!("must be one of normal, constrained, critical, emergency (got `{}`)", truncate(&request.state, 40)),
        );
    };
    let reason = request.reason.trim();
    if reason.is_empty() {
        return refuse(PinField::Reason, "must not be blank".into());
    }
    let chars = request.reason.chars().count();
    if chars > t.pin_reason_max_chars as usize {
        return refuse(PinField::Reason, format!("must be at most {} characters (got {chars})", t.pin_reason_max_chars));
    }
    if request.expires_at <= now {
        return refuse(PinField::ExpiresAt, "must be in the future".into());
    }
    if request.expires_at.saturating_sub(now) > i64::from(t.pin_max_ahead_s) {
        return refuse(PinField::ExpiresAt, format!("must be at most {} ahead", hours(t.pin_max_ahead_s)));
    }
    let actor = request.actor.trim();
    if actor.is_empty() {
        return refuse(PinField::Actor, "must not be blank".into());
    }
    Ok(Pin { state, reason: request.reason.clone(), expires_at: request.expires_at, actor: actor.to_string() })
}

fn hours(seconds: u32) -> String {
    if seconds.is_multiple_of(3600) {
        let h = seconds / 3600;
        if h == 1 { "1 hour".into() } else { format!("{h} hours") }
    } else {
        format!("{seconds} seconds")
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max { s.to_string() } else { s.chars().take(max).collect::<String>() + "…" }
}
