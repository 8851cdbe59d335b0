//! Every integration test of the project in one test binary (`autotests = false` in
//! tests/Cargo.toml): one file a concern, each a module here. One binary links the host, wasmtime
//! and the AWS SDK once instead of forty times (a file's own binary was about 8 CPU-seconds of
//! compile and link; BENCHMARKS.md, "CI"). Run one file's tests with its module name as the filter:
//!
//! ```text
//! cargo test -p capacity-tests --test integration faults_crash::
//! cargo nextest run -p capacity-tests -E 'test(/^faults_crash::/)'
//! ```

/// The PostgreSQL cluster and store helpers that three files share.
mod postgres_common;

mod ab_gate;
mod ab_metrics;
mod alert_rules;
mod alerts_live;
mod api_gateway_stages;
mod bad_input_config;
mod bad_input_config_messages;
mod bad_input_metrics;
mod bad_input_pins;
mod bad_input_pins_api;
mod bad_input_traces;
mod batch_replay;
mod channel_names;
mod check_connect;
mod cli;
mod cloudwatch;
mod cloudwatch_source;
mod component_vs_native;
mod conformance_vectors;
mod consumers_follow;
mod contract_versions;
mod cross_validation_regrouping;
mod deploy_container;
mod deploy_systemd;
mod end_to_end;
mod failover_fencing;
mod faults_crash;
mod faults_race;
mod faults_servers;
mod file_sizes;
mod first_day;
mod flap_damping;
mod fleet_readers;
mod fuzz_seeds;
mod gate_costs;
mod init_signed;
mod module_layers;
mod non_finite;
mod one_lock_rule;
mod policy_build;
mod postgres_leadership;
mod postgres_store;
mod prometheus_metrics;
mod publish_timeouts;
mod redis_publisher;
mod reliability_matrix;
mod replay_stage_restores;
mod scenario_traces;
mod security_secrets;
mod sqlite_store;
mod ssm_publisher;
mod stage_ledger;
mod stage_throttles_kill;
mod stage_throttles_live;
mod store_contract;
mod test_servers;
mod trace_fetch;
mod tune_progress;
mod unit_test_layout;
