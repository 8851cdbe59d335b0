//! Operations: `GET /metrics` (Prometheus text), `GET /healthz` (the process is up),
//! `GET /readyz` (the store answers and the policy is loaded), `GET /openapi.json`. None
//! needs a token: probes and scrapers call them.

use crate::api::ApiState;
use crate::api::model::{Health, Readiness};
use crate::api::problem::Problem;
use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use sentinel_core::pin_service::PinServiceError;
use sentinel_core::ports::StoreError;

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Metrics.
///
/// The API's metrics in the Prometheus (OpenMetrics) text format.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    operation_id = "getMetrics",
    responses((status = 200, description = "Prometheus text", body = String, content_type = "application/openmetrics-text"))
)]
pub async fn metrics(State(s): State<ApiState>) -> Response {
    ([(header::CONTENT_TYPE, OPENMETRICS)], s.metrics.render()).into_response()
}

/// Liveness.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    operation_id = "getHealth",
    responses((status = 200, description = "The process is up", body = Health))
)]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok".into() })
}

/// Readiness.
///
/// Ready when the store answers and the policy component is loaded and answers.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    operation_id = "getReadiness",
    responses(
        (status = 200, description = "Ready", body = Readiness),
        (status = 503, response = crate::api::problem::Unavailable),
    )
)]
pub async fn readyz(State(s): State<ApiState>) -> Result<Json<Readiness>, Problem> {
    let policy = {
        let mut p = s.policy.lock();
        p.describe().map(|d| format!("{} {}", d.name, d.version))
    };
    let policy = policy.map_err(|e| Problem::unavailable(format!("not ready: the policy does not answer: {e}")))?;
    match s.pins.show().await {
        // An unreadable pin row still means the store answered.
        Ok(_) | Err(PinServiceError::Store(StoreError::Corrupt { .. })) => {}
        // The answer is unauthenticated: the store's host, port and database stay in the log.
        Err(e) => {
            tracing::warn!("readiness: the store does not answer: {e}");
            return Err(Problem::unavailable("not ready: the store does not answer (the sentinel's log says why)"));
        }
    }
    Ok(Json(Readiness { status: "ready".into(), policy }))
}

/// This document.
///
/// The OpenAPI 3.1 document of this API, generated from the code.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "operations",
    operation_id = "getOpenApi",
    responses((status = 200, description = "The OpenAPI document", body = serde_json::Value))
)]
pub async fn openapi_json(State(s): State<ApiState>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], s.openapi.as_ref().clone()).into_response()
}
