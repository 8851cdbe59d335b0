//! Pins through the real command line: `sentinel pin set` (on the wall clock) overrides the
//! next tick, the tick after its expiry removes it with an `expire` audit record, and invalid
//! pins are refused naming the field while the stored pin and audit stay as they were.

use crate::support;

use sentinel_core::instants::parse_rfc3339;
use support::{Metrics, Sandbox, cpu, minute_of, rfc, wall_now};

#[test]
fn a_pin_overrides_the_next_tick_and_its_expiry_is_audited() {
    // The trace is written once the pin's time is known (`pin` commands do not read it).
    let sb = Sandbox::new(Metrics::Trace(Vec::new()));
    let set = sb
        .sentinel(&["pin", "set", "--state", "emergency", "--reason", "incident 4411", "--expires-in", "2m", "--actor", "ops@example.com"])
        .success();
    let record = set.json();
    assert_eq!(record["action"], "set");
    assert_eq!(record["before"], serde_json::Value::Null);
    let pin = record["after"].clone();
    assert_eq!(pin["state"], "emergency");
    assert_eq!(pin["actor"], "ops@example.com");
    // Times as people read them: RFC 3339, as the API gives them.
    let time = |v: &serde_json::Value| parse_rfc3339(v.as_str().unwrap_or_else(|| panic!("an RFC 3339 time: {v}"))).unwrap();
    let (set_at, expires_at) = (time(&record["at"]), time(&pin["expires_at"]));
    assert_eq!(expires_at, set_at + 120);
    assert!((set_at - wall_now()).abs() < 30, "pin set uses the wall clock");

    // Normal readings from the pin's minute to the minute after its expiry: the pin, not the
    // readings, decides.
    let pinned_minute = minute_of(set_at);
    let after_expiry = minute_of(expires_at) + 60;
    let lines: Vec<String> = (0..=(after_expiry - pinned_minute) / 60).map(|m| cpu(pinned_minute + m * 60, 40.0)).collect();
    std::fs::write(&sb.trace, lines.join("\n") + "\n").unwrap();

    let ran = sb.tick_ok(pinned_minute);
    let doc = sb.cache_doc();
    assert_eq!(doc["state"], "emergency", "{doc}\n{}", ran.stderr);
    assert_eq!(doc["pinned"], true);
    assert_eq!(doc["cause"], "pinned");
    assert_eq!(doc["pin_expires_at"], rfc(expires_at).as_str());
    assert_eq!(doc["factors"], serde_json::json!({ "bulk": 0.0, "heavy": 0.25, "write": 0.5, "read": 0.5 }));
    assert_eq!(doc["sequence"], 1);
    assert!(sb.sentinel(&["pin", "show"]).success().json()["state"] == "emergency");

    // Past the expiry: the tick removes the pin and audits it, and no longer publishes pinned.
    let ran = sb.tick_ok(after_expiry);
    let doc = sb.cache_doc();
    assert_eq!(doc["pinned"], false, "{doc}\n{}", ran.stderr);
    assert_eq!(doc["pin_expires_at"], serde_json::Value::Null);
    assert_ne!(doc["cause"], "pinned");
    assert_eq!(doc["sequence"], 2);
    assert!(ran.stderr.contains("the pin expired and was removed"), "{}", ran.stderr);

    let audit = sb.sentinel(&["pin", "audit"]).success().json_lines();
    assert_eq!(audit.len(), 2, "set, then expire (newest first): {audit:?}");
    let expire = &audit[0];
    assert_eq!(expire["action"], "expire");
    assert_eq!(expire["before"], pin, "the expired pin, as it was stored");
    assert_eq!(expire["after"], serde_json::Value::Null);
    assert_eq!(expire["at"], rfc(after_expiry).as_str(), "audited at the tick's time");
    assert_eq!(audit[1], record);
    assert_eq!(sb.sentinel(&["pin", "show"]).success().json(), serde_json::Value::Null);
}

#[test]
fn an_invalid_pin_is_refused_naming_the_field_and_changes_nothing() {
    let sb = Sandbox::new(Metrics::Synthetic);
    sb.sentinel(&["pin", "set", "--state", "critical", "--reason", "load test", "--expires-in", "2h", "--actor", "ops@example.com"])
        .success();
    let (show, audit) = (sb.sentinel(&["pin", "show"]).success().stdout, sb.sentinel(&["pin", "audit"]).success().stdout);
    assert!(show.contains("\"critical\""), "{show}");
    assert_eq!(audit.lines().count(), 1);

    let refused = [
        (["emergency", "too long", "25h", "ops@example.com"], "expires_at: must be at most 24 hours ahead"),
        (["emergency", "  ", "1h", "ops@example.com"], "reason: must not be blank"),
        (["sideways", "bad state", "1h", "ops@example.com"], "state: must be one of"),
    ];
    for ([state, reason, expires_in, actor], message) in refused {
        let ran = sb.sentinel(&["pin", "set", "--state", state, "--reason", reason, "--expires-in", expires_in, "--actor", actor]);
        assert_ne!(ran.code(), Some(0), "{ran:?}");
        assert!(ran.stderr.contains(message), "names the field: {message:?} in {}", ran.stderr);
        assert!(ran.stderr.contains("nothing changed"), "{}", ran.stderr);
        assert!(ran.stdout.is_empty(), "no audit record printed: {}", ran.stdout);
    }
    assert_eq!(sb.sentinel(&["pin", "show"]).success().stdout, show, "the stored pin is untouched (INV-04)");
    assert_eq!(sb.sentinel(&["pin", "audit"]).success().stdout, audit, "no audit record for a refused pin");
}

