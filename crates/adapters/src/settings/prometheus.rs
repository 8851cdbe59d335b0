//! A Prometheus source's configuration: the `[metrics.queries]` (one PromQL query per signal;
//! what each must return is in docs/behaviour.md §3) and the checked source the adapter reads
//! through.

use reqwest::Url;
use sentinel_core::redact::redact;
use serde::Deserialize;

/// The label that names the API in the latency query's series, unless configured.
pub(crate) const DEFAULT_LATENCY_LABEL: &str = "api";

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

/// A Prometheus source as configured and checked, once, when the configuration is built: the
/// base URL is http(s) with a host and no query or fragment, at least one query is set, none is
/// blank, and the latency label is not. The adapter reads through it and checks nothing again.
#[derive(Clone, PartialEq)]
pub struct PrometheusSource {
    endpoint: Url,
    range_endpoint: Url,
    shown: String,
    queries: PrometheusQueries,
}

/// Why a Prometheus source is refused: the configuration key and what to write there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct PrometheusSourceError {
    /// The configuration key refused (e.g. `metrics.url`, `metrics.queries.cpu_pct`).
    pub key: String,
    /// What is wrong with it and what to write instead; a URL is shown without its password.
    pub message: String,
}

impl PrometheusSource {
    /// Checks `base_url` (`http(s)://host:port[/prefix]`) and the queries. Messages show the URL
    /// without its password.
    pub fn new(base_url: &str, queries: PrometheusQueries) -> Result<PrometheusSource, PrometheusSourceError> {
        let refuse = |key: &str, message: String| PrometheusSourceError { key: key.to_string(), message };
        let url_error = |why: &dyn std::fmt::Display| {
            refuse("metrics.url", format!("{:?}: {why}; write http(s)://HOST:PORT[/PREFIX]", redact(base_url.trim())))
        };
        let base = Url::parse(base_url.trim()).map_err(|e| url_error(&e))?;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none_or(str::is_empty) {
            return Err(url_error(&"expected http(s)://host:port"));
        }
        if base.query().is_some() || base.fragment().is_some() {
            return Err(url_error(&"a base URL has no query or fragment"));
        }
        let shown = redact(base.as_str()).trim_end_matches('/').to_string();
        let api = |path: &str| Url::parse(&format!("{}/api/v1/{path}", base.as_str().trim_end_matches('/'))).map_err(|e| url_error(&e));
        let (endpoint, range_endpoint) = (api("query")?, api("query_range")?);
        let set = [
            ("cpu_pct", &queries.cpu_pct),
            ("connections_pct", &queries.connections_pct),
            ("scaling", &queries.scaling),
            ("latency_p95_ms", &queries.latency_p95_ms),
        ];
        for (field, q) in set {
            if q.as_deref().is_some_and(|q| q.trim().is_empty()) {
                return Err(refuse(&format!("metrics.queries.{field}"), "is empty; write a PromQL query or remove the key".into()));
            }
        }
        if set.iter().all(|(_, q)| q.is_none()) {
            return Err(refuse(
                "metrics.queries",
                "no query configured (set at least one of cpu_pct, connections_pct, scaling, latency_p95_ms)".into(),
            ));
        }
        if queries.latency_label.trim().is_empty() {
            return Err(refuse("metrics.queries.latency_label", "is empty; name the label that holds the API (default \"api\")".into()));
        }
        Ok(PrometheusSource { endpoint, range_endpoint, shown, queries })
    }

    /// `<base>/api/v1/query`.
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// `<base>/api/v1/query_range`: history (`sentinel trace fetch`).
    pub fn range_endpoint(&self) -> &Url {
        &self.range_endpoint
    }

    /// The base URL without its password, for messages and logs.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The PromQL queries, as configured and checked.
    pub fn queries(&self) -> &PrometheusQueries {
        &self.queries
    }
}

/// Never the password: the endpoint is shown redacted.
impl std::fmt::Debug for PrometheusSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusSource").field("url", &self.shown).field("queries", &self.queries).finish()
    }
}

#[cfg(test)]
mod tests;
