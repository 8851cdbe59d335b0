//! One implementation of the sentinel's ports per real system, and the embedded defaults.
//!
//! Each module implements one port of `sentinel_core::ports` against one system: the stores
//! (PostgreSQL with its advisory-lock leadership, SQLite for one machine), the channels (Redis,
//! the SSM parameter, a file, standard output), the metrics sources (Prometheus, CloudWatch, a
//! recorded trace, the synthetic workload), the stage controllers (API Gateway, a log), and the
//! TLS every client of the sentinel uses. [`settings`] holds the configuration tables these
//! adapters read.
//!
//! What it may depend on: the domain core (`capacity-sentinel-core`) and the systems' clients.
//! Not the binary (`capacity-sentinel`: its CLI, API and setup), which assembles a sentinel from
//! these adapters and the core. The AWS adapters are behind the `aws` feature.

// Every public item says what it is: the crate's surface is designed, and read by the binary.
#![deny(missing_docs)]

#[cfg(feature = "aws")]
pub mod api_gateway_stages;
#[cfg(feature = "aws")]
pub mod aws_client;
#[cfg(feature = "aws")]
mod cloudwatch_data;
#[cfg(feature = "aws")]
pub mod cloudwatch_metrics;

pub mod file_publisher;
pub mod log_stages;
pub mod postgres;
mod prometheus_answer;
pub mod prometheus_history;
mod prometheus_http;
pub mod prometheus_metrics;
mod prometheus_reading;
pub mod redis_publisher;
pub mod settings;
pub mod sqlite;
#[cfg(feature = "aws")]
pub mod ssm_publisher;
mod stage_rows;
mod store_fail;
pub mod stored_json;
pub mod synthetic;
pub mod tls;
pub mod trace_metrics;
