//! The staff console: one page at `/` with its script (an ES module, `/console.js`, importing the
//! page's parts from `/console/<part>.js`) and style sheet, embedded in the binary (no build
//! step, nothing fetched from elsewhere). The page holds no data: it signs in with a token kept
//! in the tab's session storage and reads the same `/v1` API as any client, so every rule of the
//! API (roles, audit, validation) applies to it unchanged.

use axum::extract::Path;
use axum::http::header;
use axum::response::{IntoResponse, Response};

const INDEX_HTML: &str = include_str!("assets/index.html");
const CONSOLE_JS: &str = include_str!("assets/console.js");
const CONSOLE_CSS: &str = include_str!("assets/console.css");

/// The modules `/console.js` imports, by file name.
pub const MODULES: [(&str, &str); 10] = [
    ("api.js", include_str!("assets/modules/api.js")),
    ("audit.js", include_str!("assets/modules/audit.js")),
    ("dom.js", include_str!("assets/modules/dom.js")),
    ("overview.js", include_str!("assets/modules/overview.js")),
    ("pin_form.js", include_str!("assets/modules/pin_form.js")),
    ("pin_view.js", include_str!("assets/modules/pin_view.js")),
    ("refresh.js", include_str!("assets/modules/refresh.js")),
    ("scorecard.js", include_str!("assets/modules/scorecard.js")),
    ("session.js", include_str!("assets/modules/session.js")),
    ("timeline.js", include_str!("assets/modules/timeline.js")),
];

const JAVASCRIPT: &str = "text/javascript; charset=utf-8";

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
    asset(JAVASCRIPT, CONSOLE_JS)
}

/// `GET /console/<part>.js`: one of [`MODULES`]; any other name is a 404 problem.
pub async fn module(Path(name): Path<String>) -> Response {
    match MODULES.iter().find(|(file, _)| *file == name) {
        Some((_, body)) => asset(JAVASCRIPT, body),
        None => super::problem::not_found().await.into_response(),
    }
}

/// `GET /console.css`.
pub async fn style() -> Response {
    asset("text/css; charset=utf-8", CONSOLE_CSS)
}
