//! The host's integration tests in one test binary (`autotests = false` in host/Cargo.toml), one
//! file a concern, each a module here: one binary links the sentinel and its dependencies once.
//! `cli_installed.rs` is its own binary: `tests/run` builds it without the `aws` feature too.
//! Run one file's tests with its module name as the filter:
//!
//! ```text
//! cargo test -p capacity-sentinel --test integration cli_pins::
//! ```

/// What the CLI tests share: the built binary, temporary folders, configs.
mod support;

mod api_serve;
mod api_slow_clients;
mod cli_check;
mod cli_fresh_memory;
mod cli_lock;
mod cli_memory_across_ticks;
mod cli_metrics;
mod cli_pins;
mod cli_publish_failures;
mod cli_repeated_minute;
mod cli_run_speed;
mod cli_shell_help;
mod cli_sigterm;
mod cli_tune;
mod cli_tune_shards;
mod component_limits;
mod lifecycle_in_a_sentinel;
mod policy_directory_files;
mod policy_faults_live;
mod policy_lifecycle;
mod replay_cache;
mod replay_from_store;
mod republished_minute_metrics;
mod shadow_promotion;
