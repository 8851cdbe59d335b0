use crate::{TraceError, TraceEvent, parse_trace};
use vocabulary::{ApiLatency, Pin, ProtectionState, Reading, Signal};

const AT: i64 = 1_792_504_980; // 2026-10-20T14:03:00Z

/// The trace example of README.md ("Trace format").
const README_TRACE: &str = r#"{"at":"2026-10-20T14:03:00Z","reading":{"cpu_pct":72.5,"connections_pct":40,"scaling":false,"latency":[{"api":"crm","p95_ms":180,"baseline_ms":120}]}}
{"at":"2026-10-20T14:04:00Z","read_error":"timeout"}
{"at":"2026-10-20T14:04:30Z","pin":{"state":"emergency","reason":"incident 4411","expires_at":"2026-10-20T16:00:00Z","actor":"ops@example.com"}}
{"at":"2026-10-20T15:00:00Z","pin":null}
{"at":"2026-10-20T15:00:00Z","throttles_enabled":true}
"#;

/// The error of a one-line trace (after `before` lines), as `(line, field, message)`.
fn error_after(before: &str, line: &str) -> (usize, String, String) {
    match parse_trace("traces/incident.jsonl", &format!("{before}{line}\n")) {
        Err(TraceError::Invalid { file, line, field, message }) => {
            assert_eq!(file, "traces/incident.jsonl");
            (line, field, message)
        }
        other => panic!("{line}: expected an invalid line, got {other:?}"),
    }
}

fn error(line: &str) -> (String, String) {
    let (n, field, message) = error_after("", line);
    assert_eq!(n, 1);
    (field, message)
}

fn pair(field: &str, message: &str) -> (String, String) {
    (field.to_owned(), message.to_owned())
}

#[test]
fn parses_the_readme_example() {
    let trace = parse_trace("incident", README_TRACE).unwrap();
    assert_eq!(trace.name, "incident");
    assert_eq!(
        trace.events,
        vec![
            TraceEvent::Tick {
                at: AT,
                signal: Signal::Reading(Reading {
                    cpu_pct: Some(72.5),
                    connections_pct: Some(40.0),
                    scaling: Some(false),
                    latency: vec![ApiLatency { api: "crm".into(), p95_ms: Some(180.0), baseline_ms: Some(120.0) }],
                }),
            },
            TraceEvent::Tick { at: AT + 60, signal: Signal::Failed("timeout".into()) },
            TraceEvent::Pin {
                at: AT + 90,
                pin: Some(Pin {
                    state: ProtectionState::Emergency,
                    reason: "incident 4411".into(),
                    expires_at: AT + 7020,
                    actor: "ops@example.com".into(),
                }),
            },
            TraceEvent::Pin { at: AT + 3420, pin: None },
            TraceEvent::Throttles { at: AT + 3420, enabled: true },
        ]
    );
}

#[test]
fn empty_and_blank_traces_have_no_events() {
    assert_eq!(parse_trace("e", "").unwrap().events, vec![]);
    assert_eq!(parse_trace("e", "\n  \n\t\r\n").unwrap().events, vec![]);
}

#[test]
fn blank_lines_are_skipped_but_counted() {
    let text = "\n{\"at\":\"2026-10-20T14:03:00Z\",\"read_error\":\"x\"}\r\n\n   \n{\"at\":\"2026-10-20T14:03:00Z\"}";
    match parse_trace("t", text) {
        Err(TraceError::Invalid { line, .. }) => assert_eq!(line, 5),
        other => panic!("{other:?}"),
    }
}

#[test]
fn null_optional_fields_are_absent() {
    let trace = parse_trace(
        "t",
        r#"{"at":"2026-10-20T14:03:00Z","reading":{"cpu_pct":null,"connections_pct":null,"scaling":null,"latency":null}}
{"at":"2026-10-20T14:03:00Z","reading":{}}
{"at":"2026-10-20T14:03:00Z","reading":{"latency":[{"api":"crm","p95_ms":null,"baseline_ms":null}]}}"#,
    )
    .unwrap();
    let empty = Reading { cpu_pct: None, connections_pct: None, scaling: None, latency: vec![] };
    assert_eq!(trace.events[0], TraceEvent::Tick { at: AT, signal: Signal::Reading(empty.clone()) });
    assert_eq!(trace.events[1], trace.events[0]);
    let crm = ApiLatency { api: "crm".into(), p95_ms: None, baseline_ms: None };
    assert_eq!(trace.events[2], TraceEvent::Tick { at: AT, signal: Signal::Reading(Reading { latency: vec![crm], ..empty }) });
}

