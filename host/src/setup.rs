//! Builds a sentinel from its configuration: one adapter per port, the policy loaded and
//! checked. The only place that knows which adapter serves which port.

use crate::config::{ChannelConfig, Config, MetricsConfig, PolicyChoice, StageControllerConfig, StoreConfig};
#[cfg(feature = "aws")]
use sentinel_adapters::api_gateway_stages::ApiGatewayStages;
use sentinel_adapters::file_publisher::{FilePublisher, StdoutPublisher};
use sentinel_adapters::log_stages::LogStageController;
use sentinel_adapters::postgres::{PostgresLeadership, PostgresStore};
use sentinel_adapters::prometheus_history::PrometheusHistory;
use sentinel_adapters::prometheus_metrics::PrometheusMetrics;
use sentinel_adapters::redis_publisher::RedisPublisher;
use sentinel_adapters::sqlite::{SqliteLock, SqliteStore};
#[cfg(feature = "aws")]
use sentinel_adapters::ssm_publisher::SsmPublisher;
use sentinel_adapters::synthetic::Synthetic;
use sentinel_adapters::trace_metrics::TraceMetrics;
use sentinel_core::pin_service::PinService;
use sentinel_core::policy::active::{ActivePolicy, SharedPolicy};
use sentinel_core::policy::lifecycle::{self, Lifecycle};
use sentinel_core::policy::{self, Limits, Runtime};
use sentinel_core::ports::baselines::BaselineStore;
use sentinel_core::ports::history::MetricsHistory;
use sentinel_core::ports::leadership::Leadership;
use sentinel_core::ports::memory::MemoryStore;
use sentinel_core::ports::metrics::MetricsSource;
use sentinel_core::ports::pins::PinStore;
use sentinel_core::ports::publisher::{Channel, Publisher};
use sentinel_core::ports::stage_ledger::StageLedger;
use sentinel_core::ports::stages::StageController;
use sentinel_core::telemetry::Telemetry;
use sentinel_core::tick::{Ports, Sentinel, TickSettings};
use std::sync::Arc;
use std::time::Duration;

