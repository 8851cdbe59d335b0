//! Who may call what: 401 for no valid token (one answer, whatever was wrong), 403 for a
//! viewer changing the pin, public probes and documents.

use super::*;
use axum::http::Method;

/// Every operation under /v1, as (method, path, body).
fn v1_operations(h: &Harness) -> Vec<(Method, &'static str, Option<String>)> {
    vec![
        (Method::GET, "/v1/state", None),
        (Method::GET, "/v1/pin", None),
        (Method::PUT, "/v1/pin", Some(h.pin_body("critical", "load test", 3600))),
        (Method::DELETE, "/v1/pin", None),
        (Method::GET, "/v1/pin/audit", None),
    ]
}

fn with_authorization(method: Method, path: &str, authorization: Option<&str>, body: Option<&str>) -> Request<Body> {
    let mut b = Request::builder().method(method).uri(path);
    if let Some(value) = authorization {
        b = b.header(header::AUTHORIZATION, value);
    }
    match body {
        Some(body) => b.header(header::CONTENT_TYPE, "application/json").body(Body::from(body.to_string())).unwrap(),
        None => b.body(Body::empty()).unwrap(),
    }
}

#[tokio::test]
async fn no_valid_token_is_401_and_never_says_what_was_wrong() {
    let h = Harness::new();
    h.set_pin("emergency", "incident 4411", 3600).await.ok_json(StatusCode::OK);
    let before = h.stored_pin().await;
    let wrong = [
        None,
        Some("".to_string()),
        Some("Bearer".to_string()),
        Some("Bearer ".to_string()),
        Some("Basic YWxpY2U6c2VjcmV0".to_string()),
        Some("Bearer not-a-token".to_string()),
        Some(format!("Bearer {STAFF}x")),
        Some(format!("Token {STAFF}")),
    ];
    let mut details = std::collections::BTreeSet::new();
    for (method, path, body) in v1_operations(&h) {
        for authorization in &wrong {
            let reply = h.call(with_authorization(method.clone(), path, authorization.as_deref(), body.as_deref())).await;
            let p = reply.problem(StatusCode::UNAUTHORIZED);
            assert_eq!(reply.headers[header::WWW_AUTHENTICATE], "Bearer realm=\"capacity-sentinel\"");
            details.insert(p["detail"].as_str().unwrap().to_string());
            assert!(!reply.text().contains(STAFF), "the token is never echoed");
        }
    }
    assert_eq!(details.len(), 1, "one answer for every wrong token: {details:?}");
    assert_eq!(h.stored_pin().await, before, "nothing changed");
}

#[tokio::test]
async fn the_scheme_is_case_insensitive() {
    let h = Harness::new();
    let reply = h.call(with_authorization(Method::GET, "/v1/pin", Some(&format!("bearer {STAFF}")), None)).await;
    reply.ok_json(StatusCode::OK);
}

#[tokio::test]
async fn a_viewer_reads_but_may_not_change_the_pin() {
    let h = Harness::new();
    h.set_pin("emergency", "incident 4411", 3600).await.ok_json(StatusCode::OK);
    let before = h.stored_pin().await;

    h.call(get("/v1/pin", Some(VIEWER))).await.ok_json(StatusCode::OK);
    h.call(get("/v1/pin/audit", Some(VIEWER))).await.ok_json(StatusCode::OK);
    // No tick yet: nothing published, but the viewer got past authentication.
    h.call(get("/v1/state", Some(VIEWER))).await.problem(StatusCode::NOT_FOUND);

    let put = h.call(put_json("/v1/pin", Some(VIEWER), &h.pin_body("normal", "viewer tries", 60))).await;
    let p = put.problem(StatusCode::FORBIDDEN);
    assert!(p["detail"].as_str().unwrap().contains("staff"), "{p}");
    h.call(delete("/v1/pin", Some(VIEWER))).await.problem(StatusCode::FORBIDDEN);
    assert_eq!(h.stored_pin().await, before, "a viewer changes nothing");
}

#[tokio::test]
async fn authentication_comes_before_the_body() {
    let h = Harness::new();
    // A bad body with no token: 401, not 400; with a viewer token: 403, not 400.
    h.call(put_json("/v1/pin", None, "{not json")).await.problem(StatusCode::UNAUTHORIZED);
    h.call(put_json("/v1/pin", Some(VIEWER), "{not json")).await.problem(StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn refusals_are_counted() {
    let h = Harness::new();
    h.call(get("/v1/pin", None)).await.problem(StatusCode::UNAUTHORIZED);
    h.call(delete("/v1/pin", Some(VIEWER))).await.problem(StatusCode::FORBIDDEN);
    let metrics = h.call(get("/metrics", None)).await.text();
    assert!(metrics.contains("sentinel_api_auth_failures_total{status=\"401\"} 1"), "{metrics}");
    assert!(metrics.contains("sentinel_api_auth_failures_total{status=\"403\"} 1"), "{metrics}");
}

#[tokio::test]
async fn probes_metrics_and_the_document_need_no_token() {
    let h = Harness::new();
    for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
        let reply = h.call(get(path, None)).await;
        assert_eq!(reply.status, StatusCode::OK, "{path}: {}", reply.text());
    }
}

#[tokio::test]
async fn with_no_tokens_configured_every_v1_call_is_401() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(SqliteStore::open(&dir.path().join("s.db")).unwrap());
    let state = ApiState::new(store.clone(), store, policy(), &[]).unwrap();
    let reply = call(router(state), get("/v1/pin", Some(STAFF))).await;
    reply.problem(StatusCode::UNAUTHORIZED);
}
