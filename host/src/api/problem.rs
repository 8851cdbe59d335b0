//! Every error of the API is an RFC 9457 problem (`application/problem+json`) with a detail a
//! person can act on. The reusable OpenAPI responses of each error status live here too.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sentinel_core::pin_service::PinServiceError;
use sentinel_core::ports::StoreError;
use serde::Serialize;
use utoipa::{ToResponse, ToSchema};

/// The media type of every error answer: an RFC 9457 problem as JSON.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// An RFC 9457 problem.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "type": "urn:capacity-sentinel:problem:pin-refused",
    "title": "The pin was refused",
    "status": 422,
    "detail": "expires_at: must be at most 24 hours ahead",
    "field": "expires_at"
}))]
pub struct Problem {
    /// What kind of problem: `urn:capacity-sentinel:problem:<kind>`.
    #[serde(rename = "type")]
    #[schema(rename = "type")]
    pub kind: String,
    /// The kind in a few words.
    pub title: String,
    /// The HTTP status.
    #[schema(minimum = 400, maximum = 599)]
    pub status: u16,
    /// What went wrong with this request, and what to do about it.
    pub detail: String,
    /// The request field the problem is about, when it is about one (a refused pin).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl Problem {
    /// A problem of `status` whose type is `urn:capacity-sentinel:problem:<kind>`, with its `title`
    /// and `detail`, about no field.
    pub fn new(status: StatusCode, kind: &str, title: &str, detail: impl Into<String>) -> Problem {
        Problem {
            kind: format!("urn:capacity-sentinel:problem:{kind}"),
            title: title.into(),
            status: status.as_u16(),
            detail: detail.into(),
            field: None,
        }
    }

    /// The HTTP status to answer with (500 if `status` is not a valid one).
    pub fn status(&self) -> StatusCode {
        StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// 400 `bad-request`: a body or query that is not the documented one; `detail` names what.
    pub fn bad_request(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::BAD_REQUEST, "bad-request", "The request is malformed", detail)
    }

    /// The same answer whether the header was missing, malformed or the token unknown.
    pub fn unauthenticated() -> Problem {
        Problem::new(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "Authentication required",
            "send a valid API token as `Authorization: Bearer <token>`",
        )
    }

    /// 403 `forbidden`: a valid token whose role may not do this (a viewer changing the pin, or an
    /// OpenID Connect token whose roles map to neither role).
    pub fn forbidden() -> Problem {
        Problem::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "Not allowed",
            "this token may not do this: setting and clearing pins needs a staff token",
        )
    }

    /// 404 `not-found`: nothing here (yet); `detail` says what is missing.
    pub fn not_found(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::NOT_FOUND, "not-found", "Not found", detail)
    }

    /// 413 `body-too-large`: the body is over `limit` bytes (the detail says it in KiB).
    pub fn too_large(limit: usize) -> Problem {
        Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body-too-large",
            "The request body is too large",
            format!("the body must be at most {} KiB", limit / 1024),
        )
    }

    /// 415 `unsupported-media-type`: the body is not sent as `application/json`.
    pub fn unsupported_media_type() -> Problem {
        Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "The body must be JSON",
            "send the body as JSON with `Content-Type: application/json`",
        )
    }

    /// A refused pin: the detail is `<field>: <why>`, as the CLI prints it.
    pub fn pin_refused(field: &str, message: &str) -> Problem {
        let mut p = Problem::new(StatusCode::UNPROCESSABLE_ENTITY, "pin-refused", "The pin was refused", format!("{field}: {message}"));
        p.field = Some(field.to_string());
        p
    }

    /// 503 `unavailable`: the store (or, for readiness, the policy) does not answer now; try
    /// again.
    pub fn unavailable(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "The sentinel cannot answer now", detail)
    }

    /// 500 `internal`: the sentinel failed (the policy, a corrupt store, a drawing); nothing
    /// changed.
    pub fn internal(detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "The sentinel failed", detail)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = serde_json::to_vec(&self).expect("problems serialize");
        let mut response = (status, [(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON))], body).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"capacity-sentinel\""));
        }
        response
    }
}

impl From<StoreError> for Problem {
    fn from(e: StoreError) -> Problem {
        tracing::error!("store: {e}");
        match e {
            StoreError::Unavailable { .. } | StoreError::Superseded { .. } => Problem::unavailable(e.to_string()),
            StoreError::Corrupt { .. } | StoreError::NewerSchema { .. } => Problem::internal(e.to_string()),
        }
    }
}

impl From<PinServiceError> for Problem {
    fn from(e: PinServiceError) -> Problem {
        match e {
            PinServiceError::Invalid { field, message } => Problem::pin_refused(field, &message),
            PinServiceError::Store(e) => e.into(),
            PinServiceError::Policy(e) => {
                tracing::error!("policy: {e}");
                Problem::internal(format!("the policy failed, nothing changed: {e}"))
            }
        }
    }
}

/// Unknown paths.
pub async fn not_found() -> Problem {
    Problem::not_found("no such resource; GET /openapi.json lists them")
}

/// Known paths, unknown methods (axum adds the `Allow` header).
pub async fn method_not_allowed() -> Problem {
    Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        "Method not allowed",
        "this resource does not support this method; the Allow header lists those it does",
    )
}

// The reusable responses of the OpenAPI document, one per error status.

/// The request is malformed: a body that is not the documented JSON (an unknown or missing
/// field, a wrong type) or a bad query parameter.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
#[expect(dead_code, reason = "read only by the OpenAPI document's derive, never built at run time")]
pub struct BadRequest(Problem);

/// No valid bearer token: missing, malformed or unknown (the answer does not say which).
#[derive(ToResponse)]
#[response(
    content_type = "application/problem+json",
    headers(("WWW-Authenticate" = String, description = "`Bearer realm=\"capacity-sentinel\"`"))
)]
#[expect(dead_code, reason = "read only by the OpenAPI document's derive, never built at run time")]
pub struct Unauthenticated(Problem);

/// The token is valid but its role may not do this (setting and clearing pins needs staff).
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
#[expect(dead_code, reason = "read only by the OpenAPI document's derive, never built at run time")]
pub struct Forbidden(Problem);

/// There is nothing here yet.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
#[expect(dead_code, reason = "read only by the OpenAPI document's derive, never built at run time")]
pub struct NotFound(Problem);

/// The body is over 16 KiB.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
#[expect(dead_code, reason = "read only by the OpenAPI document's derive, never built at run time")]
pub struct TooLarge(Problem);

/// The body is not `application/json`.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
#[expect(dead_code, reason = "read only by the OpenAPI document's derive, never built at run time")]
pub struct UnsupportedMediaType(Problem);

/// The policy refused the pin; `field` names the field and `detail` says why
/// (`expires_at: must be at most 24 hours ahead`). The stored pin is untouched.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
#[expect(dead_code, reason = "read only by the OpenAPI document's derive, never built at run time")]
pub struct PinRefused(Problem);

/// The sentinel failed (a store or policy failure); nothing changed.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
#[expect(dead_code, reason = "read only by the OpenAPI document's derive, never built at run time")]
pub struct Internal(Problem);

/// The store cannot be reached now; try again.
#[derive(ToResponse)]
#[response(content_type = "application/problem+json")]
#[expect(dead_code, reason = "read only by the OpenAPI document's derive, never built at run time")]
pub struct Unavailable(Problem);
