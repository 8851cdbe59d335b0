//! Parsing trace lines: each field checked by hand, so each error names the exact field.

use serde_json::{Map, Value};

use super::{TraceError, TraceEvent};
use crate::instants::{format_rfc3339, parse_rfc3339};
use vocabulary::{ApiLatency, Instant, Pin, ProtectionState, Reading, Signal};

/// The keys that make a line an event; a line has `at` and exactly one of these.
const EVENT_KEYS: [&str; 5] = ["reading", "read_error", "pin", "throttles_enabled", "stage_restores_fail"];
const READING_KEYS: [&str; 4] = ["cpu_pct", "connections_pct", "scaling", "latency"];
const LATENCY_KEYS: [&str; 3] = ["api", "p95_ms", "baseline_ms"];
const PIN_KEYS: [&str; 4] = ["state", "reason", "expires_at", "actor"];

/// A problem with one field of one line (`field` empty: the line as a whole).
pub(super) struct FieldError {
    pub(super) field: String,
    pub(super) message: String,
}

impl FieldError {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), message: message.into() }
    }
}

type Checked<T> = Result<T, FieldError>;

/// Parses the lines of a trace. `file` is what errors call the file.
pub(super) fn parse_lines(file: &str, text: &str) -> Result<Vec<TraceEvent>, TraceError> {
    parse_lines_from(file, text, 1, None)
}

/// Parses lines that start at line `first_line` of `file`, after an event at `previous`.
pub(super) fn parse_lines_from(
    file: &str,
    text: &str,
    first_line: usize,
    previous: Option<Instant>,
) -> Result<Vec<TraceEvent>, TraceError> {
    let mut events = Vec::new();
    let mut previous = previous;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        // The typed fast path takes the common line; anything it declines is checked here.
        let event = match super::parse_fast::parse_line(line, previous) {
            Some(event) => event,
            None => parse_line(line, previous).map_err(|e| TraceError::Invalid {
                file: file.to_owned(),
                line: first_line + index,
                field: e.field,
                message: e.message,
            })?,
        };
        previous = Some(event.at());
        events.push(event);
    }
    Ok(events)
}

/// One line, every field checked (errors name the field).
pub(super) fn parse_line(line: &str, previous: Option<Instant>) -> Checked<TraceEvent> {
    let value = serde_json::from_str::<Value>(line).map_err(|e| FieldError::new("", format!("not valid JSON: {e}")))?;
    let Value::Object(obj) = &value else {
        return Err(FieldError::new("", format!("expected a JSON object, got {}", describe(&value))));
    };
    check_keys(obj, "", &["at", EVENT_KEYS[0], EVENT_KEYS[1], EVENT_KEYS[2], EVENT_KEYS[3]])?;

    let at = match obj.get("at") {
        Some(v) => instant(v, "at")?,
        None => return Err(FieldError::new("at", "missing")),
    };
    if let Some(previous) = previous.filter(|&p| at < p) {
        return Err(FieldError::new(
            "at",
            format!("goes backwards: {} is before the previous line's {}", format_rfc3339(at), format_rfc3339(previous)),
        ));
    }

    let mut present = EVENT_KEYS.iter().filter(|k| obj.contains_key(**k));
    let Some(&key) = present.next() else {
        return Err(FieldError::new("", "expected one of reading, read_error, pin, throttles_enabled, stage_restores_fail besides at"));
    };
    if let Some(&other) = present.next() {
        return Err(FieldError::new(other, format!("a line holds one event, and this one already has {key}")));
    }
    let v = &obj[key];
    Ok(match key {
        "reading" => TraceEvent::Tick { at, signal: Signal::Reading(reading(v)?) },
        "read_error" => TraceEvent::Tick { at, signal: Signal::Failed(string(v, "read_error")?) },
        "pin" => TraceEvent::Pin { at, pin: if v.is_null() { None } else { Some(pin(v)?) } },
        "throttles_enabled" => TraceEvent::Throttles { at, enabled: boolean(v, "throttles_enabled")? },
        _ => TraceEvent::StageRestores { at, fail: boolean(v, "stage_restores_fail")? },
    })
}

