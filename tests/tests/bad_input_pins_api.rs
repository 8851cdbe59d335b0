//! Pins through the API of a real `sentinel serve` process (`PUT /v1/pin`): 422 for a refused
//! pin, 400 for a body that is not the documented JSON, 415 for one that is not JSON, 413 for one
//! too large. A valid pin exists first; each refusal names the field, the stored pin and
//! everything else stored or published stay byte for byte as they were, and the attempt is in
//! the audit as `refused` (up to the API's allowance a minute, the rest counted).

use capacity_tests::bad_input::{FORGED_REASON, REVERSED_REASON, Sandbox, Snapshot, embedded_config, http};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Nothing changed but the audit: one `refused` record by alice per attempt since `before`
/// (`attempts`), up to the API's allowance of audited refusals a minute (and the row counter
/// SQLite keeps for them). Returns how many were written.
fn assert_unchanged_but_refusals(sb: &Sandbox, before: &Snapshot, what: &str, attempts: usize) -> usize {
    let mut now = sb.snapshot();
    let (Some(tables), Some(earlier)) = (now.tables.as_mut(), before.tables.as_ref()) else { panic!("{what}: no store") };
    let audit = tables.get_mut("pin_audit").expect("the audit table");
    let added = audit.split_off(earlier["pin_audit"].len().min(audit.len()));
    let allowance = sentinel::api::refusals::PER_MINUTE as usize;
    assert!(
        (attempts.min(allowance)..=attempts).contains(&added.len()),
        "{what}: one refused record per attempt, {allowance} a minute: {attempts} attempts, {added:#?}"
    );
    assert!(added.iter().all(|r| r.contains("Text(\"refused\")") && r.contains("Text(\"alice\")")), "{what}: {added:#?}");
    tables.insert("sqlite_sequence".into(), earlier["sqlite_sequence"].clone());
    let changes = now.changes_since(before);
    assert!(changes.is_empty(), "{what}: changed what is stored or published: {changes:#?}");
    added.len()
}

const STAFF: &str = "staff-token-bad-input";

/// `sentinel serve` on a free port of the sandbox's config; killed on drop.
struct Served {
    child: std::process::Child,
    addr: String,
    /// The server's log, outside the sandbox (whose files must not change).
    _log: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(sb: &Sandbox) -> Served {
    let log_dir = tempfile::tempdir().expect("a temp dir");
    let log = log_dir.path().join("serve.stderr");
    let mut served = Served { child: spawn_serve(sb, &log), addr: String::new(), _log: log_dir };
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(port) = text.split_whitespace().find_map(|w| w.strip_prefix("http://127.0.0.1:")) {
            served.addr = format!("127.0.0.1:{port}");
            return served;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "sentinel serve did not start:\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn_serve(sb: &Sandbox, log: &std::path::Path) -> std::process::Child {
    Command::new(capacity_tests::sentinel_bin::sentinel())
        .args(["serve", "--addr", "127.0.0.1:0", "--config"])
        .arg(sb.config())
        .current_dir(sb.dir.path())
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(log).expect("the server log")))
        .spawn()
        .expect("sentinel serve starts")
}

/// A `PUT /v1/pin` request and its refusal: the status, the problem's `field` (a refused pin
/// only) and what its `detail` says.
struct ApiCase {
    what: &'static str,
    content_type: Option<&'static str>,
    body: Vec<u8>,
    status: u16,
    field: Option<&'static str>,
    says: String,
}

impl ApiCase {
    fn new(
        what: &'static str,
        content_type: Option<&'static str>,
        body: Vec<u8>,
        status: u16,
        field: Option<&'static str>,
        says: &str,
    ) -> ApiCase {
        ApiCase { what, content_type, body, status, field, says: says.to_string() }
    }
}

