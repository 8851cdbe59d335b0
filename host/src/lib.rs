//! The capacity sentinel host: loads versioned policy components on wasmtime, feeds them
//! readings, memory and pins, and replays recorded traces.

pub mod adapters;
pub mod alerts;
pub mod api;
pub mod cli;
pub mod clock;
pub mod config;
pub mod connectivity;
pub mod dead_letter;
pub mod error_chain;
pub mod exporter;
/// RFC 3339 text for instants: the trace format crate's, one reader and writer for all.
pub use trace_format::instants;
pub mod pin_service;
pub mod plain_files;
pub mod policy;
pub mod ports;
pub mod redact;
pub mod replay;
pub mod setup;
pub mod shown_duration;
pub mod telemetry;
pub mod tick;
pub mod trace;
pub mod tune;
pub mod user_text;
