//! One minute's reading from what Prometheus answered for it (docs/behaviour.md §3), the same
//! for a live instant query and for a minute of history.
//!
//! `cpu_pct`, `connections_pct` and `scaling` take the single sample's value (the largest when
//! there are several series; scaling is true when the value is above zero); `latency_p95_ms`
//! gives one [`ApiLatency`] per series, keyed by the latency label, without a baseline (the host
//! learns baselines itself). An empty answer is an absent signal, but every query empty is a
//! failed read (no data at all is an exporter down, not a quiet database). A value that is not
//! a finite number is a malformed read naming the signal and the query.

use super::prometheus_http::{Sample, Sig};
use crate::settings::prometheus::PrometheusSource;
use sentinel_core::ports::metrics::MetricsError;
use std::collections::BTreeMap;
use vocabulary::{ApiLatency, Reading};

/// What each signal's query answered, in [`Sig::ALL`]'s order: `None` for a signal without a
/// query, an empty list for a query without a sample.
pub(crate) type Answers = [Option<Vec<Sample>>; 4];

/// The reading the answers make, or why they make none.
pub(crate) fn assemble(source: &PrometheusSource, answers: Answers) -> Result<Reading, MetricsError> {
    if answers.iter().all(|samples| samples.as_ref().is_none_or(Vec::is_empty)) {
        // Nothing at all is not a quiet database: the exporters are down or the queries
        // name series that do not exist. A failed read says so (and is counted).
        let asked: Vec<String> = Sig::ALL.iter().filter_map(|sig| sig.query(source).map(|q| format!("{} `{q}`", sig.field()))).collect();
        return Err(MetricsError::NoData(format!(
            "prometheus answered every query with an empty result ({}): check that it scrapes the exporters and that the \
             queries name existing series",
            asked.join(", ")
        )));
    }
    let [cpu, connections, scaling, latency] = answers;
    let value = |sig: Sig, samples: Option<Vec<Sample>>| match samples {
        None => Ok(None),
        Some(s) => largest(sig, sig.query(source).unwrap_or_default(), &s),
    };
    Ok(Reading {
        cpu_pct: value(Sig::Cpu, cpu)?,
        connections_pct: value(Sig::Connections, connections)?,
        scaling: value(Sig::Scaling, scaling)?.map(|v| v > 0.0),
        latency: match latency {
            None => Vec::new(),
            Some(s) => latencies(Sig::Latency.query(source).unwrap_or_default(), &source.queries().latency_label, &s)?,
        },
    })
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
