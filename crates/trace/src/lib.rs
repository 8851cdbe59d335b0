//! Traces (docs/behaviour.md §10.1): JSON Lines, one event a line, in time order.
//!
//! ```text
//! {"at":"2026-10-20T14:03:00Z","reading":{"cpu_pct":72.5,"connections_pct":40,"scaling":false,"latency":[{"api":"crm","p95_ms":180,"baseline_ms":120}]}}
//! {"at":"2026-10-20T14:04:00Z","read_error":"timeout"}
//! {"at":"2026-10-20T14:04:30Z","pin":{"state":"emergency","reason":"incident 4411","expires_at":"2026-10-20T16:00:00Z","actor":"ops@example.com"}}
//! {"at":"2026-10-20T15:00:00Z","pin":null}
//! {"at":"2026-10-20T15:00:00Z","throttles_enabled":true}
//! {"at":"2026-10-20T15:20:00Z","stage_restores_fail":true}
//! ```
//!
//! [`parse_trace`] checks every field by hand so that an error names the file, the line and the
//! exact field; [`write_event`] writes the same format back; [`load`] reads large files in
//! parallel chunks or a block at a time; [`instants`] is the RFC 3339 text every time is read
//! and written as.
//!
//! A crate of its own so that everything that reads traces (the sentinel, its tests, the fuzz
//! targets) uses one reader, and the fuzz targets build it without the sentinel's servers'
//! clients. It depends on the vocabulary and on serde_json, time, thiserror, memchr and rayon only.

pub mod instants;
pub mod load;
mod parse;
mod parse_fast;
mod write;

use std::path::Path;
use vocabulary::Instant;

pub use write::write_event;

/// A trace's expected outputs kept beside it (`tests/traces/NAME.expected.jsonl`): not a trace.
pub fn is_expected_output(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().ends_with(".expected.jsonl"))
}

pub use vocabulary::TraceEvent;

/// A parsed trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The trace's name: the file stem (`incident` for `traces/incident.jsonl`).
    pub name: String,
    /// The events in file order (never going back in time).
    pub events: Vec<TraceEvent>,
}

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{file}: {error}")]
    Io { file: String, error: std::io::Error },
    /// A line is not a valid event: `traces/incident.jsonl:14: reading.cpu_pct: expected a number
    /// between 0 and 100, got "high"`. `field` is the dotted path of the offending field, empty
    /// when the line as a whole is wrong (not JSON, not an object, no event).
    #[error("{file}:{line}: {}{message}", field_prefix(.field))]
    Invalid { file: String, line: usize, field: String, message: String },
}

fn field_prefix(field: &str) -> String {
    if field.is_empty() { String::new() } else { format!("{field}: ") }
}

/// Reads and parses the trace at `path`; its name is the file stem, errors name the path.
pub fn read_trace(path: &Path) -> Result<Trace, TraceError> {
    let file = path.display().to_string();
    let text = read_text(path, &file)?;
    let name = path.file_stem().map_or_else(|| file.clone(), |s| s.to_string_lossy().into_owned());
    Ok(Trace { name, events: parse::parse_lines(&file, &text)? })
}

/// The text of a trace file. Bytes that are not UTF-8 (a binary file by mistake) are an error
/// naming the line they are on, as any other bad line is.
pub fn read_text(path: &Path, file: &str) -> Result<String, TraceError> {
    let bytes = std::fs::read(path).map_err(|error| TraceError::Io { file: file.to_owned(), error })?;
    utf8_text(bytes, file, 1)
}

/// Bytes read from `file` as text; they start at line `first_line`, which the error counts from.
pub fn utf8_text(bytes: Vec<u8>, file: &str, first_line: usize) -> Result<String, TraceError> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = valid.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        TraceError::Invalid {
            file: file.to_owned(),
            line: first_line + valid.iter().filter(|b| **b == b'\n').count(),
            field: String::new(),
            message: format!(
                "not UTF-8 text (byte {} of the line): a trace is JSON Lines (docs/behaviour.md §10.1); is this the right file?",
                valid.len() - line_start + 1
            ),
        }
    })
}

/// Parses one block of a larger trace file: its lines start at line `first_line` of `file`,
/// and its first event may not be before `previous` (the event before the block).
pub fn parse_block(file: &str, text: &str, first_line: usize, previous: Option<Instant>) -> Result<Vec<TraceEvent>, TraceError> {
    parse::parse_lines_from(file, text, first_line, previous)
}

/// Parses trace text; `name` is the trace's name and what errors call the file.
pub fn parse_trace(name: &str, text: &str) -> Result<Trace, TraceError> {
    Ok(Trace { name: name.to_owned(), events: parse::parse_lines(name, text)? })
}

#[cfg(test)]
mod tests {
    use super::*;
    use vocabulary::Signal;

    #[test]
    fn read_trace_names_by_stem() {
        let dir = std::env::temp_dir().join(format!("sentinel-trace-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("incident.jsonl");
        std::fs::write(&path, "{\"at\":\"2026-10-20T14:04:00Z\",\"read_error\":\"timeout\"}\n").unwrap();
        let trace = read_trace(&path).unwrap();
        assert_eq!(trace.name, "incident");
        assert_eq!(trace.events, vec![TraceEvent::Tick { at: 1_792_505_040, signal: Signal::Failed("timeout".into()) }]);

        std::fs::write(&path, "\n{\"at\":\"2026-10-20T14:04:00Z\"}\n").unwrap();
        let err = read_trace(&path).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("{}:2: expected one of reading, read_error, pin, throttles_enabled, stage_restores_fail besides at", path.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn io_error_names_the_file() {
        let err = read_trace(Path::new("traces/does-not-exist.jsonl")).unwrap_err();
        assert!(matches!(err, TraceError::Io { .. }));
        assert!(err.to_string().starts_with("traces/does-not-exist.jsonl: "), "{err}");
    }

    #[test]
    fn event_at() {
        assert_eq!(TraceEvent::Throttles { at: 7, enabled: true }.at(), 7);
        assert_eq!(TraceEvent::Pin { at: 8, pin: None }.at(), 8);
    }
}
