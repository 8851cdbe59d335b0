//! docs/behaviour.md §6: pin validation. A pin names a state, a nonblank reason of at most 500
//! characters, an expiry in the future and at most 24 h ahead, and a nonblank actor; an error
//! names the field (Display `field: message`).

mod common;

use capacity_guest::pin::validate;
use common::{HOUR, T, T0};
use vocabulary::ProtectionState;
use vocabulary::{PinError, PinField, PinRequest};

fn request() -> PinRequest {
    PinRequest { state: "emergency".into(), reason: "incident 4411".into(), expires_at: T0 + 2 * HOUR, actor: "ops@example.com".into() }
}

fn refused(r: &PinRequest) -> PinError {
    validate(r, T0, &T).expect_err("the request is invalid")
}

#[test]
fn a_valid_request_becomes_the_pin() {
    let pin = validate(&request(), T0, &T).unwrap();
    assert_eq!(pin.state, ProtectionState::Emergency);
    assert_eq!(pin.reason, "incident 4411");
    assert_eq!(pin.expires_at, T0 + 2 * HOUR);
    assert_eq!(pin.actor, "ops@example.com");
}

#[test]
fn every_state_name_is_accepted() {
    for s in ProtectionState::ALL {
        let r = PinRequest { state: s.name().into(), ..request() };
        assert_eq!(validate(&r, T0, &T).unwrap().state, s);
    }
}

#[test]
fn surrounding_whitespace_is_trimmed_from_state_and_actor() {
    let r = PinRequest { state: " critical\n".into(), actor: "  ops@example.com ".into(), ..request() };
    let pin = validate(&r, T0, &T).unwrap();
    assert_eq!(pin.state, ProtectionState::Critical);
    assert_eq!(pin.actor, "ops@example.com");
}

#[test]
fn an_unknown_state_is_refused_naming_the_state_field() {
    for bad in ["panic", "", "Emergency", "normal,critical"] {
        let e = refused(&PinRequest { state: bad.into(), ..request() });
        assert_eq!(e.field, PinField::State, "{bad:?}");
        assert!(e.to_string().starts_with("state: "), "{e}");
    }
}

#[test]
fn a_blank_reason_is_refused() {
    for bad in ["", "   ", "\t\n"] {
        let e = refused(&PinRequest { reason: bad.into(), ..request() });
        assert_eq!(e.field, PinField::Reason);
        assert_eq!(e.to_string(), "reason: must not be blank");
    }
}

#[test]
fn a_reason_of_500_characters_is_accepted_and_501_refused() {
    let ok = PinRequest { reason: "r".repeat(500), ..request() };
    assert!(validate(&ok, T0, &T).is_ok());
    let e = refused(&PinRequest { reason: "r".repeat(501), ..request() });
    assert_eq!(e.field, PinField::Reason);
    assert_eq!(e.to_string(), "reason: must be at most 500 characters (got 501)");
}

#[test]
fn the_reason_limit_counts_characters_not_bytes() {
    let ok = PinRequest { reason: "é".repeat(500), ..request() };
    assert!(validate(&ok, T0, &T).is_ok(), "500 characters, 1000 bytes");
    let e = refused(&PinRequest { reason: "é".repeat(501), ..request() });
    assert_eq!(e.field, PinField::Reason);
}

#[test]
fn an_expiry_now_or_in_the_past_is_refused() {
    for at in [T0, T0 - 1, T0 - HOUR, i64::MIN] {
        let e = refused(&PinRequest { expires_at: at, ..request() });
        assert_eq!(e.field, PinField::ExpiresAt);
        assert_eq!(e.to_string(), "expires_at: must be in the future");
    }
}

#[test]
fn an_expiry_at_most_24_hours_ahead_is_accepted() {
    for at in [T0 + 1, T0 + 24 * HOUR] {
        assert!(validate(&PinRequest { expires_at: at, ..request() }, T0, &T).is_ok());
    }
}

#[test]
fn an_expiry_beyond_24_hours_is_refused_naming_the_field() {
    for at in [T0 + 24 * HOUR + 1, T0 + 48 * HOUR, i64::MAX] {
        let e = refused(&PinRequest { expires_at: at, ..request() });
        assert_eq!(e.field, PinField::ExpiresAt);
        assert_eq!(e.to_string(), "expires_at: must be at most 24 hours ahead");
    }
}

#[test]
fn a_blank_actor_is_refused() {
    for bad in ["", "  ", "\n"] {
        let e = refused(&PinRequest { actor: bad.into(), ..request() });
        assert_eq!(e.field, PinField::Actor);
        assert_eq!(e.to_string(), "actor: must not be blank");
    }
}

#[test]
fn the_first_wrong_field_is_named_in_order_state_reason_expires_at_actor() {
    let all_wrong = PinRequest { state: "x".into(), reason: " ".into(), expires_at: T0, actor: "".into() };
    assert_eq!(refused(&all_wrong).field, PinField::State);
    let r = PinRequest { state: "normal".into(), ..all_wrong.clone() };
    assert_eq!(refused(&r).field, PinField::Reason);
    let r = PinRequest { reason: "why".into(), ..r };
    assert_eq!(refused(&r).field, PinField::ExpiresAt);
    let r = PinRequest { expires_at: T0 + HOUR, ..r };
    assert_eq!(refused(&r).field, PinField::Actor);
}

#[test]
fn field_names_match_the_documented_ones() {
    let names: Vec<&str> = [PinField::State, PinField::Reason, PinField::ExpiresAt, PinField::Actor].iter().map(|f| f.name()).collect();
    assert_eq!(names, vec!["state", "reason", "expires_at", "actor"]);
}

#[test]
fn extreme_times_are_refused_without_panicking() {
    let r = PinRequest { expires_at: i64::MAX, ..request() };
    assert_eq!(validate(&r, i64::MIN, &T).unwrap_err().field, PinField::ExpiresAt);
    let r = PinRequest { expires_at: i64::MIN, ..request() };
    assert_eq!(validate(&r, i64::MAX, &T).unwrap_err().field, PinField::ExpiresAt);
}

#[test]
fn a_long_unknown_state_is_quoted_truncated_in_the_message() {
    let e = refused(&PinRequest { state: "x".repeat(1000), ..request() });
    assert_eq!(e.field, PinField::State);
    assert!(e.message.chars().count() < 200, "{}", e.message);
}
