//! The sentinel's configuration: one TOML file, typed and checked, every error naming its key.
//! With no file, the embedded default runs: SQLite in `sentinel-state/`, the synthetic
//! workload, both channels as files. Environment variables are read here only, for secrets.

pub mod api;
pub mod bounds;
mod choices;
mod error_place;
pub mod features;
pub mod oidc;
mod raw;
/// The tables of the adapters and the policy lifecycle, read here as part of the one file.
pub use sentinel_adapters::settings::{cloudwatch, postgres_url, prometheus, redis_url};
pub use sentinel_core::policy::settings as policies;

pub use choices::{
    ChannelConfig, DEFAULT_LEASE, DEFAULT_LOCK_KEY, EMBEDDED_POLICY_LABEL, MalformedTarget, MetricsConfig, PolicyChoice,
    StageControllerConfig, StoreConfig,
};
use raw::{RawChannel, RawConfig, RawMetrics, RawStageController, RawStore};
use sentinel_core::ports::stages::StageTarget;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why the configuration could not be loaded: its file could not be read, or a key in it is
/// refused. Either message names the file, and a refusal the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read (missing, not readable, or not UTF-8 text).
    #[error("cannot read config {}: {source}{}", path.display(), error_place::read_advice(source))]
    Read {
        /// The config file, as given.
        path: PathBuf,
        /// What reading it failed with.
        source: std::io::Error,
    },
    /// The configuration was read but is refused: TOML that does not parse, an unknown or
    /// mistyped key, a value out of range, or keys that contradict each other.
    #[error("config {path}: {message}")]
    Invalid {
        /// Where the configuration came from: the file's path, or `embedded default`.
        path: String,
        /// The dotted key when one is known (`store.timeout: ...`), then what is wrong with it.
        message: String,
    },
}

/// The sentinel's configuration as checked: every key with its default filled in and its range
/// checked, every relative path resolved against the config file's folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where it came from (`embedded default` without a file).
    pub source: String,
    /// `policy`: the single policy run without `[policies]` (absent: the embedded 1.0.0).
    pub policy: PolicyChoice,
    /// `[policy_limits] deadline`: the most one policy call may take (default 500 ms; 10 ms to
    /// 10 s).
    pub policy_deadline: Duration,
    /// `[policy_limits] memory_mib`, in bytes: the cap on a policy instance's linear memory
    /// (default 16 MiB; 1 to 1024 MiB).
    pub policy_memory_bytes: usize,
    /// `tick_deadline`: the most a whole tick may take; past it the tick is abandoned (default
    /// 20 s; 1 s to 50 s).
    pub tick_deadline: Duration,
    /// `throttles_enabled`: the emergency stage-throttle switch; off (the default), the policy
    /// never engages stage throttles.
    pub throttles_enabled: bool,
    /// `[store]`: where the state is kept (absent: SQLite in `sentinel-state/sentinel.db`).
    pub store: StoreConfig,
    /// `[metrics]`: where each tick reads the database's pressure (absent: the synthetic
    /// workload).
    pub metrics: MetricsConfig,
    /// `metrics.timeout`: the most each read at the start of a tick may take (default 5 s; 10 ms
    /// up to `tick_deadline`).
    pub read_timeout: Duration,
    /// `[publish.cache]`: the cache channel (absent: the file `sentinel-state/cache.json`).
    pub cache: ChannelConfig,
    /// `[publish.parameter]`: the parameter channel (absent: the file
    /// `sentinel-state/parameter.json`).
    pub parameter: ChannelConfig,
    /// `publish.timeout`: the most each channel's publication may take, and each call of the
    /// API Gateway stage controller (default 5 s; 10 ms up to `tick_deadline`).
    pub publish_timeout: Duration,
    /// `[stages] controller`: what changes the emergency stage throttles (absent: `log`).
    pub stage_controller: StageControllerConfig,
    /// `[stages] targets`: the API stages to throttle in an emergency, those that could be read.
    pub stage_targets: Vec<StageTarget>,
    /// The `[stages] targets` entries that could not be read: skipped, each with a warning in the
    /// log when the sentinel starts.
    pub malformed_targets: Vec<MalformedTarget>,
    /// `sentinel serve`.
    pub api: api::ApiConfig,
    /// `[policies]`: the watched policy directory (none: the single `policy` file).
    pub policies: Option<policies::PoliciesConfig>,
    /// `dead_letter`: the file failed ticks are kept in (docs/behaviour.md §11.10).
    pub dead_letter: PathBuf,
}

