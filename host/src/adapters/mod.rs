//! One implementation of the ports per real system, and the embedded defaults.

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
pub mod sqlite;
#[cfg(feature = "aws")]
pub mod ssm_publisher;
pub mod stored_json;
pub mod synthetic;
pub mod tls;
pub mod trace_metrics;
