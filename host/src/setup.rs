//! Builds a sentinel from its configuration: one adapter per port, the policy loaded and
//! checked. The only place that knows which adapter serves which port.

use crate::adapters::file_publisher::{FilePublisher, StdoutPublisher};
use crate::adapters::log_stages::LogStageController;
use crate::adapters::sqlite::{SqliteLock, SqliteStore};
use crate::adapters::synthetic::Synthetic;
use crate::adapters::trace_metrics::TraceMetrics;
use crate::config::{ChannelConfig, Config, MetricsConfig, StageControllerConfig, StoreConfig};
use crate::pin_service::PinService;
use crate::policy::{self, Limits, Runtime};
use crate::ports::metrics::MetricsSource;
use crate::ports::publisher::Publisher;
use crate::telemetry::Telemetry;
use crate::tick::{Ports, Sentinel, SharedPolicy, TickSettings};
use anyhow::Context;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Loads the configured policy component.
pub fn load_policy(config: &Config) -> anyhow::Result<SharedPolicy> {
    let runtime = Runtime::new(Limits { deadline: config.policy_deadline, memory_bytes: config.policy_memory_bytes })?;
    let spec = config.policy.display().to_string();
    let policy = policy::open(&spec, &runtime).with_context(|| {
        format!("loading the policy {spec} (build it with `cargo policies`, or set `policy` in the config)")
    })?;
    Ok(Arc::new(Mutex::new(policy)))
}

/// Opens the configured store.
pub fn open_store(config: &Config) -> anyhow::Result<Arc<SqliteStore>> {
    match &config.store {
        StoreConfig::Sqlite { path } => Ok(Arc::new(SqliteStore::open(path)?)),
    }
}

fn publisher(channel: &str, c: &ChannelConfig) -> Box<dyn Publisher> {
    match c {
        ChannelConfig::File { path } => Box::new(FilePublisher::new(channel, path)),
        ChannelConfig::Stdout => Box::new(StdoutPublisher::new(channel)),
    }
}

/// The metrics source; `now` places the synthetic workload's cycle.
pub fn metrics_source(config: &Config, now: crate::bindings::Instant) -> anyhow::Result<Box<dyn MetricsSource>> {
    Ok(match &config.metrics {
        MetricsConfig::Synthetic => Box::new(Synthetic::around(now)),
        MetricsConfig::Trace { path } => Box::new(TraceMetrics::open(path)?),
    })
}

/// Everything a tick needs, from the config.
pub fn sentinel(config: &Config, now: crate::bindings::Instant, lock_wait: Option<Duration>) -> anyhow::Result<(Sentinel, PinService)> {
    let policy = load_policy(config)?;
    let store = open_store(config)?;
    let leadership = match &config.store {
        StoreConfig::Sqlite { path } => Box::new(SqliteLock::new(path)),
    };
    for m in &config.malformed_targets {
        tracing::warn!(index = m.index, "skipping malformed stage target stages.targets[{}]: {}", m.index, m.message);
    }
    let ports = Ports {
        metrics: metrics_source(config, now)?,
        memory: store.clone(),
        pins: store.clone(),
        baselines: store.clone(),
        cache: publisher("cache", &config.cache),
        parameter: publisher("parameter", &config.parameter),
        stages: match config.stage_controller {
            StageControllerConfig::Log => Box::new(LogStageController),
        },
        leadership,
    };
    let settings = TickSettings {
        deadline: config.tick_deadline,
        read_timeout: config.read_timeout,
        publish_timeout: config.publish_timeout,
        throttles_enabled: config.throttles_enabled,
        stage_targets: config.stage_targets.clone(),
        lock_wait,
    };
    let pins = PinService::new(store, policy.clone());
    Ok((Sentinel { ports, policy, settings, telemetry: Arc::new(Telemetry::default()) }, pins))
}
