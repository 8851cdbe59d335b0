//! `GET /v1/pin`, `PUT /v1/pin`, `DELETE /v1/pin`: the staff pin through the one pin service
//! the CLI uses too (validation by the policy's exported function, the change and its audit
//! record in one transaction). The actor is the caller's token name or verified subject, never
//! a body field. Every attempt by an authenticated caller is audited: a refused one (a viewer,
//! a malformed body, an invalid pin) as a `refused` record saying what was asked and why.

use crate::api::ApiState;
use crate::api::auth::{Caller, Staff};
use crate::api::body::JsonBody;
use crate::api::model::{AuditEntry, PinBody, PinStatus};
use crate::api::problem::Problem;
use crate::api::refusals::{PER_MINUTE, Verdict};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use sentinel_core::instants::{format_rfc3339, parse_rfc3339};
use sentinel_core::pin_service::PinServiceError;
use vocabulary::PinRequest;

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
    caller: Caller,
    State(s): State<ApiState>,
    body: Result<JsonBody<PinBody>, Problem>,
) -> Result<Json<AuditEntry>, Problem> {
    let now = (s.clock)();
    let Staff(caller) = staff(&s, caller, "set a pin", now).await?;
    let body = match body {
        Ok(JsonBody(body)) => body,
        Err(problem) => return Err(refused(&s, &caller, "set a pin", problem, now).await),
    };
    let what = format!("set a pin to {} until {}", body.state, body.expires_at);
    let expires_at = match parse_rfc3339(&body.expires_at) {
        Ok(at) => at,
        Err(e) => return Err(refused(&s, &caller, &what, Problem::pin_refused("expires_at", &e), now).await),
    };
    let ask = PinRequest { state: body.state, reason: body.reason, expires_at, actor: caller.name.clone() };
    let record = match s.pins.set(ask, now).await {
        Ok(record) => record,
        Err(e @ PinServiceError::Invalid { .. }) => return Err(refused(&s, &caller, &what, e.into(), now).await),
        Err(e) => return Err(e.into()),
    };
    let entry = AuditEntry::from(&record);
    let action = entry.action.name();
    s.metrics.pin_change(action);
    if let Some(pin) = &entry.after {
        // What a caller typed is a field formatted with `?` (escaped): never a line of its own.
        tracing::info!(actor = ?caller.name, state = pin.state.name(), expires_at = %format_rfc3339(expires_at), audit_id = entry.id, reason = ?pin.reason, "pin {action} through the API");
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
pub async fn delete_pin(caller: Caller, State(s): State<ApiState>) -> Result<Response, Problem> {
    let now = (s.clock)();
    let Staff(caller) = staff(&s, caller, "clear the pin", now).await?;
    let cleared = match s.pins.clear(&caller.name, now).await {
        Ok(cleared) => cleared,
        Err(e @ PinServiceError::Invalid { .. }) => return Err(refused(&s, &caller, "clear the pin", e.into(), now).await),
        Err(e) => return Err(e.into()),
    };
    match cleared {
        Some(record) => {
            s.metrics.pin_change("clear");
            tracing::info!(actor = ?caller.name, audit_id = record.id, "pin cleared through the API");
            Ok(Json(AuditEntry::from(&record)).into_response())
        }
        None => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}

/// The caller if staff; otherwise 403, with the attempt audited.
async fn staff(s: &ApiState, caller: Caller, what: &str, now: vocabulary::Instant) -> Result<Staff, Problem> {
    match Staff::check(s, caller) {
        Ok(staff) => Ok(staff),
        Err(caller) => Err(refused(s, &caller, what, Problem::forbidden(), now).await),
    }
}

/// Audits a refused attempt and returns its problem. The write is its own task, so a client
/// that hangs up does not cancel it; should it fail (the store is down), the refusal stands and
/// the whole attempt is logged instead. Over the caller's allowance (`super::super::refusals`)
/// the attempt is counted, and logged once a minute.
async fn refused(s: &ApiState, caller: &Caller, what: &str, problem: Problem, now: vocabulary::Instant) -> Problem {
    let why = format!("{} ({})", problem.detail, problem.status);
    match s.refusals.take(&caller.name, now) {
        Verdict::Audit => {}
        Verdict::OverAllowance { first } => {
            s.metrics.refusals_unaudited.inc();
            if first {
                tracing::warn!(actor = ?caller.name, what = ?what, why = ?why, "refused pin changes of this caller beyond {PER_MINUTE} a minute are counted, not audited");
            }
            return problem;
        }
    }
    let (pins, actor, what_owned, why_owned) = (s.pins.clone(), caller.name.clone(), what.to_string(), why.clone());
    let write = tokio::spawn(async move { pins.record_refusal(&actor, &what_owned, &why_owned, now).await });
    match write.await {
        Ok(Ok(record)) => {
            tracing::info!(actor = ?caller.name, audit_id = record.id, refusal = ?record.refusal, "refused a pin change through the API")
        }
        Ok(Err(e)) => {
            tracing::error!(actor = ?caller.name, what = ?what, why = ?why, "refused a pin change through the API, and could not audit the refusal: {e}")
        }
        Err(e) => {
            tracing::error!(actor = ?caller.name, what = ?what, why = ?why, "refused a pin change through the API; auditing it failed: {e}")
        }
    }
    problem
}
