use super::{AT, error, pair};
use crate::{TraceEvent, parse_trace};
use vocabulary::{Pin, ProtectionState};

fn reading_error(reading: &str) -> (String, String) {
    error(&format!(r#"{{"at":"2026-10-20T14:03:00Z","reading":{reading}}}"#))
}

fn pin_error(pin: &str) -> (String, String) {
    error(&format!(r#"{{"at":"2026-10-20T14:03:00Z","pin":{pin}}}"#))
}

#[test]
fn reading_errors() {
    assert_eq!(reading_error("null"), pair("reading", "expected an object, got null"));
    assert_eq!(reading_error("[]"), pair("reading", "expected an object, got []"));
    assert_eq!(reading_error(r#"{"cpu":50}"#), pair("reading.cpu", "unknown key (expected cpu_pct, connections_pct, scaling, latency)"));
    for (reading, field, got) in [
        (r#"{"cpu_pct":"high"}"#, "reading.cpu_pct", r#""high""#),
        (r#"{"cpu_pct":100.5}"#, "reading.cpu_pct", "100.5"),
        (r#"{"cpu_pct":-1}"#, "reading.cpu_pct", "-1"),
        (r#"{"cpu_pct":true}"#, "reading.cpu_pct", "true"),
        (r#"{"connections_pct":101}"#, "reading.connections_pct", "101"),
        (r#"{"connections_pct":"40"}"#, "reading.connections_pct", r#""40""#),
    ] {
        assert_eq!(reading_error(reading), pair(field, &format!("expected a number between 0 and 100, got {got}")));
    }
    assert_eq!(reading_error(r#"{"scaling":"no"}"#), pair("reading.scaling", r#"expected true or false, got "no""#));
    assert_eq!(reading_error(r#"{"scaling":0}"#), pair("reading.scaling", "expected true or false, got 0"));
}

#[test]
fn latency_errors() {
    assert_eq!(
        reading_error(r#"{"latency":{"api":"crm"}}"#),
        pair("reading.latency", r#"expected an array of {api, p95_ms, baseline_ms}, got {"api":"crm"}"#)
    );
    assert_eq!(reading_error(r#"{"latency":[{"api":"crm"},7]}"#), pair("reading.latency[1]", "expected an object, got 7"));
    assert_eq!(reading_error(r#"{"latency":[{}]}"#), pair("reading.latency[0].api", "missing"));
    for (api, got) in [(r#""  ""#, r#""  ""#), (r#""""#, r#""""#), ("null", "null"), ("3", "3")] {
        assert_eq!(
            reading_error(&format!(r#"{{"latency":[{{"api":{api}}}]}}"#)),
            pair("reading.latency[0].api", &format!("expected a nonblank string, got {got}"))
        );
    }
    assert_eq!(
        reading_error(r#"{"latency":[{"api":"crm","p99_ms":1}]}"#),
        pair("reading.latency[0].p99_ms", "unknown key (expected api, p95_ms, baseline_ms)")
    );
    for (entry, field, got) in [
        (r#"{"api":"crm","p95_ms":-0.5}"#, "reading.latency[0].p95_ms", "-0.5"),
        (r#"{"api":"crm","p95_ms":"fast"}"#, "reading.latency[0].p95_ms", r#""fast""#),
        (r#"{"api":"crm","baseline_ms":-3}"#, "reading.latency[0].baseline_ms", "-3"),
        (r#"{"api":"crm","baseline_ms":[1]}"#, "reading.latency[0].baseline_ms", "[1]"),
    ] {
        assert_eq!(
            reading_error(&format!(r#"{{"latency":[{entry}]}}"#)),
            pair(field, &format!("expected a non-negative number, got {got}"))
        );
    }
}

#[test]
fn read_error_and_throttles_errors() {
    assert_eq!(error(r#"{"at":"2026-10-20T14:03:00Z","read_error":null}"#), pair("read_error", "expected a string, got null"));
    assert_eq!(
        error(r#"{"at":"2026-10-20T14:03:00Z","throttles_enabled":"on"}"#),
        pair("throttles_enabled", r#"expected true or false, got "on""#)
    );
}

#[test]
fn pin_errors() {
    let valid = r#""state":"critical","reason":"r","expires_at":"2026-10-20T16:00:00Z","actor":"a""#;
    assert_eq!(pin_error("true"), pair("pin", "expected an object, got true"));
    assert_eq!(pin_error(&format!(r#"{{{valid},"by":"x"}}"#)), pair("pin.by", "unknown key (expected state, reason, expires_at, actor)"));
    for key in ["state", "reason", "expires_at", "actor"] {
        let without: Vec<&str> = valid.split(',').filter(|kv| !kv.starts_with(&format!("\"{key}\""))).collect();
        assert_eq!(pin_error(&format!("{{{}}}", without.join(","))), pair(&format!("pin.{key}"), "missing"));
    }
    assert_eq!(
        pin_error(r#"{"state":"Emergency","reason":"r","expires_at":"2026-10-20T16:00:00Z","actor":"a"}"#),
        pair("pin.state", r#"expected one of normal, constrained, critical, emergency, got "Emergency""#)
    );
    assert_eq!(
        pin_error(r#"{"state":"normal","reason":5,"expires_at":"2026-10-20T16:00:00Z","actor":"a"}"#),
        pair("pin.reason", "expected a string, got 5")
    );
    assert_eq!(
        pin_error(r#"{"state":"normal","reason":"r","expires_at":"soon","actor":"a"}"#),
        pair("pin.expires_at", r#"expected an RFC 3339 time like 2026-10-20T14:03:00Z, got "soon""#)
    );
    assert_eq!(
        pin_error(r#"{"state":"normal","reason":"r","expires_at":"2026-10-20T16:00:00Z","actor":null}"#),
        pair("pin.actor", "expected a string, got null")
    );
}

#[test]
fn pins_are_not_validated_further() {
    // Expired, blank reason and actor: replay applies recorded pins as stored.
    let trace = parse_trace(
        "t",
        r#"{"at":"2026-10-20T14:03:00Z","pin":{"state":"normal","reason":"","expires_at":"2000-01-01T00:00:00Z","actor":" "}}"#,
    )
    .unwrap();
    assert_eq!(
        trace.events,
        vec![TraceEvent::Pin {
            at: AT,
            pin: Some(Pin { state: ProtectionState::Normal, reason: String::new(), expires_at: 946_684_800, actor: " ".into() })
        }]
    );
}

#[test]
fn long_values_are_shortened_in_messages() {
    let long = "x".repeat(200);
    let (field, message) = reading_error(&format!(r#"{{"cpu_pct":"{long}"}}"#));
    assert_eq!(field, "reading.cpu_pct");
    assert!(message.ends_with("..."), "{message}");
    assert!(message.len() < 120, "{message}");
}
