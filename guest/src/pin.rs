//! docs/behaviour.md §6: the one validation every pin entry point uses.

use vocabulary::{Instant, Pin, PinError, PinField, PinRequest, ProtectionState, Thresholds};

/// Accepts the request as a pin, or names the first field that is wrong (in the order state,
/// reason, expires_at, actor).
pub fn validate(request: &PinRequest, now: Instant, t: &Thresholds) -> Result<Pin, PinError> {
    let refuse = |field, message: String| Err(PinError { field, message });
    let Some(state) = ProtectionState::parse(request.state.trim()) else {
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
