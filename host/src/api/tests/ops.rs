//! Probes, metrics, the OpenAPI document, unknown paths and methods, and a store that is down.

use super::*;
use sentinel_core::ports::StoreError;
use sentinel_core::ports::memory::{ChannelOutcome, Committed, MemoryStore, TickCommit, TickRecord};
use sentinel_core::ports::pins::{AuditRecord, PinStore};
use vocabulary::Pin;

#[tokio::test]
async fn healthz_and_readyz() {
    let h = Harness::new();
    assert_eq!(h.call(get("/healthz", None)).await.ok_json(StatusCode::OK), serde_json::json!({ "status": "ok" }));
    let ready = h.call(get("/readyz", None)).await.ok_json(StatusCode::OK);
    assert_eq!(ready["status"], "ready");
    assert!(ready["policy"].as_str().unwrap().ends_with(" 1.0.0"), "{ready}");
}

#[tokio::test]
async fn metrics_count_requests_by_route_and_status() {
    let h = Harness::new();
    h.call(get("/healthz", None)).await;
    h.set_pin("critical", "r", 60).await.ok_json(StatusCode::OK);
    h.call(get("/no/such/page", None)).await;
    let reply = h.call(get("/metrics", None)).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(reply.content_type().starts_with("application/openmetrics-text"), "{}", reply.content_type());
    let text = reply.text();
    for line in [
        "sentinel_api_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"} 1",
        "sentinel_api_requests_total{method=\"PUT\",route=\"/v1/pin\",status=\"200\"} 1",
        "sentinel_api_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"} 1",
        "sentinel_api_pin_changes_total{action=\"set\"} 1",
    ] {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    assert!(text.trim_end().ends_with("# EOF"));
}

#[tokio::test]
async fn unknown_paths_and_methods_are_problems() {
    let h = Harness::new();
    h.call(get("/v2/pin", Some(STAFF))).await.problem(StatusCode::NOT_FOUND);
    for (method, path, allow) in [
        (Method::POST, "/v1/pin", "GET,HEAD,PUT,DELETE"),
        (Method::PATCH, "/v1/state", "GET,HEAD"),
        (Method::DELETE, "/healthz", "GET,HEAD"),
    ] {
        let reply = h.call(request(method, path, Some(STAFF)).body(Body::empty()).unwrap()).await;
        reply.problem(StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(reply.headers[header::ALLOW], allow, "{path}");
    }
}

#[tokio::test]
async fn the_openapi_document_is_generated_and_complete() {
    let h = Harness::new();
    let doc = h.call(get("/openapi.json", None)).await.ok_json(StatusCode::OK);
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/v1/state", &["get"][..]),
        ("/v1/pin", &["get", "put", "delete"]),
        ("/v1/pin/audit", &["get"]),
        ("/metrics", &["get"]),
        ("/healthz", &["get"]),
        ("/readyz", &["get"]),
        ("/openapi.json", &["get"]),
        ("/v1/session", &["get"]),
        ("/v1/overview", &["get"]),
        ("/v1/timeline.svg", &["get"]),
        ("/v1/policies/shadow/scorecard", &["get"]),
    ] {
        for m in methods {
            assert!(paths[path][m].is_object(), "{m} {path} is documented");
        }
    }
    assert_eq!(paths.len(), 11, "nothing undocumented or extra: {:?}", paths.keys());
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"],
        serde_json::json!({
            "type": "http", "scheme": "bearer",
            "description": "An API token from `[api] tokens` (configured there by its SHA-256)"
        })
    );
    let put = &paths["/v1/pin"]["put"];
    for status in ["200", "400", "401", "403", "413", "415", "422", "500", "503"] {
        assert!(put["responses"][status].is_object(), "PUT /v1/pin documents {status}");
    }
    assert_eq!(put["security"], serde_json::json!([{ "bearer": [] }]));
    assert!(paths["/healthz"]["get"].get("security").is_none(), "probes are public");
    let problem = &doc["components"]["responses"]["PinRefused"]["content"]["application/problem+json"]["schema"];
    assert_eq!(problem["$ref"], "#/components/schemas/Problem");
    let schema = &doc["components"]["schemas"];
    assert_eq!(schema["Problem"]["required"], serde_json::json!(["type", "title", "status", "detail"]));
    let body = &schema["PinBody"];
    assert_eq!(body["additionalProperties"], false, "unknown fields are refused");
    assert_eq!(body["required"], serde_json::json!(["state", "reason", "expires_at"]));
    assert_eq!(body["properties"]["reason"]["maxLength"], 500, "the policy's limit");
    assert!(body["properties"]["expires_at"]["description"].as_str().unwrap().contains("24 hours"));
    assert!(body["properties"].get("actor").is_none(), "the actor is not a body field");
}

