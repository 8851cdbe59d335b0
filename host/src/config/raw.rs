//! The TOML file as written: every table refuses unknown keys, adapters are tagged by `kind`,
//! durations are humantime strings ("20s", "2h"). `Config::from_raw` checks it all.

use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    /// The policy component (`.wasm`).
    pub policy: Option<PathBuf>,
    #[serde(default, with = "humantime_serde::option")]
    pub tick_deadline: Option<Duration>,
    /// The emergency stage-throttle switch (default off).
    pub throttles_enabled: Option<bool>,
    #[serde(default)]
    pub policy_limits: RawPolicyLimits,
    pub store: Option<RawStore>,
    pub metrics: Option<RawMetrics>,
    #[serde(default)]
    pub publish: RawPublish,
    #[serde(default)]
    pub stages: RawStages,
    /// `sentinel serve`: address and tokens.
    pub api: Option<super::api::RawApi>,
    /// The watched policy directory.
    pub policies: Option<super::policies::RawPolicies>,
    /// The dead-letter file of failed ticks.
    pub dead_letter: Option<PathBuf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicyLimits {
    #[serde(default, with = "humantime_serde::option")]
    pub deadline: Option<Duration>,
    pub memory_mib: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RawStore {
    Sqlite {
        path: PathBuf,
    },
    /// The shared store: several sentinels, one decides each minute (advisory lock).
    Postgres {
        url: String,
        #[serde(default, with = "humantime_serde::option")]
        timeout: Option<Duration>,
        lock_key: Option<i64>,
        /// How long a leader that stops answering keeps the lock.
        #[serde(default, with = "humantime_serde::option")]
        lease: Option<Duration>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RawMetrics {
    /// The built-in quiet day with an incident.
    Synthetic {
        #[serde(default, with = "humantime_serde::option")]
        timeout: Option<Duration>,
    },
    /// One PromQL query per signal, evaluated at the tick's minute.
    Prometheus {
        url: String,
        queries: super::prometheus::PrometheusQueries,
        #[serde(default, with = "humantime_serde::option")]
        timeout: Option<Duration>,
    },
    /// CloudWatch: RDS/Aurora CPU and connections, API Gateway latency (the `aws` feature).
    #[serde(rename = "cloudwatch")]
    CloudWatch(super::cloudwatch::RawCloudWatch),
    /// Readings from a trace file (docs/behaviour.md §10.7), by minute.
    Trace {
        path: PathBuf,
        #[serde(default, with = "humantime_serde::option")]
        timeout: Option<Duration>,
    },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPublish {
    pub cache: Option<RawChannel>,
    pub parameter: Option<RawChannel>,
    #[serde(default, with = "humantime_serde::option")]
    pub timeout: Option<Duration>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RawChannel {
    /// Writes the document atomically (temp file + rename).
    File { path: PathBuf },
    /// Prints the document as one JSON line.
    Stdout,
    /// A Redis key with an expiry, so a dead sentinel's state ages out.
    Redis {
        url: String,
        key: Option<String>,
        #[serde(default, with = "humantime_serde::option")]
        expiry: Option<Duration>,
    },
    /// An AWS SSM parameter, overwritten each tick (endpoint, region and credentials from the
    /// standard AWS configuration chain).
    Ssm { name: String },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStages {
    pub controller: Option<RawStageController>,
    /// Declared targets, read one by one: a malformed one is skipped with a log line.
    #[serde(default)]
    pub targets: Vec<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum RawStageController {
    /// Logs what it would change.
    Log,
    /// Patches API Gateway stage throttling (AWS configuration chain).
    ApiGateway,
}
