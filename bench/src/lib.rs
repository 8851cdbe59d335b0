//! The performance budget (BENCHMARKS.md), measured: what the benches under `benches/` share, and
//! the one table (`bench-table`) that `bench/run` prints after them.
//!
//! Every figure the table shows is a ratio of two measurements taken in the same run (same
//! process for the criterion groups, same script run for the rest), because this machine is
//! shared and its load moves: absolute numbers are printed too, each beside the load average
//! that was measured while it ran. Nothing here asserts a timing; the table compares each
//! ratio with its target and says which are met.

pub mod inputs;
pub mod live;
pub mod noop;
pub mod results;
pub mod rss;
pub mod table;

/// True under `cargo bench` (criterion passes `--bench`); false under `cargo test`, where each
/// bench runs once, small, as a smoke test.
pub fn measuring() -> bool {
    std::env::args().any(|a| a == "--bench")
}
