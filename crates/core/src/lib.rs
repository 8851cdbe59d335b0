//! The sentinel's domain, without the systems it talks to.
//!
//! What is here, from the bottom up:
//! 1. [`ports`]: the traits the sentinel reaches the world through (metrics, store, channels,
//!    stage controllers, pins) and the values that cross them.
//! 2. [`policy`]: loading a versioned policy component on wasmtime, checking it (contract,
//!    signatures, invariants, a trial replay) and its lifecycle (active, shadow, fallback).
//! 3. [`tick`]: one minute of the sentinel: gather readings, decide through the policy, persist,
//!    publish, observe.
//! 4. [`trace`] and [`replay`]: recorded traces and the one engine that steps them through one
//!    or two policy versions (replay, A/B, the gate, shadow scoring, tuning's evaluations).
//!
//! What it may depend on: the vocabulary, the guest's policy data, the trace format, the
//! invariants, wasmtime, tokio's runtime and the file system. Not a network client, an HTTP
//! server or a command-line parser: those live in `capacity-sentinel-adapters` (the ports'
//! implementations) and `capacity-sentinel` (the `sentinel` binary, its API and console), which
//! depend on this crate and never the other way round.

pub mod clock;
pub mod dead_letter;
pub mod error_chain;
/// RFC 3339 text for instants: the trace format crate's, one reader and writer for all.
pub use trace_format::instants;
pub mod pin_service;
pub mod plain_files;
pub mod policy;
pub mod ports;
pub mod redact;
pub mod replay;
pub mod shown_duration;
pub mod sync;
pub mod telemetry;
pub mod tick;
pub mod trace;
pub mod user_text;
