//! `GET /v1/pin/audit?limit=&before=`: the audit trail, newest first, in pages.

use crate::api::ApiState;
use crate::api::auth::Caller;
use crate::api::model::{AuditEntry, AuditPage};
use crate::api::problem::Problem;
use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use serde::Deserialize;
use utoipa::IntoParams;

/// Records on a page when the query gives no `limit`.
pub const DEFAULT_LIMIT: u32 = 20;
/// The largest `limit` a query may ask for.
pub const MAX_LIMIT: u32 = 500;

/// The query of `GET /v1/pin/audit`: the page's size and where it starts.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// How many records, 1 to 500 (default 20).
    #[param(minimum = 1, maximum = 500, default = 20)]
    pub limit: Option<u32>,
    /// Only records with ids below this: the previous page's `next_before`.
    #[param(minimum = 1, maximum = 9_223_372_036_854_775_807_i64)]
    pub before: Option<i64>,
}

/// The pin audit trail.
///
/// Every set, replace, clear and expiry, newest first, each with the pin before and after.
#[utoipa::path(
    get,
    path = "/v1/pin/audit",
    tag = "pins",
    operation_id = "getPinAudit",
    security(("bearer" = [])),
    params(AuditQuery),
    responses(
        (status = 200, description = "One page of audit records, newest first", body = AuditPage),
        (status = 400, response = crate::api::problem::BadRequest),
        (status = 401, response = crate::api::problem::Unauthenticated),
        (status = 500, response = crate::api::problem::Internal),
        (status = 503, response = crate::api::problem::Unavailable),
    )
)]
pub async fn get_audit(
    _caller: Caller,
    State(s): State<ApiState>,
    query: Result<Query<AuditQuery>, QueryRejection>,
) -> Result<Json<AuditPage>, Problem> {
    let Query(q) = query.map_err(|e| Problem::bad_request(format!("the query is malformed: {}", e.body_text())))?;
    let limit = q.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(Problem::bad_request(format!("limit: must be between 1 and {MAX_LIMIT}, got {limit}")));
    }
    if let Some(before) = q.before
        && before < 1
    {
        return Err(Problem::bad_request(format!("before: must be at least 1, got {before}")));
    }
    // One more than asked tells whether an older page exists.
    let mut records = s.pins.audit(limit + 1, q.before).await?;
    let more = records.len() > limit as usize;
    records.truncate(limit as usize);
    let entries: Vec<AuditEntry> = records.iter().map(AuditEntry::from).collect();
    let next_before = if more { entries.last().map(|e| e.id) } else { None };
    Ok(Json(AuditPage { entries, next_before }))
}