#[test]
fn every_invalid_pin_body_is_refused_by_the_api_naming_the_field_and_changes_nothing() {
    let hash = hex::encode(Sha256::digest(STAFF.as_bytes()));
    let api = format!("[api]\ntokens = [{{ name = \"alice\", role = \"staff\", sha256 = \"{hash}\" }}]\n");
    let sb = Sandbox::with_config(&format!("{}{api}", embedded_config("")));
    sb.sentinel(&["tick"]).expect_code(0);
    let server = serve(&sb);
    let now = capacity_tests::bad_input::wall_now();
    let at = |seconds: i64| sentinel_core::instants::format_rfc3339(now + seconds);
    let put = |content_type: Option<&str>, body: &[u8]| http(&server.addr, "PUT", "/v1/pin", Some(STAFF), content_type, body);
    let json_put = |body: &serde_json::Value| put(Some("application/json"), body.to_string().as_bytes());

    let valid = json_put(&json!({ "state": "critical", "reason": "the pin that must survive", "expires_at": at(7200) }));
    assert_eq!(valid.status, 200, "{valid:?}");
    // Its log line names the state as every other line does: lowercase (it once wrote `Critical`).
    let logged = std::fs::read_to_string(server._log.path().join("serve.stderr")).unwrap_or_default();
    let line = logged.lines().find(|l| l.contains("pin set through the API")).unwrap_or_else(|| panic!("no log line of the pin: {logged}"));
    assert!(line.contains("state=\"critical\"") || line.contains("state=critical"), "{line}");
    let (files, shown) = (sb.snapshot(), http(&server.addr, "GET", "/v1/pin", Some(STAFF), None, b"").body);

    let pin = |state: &str, reason: &str, expires_at: &str| json!({ "state": state, "reason": reason, "expires_at": expires_at });
    let long = "x".repeat(501);
    // (what, content type, body, status, field for a refused pin, what the detail says)
    let cases: Vec<ApiCase> = [
        ("an unknown state", pin("sideways", "r", &at(3600)), 422, Some("state"), "state: must be one of"),
        ("a blank reason", pin("critical", "", &at(3600)), 422, Some("reason"), "reason: must not be blank"),
        ("a whitespace reason", pin("critical", " \t ", &at(3600)), 422, Some("reason"), "reason: must not be blank"),
        ("a reason over 500 characters", pin("critical", &long, &at(3600)), 422, Some("reason"), "reason: must be at most 500 characters"),
        ("an expiry in the past", pin("critical", "r", &at(-60)), 422, Some("expires_at"), "expires_at: must be in the future"),
        (
            "an expiry more than 24 h ahead",
            pin("critical", "r", &at(24 * 3600 + 120)),
            422,
            Some("expires_at"),
            "expires_at: must be at most 24 hours ahead",
        ),
        (
            "an expiry that does not parse",
            pin("critical", "r", "tomorrow"),
            422,
            Some("expires_at"),
            "expires_at: expected an RFC 3339 time",
        ),
        ("an expiry without a time", pin("critical", "r", "2026-10-21"), 422, Some("expires_at"), "expires_at: expected an RFC 3339 time"),
        (
            "a reason with a newline and a fake log line",
            pin("critical", "ok\n2026-01-01T00:00:00Z  INFO fake line", &at(3600)),
            422,
            Some("reason"),
            FORGED_REASON,
        ),
        ("a reason with a right-to-left override", pin("critical", "abc\u{202E}fed", &at(3600)), 422, Some("reason"), REVERSED_REASON),
        ("a missing state", json!({ "reason": "r", "expires_at": at(3600) }), 400, None, "missing field `state`"),
        ("a missing reason", json!({ "state": "critical", "expires_at": at(3600) }), 400, None, "missing field `reason`"),
        ("a missing expiry", json!({ "state": "critical", "reason": "r" }), 400, None, "missing field `expires_at`"),
        (
            "a state that is a number",
            json!({ "state": 3, "reason": "r", "expires_at": at(3600) }),
            400,
            None,
            "state: invalid type: integer `3`",
        ),
        (
            "a reason that is null",
            json!({ "state": "critical", "reason": null, "expires_at": at(3600) }),
            400,
            None,
            "reason: invalid type: null",
        ),
        (
            "an expiry as unix seconds",
            json!({ "state": "critical", "reason": "r", "expires_at": now + 3600 }),
            400,
            None,
            "expires_at: invalid type: integer",
        ),
        (
            "an unknown field",
            json!({ "state": "critical", "reason": "r", "expires_at": at(3600), "extra": 1 }),
            400,
            None,
            "unknown field `extra`",
        ),
        (
            "an actor in the body",
            json!({ "state": "critical", "reason": "r", "expires_at": at(3600), "actor": "mallory" }),
            400,
            None,
            "unknown field `actor`",
        ),
        ("a JSON array", json!(["critical", "r", at(3600)]), 400, None, "the body must be a JSON object"),
    ]
    .into_iter()
    .map(|(what, body, status, field, says)| {
        ApiCase::new(what, Some("application/json"), body.to_string().into_bytes(), status, field, says)
    })
    .chain([
        ApiCase::new("truncated JSON", Some("application/json"), b"{\"state\": \"critical\",".to_vec(), 400, None, "EOF while parsing"),
        ApiCase::new(
            "trailing bytes after the object",
            Some("application/json"),
            format!("{} x", pin("critical", "r", &at(3600))).into_bytes(),
            400,
            None,
            "trailing characters",
        ),
        ApiCase::new(
            "binary garbage",
            Some("application/json"),
            b"\x89PNG\r\n\x1a\n\x00\xff".to_vec(),
            400,
            None,
            "the body must be a JSON object",
        ),
        ApiCase::new("an empty body", Some("application/json"), Vec::new(), 400, None, "the body must be a JSON object"),
        ApiCase::new(
            "a JSON body sent as text",
            Some("text/plain"),
            pin("critical", "r", &at(3600)).to_string().into_bytes(),
            415,
            None,
            "Content-Type: application/json",
        ),
        ApiCase::new(
            "a form body",
            Some("application/x-www-form-urlencoded"),
            b"state=critical&reason=r".to_vec(),
            415,
            None,
            "Content-Type: application/json",
        ),
        ApiCase::new(
            "no content type",
            None,
            pin("critical", "r", &at(3600)).to_string().into_bytes(),
            415,
            None,
            "Content-Type: application/json",
        ),
        ApiCase::new(
            "a body over 16 KiB",
            Some("application/json"),
            pin("critical", &"x".repeat(17 * 1024), &at(3600)).to_string().into_bytes(),
            413,
            None,
            "at most 16 KiB",
        ),
    ])
    .collect();
    let mut audited = 0;
    for (n, ApiCase { what, content_type, body, status, field, says }) in cases.iter().enumerate() {
        let answer = put(*content_type, body);
        assert_eq!(answer.status, *status, "{what}: {answer:?}");
        assert_eq!(answer.content_type, "application/problem+json", "{what}: {answer:?}");
        let problem = answer.json();
        assert!(problem["detail"].as_str().is_some_and(|d| d.contains(says)), "{what}: the detail does not say {says:?}: {problem}");
        assert_eq!(problem["field"].as_str(), *field, "{what}: {problem}");
        audited = assert_unchanged_but_refusals(&sb, &files, what, n + 1);
        assert_eq!(http(&server.addr, "GET", "/v1/pin", Some(STAFF), None, b"").body, shown, "{what}: GET /v1/pin changed");
    }
    eprintln!("{} invalid pin bodies refused by the API, {audited} of them audited", cases.len());
    // Every attempt is either on record or counted: none is lost.
    let metrics = http(&server.addr, "GET", "/metrics", None, None, b"");
    let text = metrics.body;
    let unaudited: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("sentinel_api_refusals_unaudited_total "))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no sentinel_api_refusals_unaudited_total in {text}")) as usize;
    assert_eq!(audited + unaudited, cases.len(), "audited {audited} + counted {unaudited}");

    // A valid replacement goes through, and the checks above see it.
    let replaced = json_put(&pin("emergency", "replaced", &at(3600)));
    assert_eq!(replaced.status, 200, "{replaced:?}");
    assert!(!sb.snapshot().changes_since(&files).is_empty(), "a replaced pin changes the store");
}
