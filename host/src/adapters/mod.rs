//! One implementation of the ports per real system, and the embedded defaults.

pub mod sqlite;
pub mod error_chain;
pub mod stored_json;
pub mod file_publisher;
pub mod log_stages;
pub mod synthetic;
pub mod trace_metrics;
pub mod prometheus_metrics;
pub mod tls;
#[cfg(feature = "aws")]
pub mod aws_client;
pub mod redis_publisher;
#[cfg(feature = "aws")]
pub mod ssm_publisher;
#[cfg(feature = "aws")]
pub mod api_gateway_stages;
pub mod postgres;
