//! Readings from Prometheus (docs/behaviour.md §3 and §11.1): each configured PromQL query is
//! evaluated as an instant query at the tick's `now` (`GET /api/v1/query?query=...&time=<now>`),
//! all of them concurrently through one HTTP client with a connect and a total timeout, so a hung
//! server costs at most one timeout.
//!
//! Each query returns an instant vector. `cpu_pct`, `connections_pct` and `scaling` take the
//! single sample's value (the maximum when there are several series; scaling is true when the
//! value is above zero); `latency_p95_ms` gives one [`ApiLatency`] per series, keyed by the
//! label `latency_label`, without a baseline (the host learns baselines itself). An empty
//! result is an absent signal, but every query empty is a failed read (no data at all is an
//! exporter down, not a quiet database). An HTTP error, a Prometheus `"status": "error"`, a timeout, a
//! body that is not Prometheus JSON or a value that is not a finite number is a failed read
//! naming the signal and the query; the host checks the ranges.

pub use crate::config::prometheus::{DEFAULT_LATENCY_LABEL, PrometheusQueries, PrometheusSource};
use crate::error_chain::chain;
use crate::ports::metrics::{MetricsError, MetricsSource};
use crate::redact::redact;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;
use vocabulary::{ApiLatency, Instant, Reading};

/// A response larger than this is refused (an instant query for a few signals is a few KiB).
const MAX_BODY: usize = 8 << 20;

/// A [`MetricsSource`] reading a Prometheus server's HTTP API.
pub struct PrometheusMetrics {
    source: PrometheusSource,
    timeout: Duration,
    client: reqwest::Client,
}

impl std::fmt::Debug for PrometheusMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusMetrics")
            .field("url", &self.source.shown())
            .field("queries", &self.source.queries())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Sig {
    Cpu,
    Connections,
    Scaling,
    Latency,
}

impl Sig {
    /// The name in errors: the reading's (and the configuration's) field name.
    fn field(self) -> &'static str {
        match self {
            Sig::Cpu => "cpu_pct",
            Sig::Connections => "connections_pct",
            Sig::Scaling => "scaling",
            Sig::Latency => "latency_p95_ms",
        }
    }
}

/// One series of an instant vector: its labels and its value as Prometheus wrote it.
struct Sample {
    labels: BTreeMap<String, String>,
    value: String,
}

#[derive(Deserialize)]
struct Envelope {
    status: String,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default, rename = "errorType")]
    error_type: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "resultType")]
    result_type: String,
    result: serde_json::Value,
}

#[derive(Deserialize)]
struct VectorSample {
    #[serde(default)]
    metric: BTreeMap<String, String>,
    value: (f64, String),
}

impl PrometheusMetrics {
    /// A source reading through `source` (checked when the configuration was built), each
    /// request bounded by `timeout` (connecting included).
    pub fn new(source: PrometheusSource, timeout: Duration) -> Result<PrometheusMetrics, MetricsError> {
        let setup = |why: String| MetricsError::Unavailable(format!("cannot set up the HTTP client for Prometheus: {why}"));
        let client = super::tls::http_client()
            .map_err(setup)?
            .connect_timeout(timeout)
            .timeout(timeout)
            .no_proxy()
            .build()
            .map_err(|e| setup(redact(&chain(&e))))?;
        Ok(PrometheusMetrics { source, timeout, client })
    }

    /// What to check when the answer is not Prometheus's.
    fn not_prometheus(&self) -> String {
        format!("is {} a Prometheus server? check [metrics] url", self.source.shown())
    }

    /// The configured query of a signal (empty when unset).
    fn query(&self, sig: Sig) -> &str {
        let q = self.source.queries();
        match sig {
            Sig::Cpu => &q.cpu_pct,
            Sig::Connections => &q.connections_pct,
            Sig::Scaling => &q.scaling,
            Sig::Latency => &q.latency_p95_ms,
        }
        .as_deref()
        .unwrap_or_default()
    }

