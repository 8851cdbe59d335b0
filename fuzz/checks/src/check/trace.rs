//! The trace parser of docs/behaviour.md §10.1 on any text. A parsed trace has one event per
//! non-blank line, never going back in time, writes back (`write_event`) to text that parses to the
//! same events, and the chunked parser of large files (`trace_format::load::parse_chunked`) agrees with
//! it. An error names this file and the first bad line, which is non-blank and follows only good
//! lines; its field is empty only when the line as a whole is wrong (not JSON, not an object, no
//! event), and otherwise starts at a key the line has or one it must have.

use super::Findings;
use serde_json::Value;
use trace_format::load::parse_chunked;
use trace_format::{TraceError, parse_trace, write_event};

const FILE: &str = "fuzz.jsonl";
const EVENT_KEYS: [&str; 5] = ["at", "reading", "read_error", "pin", "throttles_enabled"];

pub fn violations(text: &str) -> Vec<String> {
    let mut f = Findings::default();
    let parsed = parse_trace(FILE, text);
    let chunked = parse_chunked(FILE, text);
    let same = match (&parsed, &chunked) {
        (Ok(a), Ok(b)) => a.events == b.events,
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    };
    f.ensure(same, || {
        format!(
            "the chunked parser disagrees: {:?} vs {:?}",
            parsed.as_ref().map(|t| t.events.len()),
            chunked.as_ref().map(|t| t.events.len())
        )
    });
    let lines: Vec<&str> = text.lines().collect();
    match parsed {
        Ok(trace) => {
            let events = &trace.events;
            let non_blank = lines.iter().filter(|l| !l.trim().is_empty()).count();
            f.ensure(events.len() == non_blank, || format!("{} events from {non_blank} non-blank lines", events.len()));
            f.ensure(events.windows(2).all(|w| w[0].at() <= w[1].at()), || "events go back in time".into());
            let written: Vec<String> = events.iter().map(write_event).collect();
            match parse_trace(FILE, &written.join("\n")) {
                Ok(again) => {
                    let first = events.iter().zip(&again.events).position(|(a, b)| a != b);
                    f.ensure(again.events.len() == events.len() && first.is_none(), || {
                        let i = first.unwrap_or(events.len().min(again.events.len()));
                        format!("written back, event {i} reads differently: {:?} from {:?}", again.events.get(i), written.get(i))
                    });
                }
                Err(e) => f.ensure(false, || format!("written back, the trace does not parse: {e}")),
            }
        }
        Err(TraceError::Invalid { file, line, field, message }) => {
            f.ensure(file == FILE, || format!("the error names {file:?}, not {FILE:?}"));
            f.ensure(!message.is_empty(), || "an empty error message".into());
            let Some(bad) = line.checked_sub(1).and_then(|i| lines.get(i)) else {
                f.ensure(false, || format!("line {line} is not a line of the text ({} lines)", lines.len()));
                return f.into_vec();
            };
            f.ensure(!bad.trim().is_empty(), || format!("line {line} is blank"));
            f.ensure(parse_trace(FILE, &lines[..line - 1].join("\n")).is_ok(), || format!("line {line} is not the first bad line"));
            let object = match serde_json::from_str::<Value>(bad) {
                Ok(Value::Object(obj)) => Some(obj),
                _ => None,
            };
            match object {
                None => f.ensure(field.is_empty(), || format!("the line is not a JSON object, yet the error names field {field:?}")),
                Some(obj) if field.is_empty() => {
                    let has_event = EVENT_KEYS[1..].iter().any(|k| obj.contains_key(*k));
                    f.ensure(!has_event, || format!("no field named for a line with an event: {message}"));
                }
                Some(obj) => {
                    // A key may hold dots itself (`"re.ding"` is an unknown key, named whole);
                    // the empty key is named `""`.
                    let names = |k: &str| {
                        let k = if k.is_empty() { "\"\"" } else { k };
                        field.strip_prefix(k).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
                    };
                    let named = EVENT_KEYS.iter().any(|k| names(k)) || obj.keys().any(|k| names(k));
                    f.ensure(named, || format!("field {field:?} does not start with a key of the line"));
                }
            }
            let shown = TraceError::Invalid { file: FILE.into(), line, field: field.clone(), message }.to_string();
            f.ensure(shown.starts_with(&format!("{FILE}:{line}: {field}")), || {
                format!("the message does not lead with file, line and field: {shown}")
            });
        }
        Err(e) => f.ensure(false, || format!("parsing text gave an I/O error: {e}")),
    }
    f.into_vec()
}
