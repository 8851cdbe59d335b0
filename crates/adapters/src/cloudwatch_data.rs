//! CloudWatch's `GetMetricData` as the CloudWatch source asks it: one query per metric (the
//! database's `CPUUtilization` Average and `DatabaseConnections` Maximum in `AWS/RDS`, each
//! API's `Latency` in `AWS/ApiGateway` with the configured statistic), one-minute periods,
//! every page of the answer; and the reading at a minute from the datapoints (docs/behaviour.md
//! §11.1): each metric's newest datapoint of the five minutes before it, as Prometheus's
//! lookback reads a series.

use super::aws_client::describe_sdk_error;
use crate::settings::cloudwatch::CloudWatchSource;
use aws_sdk_cloudwatch::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_cloudwatch::primitives::DateTime;
use aws_sdk_cloudwatch::types::{Dimension, Metric, MetricDataQuery, MetricStat, ScanBy};
use sentinel_core::instants::format_rfc3339;
use sentinel_core::ports::metrics::MetricsError;
use std::collections::HashMap;
use std::time::Duration;
use vocabulary::{ApiLatency, Instant, Reading};

/// How far back a minute's reading looks for a datapoint.
pub(crate) const LOOKBACK: Instant = 300;
/// CloudWatch's basic resolution for RDS and API Gateway.
const PERIOD: i32 = 60;
/// More pages than a day of every metric needs: a server that never stops paging is refused.
const MOST_PAGES: usize = 1000;

/// A metric's datapoints: (period start, value), oldest first.
pub type Points = Vec<(Instant, f64)>;

/// Every metric's datapoints of one window, by query id (`cpu`, `connections`, `latency0` ...).
pub struct Datapoints(HashMap<String, Points>);

/// A failed call: what failed, and whether the same call may succeed later.
#[derive(Debug)]
pub struct CallFailure {
    pub message: String,
    pub transient: bool,
}

/// The queries of `source`, each with its id.
fn queries(source: &CloudWatchSource) -> Vec<MetricDataQuery> {
    let (name, value) = source.database.dimension();
    let rds = |metric: &str, stat: &str, id: &str| {
        let metric = Metric::builder()
            .namespace("AWS/RDS")
            .metric_name(metric)
            .dimensions(Dimension::builder().name(name).value(value).build())
            .build();
        query(id, metric, stat)
    };
    let mut out = vec![rds("CPUUtilization", "Average", "cpu")];
    if source.max_connections.is_some() {
        out.push(rds("DatabaseConnections", "Maximum", "connections"));
    }
    for (i, api) in source.apis.iter().enumerate() {
        let metric = Metric::builder()
            .namespace("AWS/ApiGateway")
            .metric_name("Latency")
            .dimensions(Dimension::builder().name("ApiName").value(api).build())
            .build();
        out.push(query(&format!("latency{i}"), metric, &source.latency_statistic));
    }
    out
}

fn query(id: &str, metric: Metric, stat: &str) -> MetricDataQuery {
    let stat = MetricStat::builder().metric(metric).period(PERIOD).stat(stat).build();
    MetricDataQuery::builder().id(id).metric_stat(stat).return_data(true).build()
}

/// How many queries one call carries.
pub(crate) fn query_count(source: &CloudWatchSource) -> usize {
    queries(source).len()
}

/// Every datapoint of `source`'s metrics with a period starting in `[start, end)`.
pub async fn datapoints(
    client: &aws_sdk_cloudwatch::Client,
    source: &CloudWatchSource,
    location: &str,
    timeout: Duration,
    start: Instant,
    end: Instant,
) -> Result<Datapoints, CallFailure> {
    let mut by_id: HashMap<String, Points> = HashMap::new();
    let mut token: Option<String> = None;
    for _ in 0..MOST_PAGES {
        let answer = client
            .get_metric_data()
            .set_metric_data_queries(Some(queries(source)))
            .start_time(DateTime::from_secs(start))
            .end_time(DateTime::from_secs(end))
            .scan_by(ScanBy::TimestampAscending)
            .set_next_token(token.take())
            .send()
            .await
            .map_err(|e| {
                let transient = match &e {
                    SdkError::ServiceError(s) => {
                        s.raw().status().is_server_error()
                            || s.raw().status().as_u16() == 429
                            || s.err().code().is_some_and(|c| c.contains("Throttl"))
                    }
                    // A connection refused or timed out may pass; a request that cannot be
                    // sent for another reason (no credentials, no region) will not.
                    SdkError::DispatchFailure(f) => f.is_io() || f.is_timeout(),
                    SdkError::ConstructionFailure(_) => false,
                    _ => true,
                };
                let checks = "check the IAM permission cloudwatch:GetMetricData and the region";
                CallFailure {
                    message: format!("cloudwatch GetMetricData: {}", describe_sdk_error(&e, timeout, location, checks)),
                    transient,
                }
            })?;
        for result in answer.metric_data_results() {
            let Some(id) = result.id() else { continue };
            let points = by_id.entry(id.to_string()).or_default();
            points.extend(result.timestamps().iter().map(|t| t.secs()).zip(result.values().iter().copied()));
        }
        match answer.next_token() {
            Some(next) if !next.is_empty() => token = Some(next.to_string()),
            _ => {
                for (id, points) in by_id.iter_mut() {
                    points.sort_by_key(|(at, _)| *at);
                    if let Some((repeated, first)) = keep_last_of_each_timestamp(points) {
                        tracing::warn!(
                            metric = %id,
                            repeated,
                            "cloudwatch gave {repeated} datapoint(s) of `{id}` at a timestamp it had given already (the first at {}): \
                             the last of each is kept, as within any minute",
                            format_rfc3339(first)
                        );
                    }
                }
                return Ok(Datapoints(by_id));
            }
        }
    }
    Err(CallFailure {
        message: format!("cloudwatch GetMetricData: more than {MOST_PAGES} pages for one window ({location})"),
        transient: false,
    })
}

