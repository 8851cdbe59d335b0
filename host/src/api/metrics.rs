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

/// The labels of `sentinel_api_requests_total`: one answered request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The HTTP method; `other` for any but GET, HEAD, PUT, DELETE, POST, PATCH and OPTIONS.
    pub method: String,
    /// The route's pattern (`/v1/pin`), `unmatched` for unknown paths: bounded cardinality.
    pub route: String,
    /// The HTTP status answered.
    pub status: u16,
}

/// The label of `sentinel_api_auth_failures_total`: the status of the refusal.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StatusLabels {
    /// 401 (no valid token) or 403 (a role that may not, or a cross-site change).
    pub status: u16,
}

/// The label of `sentinel_api_pin_changes_total`: what the change did.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ActionLabels {
    /// The audit action: `set`, `replace` or `clear`.
    pub action: String,
}

/// The API's metrics (named `sentinel_api_*`) and the registry they are rendered from.
pub struct ApiMetrics {
    registry: Registry,
    /// `sentinel_api_requests_total{method,route,status}`: every answered request.
    pub requests: Family<RequestLabels, Counter>,
    /// `sentinel_api_request_seconds`: how long each request took to answer, in seconds.
    pub request_seconds: Histogram,
    /// `sentinel_api_auth_failures_total{status}`: calls refused with 401 or 403.
    pub auth_failures: Family<StatusLabels, Counter>,
    /// `sentinel_api_pin_changes_total{action}`: pins set, replaced and cleared through the API.
    pub pin_changes: Family<ActionLabels, Counter>,
    /// `sentinel_api_refusals_unaudited_total`: refused pin changes over a caller's allowance of
    /// 10 a minute, counted instead of written to the audit.
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
    /// Every metric as OpenMetrics text: the body of `GET /metrics`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry).expect("writing to a String cannot fail");
        out
    }

    /// Counts one call refused with `status`: 401 (no valid token) or 403 (a role that may
    /// not, or a cross-site change).
    pub fn auth_failure(&self, status: u16) {
        self.auth_failures.get_or_create(&StatusLabels { status }).inc();
    }

    /// Counts one pin change made through the API, by its audit action (`set`, `replace`,
    /// `clear`).
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
