//! Which adapter serves each port, as the configuration chooses it: the store, the metrics
//! source, the two channels, the stage controller and the single policy file. `setup` turns each
//! choice into its adapter.

use sentinel_adapters::settings::{cloudwatch, prometheus};
use std::path::PathBuf;
use std::time::Duration;

/// `[store]`: where the sentinel keeps its memory, tick records, pin and audit, latency baselines
/// and stage-throttle records, and the lock that lets only one sentinel decide at a time.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreConfig {
    /// `kind = "sqlite"`: one file on this machine, for a single sentinel; the lock is a file
    /// beside it. The default, `sentinel-state/sentinel.db`.
    Sqlite {
        /// `store.path`: the database file (relative to the config file's folder).
        path: PathBuf,
    },
    /// `kind = "postgres"`: the shared store of several sentinels, one of which decides each
    /// minute under a PostgreSQL advisory lock kept as a lease.
    Postgres {
        /// `store.url`: a `postgres://` URL or a libpq `key=value` string, which may carry the
        /// password (`SENTINEL_POSTGRES_URL` overrides it).
        url: String,
        /// `store.timeout`: bounds connecting and each statement (default 5 s; 100 ms up to
        /// `tick_deadline`).
        timeout: Duration,
        /// `store.lock_key`: the advisory lock's key, the same for every sentinel of one
        /// deployment (default `DEFAULT_LOCK_KEY`).
        lock_key: i64,
        /// `store.lease`: how long a leader that stops answering keeps the lock (default
        /// `DEFAULT_LEASE`, 20 s; 1 s to 5 minutes).
        lease: Duration,
    },
}

/// The advisory lock key sentinels of one deployment share by default.
pub const DEFAULT_LOCK_KEY: i64 = 0x05e4_71e1;

/// How long a leader that stops answering keeps the PostgreSQL lock, unless `store.lease` says.
pub use sentinel_adapters::postgres::DEFAULT_LEASE;

/// `[metrics]`: where each tick reads the database's pressure.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricsConfig {
    /// `kind = "synthetic"`: the built-in workload, a quiet day with an incident (the default).
    Synthetic,
    /// `kind = "prometheus"`: one PromQL query per signal, evaluated at the tick's minute.
    Prometheus(Box<prometheus::PrometheusSource>),
    /// `kind = "cloudwatch"`: RDS/Aurora CPU and connections, API Gateway latency (the `aws`
    /// feature).
    CloudWatch(Box<cloudwatch::CloudWatchSource>),
    /// `kind = "trace"`: readings from a trace file, by minute (docs/behaviour.md §10.7).
    Trace {
        /// `metrics.path`: the trace file (relative to the config file's folder).
        path: PathBuf,
    },
}

/// One publication channel, `[publish.cache]` or `[publish.parameter]`: where each tick's state
/// document is written.
#[derive(Debug, Clone, PartialEq)]
pub enum ChannelConfig {
    /// `kind = "file"`: the document written atomically (temporary file, then rename); the
    /// default, `cache.json` and `parameter.json` in `sentinel-state/`.
    File {
        /// `publish.<channel>.path`: the file (relative to the config file's folder).
        path: PathBuf,
    },
    /// `kind = "stdout"`: the document printed as one JSON line.
    Stdout,
    /// `kind = "redis"`: a Redis key set with an expiry, so a stopped sentinel's state ages out.
    Redis {
        /// `publish.<channel>.url`: the Redis server's URL, which may carry a password
        /// (`SENTINEL_REDIS_URL` overrides it).
        url: String,
        /// `publish.<channel>.key`: the key written (default `capacity:state`).
        key: String,
        /// `publish.<channel>.expiry`: the key's expiry (default 5 minutes; 1 minute to 24 hours).
        expiry: Duration,
    },
    /// `kind = "ssm"`: an AWS SSM parameter, overwritten each tick (the `aws` feature).
    Ssm {
        /// `publish.<channel>.name`: the parameter's name (`/capacity/state`; a hierarchical
        /// name starts with `/`).
        name: String,
    },
}

/// `[stages] controller`: what engages and restores the emergency stage throttles.
#[derive(Debug, Clone, PartialEq)]
pub enum StageControllerConfig {
    /// `kind = "log"`: only logs what it would change (the default).
    Log,
    /// `kind = "api-gateway"`: patches the API Gateway stages' throttling (the `aws` feature;
    /// credentials from the standard AWS configuration chain).
    ApiGateway,
}

impl StageControllerConfig {
    /// The `[stages] controller.kind` that selects it, as the configuration spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            StageControllerConfig::Log => "log",
            StageControllerConfig::ApiGateway => "api-gateway",
        }
    }
}

/// A declared stage target that could not be read, kept to log it.
#[derive(Debug, Clone, PartialEq)]
pub struct MalformedTarget {
    /// Its position in `[stages] targets`, counted from 0.
    pub index: usize,
    /// What was wrong with it.
    pub message: String,
}

/// The single policy a config without `[policies]` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyChoice {
    /// The 1.0.0 component built into the binary (no `policy` key).
    Embedded,
    /// The `policy` key: a component (`.wasm`) or a native `policy.toml`.
    File(PathBuf),
}

/// How the embedded default policy is named in logs, errors and `sentinel check`.
pub const EMBEDDED_POLICY_LABEL: &str = sentinel_core::policy::embedded::LABEL;

impl std::fmt::Display for PolicyChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicyChoice::Embedded => f.write_str(EMBEDDED_POLICY_LABEL),
            PolicyChoice::File(path) => write!(f, "{}", path.display()),
        }
    }
}