    /// Evaluates one query at `now`, or `None` when the signal has no query.
    async fn run(&self, sig: Sig, query: Option<&str>, now: Instant) -> Option<Result<Vec<Sample>, MetricsError>> {
        let query = query?;
        let result = self.instant_query(sig, query, now).await;
        if let Err(e) = &result {
            tracing::warn!(signal = sig.field(), query, error = %e, "prometheus query failed");
        }
        Some(result)
    }

    async fn instant_query(&self, sig: Sig, query: &str, now: Instant) -> Result<Vec<Sample>, MetricsError> {
        let unavailable = |why: String| MetricsError::Unavailable(format!("prometheus {} query `{query}`: {why}", sig.field()));
        let malformed = |why: String| MetricsError::Malformed { field: sig.field().into(), message: format!("query `{query}`: {why}") };
        let failed = |e: reqwest::Error| {
            // The URL repeats the query, URL-encoded: the message names it once, as written.
            // The URL may carry the password too: it is never shown but as `shown`.
            let e = e.without_url();
            if e.is_timeout() {
                MetricsError::Timeout(self.timeout)
            } else if e.is_connect() {
                unavailable(format!("cannot connect to {}: {}", self.source.shown(), redact(&chain(&e))))
            } else {
                unavailable(format!("{} ({})", redact(&chain(&e)), self.not_prometheus()))
            }
        };
        let params =
            [("query", query.to_string()), ("time", now.to_string()), ("timeout", format!("{}ms", self.timeout.as_millis().max(1)))];
        let mut response = self.client.get(self.source.endpoint().clone()).query(&params).send().await.map_err(failed)?;
        let status = response.status();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(malformed(format!("the response is larger than {} MiB", MAX_BODY >> 20)));
            }
            body.extend_from_slice(&chunk);
        }
        let envelope = serde_json::from_slice::<Envelope>(&body);
        if !status.is_success() {
            let why = match &envelope {
                Ok(Envelope { error: Some(error), error_type, .. }) => {
                    format!("{}: {error}", error_type.as_deref().unwrap_or("error"))
                }
                // Not Prometheus's own error: perhaps not Prometheus at all.
                _ => format!("{} ({})", excerpt(&body), self.not_prometheus()),
            };
            return Err(unavailable(format!("HTTP {status}: {why}")));
        }
        let envelope = envelope
            .map_err(|e| malformed(format!("the response is not Prometheus JSON ({e}): {} ({})", excerpt(&body), self.not_prometheus())))?;
        if envelope.status != "success" {
            let error_type = envelope.error_type.as_deref().unwrap_or("error");
            let error = envelope.error.as_deref().unwrap_or("no reason given");
            return Err(unavailable(format!("status {:?}: {error_type}: {error}", envelope.status)));
        }
        let data = envelope.data.ok_or_else(|| malformed("a success without data".into()))?;
        match data.result_type.as_str() {
            "vector" => {
                let series: Vec<VectorSample> =
                    serde_json::from_value(data.result).map_err(|e| malformed(format!("an instant vector that does not parse: {e}")))?;
                Ok(series.into_iter().map(|s| Sample { labels: s.metric, value: s.value.1 }).collect())
            }
            // A scalar expression (`42`) is one unlabelled sample.
            "scalar" => {
                let (_, value): (f64, String) =
                    serde_json::from_value(data.result).map_err(|e| malformed(format!("a scalar that does not parse: {e}")))?;
                Ok(vec![Sample { labels: BTreeMap::new(), value }])
            }
            "matrix" => {
                Err(malformed("expected an instant vector, got a matrix (a range selector needs a function such as rate())".into()))
            }
            other => Err(malformed(format!("expected an instant vector or a scalar, got a {other}"))),
        }
    }
}

/// A sample's value as a finite number, or a malformed read of `field`.
fn finite(field: &str, query: &str, labels: &BTreeMap<String, String>, value: &str) -> Result<f64, MetricsError> {
    let malformed = |what: &str| MetricsError::Malformed {
        field: field.to_string(),
        message: format!("query `{query}` gave {value:?} for {}, {what}", series_name(labels)),
    };
    match value.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(malformed("not a finite number")),
        Err(_) => Err(malformed("not a number")),
    }
}

