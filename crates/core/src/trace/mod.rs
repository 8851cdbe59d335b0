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
//! The format itself (reading, checking, writing back) is the trace format crate
//! (`crates/trace`, re-exported here). This module adds what needs the sentinel's ports:
//! [`fetch`] writes a trace from a metrics source's history, `import` turns `timestamp,value`
//! CSV exports into traces with one reading a minute, [`recorded`] writes the ticks a store
//! holds as a trace.

pub mod fetch;
mod fetch_partial;
mod fetch_window;
pub(crate) mod import;
pub mod recorded;

pub use import::{ImportError, ImportSignal, ParseImportSignalError, RepeatedTimestamps, import_csv};
/// Reading traces across cores, or a block at a time: the trace format crate's reader, the one
/// every command that reads trace files uses (replay, tune).
pub use trace_format::load;
pub use trace_format::{
    Trace, TraceError, TraceEvent, is_expected_output, parse_block, parse_trace, read_text, read_trace, utf8_text, write_event,
};
