//! What every response carries and what every state-changing request must show.
//!
//! Headers: a Content-Security-Policy that lets the console load only its own script, style
//! sheet and API (no inline script or style, no frames, no form posts elsewhere), framing
//! refused, no referrer, no content sniffing, and `no-store` on API answers unless a route
//! set its own cache policy.
//!
//! Cross-site request forgery: a request other than GET, HEAD or OPTIONS is refused (403)
//! when the browser says it comes from another site (`Sec-Fetch-Site`) or names another
//! origin (`Origin`). Tokens travel in the `Authorization` header, which a browser never adds
//! by itself; this guard also covers a deployment behind a proxy that signs users in with a
//! cookie and adds the header for them.

use super::ApiState;
use super::problem::Problem;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The console's policy; the API's JSON needs nothing more.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Adds the security headers to every response.
pub async fn headers(request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with("/v1/");
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    h.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    if api && !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// Refuses a state-changing request from another site.
pub async fn same_origin(State(s): State<ApiState>, request: Request, next: Next) -> Response {
    if matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(request).await;
    }
    match cross_site(request.headers()) {
        None => next.run(request).await,
        Some(why) => {
            s.metrics.auth_failure(403);
            tracing::warn!(method = %request.method(), path = %request.uri().path(), "refused a cross-site request: {why}");
            Problem::new(
                StatusCode::FORBIDDEN,
                "cross-site",
                "Cross-site request refused",
                format!("{why}; change the pin from the console this server serves, or from a client that sends no Origin"),
            )
            .into_response()
        }
    }
}

/// Why the request looks cross-site, if it does.
pub fn cross_site(headers: &HeaderMap) -> Option<String> {
    let text = |name| headers.get(name).map(|v: &HeaderValue| v.to_str().unwrap_or("(not text)").trim().to_ascii_lowercase());
    if let Some(site) = text("sec-fetch-site")
        && site != "same-origin"
        && site != "none"
    {
        return Some(format!("the browser says the request comes from another site (Sec-Fetch-Site: {site})"));
    }
    let origin = text("origin")?;
    let host = text("host").unwrap_or_default();
    // Behind a reverse proxy that rewrites Host, the name the browser used is the forwarded
    // one. A page on another site cannot set this header on a PUT or DELETE: any such request
    // from it needs a CORS preflight, which this server never grants.
    let forwarded = text("x-forwarded-host").map(|h| h.split(',').next().unwrap_or("").trim().to_string());
    let authority = origin.split_once("://").map(|(_, rest)| rest.trim_end_matches('/'));
    let ours = |a: &str| (!host.is_empty() && a == host) || forwarded.as_deref().is_some_and(|f| !f.is_empty() && a == f);
    if authority.is_some_and(ours) {
        return None;
    }
    Some(format!("the request's Origin ({origin}) is not this server ({host}); a reverse proxy must pass Host or X-Forwarded-Host"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn same_origin_and_non_browser_requests_pass() {
        assert_eq!(cross_site(&with(&[])), None, "curl sends neither header");
        assert_eq!(cross_site(&with(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080")])), None);
        assert_eq!(
            cross_site(&with(&[("host", "sentinel.example"), ("origin", "https://sentinel.example"), ("sec-fetch-site", "same-origin")])),
            None
        );
    }

    #[test]
    fn behind_a_proxy_that_rewrites_host_the_forwarded_host_is_ours() {
        let proxied = [("host", "127.0.0.1:8080"), ("x-forwarded-host", "sentinel.example"), ("origin", "https://sentinel.example")];
        assert_eq!(cross_site(&with(&proxied)), None);
    }

    #[test]
    fn another_site_is_refused_by_either_header() {
        let h = |pairs| cross_site(&with(pairs)).is_some();
        assert!(h(&[("host", "127.0.0.1:8080"), ("origin", "http://evil.example")]));
        assert!(h(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8081")]));
        assert!(h(&[("host", "127.0.0.1:8080"), ("origin", "null")]));
        assert!(h(&[("sec-fetch-site", "cross-site")]));
        assert!(h(&[("sec-fetch-site", "same-site"), ("host", "a.example"), ("origin", "https://a.example")]));
        assert!(h(&[("origin", "http://127.0.0.1:8080")]), "an Origin without a Host to match");
        assert!(h(&[("host", "127.0.0.1:8080"), ("x-forwarded-host", "sentinel.example"), ("origin", "https://evil.example")]));
    }
}
