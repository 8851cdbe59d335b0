//! The staff console: one page at `/` with its script and style sheet, embedded in the binary
//! (no build step, nothing fetched from elsewhere). The page holds no data: it signs in with a
//! token kept in the tab's session storage and reads the same `/v1` API as any client, so
//! every rule of the API (roles, audit, validation) applies to it unchanged.

use axum::http::header;
use axum::response::{IntoResponse, Response};

const INDEX_HTML: &str = include_str!("assets/index.html");
const CONSOLE_JS: &str = include_str!("assets/console.js");
const CONSOLE_CSS: &str = include_str!("assets/console.css");

fn asset(content_type: &'static str, body: &'static str) -> Response {
    // Revalidated on every load, so an upgraded sentinel never runs an older script.
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// `GET /`: the page.
pub async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

/// `GET /console.js`.
pub async fn script() -> Response {
    asset("text/javascript; charset=utf-8", CONSOLE_JS)
}

/// `GET /console.css`.
pub async fn style() -> Response {
    asset("text/css; charset=utf-8", CONSOLE_CSS)
}
