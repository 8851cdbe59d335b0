//! Bad traces at every entry point that reads one: `sentinel replay`, and the trace metrics
//! source of `sentinel tick` and `sentinel run`. Each case is refused before anything runs,
//! with an error naming the file, the line and the field (and, for a configured trace, the
//! config key `metrics.path`); a sentinel with state already stored keeps every row of its
//! store and both published documents byte for byte. The parser's field-by-field messages are
//! proven by its unit tests (crates/trace/src/parse/tests.rs and parse/tests/fields.rs); these cases
//! prove the entry points end to end.

use capacity_tests::bad_input::{CACHE, PARAMETER, Sandbox, embedded_config};
use capacity_tests::workspace;

const GOOD_0: &str = r#"{"at":"2026-10-20T14:00:00Z","reading":{"cpu_pct":40}}"#;
const GOOD_2: &str = r#"{"at":"2026-10-20T14:02:00Z","reading":{"cpu_pct":40}}"#;

/// One bad trace: its bytes, and what the error must say.
struct Case {
    what: &'static str,
    bytes: Vec<u8>,
    /// The line named (`None`: the file as a whole).
    line: Option<usize>,
    /// The field named after `file:line: ` (empty: the line as a whole).
    field: &'static str,
    says: &'static str,
}

/// `bad` as line 2, between two good lines.
fn line2(what: &'static str, bad: &str, field: &'static str, says: &'static str) -> Case {
    Case { what, bytes: format!("{GOOD_0}\n{bad}\n{GOOD_2}\n").into_bytes(), line: Some(2), field, says }
}

