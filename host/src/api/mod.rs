//! The HTTP API of `sentinel serve` (axum): the published state, the staff pin and its audit
//! trail, metrics and probes, and the OpenAPI document generated from this code.
//!
//! Reads need any valid token; setting and clearing a pin needs a staff token. The pin goes
//! through the same [`PinService`] as `sentinel pin`, so the next tick honours it either way.

pub mod auth;
pub mod body;
pub mod console;
pub mod guard;
pub mod metrics;
pub mod model;
pub mod oidc;
pub mod openapi;
pub mod problem;
pub mod refusals;
pub mod routes;
pub mod scorecard_cache;
pub mod server;
#[cfg(test)]
mod tests;

use crate::config::api::ApiToken;
use axum::Router;
use axum::routing::get;
use sentinel_core::pin_service::PinService;
use sentinel_core::policy::PolicyError;
use sentinel_core::policy::active::SharedPolicy;
use sentinel_core::ports::memory::MemoryStore;
use sentinel_core::ports::pins::PinStore;
use std::sync::Arc;
use vocabulary::Instant;

/// The clock the API validates pins against (unix seconds).
pub type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// What the handlers share.
#[derive(Clone)]
pub struct ApiState {
    /// The pin service `sentinel pin` uses too: shows, sets and clears the pin and reads its audit.
    pub pins: PinService,
    /// The store whose tick records answer `/v1/state`, the overview, the timeline and the
    /// shadow's scorecard.
    pub memory: Arc<dyn MemoryStore>,
    /// The loaded policy: pins are validated against it, the console shows its boundaries, and
    /// readiness asks it.
    pub policy: SharedPolicy,
    /// The static tokens of `[api] tokens`, by their SHA-256.
    pub tokens: Arc<auth::Tokens>,
    /// `[api.oidc]`: OpenID Connect tokens, when configured.
    pub oidc: Option<Arc<oidc::Verifier>>,
    /// The API's own metrics, served at `/metrics`.
    pub metrics: Arc<metrics::ApiMetrics>,
    /// How many refused pin changes of one caller the audit takes a minute.
    pub refusals: Arc<refusals::RefusalAllowance>,
    /// The console's last timeline drawing.
    pub timeline: Arc<routes::timeline::TimelineCache>,
    /// `[policies]`, for the versions the console lists (none: the embedded default).
    pub policies: Option<crate::config::policies::PoliciesConfig>,
    /// The limits the shadow's scorecard replays its versions under (the config's).
    pub policy_limits: sentinel_core::policy::Limits,
    /// The shadow's last scorecard, computed in the background.
    pub scorecards: Arc<scorecard_cache::ScorecardCache>,
    /// Where the handlers read "now" from: the wall clock, or another in tests.
    pub clock: Clock,
    /// The OpenAPI document, serialized once.
    pub openapi: Arc<Vec<u8>>,
}

impl std::fmt::Debug for ApiState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiState").field("tokens", &self.tokens).finish_non_exhaustive()
    }
}

impl ApiState {
    /// The state of a store and a loaded policy, on the wall clock. Asks the policy for its pin
    /// limits, for the OpenAPI document.
    pub fn new(
        memory: Arc<dyn MemoryStore>,
        pins: Arc<dyn PinStore>,
        policy: SharedPolicy,
        tokens: &[ApiToken],
    ) -> Result<ApiState, PolicyError> {
        let thresholds = policy.lock().describe()?.thresholds;
        let openapi = serde_json::to_vec_pretty(&openapi::document(&thresholds)).expect("the OpenAPI document serializes");
        Ok(ApiState {
            pins: PinService::new(pins, policy.clone()),
            memory,
            policy,
            tokens: Arc::new(auth::Tokens::new(tokens)),
            oidc: None,
            metrics: Arc::new(metrics::ApiMetrics::default()),
            refusals: Arc::default(),
            timeline: Arc::default(),
            policies: None,
            policy_limits: sentinel_core::policy::Limits::default(),
            scorecards: Arc::default(),
            clock: Arc::new(wall_clock),
            openapi: Arc::new(openapi),
        })
    }

    /// The same state accepting OpenID Connect tokens too.
    pub fn with_oidc(mut self, verifier: oidc::Verifier) -> ApiState {
        self.oidc = Some(Arc::new(verifier));
        self
    }

    /// The active policy's identity and thresholds, as pins are validated against them now.
    pub fn active_policy(&self) -> Result<(sentinel_core::policy::PolicyIdentity, vocabulary::Thresholds), problem::Problem> {
        let mut policy = self.policy.lock();
        let identity = policy.identity().clone();
        let description =
            policy.describe().map_err(|e| problem::Problem::internal(format!("the active policy does not describe itself: {e}")))?;
        Ok((identity, description.thresholds))
    }

    /// The same state listing the versions of a `[policies]` directory, its shadow scored with
    /// the versions under `limits`.
    pub fn with_policies(
        mut self,
        policies: Option<crate::config::policies::PoliciesConfig>,
        limits: sentinel_core::policy::Limits,
    ) -> ApiState {
        self.policies = policies;
        self.policy_limits = limits;
        self
    }

    /// The same state on another clock (tests).
    pub fn with_clock(mut self, clock: impl Fn() -> Instant + Send + Sync + 'static) -> ApiState {
        self.clock = Arc::new(clock);
        self
    }
}

fn wall_clock() -> Instant {
    sentinel_core::clock::now_seconds()
}

/// Every route, with problem+json for unknown paths and methods, and request metrics.
pub fn router(state: ApiState) -> Router {
    use routes::{audit, ops, overview, pin, scorecard, state as st, timeline};
    Router::new()
        .route("/", get(console::index))
        .route("/console.js", get(console::script))
        .route("/console/{module}", get(console::module))
        .route("/console.css", get(console::style))
        .route("/v1/session", get(overview::get_session))
        .route("/v1/overview", get(overview::get_overview))
        .route("/v1/timeline.svg", get(timeline::get_timeline))
        .route("/v1/state", get(st::get_state))
        .route("/v1/pin", get(pin::get_pin).put(pin::put_pin).delete(pin::delete_pin))
        .route("/v1/pin/audit", get(audit::get_audit))
        .route("/v1/policies/shadow/scorecard", get(scorecard::get_scorecard))
        .route("/metrics", get(ops::metrics))
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/openapi.json", get(ops::openapi_json))
        .fallback(problem::not_found)
        .method_not_allowed_fallback(problem::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::same_origin))
        .layer(axum::middleware::from_fn(guard::headers))
        .layer(axum::middleware::from_fn_with_state(state.clone(), metrics::track))
        .with_state(state)
}
