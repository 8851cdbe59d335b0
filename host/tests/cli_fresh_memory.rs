//! Unreadable or absent memory starts fresh (docs/behaviour.md §4 and §11.1): a garbage memory row
//! or a missing one never fails the tick; the tick decides from fresh memory (cause `fresh`),
//! says so on stderr for the unreadable case, and its commit writes a good row again.

use crate::support;

use serde_json::Value;
use support::{Metrics, Sandbox, cpu, t};

/// Constrained readings each minute: a streak that only memory can carry.
fn sandbox() -> Sandbox {
    Sandbox::new(Metrics::Trace((0..4).map(|m| cpu(t(m), 75.0)).collect()))
}

fn memory_row(sb: &Sandbox) -> Option<String> {
    use rusqlite::OptionalExtension;
    sb.db().query_row("SELECT memory FROM memory WHERE id = 1", [], |row| row.get(0)).optional().unwrap()
}

/// The recent minutes of the stored memory (which must parse).
fn recent(sb: &Sandbox) -> Vec<i64> {
    let text = memory_row(sb).expect("a memory row");
    let memory: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("the memory row parses ({e}): {text}"));
    memory["recent"].as_array().unwrap().iter().map(|e| e["at"].as_i64().unwrap()).collect()
}

#[test]
fn a_corrupt_memory_row_starts_fresh_with_a_log_line() {
    let sb = sandbox();
    sb.tick_ok(t(0));
    assert_eq!(recent(&sb), vec![t(0)]);
    // Not JSON at all, then JSON of the wrong shape.
    for (minute, garbage) in [(1, "{\"state\": \"Normal\", \"recent\": ["), (2, "{\"state\": \"Sideways\"}")] {
        let changed = sb.db().execute("UPDATE memory SET memory = ?1 WHERE id = 1", [garbage]).unwrap();
        assert_eq!(changed, 1);
        let ran = sb.tick_ok(t(minute));
        let doc = sb.cache_doc();
        assert_eq!(doc["cause"], "fresh", "garbage {garbage:?}: {doc}\n{}", ran.stderr);
        // Three constrained minutes in a row, but each tick forgot the ones before.
        assert_eq!(doc["state"], "normal");
        assert_eq!(doc["sequence"], minute + 1, "the tick records are intact, so the sequence goes on");
        assert_eq!(sb.parameter_doc(), doc);
        let log = ran.stderr.lines().find(|l| l.contains("memory unreadable, starting fresh"));
        let log = log.unwrap_or_else(|| panic!("no log line about the unreadable memory:\n{}", ran.stderr));
        assert!(log.contains("WARN") && log.contains("memory row"), "{log}");
        assert_eq!(recent(&sb), vec![t(minute)], "the commit replaced the garbage with fresh memory");
    }
}

#[test]
fn a_missing_memory_row_starts_fresh() {
    let sb = sandbox();
    sb.tick_ok(t(0));
    assert_eq!(sb.db().execute("DELETE FROM memory", []).unwrap(), 1);
    assert_eq!(memory_row(&sb), None);

    let ran = sb.tick_ok(t(1));
    let doc = sb.cache_doc();
    assert_eq!(doc["cause"], "fresh", "{doc}\n{}", ran.stderr);
    assert_eq!(doc["state"], "normal");
    assert_eq!(doc["sequence"], 2);
    assert!(!ran.stderr.contains("unreadable"), "absent memory is not an error: {}", ran.stderr);
    assert_eq!(recent(&sb), vec![t(1)]);

    // From here on memory carries again: the next tick is not fresh.
    sb.tick_ok(t(2));
    assert_eq!(sb.cache_doc()["cause"], "hold");
    assert_eq!(recent(&sb), vec![t(1), t(2)]);
}
