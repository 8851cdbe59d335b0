//! The API's own metrics (`GET /metrics`, Prometheus text): requests by method, route and
//! status, their latency, refused authentications, and pin changes by action.

use super::ApiState;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::time::Instant;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub method: String,
    /// The route's pattern (`/v1/pin`), `unmatched` for unknown paths: bounded cardinality.
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabels {
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ActionLabels {
    pub action: String,
}

pub struct ApiMetrics {
    registry: Registry,
    pub requests: Family<RequestLabels, Counter>,
    pub request_seconds: Histogram,
    pub auth_failures: Family<StatusLabels, Counter>,
    pub pin_changes: Family<ActionLabels, Counter>,
    pub refusals_unaudited: Counter,
}

impl std::fmt::Debug for ApiMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiMetrics").finish_non_exhaustive()
    }
}

impl Default for ApiMetrics {
    fn default() -> ApiMetrics {
        let mut registry = Registry::with_prefix("sentinel_api");
        let requests = Family::<RequestLabels, Counter>::default();
        let request_seconds = Histogram::new(exponential_buckets(0.0001, 2.0, 16));
        let auth_failures = Family::<StatusLabels, Counter>::default();
        let pin_changes = Family::<ActionLabels, Counter>::default();
        registry.register("requests", "API requests by method, route and status", requests.clone());
        registry.register("request_seconds", "API request duration", request_seconds.clone());
        registry.register("auth_failures", "Refused API calls: 401 no valid token, 403 wrong role", auth_failures.clone());
        registry.register("pin_changes", "Pins set, replaced and cleared through the API", pin_changes.clone());
        let refusals_unaudited = Counter::default();
        registry.register(
            "refusals_unaudited",
            "Refused pin changes not written to the audit: over a caller's allowance of 10 a minute",
            refusals_unaudited.clone(),
        );
        ApiMetrics { registry, requests, request_seconds, auth_failures, pin_changes, refusals_unaudited }
    }
}

impl ApiMetrics {
    pub fn render(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry).expect("writing to a String cannot fail");
        out
    }

    pub fn auth_failure(&self, status: u16) {
        self.auth_failures.get_or_create(&StatusLabels { status }).inc();
    }

    pub fn pin_change(&self, action: &str) {
        self.pin_changes.get_or_create(&ActionLabels { action: action.into() }).inc();
    }
}

/// Counts and times every request.
pub async fn track(State(state): State<ApiState>, request: Request, next: Next) -> Response {
    let method = request.method().as_str().to_string();
    let route = request.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string());
    let started = Instant::now();
    let response = next.run(request).await;
    state.metrics.request_seconds.observe(started.elapsed().as_secs_f64());
    let method =
        if matches!(method.as_str(), "GET" | "HEAD" | "PUT" | "DELETE" | "POST" | "PATCH" | "OPTIONS") { method } else { "other".into() };
    let labels = RequestLabels { method, route: route.unwrap_or_else(|| "unmatched".into()), status: response.status().as_u16() };
    state.metrics.requests.get_or_create(&labels).inc();
    response
}
