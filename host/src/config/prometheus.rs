//! The `[metrics.queries]` of a Prometheus source: one PromQL query per signal (what each must
//! return is in docs/behaviour.md §3). Configuration, read by the Prometheus adapter.

use serde::Deserialize;

/// The label that names the API in the latency query's series, unless configured.
pub const DEFAULT_LATENCY_LABEL: &str = "api";

/// The PromQL query of each signal; an unset signal is never read (always absent).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrometheusQueries {
    /// Database CPU, 0-100.
    #[serde(default)]
    pub cpu_pct: Option<String>,
    /// Connections in use as a share of the maximum, 0-100.
    #[serde(default)]
    pub connections_pct: Option<String>,
    /// Above zero while the database is adding capacity.
    #[serde(default)]
    pub scaling: Option<String>,
    /// p95 latency in milliseconds, one series per API.
    #[serde(default)]
    pub latency_p95_ms: Option<String>,
    /// The label naming the API in the latency series.
    #[serde(default = "default_latency_label")]
    pub latency_label: String,
}

fn default_latency_label() -> String {
    DEFAULT_LATENCY_LABEL.to_string()
}

impl Default for PrometheusQueries {
    fn default() -> Self {
        PrometheusQueries {
            cpu_pct: None,
            connections_pct: None,
            scaling: None,
            latency_p95_ms: None,
            latency_label: default_latency_label(),
        }
    }
}