/// Security review, finding 5: a reason or an actor that would forge a log line (a newline and
/// a fake line) or show other than it holds (a right-to-left override) is refused like any
/// invalid field, naming it, and nothing is stored.
#[test]
fn a_control_or_bidi_character_in_the_reason_or_actor_is_refused_naming_the_field_and_changes_nothing() {
    let sb = Sandbox::new(Metrics::Synthetic);
    sb.sentinel(&["pin", "set", "--state", "critical", "--reason", "load test", "--expires-in", "2h", "--actor", "ops@example.com"])
        .success();
    let (show, audit) = (sb.sentinel(&["pin", "show"]).success().stdout, sb.sentinel(&["pin", "audit"]).success().stdout);
    let fake = "ok\n2026-01-01T00:00:00Z  INFO fake line";
    let refused = [
        (fake, "ops@example.com", "reason: must not contain control characters", "U+000A at character 3"),
        ("abc\u{202E}fed", "ops@example.com", "reason: must not contain control characters", "U+202E at character 4"),
        ("tab\there", "ops@example.com", "reason: must not contain control characters", "U+0009"),
        ("incident 4411", "ops\n2026-01-01T00:00:00Z  INFO fake actor", "actor: must not contain control characters", "U+000A"),
        ("incident 4411", "\u{2066}ops\u{2069}", "actor: must not contain control characters", "U+2066"),
    ];
    for (reason, actor, message, which) in refused {
        let ran = sb.sentinel(&["pin", "set", "--state", "emergency", "--reason", reason, "--expires-in", "1h", "--actor", actor]);
        assert_eq!(ran.code(), Some(4), "{ran:?}");
        assert!(ran.stderr.contains(&format!("pin refused, nothing changed: {message}")), "names the field: {message:?} in {}", ran.stderr);
        assert!(ran.stderr.contains(which), "{}", ran.stderr);
        assert!(!ran.stderr.contains("fake") && !ran.stderr.contains('\u{202E}'), "the text is not echoed: {}", ran.stderr);
        assert!(ran.stdout.is_empty(), "no audit record printed: {}", ran.stdout);
    }
    let ran = sb.sentinel(&["pin", "clear", "--actor", "ops\r\n2026-01-01T00:00:00Z  INFO fake"]);
    assert_eq!(ran.code(), Some(4), "{ran:?}");
    assert!(ran.stderr.contains("pin refused, nothing changed: actor: must not contain control characters"), "{}", ran.stderr);
    assert_eq!(sb.sentinel(&["pin", "show"]).success().stdout, show, "the stored pin is untouched (INV-04)");
    assert_eq!(sb.sentinel(&["pin", "audit"]).success().stdout, audit, "no audit record for a refused pin");
}

/// Security review, finding 5: a pin stored before such characters were refused (an old row,
/// written here straight into the store) is logged escaped by the tick: its newlines never
/// start a line of the text log.
#[test]
fn a_stored_reason_or_actor_with_a_newline_never_starts_a_log_line() {
    let sb = Sandbox::new(Metrics::Synthetic);
    sb.sentinel(&["pin", "set", "--state", "critical", "--reason", "placeholder", "--expires-in", "2h", "--actor", "ops@example.com"])
        .success();
    let conn = sb.db();
    let text: String = conn.query_row("SELECT pin FROM pin WHERE id = 1", [], |row| row.get(0)).unwrap();
    let mut pin: serde_json::Value = serde_json::from_str(&text).unwrap();
    pin["reason"] = "ok\n2026-01-01T00:00:00Z  INFO fake line from the reason".into();
    pin["actor"] = "ops\n2026-01-01T00:00:00Z  INFO fake line from the actor\u{202E}".into();
    assert_eq!(conn.execute("UPDATE pin SET pin = ?1 WHERE id = 1", [pin.to_string()]).unwrap(), 1);
    drop(conn);
    assert!(sb.sentinel(&["pin", "show"]).success().stdout.contains("fake line from the reason"), "the old row is read back");

    let ran = sb.sentinel(&["tick"]).success();
    assert_eq!(sb.cache_doc()["cause"], "pinned", "the old pin decides: {}", ran.stderr);
    let tick_line = ran.stderr.lines().find(|l| l.contains(" sequence=")).unwrap_or_else(|| panic!("a tick line:\n{}", ran.stderr));
    assert!(tick_line.contains("ok\\n2026-01-01T00:00:00Z  INFO fake line from the reason"), "the reason, escaped: {tick_line}");
    assert!(
        tick_line.contains("pinned by ops\\n2026-01-01T00:00:00Z  INFO fake line from the actor\\u{202e}"),
        "the actor, escaped: {tick_line}"
    );
    for line in ran.stderr.lines() {
        assert!(!line.starts_with("2026-01-01T00:00:00Z"), "a forged log line:\n{}", ran.stderr);
        assert!(!line.contains('\u{202E}'), "an unescaped override: {line}");
    }
}