/// A line 2 at 14:01 with `event` (a JSON fragment such as `"reading":{...}`).
fn event2(what: &'static str, event: &str, field: &'static str, says: &'static str) -> Case {
    line2(what, &format!(r#"{{"at":"2026-10-20T14:01:00Z",{event}}}"#), field, says)
}

fn cases() -> Vec<Case> {
    let pin = |fields: &str| format!(r#""pin":{{{fields}}}"#);
    let mut png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00".to_vec();
    png.extend([0xff, 0xfe, 0x00, 0x10]);
    vec![
        // Not JSON at all.
        line2("a truncated line", r#"{"at":"2026-10-20T14:01:00Z","reading":{"cpu_pct":40}"#, "", "not valid JSON"),
        event2("NaN, which JSON cannot hold", r#""reading":{"cpu_pct":NaN}"#, "", "not valid JSON"),
        event2("a number beyond f64 (1e400)", r#""reading":{"cpu_pct":1e400}"#, "", "not valid JSON"),
        line2("control characters", "\u{0}\u{1}\u{2}\u{7f}", "", "not valid JSON"),
        line2("a JSON array, not an object", "[1,2,3]", "", "expected a JSON object"),
        // Wrong types and values.
        event2("NaN as a string", r#""reading":{"cpu_pct":"NaN"}"#, "reading.cpu_pct", r#"expected a number between 0 and 100, got "NaN""#),
        event2(
            "a number as a string",
            r#""reading":{"connections_pct":"40"}"#,
            "reading.connections_pct",
            "expected a number between 0 and 100",
        ),
        event2("a negative percentage", r#""reading":{"cpu_pct":-1}"#, "reading.cpu_pct", "got -1"),
        event2("a huge percentage (1e300)", r#""reading":{"cpu_pct":1e300}"#, "reading.cpu_pct", "expected a number between 0 and 100"),
        event2(
            "a negative latency",
            r#""reading":{"latency":[{"api":"crm","p95_ms":-5}]}"#,
            "reading.latency[0].p95_ms",
            "expected a non-negative number, got -5",
        ),
        event2("a latency list that is an object", r#""reading":{"latency":{"api":"crm"}}"#, "reading.latency", "expected an array"),
        event2("scaling as a number", r#""reading":{"scaling":1}"#, "reading.scaling", "expected true or false"),
        event2("a reading that is a string", r#""reading":"high""#, "reading", "expected an object"),
        event2("read_error that is not a string", r#""read_error":503"#, "read_error", "expected a string"),
        event2("throttles_enabled as a string", r#""throttles_enabled":"on""#, "throttles_enabled", "expected true or false"),
        // `at`.
        line2("a missing at", r#"{"reading":{"cpu_pct":40}}"#, "at", "missing"),
        line2("at as unix seconds", r#"{"at":1792504860,"reading":{}}"#, "at", "expected an RFC 3339 time"),
        line2("at without a zone", r#"{"at":"2026-10-20T14:01:00","reading":{}}"#, "at", "expected an RFC 3339 time"),
        line2("at without seconds", r#"{"at":"2026-10-20T14:01Z","reading":{}}"#, "at", "expected an RFC 3339 time"),
        line2("an impossible date", r#"{"at":"2026-02-30T14:01:00Z","reading":{}}"#, "at", "expected an RFC 3339 time"),
        line2("a line earlier than the one before", r#"{"at":"2026-10-20T13:59:00Z","reading":{}}"#, "at", "goes backwards"),
        // Unknown, missing and doubled fields.
        event2("an unknown field at the top", r#""reading":{},"note":"x""#, "note", "unknown key"),
        event2("an unknown field in a reading", r#""reading":{"cpu":40}"#, "reading.cpu", "unknown key"),
        event2(
            "an unknown field in a latency",
            r#""reading":{"latency":[{"api":"crm","p99_ms":1}]}"#,
            "reading.latency[0].p99_ms",
            "unknown key",
        ),
        event2("two events in one line", r#""reading":{},"read_error":"x""#, "read_error", "a line holds one event"),
        line2("no event besides at", r#"{"at":"2026-10-20T14:01:00Z"}"#, "", "expected one of reading, read_error, pin, throttles_enabled"),
        // Bad pins inside a trace.
        event2(
            "a pin with an unknown state",
            &pin(r#""state":"panic","reason":"r","expires_at":"2026-10-20T16:00:00Z","actor":"a""#),
            "pin.state",
            "expected one of normal, constrained, critical, emergency",
        ),
        event2(
            "a pin expiry that is not RFC 3339",
            &pin(r#""state":"critical","reason":"r","expires_at":"in 2h","actor":"a""#),
            "pin.expires_at",
            "expected an RFC 3339 time",
        ),
        event2(
            "a pin without an actor",
            &pin(r#""state":"critical","reason":"r","expires_at":"2026-10-20T16:00:00Z""#),
            "pin.actor",
            "missing",
        ),
        event2(
            "a pin with a numeric reason",
            &pin(r#""state":"critical","reason":4411,"expires_at":"2026-10-20T16:00:00Z","actor":"a""#),
            "pin.reason",
            "expected a string",
        ),
        event2(
            "a pin with an unknown field",
            &pin(r#""state":"critical","reason":"r","expires_at":"2026-10-20T16:00:00Z","actor":"a","by":"x""#),
            "pin.by",
            "unknown key",
        ),
        event2("a pin that is not an object", r#""pin":"emergency""#, "pin", "expected an object"),
        // Files with nothing to read.
        Case { what: "an empty file", bytes: Vec::new(), line: None, field: "", says: "holds no reading or read_error line" },
        Case {
            what: "blank lines only",
            bytes: b"\n  \n\t\n".to_vec(),
            line: None,
            field: "",
            says: "holds no reading or read_error line",
        },
        Case {
            what: "a pin line and nothing else",
            bytes: br#"{"at":"2026-10-20T14:00:00Z","pin":null}"#.to_vec(),
            line: None,
            field: "",
            says: "holds no reading or read_error line",
        },
        // Binary garbage.
        Case { what: "a PNG file", bytes: png, line: Some(1), field: "", says: "not UTF-8 text" },
        Case {
            what: "binary garbage after two good lines",
            bytes: [format!("{GOOD_0}\n{GOOD_2}\n").into_bytes(), vec![0xc3, 0x28, 0xff, b'\n']].concat(),
            line: Some(3),
            field: "",
            says: "not UTF-8 text (byte 1 of the line)",
        },
    ]
}

impl Case {
    /// What the error must contain for the trace at `path`: `path:line: field: ` and `says`.
    fn check(&self, path: &std::path::Path, stderr: &str) {
        let place = match (self.line, self.field) {
            (Some(line), "") => format!("{}:{line}: ", path.display()),
            (Some(line), field) => format!("{}:{line}: {field}: ", path.display()),
            (None, _) => format!("{}", path.display()),
        };
        assert!(stderr.contains(&place), "{}: the error does not name {place:?}:\n{stderr}", self.what);
        assert!(stderr.contains(self.says), "{}: the error does not say {:?}:\n{stderr}", self.what, self.says);
    }
}

#[test]
fn replay_refuses_every_malformed_trace_naming_file_line_and_field() {
    let sb = Sandbox::new();
    let native = workspace().join("policies/1.0.0").display().to_string();
    let cases = cases();
    for (i, case) in cases.iter().enumerate() {
        let name = format!("broken{i}.jsonl");
        sb.write(&name, &case.bytes);
        let path = sb.path(&name);
        let ran = sb.run(&["replay", "--policy", &native, "--format", "jsonl", &path.display().to_string()]);
        assert_eq!(ran.code, Some(2), "{}: `{}` exited {:?}\n{}", case.what, ran.what, ran.code, ran.stderr);
        case.check(&path, &ran.stderr);
        assert!(ran.stdout.is_empty(), "{}: a refused trace printed ticks:\n{}", case.what, ran.stdout);
        assert!(!ran.stderr.contains("panicked"), "{}: {}", case.what, ran.stderr);
    }
    eprintln!("{} malformed traces refused by replay", cases.len());

    // The same file, repaired, replays: the refusals above were the bad lines'.
    sb.write("repaired.jsonl", format!("{GOOD_0}\n{GOOD_2}\n"));
    let ran = sb.run(&["replay", "--policy", &native, "--format", "jsonl", &sb.path("repaired.jsonl").display().to_string()]);
    let ran = ran.expect_code(0);
    assert_eq!(ran.stdout.lines().count(), 2, "one line per tick: {}", ran.stdout);
}

#[test]
fn tick_and_run_refuse_every_malformed_trace_naming_the_key_and_line_and_change_nothing() {
    let sb = Sandbox::with_config(&embedded_config("[metrics]\nkind = \"trace\"\npath = \"trace.jsonl\"\n"));
    // State stored and published before any bad trace: one tick on a good one.
    sb.write("trace.jsonl", format!("{GOOD_0}\n{GOOD_2}\n"));
    sb.sentinel(&["tick", "--at", "2026-10-20T14:00:00Z"]).expect_code(0);
    let published = sb.document(CACHE).expect("the first tick published");
    assert_eq!(published["sequence"], 1, "{published}");

    let cases = cases();
    let trace = sb.path("trace.jsonl");
    for case in &cases {
        sb.write("trace.jsonl", &case.bytes);
        let before = sb.snapshot();
        for args in [&["tick", "--at", "2026-10-20T14:02:00Z"][..], &["run", "--speed", "1000", "--ticks", "1"]] {
            let ran = sb.sentinel(args);
            assert_eq!(ran.code, Some(2), "{}: `{}` exited {:?}\n{}", case.what, ran.what, ran.code, ran.stderr);
            assert!(ran.stderr.contains("metrics.path: "), "{}: `{}` does not name the key:\n{}", case.what, ran.what, ran.stderr);
            case.check(&trace, &ran.stderr);
            assert!(!ran.stderr.contains("panicked"), "{}: {}", case.what, ran.stderr);
            let changes = sb.snapshot().changes_since(&before);
            assert!(changes.is_empty(), "{}: `{}` changed what is stored or published: {changes:#?}", case.what, ran.what);
        }
    }
    assert_eq!(sb.document(CACHE), Some(published.clone()), "the cache document is the first tick's");
    assert_eq!(sb.document(PARAMETER).map(|d| d["sequence"].clone()), Some(1.into()));
    eprintln!("{} malformed traces refused by tick and run", cases.len());

    // A good trace again: the next tick decides, stores and publishes (the snapshot sees it).
    sb.write("trace.jsonl", format!("{GOOD_0}\n{GOOD_2}\n"));
    let before = sb.snapshot();
    sb.sentinel(&["tick", "--at", "2026-10-20T14:02:00Z"]).expect_code(0);
    let changes = sb.snapshot().changes_since(&before);
    assert!(changes.iter().any(|c| c.starts_with("table ticks")), "a tick is stored: {changes:#?}");
    assert!(changes.iter().any(|c| c == &format!("file {CACHE} changed")), "a tick is published: {changes:#?}");
    assert_eq!(sb.document(CACHE).expect("published")["sequence"], 2);
}
