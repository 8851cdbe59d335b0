//! `GET /v1/policies/shadow/scorecard`: the shadow version's scorecard (docs/behaviour.md §11.9)
//! as the console's policies section shows it, the measures `policy shadow-report` prints.
//!
//! Scoring replays the shadow period through both versions, which takes a while on weeks of
//! ticks: it never runs on the request. A request answers with the last scorecard at once and,
//! when that one is out of date, starts one scoring in the background
//! ([`crate::api::scorecard_cache`]); the console asks again on its next refresh.

use crate::api::ApiState;
use crate::api::auth::Caller;
use crate::api::scorecard_cache::{Answer, ScoreInputs};
use axum::Json;
use axum::extract::State;
use sentinel_core::instants::format_rfc3339;
use sentinel_core::replay::compare::Summary;
use sentinel_core::replay::shadow_score::Evidence;
use serde::Serialize;
use utoipa::ToSchema;

/// The shadow's scorecard, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ShadowScorecard {
    /// `none`: no shadow version is configured; `computing`: it is being scored for the first
    /// time (ask again in a few seconds); `ready`: `card` holds it; `failed`: `problem` says why.
    #[schema(example = "ready")]
    pub status: String,
    /// The version in shadow; null when none is configured.
    #[schema(required)]
    pub shadow_version: Option<String>,
    /// When the scorecard shown was computed. It is computed again once the shadow log has
    /// grown, at most every five minutes.
    #[schema(required, format = DateTime)]
    pub computed_at: Option<String>,
    /// A newer scoring runs now.
    pub refreshing: bool,
    /// The scorecard when `status` is `ready`; null otherwise.
    #[schema(required)]
    pub card: Option<ScorecardCard>,
    /// Why there is no scorecard (`failed`).
    #[schema(required)]
    pub problem: Option<String>,
}

/// The shadow period scored against the version active through it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScorecardCard {
    /// The version active through the period: the baseline the shadow is scored against.
    pub active_version: String,
    /// The shadow period's first tick, RFC 3339 in UTC.
    #[schema(format = DateTime)]
    pub period_from: String,
    /// The shadow period's last tick, RFC 3339 in UTC.
    #[schema(format = DateTime)]
    pub period_to: String,
    /// The recorded ticks of the period, replayed through both versions.
    pub ticks: u64,
    /// The replayed shadow decided as the shadow did live: the measures are its own record.
    pub live_record: bool,
    /// Why the replay is not the live record.
    #[schema(required)]
    pub live_record_problem: Option<String>,
    /// The active version's measures over the period.
    pub active: Measures,
    /// The shadow version's measures over the period.
    pub shadow: Measures,
}

/// One version's measures over the period (the A/B comparison's).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Measures {
    /// State changes that undo an earlier one (back to the state it left) within 15 minutes, per
    /// day (a period under a day counts as one).
    pub flaps_per_day: f64,
    /// State changes over the period, each counted once.
    pub transitions: u64,
    /// The bulk factor summed over the ticks: the background work admitted.
    pub bulk_capacity_minutes: f64,
    /// From the first critical reading to protection; null when none was critical.
    #[schema(required)]
    pub minutes_to_protect: Option<i64>,
    /// Minutes above normal, without an active pin, whose reading was normal: protection no
    /// reading asked for.
    pub over_protection_minutes: u64,
    /// Ticks whose decision broke an invariant (INV-01 to INV-03, INV-08).
    pub invariant_violations: u64,
}

impl ScorecardCard {
    /// The card of one scoring's evidence, its flaps counted per day of the period.
    pub fn of(evidence: &Evidence) -> ScorecardCard {
        let (active, shadow) = evidence.summaries();
        let days = evidence.days();
        let measures = |s: &Summary| Measures {
            flaps_per_day: s.flaps as f64 / days,
            transitions: s.transitions,
            bulk_capacity_minutes: s.bulk_capacity_minutes,
            minutes_to_protect: s.minutes_to_protect,
            over_protection_minutes: s.over_protection_minutes,
            invariant_violations: s.violations.len() as u64,
        };
        ScorecardCard {
            active_version: evidence.active_version.clone(),
            period_from: evidence.period.0.clone(),
            period_to: evidence.period.1.clone(),
            ticks: evidence.ticks,
            live_record: evidence.agreement.is_ok(),
            live_record_problem: evidence.agreement.clone().err(),
            active: measures(active),
            shadow: measures(shadow),
        }
    }
}

/// The shadow's scorecard.
///
/// The shadow version's live decisions over its shadow period, replayed and scored against the
/// active version's with the A/B comparison's measures. Computed in the background: the first
/// answer may be `computing`.
#[utoipa::path(
    get,
    path = "/v1/policies/shadow/scorecard",
    tag = "console",
    operation_id = "getShadowScorecard",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The scorecard, or why there is none", body = ShadowScorecard),
        (status = 401, response = crate::api::problem::Unauthenticated),
    )
)]
pub async fn get_scorecard(_caller: Caller, State(s): State<ApiState>) -> Json<ShadowScorecard> {
    let Some(policies) = s.policies.clone() else { return Json(none()) };
    let Some(version) = policies.shadow.clone() else { return Json(none()) };
    let inputs = ScoreInputs { policies, limits: s.policy_limits, memory: s.memory.clone(), clock: s.clock.clone(), version };
    Json(view(s.scorecards.answer(inputs)))
}

fn none() -> ShadowScorecard {
    ShadowScorecard { status: "none".into(), shadow_version: None, computed_at: None, refreshing: false, card: None, problem: None }
}

fn view(answer: Answer) -> ShadowScorecard {
    let (status, card, problem, computed_at) = match answer.scored {
        None => ("computing", None, None, None),
        Some(scored) => match scored.outcome {
            Ok(evidence) => ("ready", Some(ScorecardCard::of(&evidence)), None, Some(scored.computed_at)),
            Err(why) => ("failed", None, Some(why), Some(scored.computed_at)),
        },
    };
    ShadowScorecard {
        status: status.into(),
        shadow_version: Some(answer.version),
        computed_at: computed_at.map(format_rfc3339),
        refreshing: answer.refreshing,
        card,
        problem,
    }
}
