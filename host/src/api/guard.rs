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
     connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

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

/// The header the console sends with every change. A page of another site cannot send it
/// without a CORS preflight, which this server never grants.
pub const CONSOLE_HEADER: &str = "x-sentinel-console";

/// Why the request looks cross-site, if it does.
pub fn cross_site(headers: &HeaderMap) -> Option<String> {
    let text = |name| headers.get(name).map(|v: &HeaderValue| v.to_str().unwrap_or("(not text)").trim().to_ascii_lowercase());
    if let Some(site) = text("sec-fetch-site")
        && site != "same-origin"
        && site != "none"
    {
        return Some(format!("the browser says the request comes from another site (Sec-Fetch-Site: {site})"));
    }
    let origin = text("origin");
    // A browser names the origin of every change; only the console's own script adds this header.
    if (origin.is_some() || headers.contains_key("sec-fetch-site")) && !headers.contains_key(CONSOLE_HEADER) {
        return Some(format!("a change from a browser must come from the console (no {CONSOLE_HEADER} header)"));
    }
    let origin = origin?;
    let host = text("host").unwrap_or_default();
    let Some((scheme, origin_authority)) = origin.split_once("://").map(|(s, a)| (s, a.trim_end_matches('/'))) else {
        return Some(format!("the request's Origin ({origin}) is not an origin"));
    };
    let default_port = match scheme {
        "https" => 443,
        "http" => 80,
        _ => return Some(format!("the request's Origin ({origin}) is not http or https")),
    };
    let theirs = authority(origin_authority, default_port);
    // Behind a reverse proxy that rewrites Host, the name the browser used is the forwarded
    // one (and its port, when the proxy says it). A page of another site cannot set these.
    let forwarded = text("x-forwarded-host").map(|h| {
        let first = h.split(',').next().unwrap_or("").trim().to_string();
        let port = text("x-forwarded-port").and_then(|p| p.split(',').next().and_then(|p| p.trim().parse::<u16>().ok()));
        let (name, own_port) = authority(&first, port.unwrap_or(default_port));
        (name, if first.contains(':') { own_port } else { port.unwrap_or(default_port) })
    });
    let ours = [(!host.is_empty()).then(|| authority(&host, default_port)), forwarded];
    if ours.into_iter().flatten().any(|a| a == theirs) {
        return None;
    }
    Some(format!("the request's Origin ({origin}) is not this server ({host}); a reverse proxy must pass Host or X-Forwarded-Host"))
}

/// `name[:port]` as (name, port), the port `default` when absent or unreadable.
fn authority(text: &str, default: u16) -> (String, u16) {
    match text.rsplit_once(':') {
        Some((name, port)) if !name.ends_with(']') || text.starts_with('[') => match port.parse() {
            Ok(port) => (name.to_string(), port),
            Err(_) => (text.to_string(), default),
        },
        _ => (text.to_string(), default),
    }
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
        let console = ("x-sentinel-console", "1");
        assert_eq!(cross_site(&with(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080"), console])), None);
        assert_eq!(cross_site(&with(&[("host", "sentinel.example:443"), ("origin", "https://sentinel.example"), console])), None);
        assert_eq!(cross_site(&with(&[("host", "Sentinel.Example"), ("origin", "HTTPS://SENTINEL.EXAMPLE:443"), console])), None);
        assert_eq!(
            cross_site(&with(&[
                ("host", "sentinel.example"),
                ("origin", "https://sentinel.example"),
                ("sec-fetch-site", "same-origin"),
                ("x-sentinel-console", "1")
            ])),
            None
        );
    }

    #[test]
    fn behind_a_proxy_that_rewrites_host_the_forwarded_host_is_ours() {
        let proxied = [
            ("host", "127.0.0.1:8080"),
            ("x-forwarded-host", "sentinel.example"),
            ("origin", "https://sentinel.example"),
            ("x-sentinel-console", "1"),
        ];
        assert_eq!(cross_site(&with(&proxied)), None);
        let port = [
            ("host", "127.0.0.1:8080"),
            ("x-forwarded-host", "sentinel.example"),
            ("x-forwarded-port", "8443"),
            ("origin", "https://sentinel.example:8443"),
            ("x-sentinel-console", "1"),
        ];
        assert_eq!(cross_site(&with(&port)), None, "the port the proxy forwards");
    }

    #[test]
    fn another_site_is_refused_by_either_header() {
        fn h(pairs: &[(&'static str, &'static str)]) -> bool {
            cross_site(&with(pairs)).is_some()
        }
        let c = ("x-sentinel-console", "1");
        assert!(h(&[("host", "127.0.0.1:8080"), ("origin", "http://evil.example"), c]));
        assert!(h(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8081"), c]));
        assert!(h(&[("host", "127.0.0.1:8080"), ("origin", "null"), c]));
        assert!(h(&[("host", "127.0.0.1:8080"), ("origin", "ftp://127.0.0.1:8080"), c]));
        assert!(h(&[("sec-fetch-site", "cross-site"), c]));
        assert!(h(&[("sec-fetch-site", "same-site"), ("host", "a.example"), ("origin", "https://a.example"), c]));
        assert!(h(&[("origin", "http://127.0.0.1:8080"), c]), "an Origin without a Host to match");
        assert!(h(&[
            ("host", "127.0.0.1:8080"),
            ("x-forwarded-host", "sentinel.example"),
            ("origin", "https://evil.example"),
            ("x-sentinel-console", "1")
        ]));
        assert!(
            h(&[("host", "sentinel.example"), ("origin", "https://sentinel.example:8443"), ("x-sentinel-console", "1")]),
            "another port"
        );
        assert!(h(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080")]), "a browser change without the console's header");
        assert!(h(&[("sec-fetch-site", "same-origin")]), "a same-origin form post without the console's header");
    }
}
