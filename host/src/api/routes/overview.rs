//! `GET /v1/session` (who the token is) and `GET /v1/overview` (what the console shows at a
//! glance: the last published state with its explanation, the last reading against the active
//! policy's thresholds, and the policy versions). Both read only.

use super::versions::{ActiveView, PoliciesView, policies_view};
use crate::api::ApiState;
use crate::api::auth::Caller;
use crate::api::model::StateView;
use crate::api::problem::Problem;
use crate::config::api::ApiRole;
use axum::Json;
use axum::extract::State;
use sentinel_core::instants::format_rfc3339;
use sentinel_core::policy::invariants::worst_latency_ratio;
use serde::Serialize;
use utoipa::ToSchema;
use vocabulary::{LevelThresholds, Signal, Thresholds};

/// The caller behind the token.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Session {
    /// The static token's name, or `oidc:<subject> <email>` for an OpenID Connect token.
    pub name: String,
    /// `staff` may set and clear pins; `viewer` may read.
    #[schema(example = "staff")]
    pub role: String,
}

/// Who the token belongs to and what it may do.
#[utoipa::path(
    get,
    path = "/v1/session",
    tag = "console",
    operation_id = "getSession",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller", body = Session),
        (status = 401, response = crate::api::problem::Unauthenticated),
    )
)]
pub async fn get_session(caller: Caller) -> Json<Session> {
    let role = match caller.role {
        ApiRole::Staff => "staff",
        ApiRole::Viewer => "viewer",
    };
    Json(Session { name: caller.name, role: role.into() })
}

/// One signal of the last reading beside the active policy's boundaries.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ReadingView {
    /// `cpu_pct`, `connections_pct` or `latency_ratio` (the largest p95 over its baseline).
    pub signal: String,
    /// The signal's name for people: `CPU`, `Connections` or `API latency / baseline`.
    pub label: String,
    /// The unit of `value` and the boundaries: `%` for the percentages, `×` for the ratio.
    pub unit: String,
    /// Null when the reading failed or lacked this signal.
    #[schema(required)]
    pub value: Option<f64>,
    /// At or above: at least constrained.
    pub constrained: f64,
    /// At or above: critical.
    pub critical: f64,
}

/// Everything the console shows at a glance.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Overview {
    /// The server's clock (for the pin's countdown).
    #[schema(format = DateTime)]
    pub now: String,
    /// The last published state; null before the first tick.
    #[schema(required)]
    pub state: Option<StateView>,
    /// The decision's one-line explanation; null before the first tick.
    #[schema(required)]
    pub explanation: Option<String>,
    /// Why the last read failed; null when it succeeded.
    #[schema(required)]
    pub reading_failed: Option<String>,
    /// The three signals of the last reading (CPU, connections, latency ratio), in that order, each
    /// beside the active policy's boundaries: always three, their values null without a reading.
    pub readings: Vec<ReadingView>,
    /// The active policy, the version in shadow, and the versions of the policy directory.
    pub policies: PoliciesView,
}

/// The console's overview.
///
/// The last published state with its explanation, the last reading against the active
/// policy's thresholds, and the policy versions (active, shadow, health).
#[utoipa::path(
    get,
    path = "/v1/overview",
    tag = "console",
    operation_id = "getOverview",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The overview", body = Overview),
        (status = 401, response = crate::api::problem::Unauthenticated),
        (status = 500, response = crate::api::problem::Internal),
        (status = 503, response = crate::api::problem::Unavailable),
    )
)]
pub async fn get_overview(_caller: Caller, State(s): State<ApiState>) -> Result<Json<Overview>, Problem> {
    let newest = s.memory.recent_ticks(1).await?.into_iter().next();
    let (identity, thresholds) = s.active_policy()?;
    let reading = newest.as_ref().and_then(|(_, r)| match &r.signal {
        Signal::Reading(reading) => Some(reading.clone()),
        Signal::Failed(_) => None,
    });
    let reading_failed = newest.as_ref().and_then(|(_, r)| match &r.signal {
        Signal::Failed(why) => Some(sentinel_core::user_text::escape(why).into_owned()),
        Signal::Reading(_) => None,
    });
    let active = ActiveView { name: identity.name, version: identity.version, digest: identity.digest, kind: identity.kind.into() };
    let policies = policies_view(s.policies.clone(), active).await;
    Ok(Json(Overview {
        now: format_rfc3339((s.clock)()),
        explanation: newest.as_ref().map(|(_, r)| r.decision.explanation.clone()),
        state: newest.map(|(sequence, record)| sentinel_core::tick::recorded_document(sequence, &record).into()),
        reading_failed,
        readings: readings(reading.as_ref(), &thresholds),
        policies,
    }))
}

/// The three signals the policy assesses, with its boundaries.
fn readings(reading: Option<&vocabulary::Reading>, th: &Thresholds) -> Vec<ReadingView> {
    let view = |signal: &str, label: &str, unit: &str, value: Option<f64>, levels: &LevelThresholds| ReadingView {
        signal: signal.into(),
        label: label.into(),
        unit: unit.into(),
        value: value.filter(|v| v.is_finite()),
        constrained: levels.constrained,
        critical: levels.critical,
    };
    vec![
        view("cpu_pct", "CPU", "%", reading.and_then(|r| r.cpu_pct), &th.cpu_pct),
        view("connections_pct", "Connections", "%", reading.and_then(|r| r.connections_pct), &th.connections_pct),
        view("latency_ratio", "API latency / baseline", "×", reading.and_then(worst_latency_ratio), &th.latency_ratio),
    ]
}
