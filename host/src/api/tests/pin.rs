//! `GET/PUT/DELETE /v1/pin`: set, replace, clear, and every way a pin is refused (the stored
//! pin untouched each time).

use super::*;
use vocabulary::ProtectionState;

#[tokio::test]
async fn no_pin_reads_as_null() {
    let h = Harness::new();
    let body = h.call(get("/v1/pin", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(body, serde_json::json!({ "pin": null }));
}

#[tokio::test]
async fn set_then_replace_then_clear() {
    let h = Harness::new();
    let set = h.set_pin("emergency", "incident 4411", 7200).await.ok_json(StatusCode::OK);
    assert_eq!(set["action"], "set");
    assert_eq!(set["actor"], "alice", "the actor is the token's name");
    assert_eq!(set["at"], format_rfc3339(h.now()));
    assert_eq!(set["before"], Value::Null);
    let after = serde_json::json!({ "state": "emergency", "reason": "incident 4411", "expires_at": h.ahead(7200), "actor": "alice" });
    assert_eq!(set["after"], after);

    let shown = h.call(get("/v1/pin", Some(VIEWER))).await.ok_json(StatusCode::OK);
    let mut current = after.clone();
    current["active"] = Value::Bool(true);
    assert_eq!(shown["pin"], current);
    let stored = h.stored_pin().await.unwrap();
    assert_eq!((stored.state, stored.actor.as_str(), stored.expires_at), (ProtectionState::Emergency, "alice", h.now() + 7200));

    let replaced = h.set_pin("critical", "incident 4411, easing", 3600).await.ok_json(StatusCode::OK);
    assert_eq!(replaced["action"], "replace");
    assert_eq!(replaced["before"], after);
    assert_eq!(replaced["after"]["state"], "critical");

    let cleared = h.call(delete("/v1/pin", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(cleared["action"], "clear");
    assert_eq!(cleared["actor"], "alice");
    assert_eq!(cleared["before"], replaced["after"]);
    assert_eq!(cleared["after"], Value::Null);
    assert_eq!(h.stored_pin().await, None);

    let again = h.call(delete("/v1/pin", Some(STAFF))).await;
    assert_eq!(again.status, StatusCode::NO_CONTENT, "{}", again.text());
    assert!(again.body.is_empty());
}

#[tokio::test]
async fn an_expired_pin_reads_as_inactive() {
    let h = Harness::new();
    h.set_pin("critical", "short", 60).await.ok_json(StatusCode::OK);
    h.now.fetch_add(61, std::sync::atomic::Ordering::SeqCst);
    let shown = h.call(get("/v1/pin", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(shown["pin"]["active"], false);
}

/// Sets a pin, sends `body`, and checks the refusal and that the pin is untouched.
async fn refused(h: &Harness, body: &str, status: StatusCode) -> Value {
    if h.stored_pin().await.is_none() {
        h.set_pin("constrained", "the pin that must survive", 3600).await.ok_json(StatusCode::OK);
    }
    let before = h.stored_pin().await;
    let before_pin = before.clone();
    let audit_before = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    let p = h.call(put_json("/v1/pin", Some(STAFF), body)).await.problem(status);
    assert_eq!(h.stored_pin().await, before, "a refused pin leaves the stored one untouched: {body}");
    let audit_after = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    let (after, before) = (audit_after["entries"].as_array().unwrap(), audit_before["entries"].as_array().unwrap());
    assert_eq!(&after[1..], &before[..], "a refused pin adds one record and changes none: {body}");
    let record = &after[0];
    assert_eq!((record["action"].as_str(), record["actor"].as_str()), (Some("refused"), Some("alice")), "{record}");
    assert_eq!(record["after"], Value::Null, "{record}");
    let stayed = before_pin.as_ref().map(|p| serde_json::to_value(crate::api::model::PinView::from(p)).unwrap());
    assert_eq!(record["before"], stayed.unwrap_or(Value::Null), "the pin as it stayed: {record}");
    let why = record["refusal"].as_str().unwrap();
    assert!(why.contains(p["detail"].as_str().unwrap()) && why.contains(&format!("({})", status.as_u16())), "{record} for {p}");
    p
}

#[tokio::test]
async fn the_policy_refuses_naming_the_field() {
    let h = Harness::new();
    let cases = [
        (h.pin_body("critical", "too far", 24 * 3600 + 1), "expires_at", "expires_at: must be at most 24 hours ahead"),
        (h.pin_body("critical", "past", -60), "expires_at", "expires_at: must be in the future"),
        (h.pin_body("critical", "now", 0), "expires_at", "expires_at: must be in the future"),
        (h.pin_body("panic", "no such state", 60), "state", "state: must be one of"),
        (h.pin_body("critical", "   ", 60), "reason", "reason: must not be blank"),
        (h.pin_body("critical", &"x".repeat(501), 60), "reason", "reason: must be at most 500 characters"),
        (
            serde_json::json!({ "state": "critical", "reason": "r", "expires_at": "tomorrow" }).to_string(),
            "expires_at",
            "expires_at: expected an RFC 3339 time",
        ),
        (
            serde_json::json!({ "state": "critical", "reason": "r", "expires_at": "2026-10-20 16:00" }).to_string(),
            "expires_at",
            "expires_at: expected an RFC 3339 time",
        ),
    ];
    for (body, field, detail) in cases {
        let p = refused(&h, &body, StatusCode::UNPROCESSABLE_ENTITY).await;
        assert_eq!(p["field"], field, "{p}");
        assert!(p["detail"].as_str().unwrap().starts_with(detail), "{p}");
        assert_eq!(p["type"], "urn:capacity-sentinel:problem:pin-refused");
    }
    // The boundaries the policy allows.
    h.set_pin("critical", "exactly 24 hours", 24 * 3600).await.ok_json(StatusCode::OK);
    h.set_pin("critical", &"x".repeat(500), 1).await.ok_json(StatusCode::OK);
}

#[tokio::test]
async fn a_body_that_is_not_the_documented_json_is_400() {
    let h = Harness::new();
    let expires = h.ahead(3600);
    let cases = [
        (serde_json::json!({ "state": "critical", "reason": "r", "expires_at": expires, "actor": "mallory" }).to_string(), "actor"),
        (serde_json::json!({ "state": "critical", "reason": "r", "expires_at": expires, "extra": 1 }).to_string(), "extra"),
        (serde_json::json!({ "state": "critical", "expires_at": expires }).to_string(), "reason"),
        (serde_json::json!({ "state": 3, "reason": "r", "expires_at": expires }).to_string(), "invalid type"),
        ("{\"state\": \"critical\",".to_string(), "EOF"),
        ("[]".to_string(), "must be a JSON object"),
        (serde_json::json!(["critical", "r", expires]).to_string(), "must be a JSON object"),
        ("\"critical\"".to_string(), "must be a JSON object"),
        ("".to_string(), "must be a JSON object"),
        ("{\"state\": \"critical\", \"state\": \"normal\", \"reason\": \"r\", \"expires_at\": \"x\"}".to_string(), "duplicate field"),
    ];
    for (body, mentions) in cases {
        let p = refused(&h, &body, StatusCode::BAD_REQUEST).await;
        assert!(p["detail"].as_str().unwrap().contains(mentions), "{body}: {p}");
    }
}

#[tokio::test]
async fn the_actor_is_never_taken_from_the_body() {
    let h = Harness::new();
    let body = serde_json::json!({ "state": "critical", "reason": "r", "expires_at": h.ahead(60), "actor": "mallory" });
    let p = h.call(put_json("/v1/pin", Some(STAFF), &body.to_string())).await.problem(StatusCode::BAD_REQUEST);
    assert!(p["detail"].as_str().unwrap().contains("unknown field `actor`"), "{p}");
    assert_eq!(h.stored_pin().await, None);
}

#[tokio::test]
async fn a_body_that_is_not_json_is_415() {
    let h = Harness::new();
    let body = h.pin_body("critical", "r", 60);
    for content_type in [None, Some("text/plain"), Some("application/x-www-form-urlencoded")] {
        let mut b = request(Method::PUT, "/v1/pin", Some(STAFF));
        if let Some(ct) = content_type {
            b = b.header(header::CONTENT_TYPE, ct);
        }
        let reply = h.call(b.body(Body::from(body.clone())).unwrap()).await;
        reply.problem(StatusCode::UNSUPPORTED_MEDIA_TYPE);
    }
    assert_eq!(h.stored_pin().await, None);
    // Parameters of the media type are fine.
    let reply = h
        .call(
            request(Method::PUT, "/v1/pin", Some(STAFF))
                .header(header::CONTENT_TYPE, "application/json; charset=utf-8")
                .body(Body::from(body))
                .unwrap(),
        )
        .await;
    reply.ok_json(StatusCode::OK);
}

#[tokio::test]
async fn a_body_over_16_kib_is_413() {
    let h = Harness::new();
    h.set_pin("constrained", "the pin that must survive", 3600).await.ok_json(StatusCode::OK);
    let before = h.stored_pin().await;
    // Valid JSON, over the limit by one byte.
    let pad = 16 * 1024 + 1 - h.pin_body("critical", "", 60).len();
    let big = h.pin_body("critical", &" ".repeat(pad), 60);
    assert_eq!(big.len(), 16 * 1024 + 1);
    let put = || request(Method::PUT, "/v1/pin", Some(STAFF)).header(header::CONTENT_TYPE, "application/json");
    let bodies = [
        // Announced by Content-Length.
        put().header(header::CONTENT_LENGTH, big.len()).body(Body::from(big.clone())).unwrap(),
        // No Content-Length, a body of known size.
        put().body(Body::from(big.clone())).unwrap(),
        // No Content-Length, a body of unknown size (as chunked transfer gives).
        put().body(Body::new(http_body_util::Full::new(axum::body::Bytes::from(big.clone())).map_frame(|f| f))).unwrap(),
        // A Content-Length that lies small does not help.
        put().header(header::CONTENT_LENGTH, 10).body(Body::from(big.clone())).unwrap(),
    ];
    for request in bodies {
        let p = h.call(request).await.problem(StatusCode::PAYLOAD_TOO_LARGE);
        assert!(p["detail"].as_str().unwrap().contains("16 KiB"), "{p}");
        assert_eq!(h.stored_pin().await, before);
    }

    // At the limit exactly: read in full, then judged by the policy (for the reason's length).
    let pad = 16 * 1024 - h.pin_body("critical", "x", 60).len();
    let at_limit = h.pin_body("critical", &format!("x{}", " ".repeat(pad)), 60);
    assert_eq!(at_limit.len(), 16 * 1024);
    let p = h.call(put_json("/v1/pin", Some(STAFF), &at_limit)).await.problem(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(p["field"], "reason", "{p}");
    assert_eq!(h.stored_pin().await, before);
}

#[tokio::test]
async fn a_pin_set_through_the_api_is_the_one_the_cli_service_sees() {
    let h = Harness::new();
    h.set_pin("emergency", "incident 4411", 3600).await.ok_json(StatusCode::OK);
    let service = sentinel_core::pin_service::PinService::new(h.store.clone(), policy());
    let pin = service.show().await.unwrap().unwrap();
    assert_eq!((pin.state, pin.actor.as_str()), (ProtectionState::Emergency, "alice"));
    let cleared = service.clear("bob (cli)", h.now()).await.unwrap().unwrap();
    assert_eq!(cleared.before, Some(pin));
    let shown = h.call(get("/v1/pin", Some(STAFF))).await.ok_json(StatusCode::OK);
    assert_eq!(shown["pin"], Value::Null);
}

/// Security review, finding 5: text that would forge a log line or read otherwise than it is
/// stored is refused by the pin service the CLI uses too: 422 naming the field, nothing stored.
#[tokio::test]
async fn a_control_or_bidi_character_in_the_reason_is_refused_naming_the_field() {
    let h = Harness::new();
    let cases = [
        ("ok\n2026-01-01T00:00:00Z  INFO fake line", "U+000A at character 3"),
        ("abc\u{202E}fed", "U+202E at character 4"),
        ("carriage\rreturn", "U+000D"),
        ("\u{2067}isolated\u{2069}", "U+2067"),
        ("c1 control \u{9b}", "U+009B"),
    ];
    for (reason, which) in cases {
        let p = refused(&h, &h.pin_body("critical", reason, 60), StatusCode::UNPROCESSABLE_ENTITY).await;
        assert_eq!(p["field"], "reason", "{p}");
        assert_eq!(p["type"], "urn:capacity-sentinel:problem:pin-refused");
        let detail = p["detail"].as_str().unwrap();
        assert!(detail.starts_with("reason: must not contain control characters"), "{p}");
        assert!(detail.contains(which) && !detail.contains(reason), "{p}");
    }
    // What the policy refuses first is still named first (a tab alone is a blank reason).
    let p = refused(&h, &h.pin_body("critical", "\t", 60), StatusCode::UNPROCESSABLE_ENTITY).await;
    assert!(p["detail"].as_str().unwrap().starts_with("reason: must not be blank"), "{p}");
}

/// The actor is the token's name, which the config refuses with such characters; should one
/// get through, the pin service still refuses it, for a set and a clear alike.
#[tokio::test]
async fn a_token_name_with_a_newline_is_refused_as_the_actor() {
    let h = Harness::new();
    h.set_pin("constrained", "the pin that must survive", 3600).await.ok_json(StatusCode::OK);
    let before = h.stored_pin().await;
    let token = "token-of-a-forged-name";
    let forged =
        ApiToken { name: "mallory\n2026-01-01T00:00:00Z  INFO fake".into(), role: ApiRole::Staff, sha256: Sha256::digest(token).into() };
    let clock = h.now.clone();
    let state =
        ApiState::new(h.store.clone(), h.store.clone(), policy(), &[forged]).unwrap().with_clock(move || clock.load(Ordering::SeqCst));
    let put = call(router(state.clone()), put_json("/v1/pin", Some(token), &h.pin_body("critical", "r", 60))).await;
    let p = put.problem(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(p["field"], "actor", "{p}");
    assert!(p["detail"].as_str().unwrap().starts_with("actor: must not contain control characters"), "{p}");
    let p = call(router(state), delete("/v1/pin", Some(token))).await.problem(StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(p["field"], "actor", "{p}");
    assert_eq!(h.stored_pin().await, before);
    // Both attempts are audited as refused, the name escaped onto one line.
    let audit = h.call(get("/v1/pin/audit", Some(STAFF))).await.ok_json(StatusCode::OK);
    let entries = audit["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3, "{audit}");
    for refused in &entries[..2] {
        assert_eq!(refused["action"], "refused", "{refused}");
        assert_eq!(refused["actor"], "mallory\\n2026-01-01T00:00:00Z  INFO fake", "{refused}");
    }
}