fn reading(v: &Value) -> Checked<Reading> {
    let obj = object(v, "reading")?;
    check_keys(obj, "reading.", &READING_KEYS)?;
    let latency = match optional(obj, "latency") {
        None => Vec::new(),
        Some(Value::Array(items)) => {
            items.iter().enumerate().map(|(i, item)| api_latency(item, &format!("reading.latency[{i}]"))).collect::<Checked<_>>()?
        }
        Some(other) => {
            return Err(FieldError::new(
                "reading.latency",
                format!("expected an array of {{api, p95_ms, baseline_ms}}, got {}", describe(other)),
            ));
        }
    };
    Ok(Reading {
        cpu_pct: optional(obj, "cpu_pct").map(|v| percent(v, "reading.cpu_pct")).transpose()?,
        connections_pct: optional(obj, "connections_pct").map(|v| percent(v, "reading.connections_pct")).transpose()?,
        scaling: optional(obj, "scaling").map(|v| boolean(v, "reading.scaling")).transpose()?,
        latency,
    })
}

fn api_latency(v: &Value, field: &str) -> Checked<ApiLatency> {
    let obj = object(v, field)?;
    check_keys(obj, &format!("{field}."), &LATENCY_KEYS)?;
    let api_field = format!("{field}.api");
    let api = match obj.get("api") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(other) => {
            return Err(FieldError::new(api_field, format!("expected a nonblank string, got {}", describe(other))));
        }
        None => return Err(FieldError::new(api_field, "missing")),
    };
    let millis = |key: &str| optional(obj, key).map(|v| millis(v, &format!("{field}.{key}"))).transpose();
    Ok(ApiLatency { api, p95_ms: millis("p95_ms")?, baseline_ms: millis("baseline_ms")? })
}

fn pin(v: &Value) -> Checked<Pin> {
    let obj = object(v, "pin")?;
    check_keys(obj, "pin.", &PIN_KEYS)?;
    let required = |key: &str| obj.get(key).ok_or_else(|| FieldError::new(format!("pin.{key}"), "missing"));
    Ok(Pin {
        state: protection_state(required("state")?, "pin.state")?,
        reason: string(required("reason")?, "pin.reason")?,
        expires_at: instant(required("expires_at")?, "pin.expires_at")?,
        actor: string(required("actor")?, "pin.actor")?,
    })
}

/// Unknown keys are an error naming them (`prefix` is the dotted path of the object). An
/// empty key is named `""`: an empty field means the line as a whole, not one of its keys.
fn check_keys(obj: &Map<String, Value>, prefix: &str, known: &[&str]) -> Checked<()> {
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        Some(unknown) => Err(FieldError::new(
            format!("{prefix}{}", if unknown.is_empty() { "\"\"" } else { unknown }),
            format!("unknown key (expected {})", known.join(", ")),
        )),
        None => Ok(()),
    }
}

/// An optional field: absent and `null` are the same.
fn optional<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn object<'a>(v: &'a Value, field: &str) -> Checked<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| FieldError::new(field, format!("expected an object, got {}", describe(v))))
}

fn instant(v: &Value, field: &str) -> Checked<Instant> {
    match v {
        Value::String(s) => parse_rfc3339(s).map_err(|e| FieldError::new(field, e)),
        other => Err(FieldError::new(field, format!("expected an RFC 3339 time like 2026-10-20T14:03:00Z, got {}", describe(other)))),
    }
}

fn percent(v: &Value, field: &str) -> Checked<f64> {
    v.as_f64()
        .filter(|x| (0.0..=100.0).contains(x))
        .ok_or_else(|| FieldError::new(field, format!("expected a number between 0 and 100, got {}", describe(v))))
}

fn millis(v: &Value, field: &str) -> Checked<f64> {
    v.as_f64()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| FieldError::new(field, format!("expected a non-negative number, got {}", describe(v))))
}

fn boolean(v: &Value, field: &str) -> Checked<bool> {
    v.as_bool().ok_or_else(|| FieldError::new(field, format!("expected true or false, got {}", describe(v))))
}

fn string(v: &Value, field: &str) -> Checked<String> {
    v.as_str().map(str::to_owned).ok_or_else(|| FieldError::new(field, format!("expected a string, got {}", describe(v))))
}

fn protection_state(v: &Value, field: &str) -> Checked<ProtectionState> {
    match v.as_str() {
        Some("normal") => Ok(ProtectionState::Normal),
        Some("constrained") => Ok(ProtectionState::Constrained),
        Some("critical") => Ok(ProtectionState::Critical),
        Some("emergency") => Ok(ProtectionState::Emergency),
        _ => Err(FieldError::new(field, format!("expected one of normal, constrained, critical, emergency, got {}", describe(v)))),
    }
}

/// A value as JSON, shortened for error messages.
fn describe(v: &Value) -> String {
    const MAX: usize = 60;
    let text = v.to_string();
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

#[cfg(test)]
mod tests;