/// Keeps the last of each run of equal timestamps in `points` (sorted, a stable sort keeping
/// the order CloudWatch gave them in); how many were dropped and the first such timestamp, if any.
fn keep_last_of_each_timestamp(points: &mut Points) -> Option<(usize, Instant)> {
    let before = points.len();
    let mut first = None;
    let mut kept: Points = Vec::with_capacity(before);
    for point in points.drain(..) {
        match kept.last_mut() {
            Some(last) if last.0 == point.0 => {
                first.get_or_insert(point.0);
                *last = point;
            }
            _ => kept.push(point),
        }
    }
    *points = kept;
    first.map(|at| (before - points.len(), at))
}

impl Datapoints {
    /// The newest value of `id` with a period starting in `[at - LOOKBACK, at)`.
    fn latest(&self, id: &str, at: Instant) -> Option<f64> {
        let points = self.0.get(id)?;
        let before = points.partition_point(|(t, _)| *t < at);
        points[..before].last().filter(|(t, _)| *t >= at - LOOKBACK).map(|(_, v)| *v)
    }

    /// The reading at `at`, or a failed read when no metric has a datapoint in its lookback.
    pub fn reading_at(&self, source: &CloudWatchSource, at: Instant) -> Result<Reading, MetricsError> {
        let cpu_pct = self.latest("cpu", at);
        let connections_pct = source.max_connections.and_then(|max| self.latest("connections", at).map(|c| c / f64::from(max) * 100.0));
        if let (Some(share), Some(max)) = (connections_pct, source.max_connections)
            && share > 100.0
        {
            return Err(MetricsError::Malformed {
                field: "connections_pct".into(),
                message: format!(
                    "DatabaseConnections is {} at {}, more than max_connections = {max}: set [metrics] max_connections to the \
                     database's max_connections",
                    share * f64::from(max) / 100.0,
                    format_rfc3339(at)
                ),
            });
        }
        let latency: Vec<ApiLatency> = source
            .apis
            .iter()
            .enumerate()
            .filter_map(|(i, api)| {
                self.latest(&format!("latency{i}"), at).map(|p95| ApiLatency { api: api.clone(), p95_ms: Some(p95), baseline_ms: None })
            })
            .collect();
        if cpu_pct.is_none() && connections_pct.is_none() && latency.is_empty() {
            let (name, value) = source.database.dimension();
            return Err(MetricsError::NoData(format!(
                "cloudwatch has no datapoint in the {} minutes before {} for any metric ({name} {value}{}): check the \
                 identifiers and the region, and that the database and APIs publish their metrics",
                LOOKBACK / 60,
                format_rfc3339(at),
                if source.apis.is_empty() { String::new() } else { format!(", ApiName {}", source.apis.join(", ")) }
            )));
        }
        Ok(Reading { cpu_pct, connections_pct, scaling: None, latency })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_timestamp_keeps_its_last_value_and_is_counted() {
        let mut points: Points = vec![(60, 1.0), (120, 2.0), (120, 3.0), (120, 4.0), (180, 5.0), (240, 6.0), (240, 7.0)];
        assert_eq!(keep_last_of_each_timestamp(&mut points), Some((3, 120)));
        assert_eq!(points, vec![(60, 1.0), (120, 4.0), (180, 5.0), (240, 7.0)]);
        let mut plain: Points = vec![(60, 1.0), (120, 2.0)];
        assert_eq!(keep_last_of_each_timestamp(&mut plain), None);
        assert_eq!(plain, vec![(60, 1.0), (120, 2.0)]);
    }
}