#[test]
fn offsets_and_equal_times_are_accepted() {
    let trace = parse_trace(
        "t",
        r#"{"at":"2026-10-20T16:03:00+02:00","throttles_enabled":false}
{"at":"2026-10-20T14:03:00.750Z","throttles_enabled":true}"#,
    )
    .unwrap();
    assert_eq!(trace.events.iter().map(TraceEvent::at).collect::<Vec<_>>(), vec![AT, AT]);
}

#[test]
fn display_names_file_line_and_field() {
    let text = format!("{README_TRACE}{}", r#"{"at":"2026-10-20T15:01:00Z","reading":{"cpu_pct":"high"}}"#);
    let err = parse_trace("traces/incident.jsonl", &text).unwrap_err();
    assert_eq!(err.to_string(), r#"traces/incident.jsonl:6: reading.cpu_pct: expected a number between 0 and 100, got "high""#);
    let err = parse_trace("traces/incident.jsonl", "[1]").unwrap_err();
    assert_eq!(err.to_string(), "traces/incident.jsonl:1: expected a JSON object, got [1]");
}

#[test]
fn line_errors() {
    let (field, message) = error("{not json");
    assert_eq!(field, "");
    assert!(message.starts_with("not valid JSON: "), "{message}");
    assert_eq!(error(r#""at""#), pair("", r#"expected a JSON object, got "at""#));
    assert_eq!(error(r#"{"read_error":"x"}"#), pair("at", "missing"));
    assert_eq!(
        error(r#"{"at":"2026-10-20T14:03:00Z"}"#),
        pair("", "expected one of reading, read_error, pin, throttles_enabled, stage_restores_fail besides at")
    );
    assert_eq!(
        error(r#"{"at":"2026-10-20T14:03:00Z","read_error":"x","throttles_enabled":true}"#),
        pair("throttles_enabled", "a line holds one event, and this one already has read_error")
    );
    assert_eq!(
        error(r#"{"at":"2026-10-20T14:03:00Z","read_error":"x","note":1}"#),
        pair("note", "unknown key (expected at, reading, read_error, pin, throttles_enabled)")
    );
}

#[test]
fn an_empty_key_is_named_as_one() {
    // Found by fuzzing: the empty key gave an empty field, which means "the line as a whole".
    assert_eq!(
        error(r#"{"at":"2026-10-20T14:03:00Z","":1,"read_error":"x"}"#),
        pair(r#""""#, "unknown key (expected at, reading, read_error, pin, throttles_enabled)")
    );
    assert_eq!(error(r#"{"at":"2026-10-20T14:03:00Z","reading":{"":1}}"#).0, r#"reading."""#);
}

#[test]
fn at_errors() {
    assert_eq!(
        error(r#"{"at":"yesterday","read_error":"x"}"#),
        pair("at", r#"expected an RFC 3339 time like 2026-10-20T14:03:00Z, got "yesterday""#)
    );
    assert_eq!(
        error(r#"{"at":1792504980,"read_error":"x"}"#),
        pair("at", "expected an RFC 3339 time like 2026-10-20T14:03:00Z, got 1792504980")
    );
    let (field, message) = error(r#"{"at":"2026-10-20T14:03:00","read_error":"x"}"#);
    assert_eq!(field, "at");
    assert!(message.contains(r#"got "2026-10-20T14:03:00""#), "{message}");
}

#[test]
fn at_must_not_go_backwards() {
    let first = "{\"at\":\"2026-10-20T14:03:00Z\",\"read_error\":\"x\"}\n";
    assert_eq!(
        error_after(first, r#"{"at":"2026-10-20T14:02:59Z","read_error":"x"}"#),
        (2, "at".to_owned(), "goes backwards: 2026-10-20T14:02:59Z is before the previous line's 2026-10-20T14:03:00Z".to_owned())
    );
}

/// Errors in the fields of readings, pins and the other events.
mod fields;
