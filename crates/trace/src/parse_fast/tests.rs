//! The fast path never disagrees with the checking parser: on any line it either gives up or
//! returns exactly the checking parser's event; and it does take the lines traces are made of.

use super::parse_line;
use crate::parse::parse_line as checked;
use proptest::prelude::*;

/// Lines as `write_event` writes them, and the README's trace examples.
const COMMON: [&str; 7] = [
    r#"{"at":"2026-10-20T14:03:00Z","reading":{"cpu_pct":72.5,"connections_pct":40,"scaling":false,"latency":[{"api":"crm","p95_ms":180,"baseline_ms":120}]}}"#,
    r#"{"at":"2026-10-20T14:03:00Z","reading":{"cpu_pct":37.2,"connections_pct":31.1,"latency":[{"api":"crm","p95_ms":111}]}}"#,
    r#"{"at":"2026-10-20T14:03:00Z","reading":{}}"#,
    r#"{"at":"2026-10-20T14:04:00Z","read_error":"timeout"}"#,
    r#"{"at":"2026-10-20T14:04:30Z","pin":{"state":"emergency","reason":"incident 4411","expires_at":"2026-10-20T16:00:00Z","actor":"ops@example.com"}}"#,
    r#"{"at":"2026-10-20T15:00:00Z","pin":null}"#,
    r#"{"at":"2026-10-20T15:00:00Z","throttles_enabled":true}"#,
];

fn agrees(line: &str, previous: Option<i64>) -> Result<(), TestCaseError> {
    if let Some(fast) = parse_line(line, previous) {
        let slow = checked(line, previous).map_err(|e| format!("{}: {}", e.field, e.message));
        prop_assert_eq!(Ok(fast), slow, "{}", line);
    }
    Ok(())
}

#[test]
fn takes_the_common_lines_as_the_checking_parser_does() {
    for line in COMMON {
        let fast = parse_line(line, None).unwrap_or_else(|| panic!("the fast path declined {line}"));
        assert_eq!(Some(fast), checked(line, None).ok(), "{line}");
    }
}

#[test]
fn declines_what_the_checking_parser_refuses() {
    for line in [
        r#"["2026-10-20T14:03:00Z",{"cpu_pct":50}]"#,
        r#"{"at":"2026-10-20T14:03:00Z","reading":[50]}"#,
        r#"{"at":"2026-10-20T14:03:00Z","reading":{"latency":[["crm",100]]}}"#,
        r#"{"at":"2026-10-20T14:03:00Z","reading":null,"read_error":"x"}"#,
        r#"{"at":"2026-10-20T14:03:00Z","read_error":null}"#,
        r#"{"at":"2026-10-20T14:03:00Z","throttles_enabled":null}"#,
        r#"{"at":"2026-10-20T14:03:00Z","reading":{"cpu_pct":100.5}}"#,
        r#"{"at":"2026-10-20T14:03:00Z","reading":{"latency":[{"api":" ","p95_ms":1}]}}"#,
        r#"{"at":"2026-10-20T14:03:00Z","reading":{"latency":[{"api":"crm","p95_ms":-1}]}}"#,
        r#"{"at":"2026-10-20T14:03:00Z","reading":{},"extra":1}"#,
        r#"{"at":"2026-02-30T14:03:00Z","reading":{}}"#,
        r#"{"at":"2026-10-20T14:03:00Z","pin":{"state":"panic","reason":"r","expires_at":"2026-10-20T16:00:00Z","actor":"a"}}"#,
    ] {
        assert_eq!(parse_line(line, None), None, "{line}");
        assert!(checked(line, None).is_err(), "{line}");
    }
    // A repeated key: declined here, and the checking parser takes the last one.
    let repeated = r#"{"at":"2026-10-20T14:03:00Z","at":"2026-10-20T14:04:00Z","reading":{}}"#;
    assert_eq!(parse_line(repeated, None), None);
    assert_eq!(checked(repeated, None).ok().map(|e| e.at()), Some(1_792_504_980 + 60));
    assert_eq!(parse_line(COMMON[3], Some(1_792_504_980 + 61)), None, "time going back is the checking parser's");
}

/// Any JSON value, small, over the keys and values traces use.
fn value(depth: u32) -> BoxedStrategy<String> {
    let scalar = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        Just("\"\"".to_string()),
        Just("\"crm\"".to_string()),
        Just("\"emergency\"".to_string()),
        Just("\"2026-10-20T14:03:00Z\"".to_string()),
        Just("\"2026-10-20 14:03:00+02:00\"".to_string()),
        Just("-0".to_string()),
        Just("1e3".to_string()),
        (-20.0f64..140.0).prop_map(|x| x.to_string()),
        (0u32..200).prop_map(|x| x.to_string()),
    ];
    if depth == 0 {
        return scalar.boxed();
    }
    prop_oneof![
        3 => scalar,
        1 => prop::collection::vec(value(depth - 1), 0..3).prop_map(|v| format!("[{}]", v.join(","))),
        2 => object(depth - 1),
    ]
    .boxed()
}

fn object(depth: u32) -> BoxedStrategy<String> {
    let key = prop::sample::select(vec![
        "at",
        "reading",
        "read_error",
        "pin",
        "throttles_enabled",
        "cpu_pct",
        "connections_pct",
        "scaling",
        "latency",
        "api",
        "p95_ms",
        "baseline_ms",
        "state",
        "reason",
        "expires_at",
        "actor",
        "other",
    ]);
    prop::collection::vec((key, value(depth)), 0..5)
        .prop_map(|fields| {
            let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", body.join(","))
        })
        .boxed()
}

/// A line that is valid or one mutation away from it.
fn near_valid() -> impl Strategy<Value = String> {
    (prop::sample::select(COMMON.to_vec()), prop::sample::select(vec!["72.5", "40", "180", "120", "\"crm\"", "false"]), value(2))
        .prop_map(|(line, target, replacement)| line.replacen(target, &replacement, 1))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn never_disagrees_on_any_line(line in prop_oneof![object(3), value(3), near_valid()], previous in prop::option::of(1_792_504_900i64..1_792_505_100)) {
        agrees(&line, previous)?;
    }
}
