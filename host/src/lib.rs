//! The `sentinel` binary's application: the command line, the HTTP API and console, the setup
//! that assembles a sentinel from the core (`sentinel_core`) and the adapters
//! (`sentinel_adapters`), the preflight, alerting rules, the exporter and policy tuning.
//!
//! What it may depend on: everything below it. Nothing depends on it but the binary and the
//! tests.

// Every public item says what it is: the tests and the benches build on this crate's surface.
#![deny(missing_docs)]

pub mod alerts;
pub mod api;
pub mod cli;
pub mod config;
pub mod connectivity;
pub mod exporter;
pub mod setup;
pub mod tune;
