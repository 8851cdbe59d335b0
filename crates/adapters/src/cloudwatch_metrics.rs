//! Readings and history from CloudWatch (`[metrics] kind = "cloudwatch"`, docs/behaviour.md
//! §11.1 and §10.9): the RDS or Aurora database's `CPUUtilization` and `DatabaseConnections`
//! (as a share of the configured maximum), each API Gateway API's `Latency` with the
//! configured statistic, through `GetMetricData`. A live read asks for the five minutes before
//! the tick and takes each metric's newest datapoint; history asks for a whole window and
//! takes, at every step, what a live read at that step would have taken.
//!
//! The SDK client is built on first use (the standard chain: environment, profile, instance
//! role), with the bounded timeouts and retries of [`super::aws_client`]; a failure names the
//! call, the region and endpoint, and what to check.

use super::aws_client::{self, AwsOverrides};
use super::cloudwatch_data::{LOOKBACK, datapoints, query_count};
use crate::settings::cloudwatch::CloudWatchSource;
use sentinel_core::ports::history::{HistoryError, HistoryStep, MetricsHistory, step_times};
use sentinel_core::ports::metrics::{MetricsError, MetricsSource};
use std::time::Duration;
use tokio::sync::OnceCell;
use vocabulary::{Instant, Reading};

/// GetMetricData returns at most this many datapoints a call (it pages past them).
const DATAPOINTS_PER_CALL: u64 = 100_800;

/// A [`MetricsSource`] and [`MetricsHistory`] on CloudWatch.
pub struct CloudWatchMetrics {
    source: CloudWatchSource,
    timeout: Duration,
    overrides: AwsOverrides,
    client: OnceCell<(aws_sdk_cloudwatch::Client, String)>,
}

impl std::fmt::Debug for CloudWatchMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudWatchMetrics").field("source", &self.source).field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

impl CloudWatchMetrics {
    /// A source on `source`, each call bounded by `timeout`; `region` overrides the chain's.
    pub fn new(source: CloudWatchSource, timeout: Duration) -> CloudWatchMetrics {
        let overrides = AwsOverrides { region: source.region.clone(), ..AwsOverrides::default() };
        CloudWatchMetrics::with_overrides(source, timeout, overrides)
    }

    /// The same, with parts of the standard chain replaced (tests: moto's endpoint).
    pub fn with_overrides(source: CloudWatchSource, timeout: Duration, overrides: AwsOverrides) -> CloudWatchMetrics {
        CloudWatchMetrics { source, timeout, overrides, client: OnceCell::new() }
    }

    async fn client(&self) -> &(aws_sdk_cloudwatch::Client, String) {
        self.client
            .get_or_init(|| async {
                let config = aws_client::sdk_config(self.timeout, &self.overrides).await;
                (aws_sdk_cloudwatch::Client::new(&config), aws_client::location(&config))
            })
            .await
    }
}

#[async_trait::async_trait]
impl MetricsSource for CloudWatchMetrics {
    fn describe(&self) -> String {
        describe(&self.source)
    }

    async fn read(&self, now: Instant) -> Result<Reading, MetricsError> {
        let (client, location) = self.client().await;
        let points = datapoints(client, &self.source, location, self.timeout, now - LOOKBACK, now).await.map_err(|f| {
            tracing::warn!(error = %f.message, "cloudwatch read failed");
            MetricsError::Unavailable(f.message)
        })?;
        points.reading_at(&self.source, now)
    }
}

#[async_trait::async_trait]
impl MetricsHistory for CloudWatchMetrics {
    fn describe(&self) -> String {
        describe(&self.source)
    }

    fn fingerprint(&self) -> String {
        format!("{} {:?}", describe(&self.source), self.source)
    }

    fn max_steps(&self) -> u64 {
        DATAPOINTS_PER_CALL / query_count(&self.source).max(1) as u64
    }

    async fn steps(&self, start: Instant, end: Instant, step: u32) -> Result<Vec<HistoryStep>, HistoryError> {
        let (client, location) = self.client().await;
        // Each step reads the five minutes before it: the first step's reach back too.
        let points = datapoints(client, &self.source, location, self.timeout, start - LOOKBACK, end)
            .await
            .map_err(|f| if f.transient { HistoryError::Transient(f.message) } else { HistoryError::Refused(f.message) })?;
        Ok(step_times(start, end, step).map(|at| (at, points.reading_at(&self.source, at))).collect())
    }
}

/// `cloudwatch DBInstanceIdentifier orders (cpu, connections of 500, latency p95 of crm)`.
fn describe(source: &CloudWatchSource) -> String {
    let (name, value) = source.database.dimension();
    let mut signals = vec!["cpu".to_string()];
    if let Some(max) = source.max_connections {
        signals.push(format!("connections of {max}"));
    }
    if !source.apis.is_empty() {
        signals.push(format!("latency {} of {}", source.latency_statistic, source.apis.join(", ")));
    }
    let region = source.region.as_deref().map(|r| format!(" in {r}")).unwrap_or_default();
    format!("cloudwatch {name} {value}{region} ({})", signals.join(", "))
}
