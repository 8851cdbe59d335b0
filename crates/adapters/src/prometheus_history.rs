//! History from Prometheus (`sentinel trace fetch`): each configured query as a range query
//! (`GET /api/v1/query_range`), which Prometheus evaluates at every step exactly as the instant
//! query the live sentinel sends at that time (the same 5-minute lookback: a series that stops
//! is still read for up to five minutes, then is absent). Each step's answers then make a
//! reading as the live source makes one (`super::prometheus_reading`): a step where no query
//! has a sample is a failed read with the live text, never an invented value.

use super::prometheus_http::{Again, PrometheusHttp, QueryFailure, RangeSeries, Sample, Sig};
use super::prometheus_metrics::describe;
use super::prometheus_reading::{Answers, assemble};
use crate::settings::prometheus::PrometheusSource;
use sentinel_core::ports::history::{HistoryError, HistoryStep, MetricsHistory, step_times};
use sentinel_core::ports::metrics::MetricsError;
use std::collections::HashMap;
use std::time::Duration;
use vocabulary::Instant;

/// Prometheus refuses a range query of more than 11,000 points per series
/// (`exceeded maximum resolution of 11,000 points per timeseries`).
pub(crate) const PROMETHEUS_MAX_POINTS: u64 = 11_000;

/// A [`MetricsHistory`] asking a Prometheus server's range API.
pub struct PrometheusHistory {
    http: PrometheusHttp,
}

impl std::fmt::Debug for PrometheusHistory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusHistory")
            .field("url", &self.http.source.shown())
            .field("timeout", &self.http.timeout)
            .finish_non_exhaustive()
    }
}

impl PrometheusHistory {
    /// History through `source`, each request bounded by `timeout` (a range query over a day
    /// takes longer than a live read: give it more).
    pub fn new(source: PrometheusSource, timeout: Duration) -> Result<PrometheusHistory, MetricsError> {
        Ok(PrometheusHistory { http: PrometheusHttp::new(source, timeout)? })
    }

    /// One signal's matrix, `None` when the signal has no query.
    async fn range(&self, sig: Sig, start: Instant, end: Instant, step: u32) -> Option<Result<Vec<RangeSeries>, QueryFailure>> {
        let query = sig.query(&self.http.source)?;
        Some(self.http.range(sig, query, start, end, step).await)
    }
}

/// A signal's samples by the step they answer.
type ByStep = HashMap<Instant, Vec<Sample>>;

fn by_step(matrix: Vec<RangeSeries>) -> ByStep {
    let mut steps = ByStep::new();
    for series in matrix {
        for (at, value) in series.points {
            steps.entry(at).or_default().push(Sample { labels: series.labels.clone(), value });
        }
    }
    steps
}

#[async_trait::async_trait]
impl MetricsHistory for PrometheusHistory {
    fn describe(&self) -> String {
        describe(&self.http.source)
    }

    fn fingerprint(&self) -> String {
        let source = &self.http.source;
        let queries: Vec<String> =
            Sig::ALL.iter().filter_map(|sig| sig.query(source).map(|query| format!("{}={query:?}", sig.field()))).collect();
        format!("prometheus {} {} latency_label={:?}", source.shown(), queries.join(" "), source.queries().latency_label)
    }

    fn max_steps(&self) -> u64 {
        PROMETHEUS_MAX_POINTS
    }

    async fn steps(&self, start: Instant, end: Instant, step: u32) -> Result<Vec<HistoryStep>, HistoryError> {
        let (cpu, connections, scaling, latency) = tokio::join!(
            self.range(Sig::Cpu, start, end, step),
            self.range(Sig::Connections, start, end, step),
            self.range(Sig::Scaling, start, end, step),
            self.range(Sig::Latency, start, end, step),
        );
        let mut matrices = Vec::new();
        // The first failure in signal order is the reason: the window is fetched whole or not.
        for answer in [cpu, connections, scaling, latency] {
            matrices.push(match answer.transpose() {
                Ok(matrix) => matrix.map(by_step),
                Err(QueryFailure { error, again: Again::Later }) => return Err(HistoryError::Transient(error.to_string())),
                Err(QueryFailure { error, again: Again::Smaller }) => return Err(HistoryError::TooLarge(error.to_string())),
                Err(QueryFailure { error, again: Again::Never }) => return Err(HistoryError::Refused(error.to_string())),
            });
        }
        let at_step = |at: Instant| {
            let mut answers: Answers = Default::default();
            for (answer, matrix) in answers.iter_mut().zip(matrices.iter_mut()) {
                *answer = matrix.as_mut().map(|steps| steps.remove(&at).unwrap_or_default());
            }
            (at, assemble(&self.http.source, answers))
        };
        Ok(step_times(start, end, step).map(at_step).collect())
    }
}
