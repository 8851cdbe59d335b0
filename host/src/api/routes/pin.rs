//! `GET /v1/pin`, `PUT /v1/pin`, `DELETE /v1/pin`: the staff pin through the one pin service
//! the CLI uses too (validation by the policy's exported function, the change and its audit
//! record in one transaction). The actor is the caller's token name, never a body field.

use crate::api::ApiState;
use crate::api::auth::{Caller, Staff};
use crate::api::body::JsonBody;
use crate::api::model::{AuditEntry, PinBody, PinStatus};
use crate::api::problem::Problem;
use crate::instants::{format_rfc3339, parse_rfc3339};
use crate::pin_service::PinAsk;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// The stored pin.
///
/// The pin, expired or not (`active` says which), or null when there is none.
#[utoipa::path(
    get,
    path = "/v1/pin",
    tag = "pins",
    operation_id = "getPin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The stored pin, or null", body = PinStatus),
        (status = 401, response = crate::api::problem::Unauthenticated),
        (status = 500, response = crate::api::problem::Internal),
        (status = 503, response = crate::api::problem::Unavailable),
    )
)]
pub async fn get_pin(_caller: Caller, State(s): State<ApiState>) -> Result<Json<PinStatus>, Problem> {
    let pin = s.pins.show().await?;
    Ok(Json(PinStatus::new(pin.as_ref(), (s.clock)())))
}

/// Set the pin (staff).
///
/// Replaces any pin; the change and its audit record are one transaction. The policy validates
/// the pin; a refused pin changes nothing.
#[utoipa::path(
    put,
    path = "/v1/pin",
    tag = "pins",
    operation_id = "setPin",
    security(("bearer" = [])),
    request_body = PinBody,
    responses(
        (status = 200, description = "The pin is set; its audit record (action `set` or `replace`)", body = AuditEntry),
        (status = 400, response = crate::api::problem::BadRequest),
        (status = 401, response = crate::api::problem::Unauthenticated),
        (status = 403, response = crate::api::problem::Forbidden),
        (status = 413, response = crate::api::problem::TooLarge),
        (status = 415, response = crate::api::problem::UnsupportedMediaType),
        (status = 422, response = crate::api::problem::PinRefused),
        (status = 500, response = crate::api::problem::Internal),
        (status = 503, response = crate::api::problem::Unavailable),
    )
)]
pub async fn put_pin(
    Staff(caller): Staff,
    State(s): State<ApiState>,
    JsonBody(body): JsonBody<PinBody>,
) -> Result<Json<AuditEntry>, Problem> {
    let expires_at = parse_rfc3339(&body.expires_at).map_err(|e| Problem::pin_refused("expires_at", &e))?;
    let now = (s.clock)();
    let ask = PinAsk { state: body.state, reason: body.reason, expires_at, actor: caller.name.clone() };
    let entry = AuditEntry::from(&s.pins.set(ask, now).await?);
    let action = entry.action.name();
    s.metrics.pin_change(action);
    if let Some(pin) = &entry.after {
        // What a caller typed is a field formatted with `?` (escaped): never a line of its own.
        tracing::info!(actor = ?caller.name, state = ?pin.state, expires_at = %format_rfc3339(expires_at), audit_id = entry.id, reason = ?pin.reason, "pin {action} through the API");
    }
    Ok(Json(entry))
}

/// Clear the pin (staff).
///
/// Removes the pin with its audit record; 204 when there was none (nothing written).
#[utoipa::path(
    delete,
    path = "/v1/pin",
    tag = "pins",
    operation_id = "clearPin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The pin is removed; its audit record (action `clear`)", body = AuditEntry),
        (status = 204, description = "There was no pin; nothing changed"),
        (status = 401, response = crate::api::problem::Unauthenticated),
        (status = 403, response = crate::api::problem::Forbidden),
        (status = 500, response = crate::api::problem::Internal),
        (status = 503, response = crate::api::problem::Unavailable),
    )
)]
pub async fn delete_pin(Staff(caller): Staff, State(s): State<ApiState>) -> Result<Response, Problem> {
    match s.pins.clear(&caller.name, (s.clock)()).await? {
        Some(record) => {
            s.metrics.pin_change("clear");
            tracing::info!(actor = ?caller.name, audit_id = record.id, "pin cleared through the API");
            Ok(Json(AuditEntry::from(&record)).into_response())
        }
        None => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}
