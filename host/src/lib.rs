//! The capacity sentinel host: loads versioned policy components on wasmtime, feeds them
//! readings, memory and pins, and replays recorded traces.

pub mod bindings;
pub mod policy;
pub mod replay;
pub mod cli;
pub mod instants;
pub mod clock;
pub mod trace;
pub mod ports;
pub mod adapters;
pub mod config;
pub mod telemetry;
pub mod tick;
pub mod pin_service;
pub mod user_text;
pub mod redact;
pub mod setup;
pub mod exporter;
pub mod api;