const STATE_DIR: &str = "sentinel-state";

impl Config {
    /// Reads `path`, or the embedded default when `None`.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        match path {
            None => Config::from_raw(RawConfig::default(), "embedded default", None),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: path.to_path_buf(), source })?;
                Config::parse(&text, path)
            }
        }
    }

    /// The embedded default for a simulated run (`sentinel run --speed` without a config): its
    /// store, channel files and dead letters in `sentinel-state/simulated/`, so that simulated
    /// minutes, which run ahead of the wall clock, never reach the store a real-time sentinel on
    /// the embedded default uses (docs/behaviour.md §11.6).
    pub fn simulated_default() -> Result<Config, ConfigError> {
        let mut c = Config::from_raw(RawConfig::default(), "embedded default, simulated", None)?;
        let dir = PathBuf::from(STATE_DIR).join("simulated");
        c.store = StoreConfig::Sqlite { path: dir.join("sentinel.db") };
        for channel in [&mut c.cache, &mut c.parameter] {
            if let ChannelConfig::File { path } = channel
                && let Some(name) = path.file_name()
            {
                *path = dir.join(name);
            }
        }
        c.dead_letter = dir.join("dead-letter.jsonl");
        Ok(c)
    }

    /// Parses a config's text; relative paths in it are relative to the file's folder.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        // The error leads with the dotted key (`store.kind: ...`) before TOML's own line and
        // snippet, which name the key only as written in its table. A token's line may hold a
        // plain token pasted by mistake: its error gives the line without echoing it.
        let invalid = |key: String, e: toml::de::Error| {
            let shown = match e.span() {
                Some(span) if key.contains("token") => {
                    format!("{} (line {})", e.message(), text.bytes().take(span.start).filter(|b| *b == b'\n').count() + 1)
                }
                // TOML's snippet may be a URL's line: shown without its password.
                _ => sentinel_core::redact::redact(&error_place::shown(text, &e)),
            };
            ConfigError::Invalid {
                path: path.display().to_string(),
                message: if key.is_empty() || key == "." { shown } else { format!("{key}: {shown}") },
            }
        };
        let document = toml::Deserializer::parse(text).map_err(|e| invalid(String::new(), e))?;
        let raw: RawConfig = serde_path_to_error::deserialize(document).map_err(|e| invalid(e.path().to_string(), e.into_inner()))?;
        let base = path.parent().filter(|p| !p.as_os_str().is_empty()).map(Path::to_path_buf);
        Config::from_raw(raw, &path.display().to_string(), base.as_deref())
    }

    fn from_raw(raw: RawConfig, source: &str, base: Option<&Path>) -> Result<Config, ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid { path: source.to_string(), message: format!("{key}: {message}") };
        let resolve = |p: PathBuf| match base {
            Some(base) if p.is_relative() => base.join(p),
            _ => p,
        };
        let in_range = |key: &str, d: Duration, min: Duration, max: Duration| {
            bounds::duration_within(d, min, max).map_err(|message| invalid(key, message))
        };
        let tick_deadline = in_range(
            "tick_deadline",
            raw.tick_deadline.unwrap_or(Duration::from_secs(20)),
            Duration::from_secs(1),
            Duration::from_secs(50),
        )?;
        let policy_deadline = in_range(
            "policy_limits.deadline",
            raw.policy_limits.deadline.unwrap_or(Duration::from_millis(500)),
            Duration::from_millis(10),
            Duration::from_secs(10),
        )?;
        let memory_mib = raw.policy_limits.memory_mib.unwrap_or(16);
        if !(1..=1024).contains(&memory_mib) {
            return Err(invalid("policy_limits.memory_mib", "must be between 1 and 1024".into()));
        }
        let store = match raw.store {
            None => StoreConfig::Sqlite { path: PathBuf::from(STATE_DIR).join("sentinel.db") },
            Some(RawStore::Sqlite { path }) => StoreConfig::Sqlite { path: resolve(path) },
            Some(RawStore::Postgres { url, timeout, lock_key, lease }) => {
                let url = secret_override("SENTINEL_POSTGRES_URL", url);
                let timeout =
                    in_range("store.timeout", timeout.unwrap_or(Duration::from_secs(5)), Duration::from_millis(100), tick_deadline)?;
                postgres_url::parse(&url, timeout).map_err(|(_, message)| invalid("store.url", message))?;
                let lease = in_range("store.lease", lease.unwrap_or(DEFAULT_LEASE), Duration::from_secs(1), Duration::from_secs(300))?;
                StoreConfig::Postgres { url, timeout, lock_key: lock_key.unwrap_or(DEFAULT_LOCK_KEY), lease }
            }
        };
        let (metrics, timeout) = match raw.metrics {
            None => (MetricsConfig::Synthetic, None),
            Some(RawMetrics::Synthetic { timeout }) => (MetricsConfig::Synthetic, timeout),
            Some(RawMetrics::Trace { path, timeout }) => (MetricsConfig::Trace { path: resolve(path) }, timeout),
            Some(RawMetrics::CloudWatch(raw)) => {
                features::aws_adapters("kind = \"cloudwatch\"").map_err(|e| invalid("metrics.kind", e))?;
                let timeout = raw.timeout;
                let source = cloudwatch::CloudWatchSource::new(raw).map_err(|e| invalid(&e.key, e.message))?;
                (MetricsConfig::CloudWatch(Box::new(source)), timeout)
            }
            Some(RawMetrics::Prometheus { url, queries, timeout }) => {
                let source = prometheus::PrometheusSource::new(&secret_override("SENTINEL_PROMETHEUS_URL", url), queries)
                    .map_err(|e| invalid(&e.key, e.message))?;
                (MetricsConfig::Prometheus(Box::new(source)), timeout)
            }
        };
        let read_timeout =
            in_range("metrics.timeout", timeout.unwrap_or(Duration::from_secs(5)), Duration::from_millis(10), tick_deadline)?;
        let channel = |key: &str, c: Option<RawChannel>, default: &str| -> Result<ChannelConfig, ConfigError> {
            Ok(match c {
                None => ChannelConfig::File { path: PathBuf::from(STATE_DIR).join(default) },
                Some(RawChannel::File { path }) => ChannelConfig::File { path: resolve(path) },
                Some(RawChannel::Stdout) => ChannelConfig::Stdout,
                Some(RawChannel::Redis { url, key: redis_key, expiry }) => ChannelConfig::Redis {
                    url: {
                        let url = secret_override("SENTINEL_REDIS_URL", url);
                        let redis_key = redis_key.as_deref().unwrap_or("capacity:state");
                        redis_url::client(&url, redis_key).map_err(|e| invalid(&format!("{key}.{}", e.field), e.message))?;
                        url
                    },
                    key: redis_key.unwrap_or_else(|| "capacity:state".into()),
                    expiry: in_range(
                        &format!("{key}.expiry"),
                        expiry.unwrap_or(Duration::from_secs(300)),
                        Duration::from_secs(60),
                        Duration::from_secs(86_400),
                    )?,
                },
                Some(RawChannel::Ssm { name }) => {
                    features::aws_adapters("kind = \"ssm\"").map_err(|m| invalid(&format!("{key}.kind"), m))?;
                    if !name.starts_with('/') && name.contains('/') {
                        return Err(invalid(&format!("{key}.name"), format!("`{name}`: a hierarchical parameter name starts with /")));
                    }
                    if name.trim().is_empty() {
                        return Err(invalid(&format!("{key}.name"), "must not be blank".into()));
                    }
                    ChannelConfig::Ssm { name }
                }
            })
        };
        let cache = channel("publish.cache", raw.publish.cache, "cache.json")?;
        let parameter = channel("publish.parameter", raw.publish.parameter, "parameter.json")?;
        if let (ChannelConfig::File { path: a }, ChannelConfig::File { path: b }) = (&cache, &parameter)
            && a == b
        {
            return Err(invalid("publish.parameter.path", format!("must differ from publish.cache.path ({})", a.display())));
        }
        let publish_timeout =
            in_range("publish.timeout", raw.publish.timeout.unwrap_or(Duration::from_secs(5)), Duration::from_millis(10), tick_deadline)?;
        let stage_controller = match raw.stages.controller {
            None | Some(RawStageController::Log) => StageControllerConfig::Log,
            Some(RawStageController::ApiGateway) => {
                features::aws_adapters("kind = \"api-gateway\"").map_err(|m| invalid("stages.controller", m))?;
                StageControllerConfig::ApiGateway
            }
        };
        let (mut stage_targets, mut malformed_targets) = (Vec::new(), Vec::new());
        for (index, value) in raw.stages.targets.into_iter().enumerate() {
            match parse_target(value) {
                Ok(t) => stage_targets.push(t),
                Err(message) => malformed_targets.push(MalformedTarget { index, message }),
            }
        }
        let api = api::from_raw(raw.api, base).map_err(|(key, message)| invalid(&key, message))?;
        let policies = policies::from_raw(raw.policies, base).map_err(|(key, message)| invalid(&key, message))?;
        if raw.policy.is_some() && policies.is_some() {
            return Err(invalid(
                "policy",
                "is set together with [policies]: the sentinel runs either the single file `policy` or the verified \
                 versions of [policies], never both (every command must run the same version): remove `policy`"
                    .into(),
            ));
        }
        let reaches = reaches_servers(&store, &metrics, &cache, &parameter, &stage_controller, &api);
        policies::require_signatures(reaches.as_deref(), policies.as_ref()).map_err(|(key, message)| invalid(&key, message))?;
        // Beside a SQLite store; with a shared store, in the state folder beside the config.
        let dead_letter = raw.dead_letter.map(resolve).unwrap_or_else(|| match &store {
            StoreConfig::Sqlite { path } => path.with_file_name("dead-letter.jsonl"),
            _ => resolve(PathBuf::from(STATE_DIR).join("dead-letter.jsonl")),
        });
        Ok(Config {
            source: source.to_string(),
            policy: raw.policy.map(resolve).map_or(PolicyChoice::Embedded, PolicyChoice::File),
            policy_deadline,
            policy_memory_bytes: (memory_mib as usize) << 20,
            tick_deadline,
            throttles_enabled: raw.throttles_enabled.unwrap_or(false),
            store,
            metrics,
            read_timeout,
            cache,
            parameter,
            publish_timeout,
            stage_controller,
            stage_targets,
            malformed_targets,
            api,
            policies,
            dead_letter,
        })
    }
}

