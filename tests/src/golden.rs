//! Golden files: `BLESS=1` rewrites expectations from the native modules; otherwise a mismatch
//! names the first differing line (or JSON field) of each side.

use serde_json::Value;

/// Whether this run rewrites expectations (`BLESS=1`).
pub fn bless() -> bool {
    std::env::var("BLESS").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// The first line where two outputs differ, as a message showing both sides; none when equal.
pub fn first_difference(expected: &[String], actual: &[String]) -> Option<String> {
    let n = expected.len().max(actual.len());
    (0..n).find(|&i| expected.get(i) != actual.get(i)).map(|i| {
        let show = |side: Option<&String>| side.map_or_else(|| "<no line>".to_string(), Clone::clone);
        format!(
            "first difference at line {} (expected {} lines, got {}):\n  expected: {}\n  actual:   {}",
            i + 1,
            expected.len(),
            actual.len(),
            show(expected.get(i)),
            show(actual.get(i)),
        )
    })
}

/// Every JSON path where two values differ (`memory.recent[2].level: expected "critical", got
/// "constrained"`), at most `limit` of them.
pub fn json_differences(expected: &Value, actual: &Value, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    walk("", expected, actual, &mut out, limit);
    out
}

fn walk(path: &str, expected: &Value, actual: &Value, out: &mut Vec<String>, limit: usize) {
    if out.len() >= limit || expected == actual {
        return;
    }
    let here = |p: &str| if p.is_empty() { "(whole value)".to_string() } else { p.to_string() };
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, ev) in e {
                let sub = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                match a.get(key) {
                    Some(av) => walk(&sub, ev, av, out, limit),
                    None => out.push(format!("{sub}: expected {ev}, missing")),
                }
            }
            for (key, av) in a {
                if !e.contains_key(key) {
                    let sub = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                    out.push(format!("{sub}: unexpected {av}"));
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                walk(&format!("{path}[{i}]"), ev, av, out, limit);
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            out.push(format!("{}: expected {} items {expected}, got {} items {actual}", here(path), e.len(), a.len()));
        }
        _ => out.push(format!("{}: expected {expected}, got {actual}", here(path))),
    }
    out.truncate(limit);
}

/// Writes a golden file, saying so on stderr.
pub fn write_golden(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    eprintln!("blessed {}", path.display());
}