/// The largest value of the series, `None` for an empty vector.
fn largest(sig: Sig, query: &str, samples: &[Sample]) -> Result<Option<f64>, MetricsError> {
    let mut max: Option<f64> = None;
    for s in samples {
        let v = finite(sig.field(), query, &s.labels, &s.value)?;
        max = Some(max.map_or(v, |m| m.max(v)));
    }
    Ok(max)
}

/// One entry per API (the largest value when several series carry the same API), by name.
fn latencies(query: &str, label: &str, samples: &[Sample]) -> Result<Vec<ApiLatency>, MetricsError> {
    let mut by_api: BTreeMap<&str, f64> = BTreeMap::new();
    for s in samples {
        let api = s.labels.get(label).map(|a| a.trim()).filter(|a| !a.is_empty()).ok_or_else(|| MetricsError::Malformed {
            field: Sig::Latency.field().into(),
            message: format!("query `{query}` gave a series without the label `{label}`: {}", series_name(&s.labels)),
        })?;
        let v = finite(&format!("latency[{api}].p95_ms"), query, &s.labels, &s.value)?;
        by_api.entry(api).and_modify(|m| *m = m.max(v)).or_insert(v);
    }
    Ok(by_api.into_iter().map(|(api, p95)| ApiLatency { api: api.to_string(), p95_ms: Some(p95), baseline_ms: None }).collect())
}

/// `{a="1", b="2"}`, as PromQL writes a series.
fn series_name(labels: &BTreeMap<String, String>) -> String {
    let inner: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", inner.join(", "))
}

/// The start of a body, for an error message.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body).split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return "an empty body".into();
    }
    let cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() { format!("{cut}...") } else { cut }
}

#[async_trait::async_trait]
impl MetricsSource for PrometheusMetrics {
    fn describe(&self) -> String {
        let q = self.source.queries();
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
        format!("prometheus {} ({})", self.source.shown(), signals.join(", "))
    }

    async fn read(&self, now: Instant) -> Result<Reading, MetricsError> {
        let q = self.source.queries();
        let (cpu, connections, scaling, latency) = tokio::join!(
            self.run(Sig::Cpu, q.cpu_pct.as_deref(), now),
            self.run(Sig::Connections, q.connections_pct.as_deref(), now),
            self.run(Sig::Scaling, q.scaling.as_deref(), now),
            self.run(Sig::Latency, q.latency_p95_ms.as_deref(), now),
        );
        // The first failure in signal order is the reason; every failure was logged.
        let (cpu, connections, scaling, latency) = (cpu.transpose()?, connections.transpose()?, scaling.transpose()?, latency.transpose()?);
        let text = |q: &Option<String>| q.clone().unwrap_or_default();
        let answered = [(Sig::Cpu, &cpu), (Sig::Connections, &connections), (Sig::Scaling, &scaling), (Sig::Latency, &latency)];
        if answered.iter().all(|(_, samples)| samples.as_ref().is_none_or(Vec::is_empty)) {
            // Nothing at all is not a quiet database: the exporters are down or the queries
            // name series that do not exist. A failed read says so (and is counted).
            let asked: Vec<String> = answered
                .iter()
                .filter(|(_, samples)| samples.is_some())
                .map(|(sig, _)| format!("{} `{}`", sig.field(), self.query(*sig)))
                .collect();
            return Err(MetricsError::NoData(format!(
                "prometheus answered every query with an empty result ({}): check that it scrapes the exporters and that the \
                 queries name existing series",
                asked.join(", ")
            )));
        }
        let value = |sig: Sig, query: &Option<String>, samples: Option<Vec<Sample>>| match samples {
            None => Ok(None),
            Some(s) => largest(sig, &text(query), &s),
        };
        Ok(Reading {
            cpu_pct: value(Sig::Cpu, &q.cpu_pct, cpu)?,
            connections_pct: value(Sig::Connections, &q.connections_pct, connections)?,
            scaling: value(Sig::Scaling, &q.scaling, scaling)?.map(|v| v > 0.0),
            latency: match latency {
                None => Vec::new(),
                Some(s) => latencies(&text(&q.latency_p95_ms), &q.latency_label, &s)?,
            },
        })
    }
}
