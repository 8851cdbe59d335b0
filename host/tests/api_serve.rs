//! `sentinel serve` as a process: a pin set over HTTP is what the next `sentinel tick`
//! publishes, the audit shows before/after, `GET /v1/state` serves the published document,
//! and SIGTERM/SIGINT stop the server cleanly. Tokens come from the config or from the file
//! `SENTINEL_API_TOKENS_FILE` names; their plain values never reach the logs.

use crate::support;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::process::Stdio;
use std::time::Duration;
use support::{Background, Metrics, Sandbox, cpu, eventually, minute_of, rfc, wall_now};

const STAFF: &str = "staff-token-7f3a9c";
pub(crate) const VIEWER: &str = "viewer-token-0b12e4";

fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

pub(crate) fn tokens_toml() -> String {
    format!(
        "tokens = [\n  {{ name = \"alice\", role = \"staff\", sha256 = \"{}\" }},\n  {{ name = \"dash\", role = \"viewer\", sha256 = \"{}\" }},\n]\n",
        hash(STAFF),
        hash(VIEWER)
    )
}

/// A sandbox whose trace has a reading this minute and the next two.
fn sandbox(api_table: &str) -> (Sandbox, i64) {
    let minute = minute_of(wall_now());
    let sb = Sandbox::new(Metrics::Trace((0..3).map(|i| cpu(minute + 60 * i, 30.0)).collect()));
    sb.edit_config(|text| format!("{text}[api]\naddress = \"127.0.0.1:1\"\n{api_table}"));
    (sb, minute)
}

/// Starts `sentinel serve` on a free port and returns it with its base URL.
pub(crate) fn serve(sb: &Sandbox, env: &[(&str, String)], name: &str) -> (Background, String) {
    let log = sb.path(&format!("{name}.stderr"));
    let mut cmd = sb.command(&["serve", "--addr", "127.0.0.1:0"]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::from(File::create(&log).unwrap())).spawn().unwrap();
    let server = Background { child, log };
    let mut url = None;
    let started = eventually(Duration::from_secs(20), || {
        url = server.stderr().split_whitespace().find(|w| w.starts_with("http://127.0.0.1:")).map(str::to_string);
        url.is_some()
    });
    assert!(started, "sentinel serve did not start:\n{}", server.stderr());
    (server, url.unwrap())
}

pub(crate) struct Api {
    client: reqwest::Client,
    url: String,
}

impl Api {
    pub(crate) fn new(url: &str) -> Api {
        Api { client: sentinel_adapters::tls::http_client().unwrap().timeout(Duration::from_secs(10)).build().unwrap(), url: url.into() }
    }

