//! `GET /v1/state`: the last published document, rebuilt from the newest tick record (the
//! record is committed before the channels get the document, with the same content).

use crate::api::ApiState;
use crate::api::auth::Caller;
use crate::api::model::StateView;
use crate::api::problem::Problem;
use axum::Json;
use axum::extract::State;

/// The last published state.
///
/// The document the last tick published to the cache and parameter channels (docs/behaviour.md §7).
#[utoipa::path(
    get,
    path = "/v1/state",
    tag = "state",
    operation_id = "getState",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The last published document", body = StateView),
        (status = 401, response = crate::api::problem::Unauthenticated),
        (status = 404, response = crate::api::problem::NotFound),
        (status = 500, response = crate::api::problem::Internal),
        (status = 503, response = crate::api::problem::Unavailable),
    )
)]
pub async fn get_state(_caller: Caller, State(s): State<ApiState>) -> Result<Json<StateView>, Problem> {
    let newest = s.memory.recent_ticks(1).await?;
    let Some((sequence, record)) = newest.into_iter().next() else {
        return Err(Problem::not_found("no tick has run yet, so nothing was published"));
    };
    Ok(Json(sentinel_core::tick::recorded_document(sequence, &record).into()))
}
