//! Support for the integration tests under `tests/tests/`: where the workspace, the built
//! components and the shared data are, how to open a policy (native modules or component) and
//! replay a trace through it, how golden files are compared and blessed, and how the `sentinel`
//! binary is built and found.
//!
//! Everything here panics with a message that says what to do (`run `cargo policies` first`),
//! because its only callers are tests.

pub mod bad_input;
pub mod fault_world;
pub mod faults;
pub mod fleet_report;
pub mod golden;
pub mod json;
pub mod paths;
pub mod policies;
pub mod random_trace;
pub mod refolding;
pub mod repository_traces;
pub mod rest_api;
pub mod sentinel_bin;
pub mod servers;
pub mod signed;
pub mod stage_ledger;
pub mod year;

pub use golden::{bless, first_difference};
pub use paths::{cloudwatch_dir, component_path, workspace};
pub use policies::{ReplayPath, component, native, replay_lines, replay_outcomes, runtime, shared_component};