    async fn send(&self, method: reqwest::Method, path: &str, token: Option<&str>, body: Option<Value>) -> (u16, String, Value) {
        let mut request = self.client.request(method, format!("{}{path}", self.url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let content_type = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        let text = response.text().await.unwrap();
        let body = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap_or(Value::String(text)) };
        (status, content_type, body)
    }

    pub(crate) async fn get(&self, path: &str, token: Option<&str>) -> (u16, String, Value) {
        self.send(reqwest::Method::GET, path, token, None).await
    }
}

#[tokio::test]
async fn a_pin_set_over_http_is_published_by_the_next_tick() {
    let (sb, minute) = sandbox(&tokens_toml());
    let (mut server, url) = serve(&sb, &[], "serve");
    let api = Api::new(&url);

    assert_eq!(api.get("/healthz", None).await.0, 200);
    let (status, _, ready) = api.get("/readyz", None).await;
    assert_eq!(status, 200, "{ready}");
    let (status, content_type, p) = api.get("/v1/state", Some(VIEWER)).await;
    assert_eq!((status, content_type.as_str()), (404, "application/problem+json"), "nothing published yet: {p}");

    let expires_at = rfc(minute + 2 * 3600);
    let pin = json!({ "state": "emergency", "reason": "incident 4411", "expires_at": expires_at });
    let (status, _, p) = api.send(reqwest::Method::PUT, "/v1/pin", Some(VIEWER), Some(pin.clone())).await;
    assert_eq!(status, 403, "{p}");
    let (status, _, set) = api.send(reqwest::Method::PUT, "/v1/pin", Some(STAFF), Some(pin)).await;
    assert_eq!(status, 200, "{set}");
    assert_eq!((set["action"].as_str(), set["actor"].as_str()), (Some("set"), Some("alice")));

    // A refused pin changes nothing.
    let far = json!({ "state": "normal", "reason": "all clear", "expires_at": rfc(wall_now() + 25 * 3600) });
    let (status, content_type, p) = api.send(reqwest::Method::PUT, "/v1/pin", Some(STAFF), Some(far)).await;
    assert_eq!((status, content_type.as_str()), (422, "application/problem+json"));
    assert_eq!(p["detail"], "expires_at: must be at most 24 hours ahead");

    // The next tick honours the pin.
    sb.tick_ok(minute + 60);
    let doc = sb.cache_doc();
    assert_eq!((doc["state"].as_str(), doc["cause"].as_str()), (Some("emergency"), Some("pinned")), "{doc}");
    assert_eq!(doc["pinned"], true);
    assert_eq!(doc["pin_expires_at"], expires_at);
    let (status, _, state) = api.get("/v1/state", Some(VIEWER)).await;
    assert_eq!(status, 200);
    assert_eq!(state, doc, "GET /v1/state is the published document");

    // Replace, clear: the audit shows each change with the pin before and after.
    let easing = json!({ "state": "critical", "reason": "easing", "expires_at": rfc(minute + 3600) });
    let (status, _, replace) = api.send(reqwest::Method::PUT, "/v1/pin", Some(STAFF), Some(easing)).await;
    assert_eq!(status, 200, "{replace}");
    let (status, _, clear) = api.send(reqwest::Method::DELETE, "/v1/pin", Some(STAFF), None).await;
    assert_eq!(status, 200, "{clear}");
    let (status, _, audit) = api.get("/v1/pin/audit?limit=10", Some(VIEWER)).await;
    assert_eq!(status, 200);
    let all = audit["entries"].as_array().unwrap();
    let actions = |entries: &[&Value]| entries.iter().map(|e| e["action"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    // The viewer's attempt and the refused expiry are on record too, newest first.
    assert_eq!(actions(&all.iter().collect::<Vec<_>>()), ["clear", "replace", "refused", "set", "refused"]);
    assert_eq!((all[4]["actor"].as_str(), all[2]["actor"].as_str()), (Some("dash"), Some("alice")));
    assert!(all[2]["refusal"].as_str().unwrap().ends_with("expires_at: must be at most 24 hours ahead (422)"), "{}", all[2]);
    let entries: Vec<&Value> = all.iter().filter(|e| e["action"] != "refused").collect();
    assert_eq!(entries[2]["before"], Value::Null);
    assert_eq!(entries[2]["after"], set["after"]);
    assert_eq!(entries[1]["before"], set["after"]);
    assert_eq!(entries[1]["after"]["state"], "critical");
    assert_eq!(entries[0]["before"], entries[1]["after"]);
    assert_eq!(entries[0]["after"], Value::Null);

    // The CLI sees the same trail (one service layer).
    let cli = sb.sentinel(&["pin", "audit"]).success().json_lines();
    assert_eq!(cli.iter().map(|r| r["id"].clone()).collect::<Vec<_>>(), all.iter().map(|e| e["id"].clone()).collect::<Vec<_>>());

    // And the next tick publishes the state without the pin.
    sb.tick_ok(minute + 120);
    assert_eq!(sb.cache_doc()["pinned"], false);
    assert_eq!(api.get("/v1/state", Some(STAFF)).await.2, sb.cache_doc());

    let metrics = api.get("/metrics", None).await;
    assert!(metrics.2.as_str().unwrap().contains("sentinel_api_pin_changes_total{action=\"set\"} 1"));

    server.signal("TERM");
    let status = server.wait_for_exit(Duration::from_secs(12)).unwrap_or_else(|| panic!("no exit after SIGTERM:\n{}", server.stderr()));
    assert_eq!(status.code(), Some(0), "{}", server.stderr());
    let log = server.stderr();
    assert!(log.contains("the API stopped"), "{log}");
    assert!(!log.contains(STAFF) && !log.contains(VIEWER), "no token in the logs:\n{log}");
    assert!(log.contains("pin set through the API"), "{log}");
}

#[tokio::test]
async fn sigint_stops_the_server_and_tokens_may_come_from_a_file() {
    let (sb, _) = sandbox("");
    let file = sb.path("tokens.toml");
    std::fs::write(&file, tokens_toml()).unwrap();
    let (mut server, url) = serve(&sb, &[("SENTINEL_API_TOKENS_FILE", file.display().to_string())], "serve-file");
    let api = Api::new(&url);
    assert_eq!(api.get("/v1/pin", Some(VIEWER)).await.0, 200);
    assert_eq!(api.get("/v1/pin", Some("nope")).await.0, 401);
    server.signal("INT");
    let status = server.wait_for_exit(Duration::from_secs(12)).unwrap_or_else(|| panic!("no exit after SIGINT:\n{}", server.stderr()));
    assert_eq!(status.code(), Some(0), "{}", server.stderr());
}

#[test]
fn a_bad_token_hash_is_refused_naming_the_key_without_echoing_it() {
    let (sb, _) = sandbox("tokens = [{ name = \"alice\", role = \"staff\", sha256 = \"my-plain-password\" }]\n");
    let ran = sb.sentinel(&["serve", "--addr", "127.0.0.1:0"]).expect_code(2);
    assert!(ran.stderr.contains("api.tokens[0].sha256: must be 64 hex digits"), "{}", ran.stderr);
    assert!(!ran.stderr.contains("my-plain-password"), "{}", ran.stderr);

    let (sb, _) = sandbox("tokens = [{ name = \"alice\", role = \"admin\", sha256 = \"00\" }]\n");
    let ran = sb.sentinel(&["serve", "--addr", "127.0.0.1:0"]).expect_code(2);
    assert!(ran.stderr.contains("admin") && ran.stderr.contains("role"), "{}", ran.stderr);
}

/// `--addr` beyond loopback makes the API reachable from other machines: like such an
/// `[api] address`, it needs signed policies (the embedded default serves loopback only).
#[test]
fn serving_beyond_loopback_with_an_unsigned_policy_is_refused_even_through_addr() {
    let (sb, _) = sandbox(&tokens_toml());
    let ran = sb.sentinel(&["serve", "--addr", "0.0.0.0:0"]);
    assert_ne!(ran.code(), Some(0), "{}", ran.stderr);
    assert!(ran.stderr.contains("policies: is required with --addr 0.0.0.0:0 (not loopback)"), "{}", ran.stderr);
}