/// A store that cannot be reached.
struct Down;

fn down() -> StoreError {
    StoreError::Unavailable { location: "db.example:5432/sentinel".into(), message: "connection refused".into() }
}

#[async_trait::async_trait]
impl PinStore for Down {
    async fn current_pin(&self) -> Result<Option<Pin>, StoreError> {
        Err(down())
    }
    async fn replace_pin(&self, _: &Pin, _: &str, _: Instant) -> Result<AuditRecord, StoreError> {
        Err(down())
    }
    async fn clear_pin(&self, _: &str, _: Instant) -> Result<Option<AuditRecord>, StoreError> {
        Err(down())
    }
    async fn record_refusal(&self, _: &str, _: &str, _: Instant) -> Result<AuditRecord, StoreError> {
        Err(down())
    }
    async fn audit(&self, _: u32, _: Option<i64>) -> Result<Vec<AuditRecord>, StoreError> {
        Err(down())
    }
}

#[async_trait::async_trait]
impl MemoryStore for Down {
    async fn load_memory(&self) -> Result<Option<vocabulary::Memory>, StoreError> {
        Err(down())
    }
    async fn commit_tick(&self, _: &TickCommit) -> Result<Committed, StoreError> {
        Err(down())
    }
    async fn record_publication(&self, _: u64, _: &[ChannelOutcome]) -> Result<(), StoreError> {
        Err(down())
    }
    async fn recent_ticks(&self, _: u32) -> Result<Vec<(u64, TickRecord)>, StoreError> {
        Err(down())
    }
}

#[tokio::test]
async fn a_store_that_is_down_is_503_and_not_ready() {
    let down = Arc::new(Down);
    let state = ApiState::new(down.clone(), down, policy(), &tokens()).unwrap().with_clock(t0);
    let router = router(state);
    let p = call(router.clone(), get("/readyz", None)).await.problem(StatusCode::SERVICE_UNAVAILABLE);
    // The probe is unauthenticated: it says the store does not answer, never where it is (the
    // second security review, finding 9: the store's host, port and database were in it).
    let detail = p["detail"].as_str().unwrap();
    assert!(detail.contains("the store does not answer") && !detail.contains("db.example"), "{p}");
    call(router.clone(), get("/v1/state", Some(VIEWER))).await.problem(StatusCode::SERVICE_UNAVAILABLE);
    call(router.clone(), get("/v1/pin", Some(VIEWER))).await.problem(StatusCode::SERVICE_UNAVAILABLE);
    call(router.clone(), get("/v1/pin/audit", Some(VIEWER))).await.problem(StatusCode::SERVICE_UNAVAILABLE);
    call(router.clone(), delete("/v1/pin", Some(STAFF))).await.problem(StatusCode::SERVICE_UNAVAILABLE);
    let body = serde_json::json!({ "state": "critical", "reason": "r", "expires_at": format_rfc3339(t0() + 60) }).to_string();
    call(router.clone(), put_json("/v1/pin", Some(STAFF), &body)).await.problem(StatusCode::SERVICE_UNAVAILABLE);
    // A refusal stands when its audit record cannot be written: still 403 and 422, not 503.
    call(router.clone(), put_json("/v1/pin", Some(VIEWER), &body)).await.problem(StatusCode::FORBIDDEN);
    let far = serde_json::json!({ "state": "critical", "reason": "r", "expires_at": format_rfc3339(t0() + 30 * 3600) }).to_string();
    call(router.clone(), put_json("/v1/pin", Some(STAFF), &far)).await.problem(StatusCode::UNPROCESSABLE_ENTITY);
    // Liveness does not depend on the store.
    call(router, get("/healthz", None)).await.ok_json(StatusCode::OK);
}
