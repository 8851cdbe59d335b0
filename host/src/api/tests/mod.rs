//! Router tests: every route, role and error case through `oneshot`, on a temp SQLite store
//! and the built 1.0.0 policy component (`cargo policies`).

mod audit;
mod auth;
mod concurrency;
mod console;
mod oidc;
mod ops;
mod pin;
mod state;

use super::{ApiState, router};
use crate::config::api::{ApiRole, ApiToken};
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use sentinel_adapters::sqlite::SqliteStore;
use sentinel_core::instants::{format_rfc3339, parse_rfc3339};
use sentinel_core::policy::active::SharedPolicy;
use sentinel_core::policy::{ComponentPolicy, Limits, Runtime};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tower::ServiceExt;
use vocabulary::Instant;
use wasmtime::component::Component;

pub const STAFF: &str = "staff-token-of-alice";
pub const VIEWER: &str = "viewer-token-of-dash";

/// The tests' clock: 2026-10-20T14:00:00Z.
pub fn t0() -> Instant {
    parse_rfc3339("2026-10-20T14:00:00Z").unwrap()
}

pub fn policy_path() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/policies/capacity-policy-1.0.0.wasm");
    assert!(path.is_file(), "{} is missing: run `cargo policies` first", path.display());
    path
}

/// The component, compiled once per test process.
fn compiled() -> &'static (Arc<Runtime>, Component, String) {
    static COMPILED: OnceLock<(Arc<Runtime>, Component, String)> = OnceLock::new();
    COMPILED.get_or_init(|| {
        let path = policy_path();
        let bytes = std::fs::read(&path).unwrap();
        let runtime = Runtime::new(Limits::default()).unwrap();
        let component = Component::from_binary(runtime.engine(), &bytes).unwrap();
        (runtime, component, hex::encode(Sha256::digest(&bytes)))
    })
}

pub fn policy() -> SharedPolicy {
    let (runtime, component, digest) = compiled();
    let policy = ComponentPolicy::from_component(runtime, &policy_path(), component, digest.clone(), None).unwrap();
    SharedPolicy::new(Box::new(policy))
}

pub fn tokens() -> Vec<ApiToken> {
    let token = |name: &str, role, value: &str| ApiToken { name: name.into(), role, sha256: Sha256::digest(value.as_bytes()).into() };
    vec![token("alice", ApiRole::Staff, STAFF), token("dash", ApiRole::Viewer, VIEWER)]
}

/// One test's API: a temp store, the component, a settable clock.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub store: Arc<SqliteStore>,
    pub state: ApiState,
    pub now: Arc<AtomicI64>,
}

impl Harness {
    pub fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SqliteStore::open(&dir.path().join("state/sentinel.db")).unwrap());
        let now = Arc::new(AtomicI64::new(t0()));
        let clock = now.clone();
        let state =
            ApiState::new(store.clone(), store.clone(), policy(), &tokens()).unwrap().with_clock(move || clock.load(Ordering::SeqCst));
        Harness { dir, store, state, now }
    }

    pub fn router(&self) -> Router {
        router(self.state.clone())
    }

    pub fn now(&self) -> Instant {
        self.now.load(Ordering::SeqCst)
    }

    /// `now` plus `seconds`, as RFC 3339.
    pub fn ahead(&self, seconds: i64) -> String {
        format_rfc3339(self.now() + seconds)
    }

    pub async fn call(&self, request: Request<Body>) -> Reply {
        call(self.router(), request).await
    }

    /// A valid pin body expiring `seconds` from now.
    pub fn pin_body(&self, state: &str, reason: &str, seconds: i64) -> String {
        serde_json::json!({ "state": state, "reason": reason, "expires_at": self.ahead(seconds) }).to_string()
    }

    pub async fn set_pin(&self, state: &str, reason: &str, seconds: i64) -> Reply {
        self.call(put_json("/v1/pin", Some(STAFF), &self.pin_body(state, reason, seconds))).await
    }

    /// The stored pin, straight from the store.
    pub async fn stored_pin(&self) -> Option<vocabulary::Pin> {
        sentinel_core::ports::pins::PinStore::current_pin(self.store.as_ref()).await.unwrap()
    }
}

/// A response, its body read.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn content_type(&self) -> &str {
        self.headers.get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap()).unwrap_or("")
    }

    /// Asserts a problem+json reply of `status`, and returns the problem.
    pub fn problem(&self, status: StatusCode) -> Value {
        assert_eq!(self.status, status, "{}", self.text());
        assert_eq!(self.content_type(), "application/problem+json", "{}", self.text());
        let p = self.json();
        assert_eq!(p["status"], status.as_u16(), "{p}");
        assert!(p["type"].as_str().unwrap().starts_with("urn:capacity-sentinel:problem:"), "{p}");
        assert!(!p["title"].as_str().unwrap().is_empty(), "{p}");
        assert!(!p["detail"].as_str().unwrap().is_empty(), "{p}");
        p
    }

    /// Asserts `status` with a JSON body, and returns it.
    pub fn ok_json(&self, status: StatusCode) -> Value {
        assert_eq!(self.status, status, "{}", self.text());
        assert_eq!(self.content_type(), "application/json", "{}", self.text());
        self.json()
    }
}

pub async fn call(router: Router, request: Request<Body>) -> Reply {
    let response = router.oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.unwrap().to_bytes().to_vec();
    Reply { status, headers, body }
}

pub fn request(method: Method, path: &str, token: Option<&str>) -> axum::http::request::Builder {
    let mut b = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        b = b.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    b
}

pub fn get(path: &str, token: Option<&str>) -> Request<Body> {
    request(Method::GET, path, token).body(Body::empty()).unwrap()
}

pub fn delete(path: &str, token: Option<&str>) -> Request<Body> {
    request(Method::DELETE, path, token).body(Body::empty()).unwrap()
}

pub fn put_json(path: &str, token: Option<&str>, body: &str) -> Request<Body> {
    request(Method::PUT, path, token).header(header::CONTENT_TYPE, "application/json").body(Body::from(body.to_string())).unwrap()
}