/// Why a sentinel (or one of its parts) could not be built from its configuration. A
/// refusal's message names the configuration key and the fix; a wrapped error keeps its causes.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The configuration names something this machine or build cannot serve.
    #[error("{0}")]
    Refused(String),
    /// The single policy (the `policy` file, or the embedded default) could not be loaded.
    #[error("{what}")]
    Policy {
        /// What was being loaded, and for a file how to fix it (build it, or remove `policy`).
        what: String,
        /// Why loading it failed.
        source: policy::PolicyError,
    },
    /// The policy runtime (the engine every policy instance runs in) could not start.
    #[error(transparent)]
    Runtime(#[from] policy::PolicyError),
    /// With `[policies]`: the policy lifecycle could not start (an unreadable `public_key`, a
    /// policy state it cannot read or write, or no version that passes its checks).
    #[error(transparent)]
    Lifecycle(#[from] lifecycle::LifecycleError),
    /// The configured store could not be opened or read.
    #[error(transparent)]
    Store(#[from] sentinel_core::ports::StoreError),
}

fn refused(message: String) -> SetupError {
    SetupError::Refused(message)
}

/// The limits every policy instance of `config` runs under (`policy_deadline`,
/// `policy_memory_bytes`).
pub fn policy_limits(config: &Config) -> Limits {
    Limits { deadline: config.policy_deadline, memory_bytes: config.policy_memory_bytes }
}

/// Loads the configured single policy file (a config without `[policies]`).
fn load_policy_file(config: &Config) -> Result<SharedPolicy, SetupError> {
    let runtime = Runtime::new(policy_limits(config))?;
    let policy = match &config.policy {
        PolicyChoice::Embedded => policy::embedded::open(&runtime)
            .map_err(|source| SetupError::Policy { what: "loading the embedded default policy".into(), source })?,
        PolicyChoice::File(path) => {
            let spec = path.display().to_string();
            policy::source::open_cached(&spec, &runtime).map_err(|source| SetupError::Policy {
                what: format!("loading the policy {spec} (the config's `policy`: build it with `cargo policies`, or remove the key to run the embedded 1.0.0)"),
                source,
            })?
        }
    };
    Ok(SharedPolicy::new(policy))
}

/// The policy a command that validates but does not decide (`serve`, `pin`, `check`) runs:
/// with `[policies]`, the version the persisted state names, verified (digest, signature,
/// minimum version, self-check) exactly as `run` verifies it, as a follower that never writes
/// the state (`serve` keeps following it: see [`sentinel_core::policy::lifecycle::watcher`]); else the
/// single `policy` file.
pub async fn active_policy(config: &Config) -> Result<ActivePolicy, SetupError> {
    let Some(policies) = &config.policies else { return Ok(ActivePolicy::fixed(load_policy_file(config)?)) };
    let runtime = Runtime::new(policy_limits(config))?;
    let lifecycle = Lifecycle::start(policies.clone(), runtime, None, Arc::new(Telemetry::default()), lifecycle::Role::Follower).await?;
    Ok(ActivePolicy::managed(lifecycle))
}

/// The store's ports, all served by one store.
pub struct Stores {
    /// The memory one tick leaves the next, and the record of every tick.
    pub memory: Arc<dyn MemoryStore>,
    /// The staff pin and its audit trail.
    pub pins: Arc<dyn PinStore>,
    /// The latency samples and each hour's baselines.
    pub baselines: Arc<dyn BaselineStore>,
    /// The records of the emergency stage throttles.
    pub stages: Arc<dyn StageLedger>,
    /// The lock that lets one sentinel decide at a time: a lock file beside the SQLite store,
    /// or the PostgreSQL advisory lock (`store.lock_key`) kept as a lease.
    pub leadership: Box<dyn Leadership>,
}

/// Opens the configured store.
pub async fn open_store(config: &Config) -> Result<Stores, SetupError> {
    Ok(match &config.store {
        StoreConfig::Sqlite { path } => {
            let store = Arc::new(SqliteStore::open(path)?);
            Stores {
                memory: store.clone(),
                pins: store.clone(),
                baselines: store.clone(),
                stages: store,
                leadership: Box::new(SqliteLock::new(path)),
            }
        }
        StoreConfig::Postgres { url, timeout, lock_key, lease } => {
            let store = Arc::new(PostgresStore::connect(url, *timeout).await?);
            Stores {
                memory: store.clone(),
                pins: store.clone(),
                baselines: store.clone(),
                stages: store,
                leadership: Box::new(PostgresLeadership::new(url, *timeout, *lock_key).with_lease(*lease)),
            }
        }
    })
}

/// The configured store's tick records of the last `since`, oldest first: what `replay
/// --from-store`, `policy export-trace` and a shadow's evidence read.
pub async fn recorded_ticks(config: &Config, since: Duration) -> Result<Vec<sentinel_core::ports::memory::TickRecord>, SetupError> {
    let stores = open_store(config).await?;
    Ok(sentinel_core::trace::recorded::recent(stores.memory.as_ref(), since).await?)
}

/// The publisher of `channel` as configured (`c`); only the URL is checked, nothing is reached.
pub async fn publisher(channel: Channel, c: &ChannelConfig, timeout: Duration) -> Result<Box<dyn Publisher>, SetupError> {
    Ok(match c {
        ChannelConfig::File { path } => Box::new(FilePublisher::new(channel, path)),
        ChannelConfig::Stdout => Box::new(StdoutPublisher::new(channel)),
        ChannelConfig::Redis { url, key, expiry } => {
            Box::new(RedisPublisher::new(channel, url, key, *expiry, timeout).map_err(|e| refused(format!("publish.{channel}: {e}")))?)
        }
        #[cfg(feature = "aws")]
        ChannelConfig::Ssm { name } => Box::new(SsmPublisher::new(channel, name, timeout).await),
        #[cfg(not(feature = "aws"))]
        ChannelConfig::Ssm { .. } => {
            return Err(refused(format!("publish.{channel}: {}", crate::config::features::aws_missing("kind = \"ssm\""))));
        }
    })
}

/// The metrics source; `now` places the synthetic workload's cycle.
pub fn metrics_source(config: &Config, now: vocabulary::Instant) -> Result<Box<dyn MetricsSource>, SetupError> {
    Ok(match &config.metrics {
        MetricsConfig::Synthetic => Box::new(Synthetic::around(now)),
        MetricsConfig::Trace { path } => {
            let trace = TraceMetrics::open(path)
                .map_err(|e| refused(format!("metrics.path: {e} (check [metrics] path: a trace, docs/behaviour.md §10.1)")))?;
            if trace.span().is_none() {
                return Err(refused(format!(
                    "metrics.path: {} holds no reading or read_error line, so every tick would be a failed read: \
                     point [metrics] path at a recorded trace",
                    path.display()
                )));
            }
            Box::new(trace)
        }
        MetricsConfig::Prometheus(source) => {
            Box::new(PrometheusMetrics::new((**source).clone(), config.read_timeout).map_err(|e| refused(format!("metrics: {e}")))?)
        }
        #[cfg(feature = "aws")]
        MetricsConfig::CloudWatch(source) => {
            Box::new(sentinel_adapters::cloudwatch_metrics::CloudWatchMetrics::new((**source).clone(), config.read_timeout))
        }
        #[cfg(not(feature = "aws"))]
        MetricsConfig::CloudWatch(_) => {
            return Err(refused(format!("metrics: {}", crate::config::features::aws_missing("kind = \"cloudwatch\""))));
        }
    })
}

/// The configuration's metrics source as history (`sentinel trace fetch`), each request
/// bounded by `timeout`; a source that has no history is refused saying what does.
pub fn metrics_history(config: &Config, timeout: std::time::Duration) -> Result<Box<dyn MetricsHistory>, SetupError> {
    match &config.metrics {
        MetricsConfig::Prometheus(source) => {
            Ok(Box::new(PrometheusHistory::new((**source).clone(), timeout).map_err(|e| refused(format!("metrics: {e}")))?))
        }
        #[cfg(feature = "aws")]
        MetricsConfig::CloudWatch(source) => {
            Ok(Box::new(sentinel_adapters::cloudwatch_metrics::CloudWatchMetrics::new((**source).clone(), timeout)))
        }
        #[cfg(not(feature = "aws"))]
        MetricsConfig::CloudWatch(_) => Err(refused(format!("metrics: {}", crate::config::features::aws_missing("kind = \"cloudwatch\"")))),
        MetricsConfig::Synthetic => Err(refused(format!(
            "{}: [metrics] kind = \"synthetic\" has no history to fetch: point --config at the live configuration, whose \
             [metrics] is kind = \"prometheus\" or \"cloudwatch\"",
            config.source
        ))),
        MetricsConfig::Trace { path } => Err(refused(format!(
            "{}: [metrics] kind = \"trace\" reads {}, which is already a trace: give it to `policy tune` or `replay` as it is",
            config.source,
            path.display()
        ))),
    }
}

/// What the configuration names on this machine, checked before the store is opened (or
/// created): the policy directory and its public key, and the metrics source (a trace is read
/// whole). The configuration's own values (URLs, queries, ranges) were checked when it was
/// read. A broken configuration is refused naming its key, and nothing is created or
/// published. `sentinel check` runs the same checks.
pub fn preflight(config: &Config, now: vocabulary::Instant) -> Result<Box<dyn MetricsSource>, SetupError> {
    if let Some(policies) = &config.policies {
        if !policies.dir.is_dir() {
            return Err(refused(format!(
                "policies.dir: {} is not a directory: put the policy components and their signed manifests there \
                 (`cargo policies`, then `sentinel policy sign`)",
                policies.dir.display()
            )));
        }
        if let Some(key) = &policies.public_key {
            sentinel_core::policy::lifecycle::signing::read_public(key)
                .map_err(|e| refused(format!("policies.public_key: {e} (`sentinel policy keygen` makes a key pair)")))?;
        }
    }
    metrics_source(config, now)
}

/// The configured stage controller; nothing is reached.
pub async fn stage_controller(config: &Config) -> Result<Box<dyn StageController>, SetupError> {
    Ok(match config.stage_controller {
        StageControllerConfig::Log => Box::new(LogStageController),
        #[cfg(feature = "aws")]
        StageControllerConfig::ApiGateway => Box::new(ApiGatewayStages::new(config.publish_timeout).await),
        #[cfg(not(feature = "aws"))]
        StageControllerConfig::ApiGateway => {
            return Err(refused(format!("stages.controller: {}", crate::config::features::aws_missing("kind = \"api-gateway\""))));
        }
    })
}

/// Everything a tick needs, from the config.
pub async fn sentinel(
    config: &Config,
    now: vocabulary::Instant,
    lock_wait: Option<Duration>,
) -> Result<(Sentinel, PinService), SetupError> {
    let plain = if config.policies.is_none() { Some(load_policy_file(config)?) } else { None };
    let metrics = preflight(config, now)?;
    let stores = open_store(config).await?;
    let telemetry = Arc::new(Telemetry::default());
    let policy = match (&config.policies, plain) {
        (_, Some(policy)) => ActivePolicy::fixed(policy),
        (None, None) => unreachable!("a plain policy is loaded without [policies]"),
        (Some(policies), None) => {
            let runtime = Runtime::new(policy_limits(config))?;
            let lifecycle =
                Lifecycle::start(policies.clone(), runtime, Some(stores.memory.clone()), telemetry.clone(), lifecycle::Role::Leader)
                    .await?;
            ActivePolicy::managed(lifecycle)
        }
    };
    for m in &config.malformed_targets {
        tracing::warn!(index = m.index, "skipping malformed stage target stages.targets[{}]: {}", m.index, m.message);
    }
    let ports = Ports {
        metrics,
        memory: stores.memory,
        pins: stores.pins.clone(),
        baselines: stores.baselines,
        cache: publisher(Channel::Cache, &config.cache, config.publish_timeout).await?,
        parameter: publisher(Channel::Parameter, &config.parameter, config.publish_timeout).await?,
        stages: stage_controller(config).await?,
        stage_ledger: stores.stages,
        leadership: stores.leadership,
    };
    let settings = TickSettings {
        deadline: config.tick_deadline,
        read_timeout: config.read_timeout,
        publish_timeout: config.publish_timeout,
        throttles_enabled: config.throttles_enabled,
        stage_targets: config.stage_targets.clone(),
        lock_wait,
    };
    let pins = PinService::new(stores.pins, policy.shared());
    let dead_letters = Arc::new(sentinel_core::dead_letter::DeadLetters::open(config.dead_letter.clone()));
    Ok((Sentinel { ports, policy, settings, telemetry, dead_letters, seen: Default::default() }, pins))
}