/// What, if anything, makes this configuration more than the embedded default. The embedded
/// default reaches no server and serves its API on loopback only; a shared store, a real
/// channel, a stage controller, a metrics server or an API reachable from other machines each
/// make it a deployment, where only signed policies run.
fn reaches_servers(
    store: &StoreConfig,
    metrics: &MetricsConfig,
    cache: &ChannelConfig,
    parameter: &ChannelConfig,
    stages: &StageControllerConfig,
    api: &api::ApiConfig,
) -> Option<String> {
    let mut what = Vec::new();
    if let StoreConfig::Postgres { .. } = store {
        what.push("store.kind = \"postgres\"".to_string());
    }
    match metrics {
        MetricsConfig::Prometheus(_) => what.push("metrics.kind = \"prometheus\"".to_string()),
        MetricsConfig::CloudWatch(_) => what.push("metrics.kind = \"cloudwatch\"".to_string()),
        MetricsConfig::Synthetic | MetricsConfig::Trace { .. } => {}
    }
    if !api.address.ip().is_loopback() {
        what.push(format!("api.address = \"{}\" (not loopback)", api.address));
    }
    for (key, channel) in [("publish.cache", cache), ("publish.parameter", parameter)] {
        match channel {
            ChannelConfig::Redis { .. } => what.push(format!("{key}.kind = \"redis\"")),
            ChannelConfig::Ssm { .. } => what.push(format!("{key}.kind = \"ssm\"")),
            ChannelConfig::File { .. } | ChannelConfig::Stdout => {}
        }
    }
    if *stages == StageControllerConfig::ApiGateway {
        what.push("stages.controller = \"api-gateway\"".into());
    }
    (!what.is_empty()).then(|| what.join(", "))
}

/// A URL that may carry credentials can come from the environment instead of the file (the
/// only thing the environment overrides: secrets).
fn secret_override(var: &str, configured: String) -> String {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty()).unwrap_or(configured)
}

/// One declared target, checked; the message says what was wrong.
fn parse_target(value: toml::Value) -> Result<StageTarget, String> {
    let target: StageTarget = value.try_into().map_err(|e: toml::de::Error| e.message().to_string())?;
    if target.rest_api_id.trim().is_empty() || target.stage.trim().is_empty() {
        return Err("rest_api_id and stage must not be blank".into());
    }
    if !(target.rate_limit.is_finite() && target.rate_limit >= 0.0) {
        return Err(format!("rate_limit must be a non-negative number, got {}", target.rate_limit));
    }
    Ok(target)
}

#[cfg(test)]
mod tests;
