//! `sentinel check --connect`: every server the configuration names, reached with the sentinel's
//! own clients, credentials and the calls a tick makes, one result each (docs/behaviour.md
//! §11.12). Nothing is published and no decision is made: the metrics source answers one real
//! read, the store its memory and its lock (taken and given back at once), Redis the fenced
//! write on a scratch key, SSM the read before each write, API Gateway each stage target's
//! settings, the OIDC issuer its keys.

use crate::config::{Config, StageControllerConfig, StoreConfig};
use crate::ports::leadership::LockError;
use crate::ports::publisher::Publisher;
use std::future::Future;
use std::time::{Duration, Instant};

/// What reaching one dependency found.
#[derive(Debug, Clone, PartialEq)]
pub struct Reached {
    /// Where it is configured: `metrics`, `store`, `store lock`, `publish.cache`,
    /// `publish.parameter`, `stages.targets[N]`, `api.oidc`.
    pub dependency: String,
    /// What it is, as the logs name it (secrets masked).
    pub target: String,
    /// What was done, or what failed and what to do.
    pub outcome: Result<String, String>,
    pub took: Duration,
}

impl Reached {
    pub fn failed(&self) -> bool {
        self.outcome.is_err()
    }
}

/// The lock's line when the store could not be opened.
const NOT_TRIED: &str = "not tried: the store could not be opened (see the line above)";

/// Slack over a configured timeout before a call that ignores it is given up.
const SLACK: Duration = Duration::from_millis(500);

/// Runs `call`, bounded by `limit`, timing it.
async fn timed<F>(dependency: &str, target: String, limit: Duration, call: F) -> Reached
where
    F: Future<Output = Result<String, String>>,
{
    let started = Instant::now();
    let outcome = match tokio::time::timeout(limit + SLACK, call).await {
        Ok(outcome) => outcome,
        Err(_) => Err(format!("no answer within {limit:?}; check that the server is reachable from this machine and answering")),
    };
    Reached { dependency: dependency.into(), target, outcome, took: started.elapsed() }
}

/// Reaches everything `config` names, in the order a tick does: read, store and lock, publish,
/// stage throttles, then the API's token issuer. `now` places the synthetic workload's cycle.
pub async fn reach_all(config: &Config, now: vocabulary::Instant) -> Vec<Reached> {
    let mut all = vec![metrics(config, now).await];
    all.extend(store(config).await);
    for (channel, settings) in
        [(crate::ports::publisher::Channel::Cache, &config.cache), (crate::ports::publisher::Channel::Parameter, &config.parameter)]
    {
        all.push(channel_reached(config, channel, settings).await);
    }
    all.extend(stages(config).await);
    all.extend(oidc(config).await);
    all
}

async fn metrics(config: &Config, now: vocabulary::Instant) -> Reached {
    let source = match crate::setup::metrics_source(config, now) {
        Ok(source) => source,
        Err(e) => {
            return Reached {
                dependency: "metrics".into(),
                target: "metrics".into(),
                outcome: Err(format!("{e:#}")),
                took: Duration::ZERO,
            };
        }
    };
    timed("metrics", source.describe(), config.read_timeout, async {
        let reading = source.read(now).await.map_err(|e| format!("{e} (check [metrics]: the URL, the credentials and each query)"))?;
        Ok(format!("read one minute: {}", crate::ports::metrics::summary(&reading)))
    })
    .await
}

