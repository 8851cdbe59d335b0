//! The OpenAPI 3.1 document, generated from the handlers' annotations and the JSON types
//! (utoipa), then completed with what only the loaded policy knows (the longest reason).

use crate::api::problem;
use crate::api::routes;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{OpenApi as Document, RefOr, Schema};
use utoipa::{Modify, OpenApi};
use vocabulary::Thresholds;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Capacity sentinel",
        description = "The sentinel's published state and the staff pin (docs/behaviour.md §6 and §7). \
                       Calls under /v1 need `Authorization: Bearer <token>`: a viewer token reads, \
                       a staff token also sets and clears the pin. Errors are RFC 9457 problems \
                       (application/problem+json).",
    ),
    paths(
        routes::state::get_state,
        routes::overview::get_session,
        routes::overview::get_overview,
        routes::timeline::get_timeline,
        routes::scorecard::get_scorecard,
        routes::pin::get_pin,
        routes::pin::put_pin,
        routes::pin::delete_pin,
        routes::audit::get_audit,
        routes::ops::metrics,
        routes::ops::healthz,
        routes::ops::readyz,
        routes::ops::openapi_json,
    ),
    components(
        schemas(problem::Problem),
        responses(
        problem::BadRequest,
        problem::Unauthenticated,
        problem::Forbidden,
        problem::NotFound,
        problem::TooLarge,
        problem::UnsupportedMediaType,
        problem::PinRefused,
        problem::Internal,
        problem::Unavailable,
        ),
    ),
    modifiers(&BearerScheme),
    tags(
        (name = "state", description = "The published state"),
        (name = "pins", description = "The staff pin and its audit trail"),
        (name = "console", description = "What the staff console at / shows: the caller, an overview, the recent timeline, the shadow's scorecard"),
        (name = "operations", description = "Probes, metrics and this document"),
    )
)]
struct ApiDoc;

struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut Document) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API token from `[api] tokens` (configured there by its SHA-256)"))
                    .build(),
            ),
        );
    }
}

/// The document, with the policy's pin limits filled in.
pub fn document(thresholds: &Thresholds) -> Document {
    let mut doc = ApiDoc::openapi();
    if let Some(Schema::Object(body)) = doc.components.as_mut().and_then(|c| c.schemas.get_mut("PinBody")).and_then(|s| match s {
        RefOr::T(schema) => Some(schema),
        RefOr::Ref(_) => None,
    }) {
        if let Some(RefOr::T(Schema::Object(reason))) = body.properties.get_mut("reason") {
            reason.max_length = Some(thresholds.pin_reason_max_chars as usize);
        }
        if let Some(RefOr::T(Schema::Object(expires))) = body.properties.get_mut("expires_at") {
            let ahead = thresholds.pin_max_ahead_s;
            let ahead = if ahead.is_multiple_of(3600) { format!("{} hours", ahead / 3600) } else { format!("{ahead} seconds") };
            expires.description = Some(format!("When the pin ends (RFC 3339): in the future and at most {ahead} ahead"));
        }
    }
    doc
}
