//! What the sentinel read from the database's metrics in one minute.

use serde::{Deserialize, Serialize};

/// One API's p95 latency this minute and its learnt baseline for the hour, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiLatency {
    pub api: String,
    pub p95_ms: Option<f64>,
    pub baseline_ms: Option<f64>,
}

/// One minute's pressure: each signal is absent when it could not be read or is not configured.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Reading {
    pub cpu_pct: Option<f64>,
    pub connections_pct: Option<f64>,
    pub scaling: Option<bool>,
    pub latency: Vec<ApiLatency>,
}

/// A reading, or why there was none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Signal {
    #[serde(alias = "Reading")]
    Reading(Reading),
    #[serde(alias = "Failed")]
    Failed(String),
}