async fn store(config: &Config) -> Vec<Reached> {
    let (target, timeout) = match &config.store {
        StoreConfig::Sqlite { path } => {
            if !path.exists() {
                let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
                let started = Instant::now();
                let outcome = crate::plain_files::nearest_writable_folder(folder)
                    .map(|at| {
                        format!("no database yet: the first tick creates {} (this user may write in {})", path.display(), at.display())
                    })
                    .map_err(|e| format!("{e} (check [store] path and the folder's owner)"));
                let target = format!("sqlite {}", path.display());
                let lock = outcome
                    .as_ref()
                    .map(|_| "no database yet: the first tick takes the lock".to_string())
                    .map_err(|_| NOT_TRIED.to_string());
                return vec![
                    Reached { dependency: "store".into(), target: target.clone(), outcome, took: started.elapsed() },
                    Reached { dependency: "store lock".into(), target, outcome: lock, took: Duration::ZERO },
                ];
            }
            (format!("sqlite {}", path.display()), Duration::from_secs(5))
        }
        StoreConfig::Postgres { url, timeout, lock_key, .. } => {
            (format!("postgres {} (lock key {lock_key})", crate::redact::redact(url)), *timeout)
        }
    };
    let started = Instant::now();
    let opened = match tokio::time::timeout(timeout + SLACK, crate::setup::open_store(config)).await {
        Ok(Ok(stores)) => Ok(stores),
        Ok(Err(e)) => Err(format!("{e:#}")),
        Err(_) => Err(format!("no answer within {timeout:?}; check that the server is reachable from this machine and answering")),
    };
    let stores = match opened {
        Ok(stores) => stores,
        Err(message) => {
            return vec![
                Reached { dependency: "store".into(), target: target.clone(), outcome: Err(message), took: started.elapsed() },
                Reached { dependency: "store lock".into(), target, outcome: Err(NOT_TRIED.into()), took: Duration::ZERO },
            ];
        }
    };
    let memory = async {
        match stores.memory.load_memory().await {
            Ok(Some(memory)) => Ok(format!(
                "opened; the memory holds {} since {}",
                memory.state.name(),
                crate::instants::format_rfc3339(memory.state_since)
            )),
            Ok(None) => Ok("opened; no memory yet (the first tick starts fresh)".into()),
            Err(crate::ports::StoreError::Corrupt { message, .. }) => {
                Ok(format!("opened; the stored memory is unreadable ({message}): the next tick starts fresh and says so"))
            }
            Err(e) => Err(e.to_string()),
        }
    };
    let mut reached = timed("store", target.clone(), timeout, memory).await;
    reached.took = started.elapsed();
    let lock = async {
        match stores.leadership.acquire(None).await {
            Ok(lease) => {
                lease.release().await;
                Ok("taken and given back".to_string())
            }
            Err(LockError::Held { .. }) => Ok("held by another sentinel (a running one holds it while it ticks): reachable".into()),
            Err(e) => Err(e.to_string()),
        }
    };
    vec![reached, timed("store lock", target, timeout, lock).await]
}

async fn channel_reached(config: &Config, channel: crate::ports::publisher::Channel, settings: &crate::config::ChannelConfig) -> Reached {
    let dependency = format!("publish.{channel}");
    let started = Instant::now();
    let publisher: Box<dyn Publisher> = match crate::setup::publisher(channel, settings, config.publish_timeout).await {
        Ok(publisher) => publisher,
        Err(e) => return Reached { dependency, target: channel.to_string(), outcome: Err(format!("{e:#}")), took: started.elapsed() },
    };
    let mut reached =
        timed(&dependency, publisher.target(), config.publish_timeout, async { publisher.reach().await.map_err(|e| e.message) }).await;
    reached.took = started.elapsed();
    reached
}

async fn stages(config: &Config) -> Vec<Reached> {
    if config.stage_controller != StageControllerConfig::ApiGateway || config.stage_targets.is_empty() {
        return Vec::new();
    }
    let controller = match crate::setup::stage_controller(config).await {
        Ok(controller) => controller,
        Err(e) => {
            return vec![Reached {
                dependency: "stages".into(),
                target: "stages".into(),
                outcome: Err(format!("{e:#}")),
                took: Duration::ZERO,
            }];
        }
    };
    let mut all = Vec::new();
    for (index, target) in config.stage_targets.iter().enumerate() {
        let read = async {
            let limits = controller.read(&target.stage_ref()).await.map_err(|e| e.to_string())?;
            Ok(format!("GetStage: its stage-wide throttling now: {limits}; UpdateStage is not tried (it would throttle)"))
        };
        all.push(timed(&format!("stages.targets[{index}]"), target.id(), config.publish_timeout, read).await);
    }
    all
}

async fn oidc(config: &Config) -> Option<Reached> {
    let oidc = config.api.oidc.as_ref()?;
    let target = match &oidc.jwks {
        crate::config::oidc::JwksSource::Url(url) => format!("issuer keys {}", crate::redact::redact(url.as_str())),
        crate::config::oidc::JwksSource::File(path) => format!("issuer keys {}", path.display()),
    };
    let keys = match crate::api::oidc::jwks::KeySet::new(oidc) {
        Ok(keys) => keys,
        Err(e) => return Some(Reached { dependency: "api.oidc".into(), target, outcome: Err(e), took: Duration::ZERO }),
    };
    Some(
        timed("api.oidc", target, oidc.timeout, async {
            match keys.fetch_now().await {
                Ok(0) => Err("the key set holds no key, so no token can be verified; check api.oidc.jwks_url".into()),
                Ok(n) => Ok(format!("fetched the key set: {n} {}; tokens are verified against it", if n == 1 { "key" } else { "keys" })),
                Err(e) => Err(e.to_string()),
            }
        })
        .await,
    )
}
