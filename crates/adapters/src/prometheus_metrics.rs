//! Readings from Prometheus (docs/behaviour.md §3 and §11.1): each configured PromQL query is
//! evaluated as an instant query at the tick's `now` (`GET /api/v1/query?query=...&time=<now>`),
//! all of them concurrently through one HTTP client with a connect and a total timeout, so a hung
//! server costs at most one timeout. How the answers make a reading is
//! `super::prometheus_reading`'s; the requests and their failures are
//! `super::prometheus_http`'s. An HTTP error, a Prometheus `"status": "error"`, a timeout, a
//! body that is not Prometheus JSON or a value that is not a finite number is a failed read
//! naming the signal and the query; the host checks the ranges.

use super::prometheus_http::{PrometheusHttp, Sample, Sig};
use super::prometheus_reading::assemble;
pub use crate::settings::prometheus::{PrometheusQueries, PrometheusSource};
use sentinel_core::ports::metrics::{MetricsError, MetricsSource};
use std::time::Duration;
use vocabulary::{Instant, Reading};

/// A [`MetricsSource`] reading a Prometheus server's HTTP API.
pub struct PrometheusMetrics {
    http: PrometheusHttp,
}

impl std::fmt::Debug for PrometheusMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusMetrics")
            .field("url", &self.http.source.shown())
            .field("queries", &self.http.source.queries())
            .field("timeout", &self.http.timeout)
            .finish_non_exhaustive()
    }
}

impl PrometheusMetrics {
    /// A source reading through `source` (checked when the configuration was built), each
    /// request bounded by `timeout` (connecting included).
    pub fn new(source: PrometheusSource, timeout: Duration) -> Result<PrometheusMetrics, MetricsError> {
        Ok(PrometheusMetrics { http: PrometheusHttp::new(source, timeout)? })
    }

    /// Evaluates one signal's query at `now`, or `None` when the signal has no query.
    async fn run(&self, sig: Sig, now: Instant) -> Option<Result<Vec<Sample>, MetricsError>> {
        let query = sig.query(&self.http.source)?;
        let result = self.http.instant(sig, query, now).await.map_err(|f| f.error);
        if let Err(e) = &result {
            tracing::warn!(signal = sig.field(), query, error = %e, "prometheus query failed");
        }
        Some(result)
    }
}

#[async_trait::async_trait]
impl MetricsSource for PrometheusMetrics {
    fn describe(&self) -> String {
        describe(&self.http.source)
    }

    async fn read(&self, now: Instant) -> Result<Reading, MetricsError> {
        let (cpu, connections, scaling, latency) = tokio::join!(
            self.run(Sig::Cpu, now),
            self.run(Sig::Connections, now),
            self.run(Sig::Scaling, now),
            self.run(Sig::Latency, now),
        );
        // The first failure in signal order is the reason; every failure was logged.
        let answers = [cpu.transpose()?, connections.transpose()?, scaling.transpose()?, latency.transpose()?];
        assemble(&self.http.source, answers)
    }
}

/// `prometheus http://host:9090 (cpu, connections, latency by api)`: the server and the signals.
pub(crate) fn describe(source: &PrometheusSource) -> String {
    let q = source.queries();
    let mut signals = Vec::new();
    if q.cpu_pct.is_some() {
        signals.push("cpu".to_string());
    }
    if q.connections_pct.is_some() {
        signals.push("connections".to_string());
    }
    if q.scaling.is_some() {
        signals.push("scaling".to_string());
    }
    if q.latency_p95_ms.is_some() {
        signals.push(format!("latency by {}", q.latency_label));
    }
    format!("prometheus {} ({})", source.shown(), signals.join(", "))
}
