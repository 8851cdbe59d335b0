//! `sentinel check --connect`: every server the configuration names, reached with the sentinel's
//! own clients, credentials and the calls a tick makes, one result each (docs/behaviour.md
//! §11.12). Nothing is published, no decision is made, nothing the running sentinel uses is
//! changed: the metrics source answers one real read, the store its schema's version and who
//! holds its lock (read, neither migrated nor taken), Redis the fenced write on a scratch key,
//! SSM the read before each write, API Gateway each stage target's settings, the OIDC issuer
//! its keys. All at once: one server that does not answer costs its own timeout.

use crate::config::{Config, StageControllerConfig, StoreConfig};
use sentinel_core::ports::metrics::MetricsSource;
use sentinel_core::ports::publisher::Publisher;
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
    /// How long reaching it took; zero when nothing was sent (a source on this machine, a client
    /// that could not be built) and for the store's lock, timed with the store.
    pub took: Duration,
}

impl Reached {
    /// Whether reaching it failed: `check --connect` then prints `FAIL` and exits with 6
    /// (unreachable).
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

/// Reaches everything `config` names, all at once (a server that does not answer costs its own
/// timeout, not the sum of them all), and lists them in the order a tick meets them: read,
/// store and lock, publish, stage throttles, then the API's token issuer. `source` is the
/// metrics source built from `config` (`setup::preflight`).
pub async fn reach_all(config: &Config, source: &dyn MetricsSource, now: vocabulary::Instant) -> Vec<Reached> {
    use sentinel_core::ports::publisher::Channel;
    let (metrics, store, cache, parameter, stages, oidc) = tokio::join!(
        metrics(config, source, now),
        store(config),
        channel_reached(config, Channel::Cache, &config.cache),
        channel_reached(config, Channel::Parameter, &config.parameter),
        stages(config),
        oidc(config),
    );
    let mut all = vec![metrics];
    all.extend(store);
    all.extend([cache, parameter]);
    all.extend(stages);
    all.extend(oidc);
    all
}

/// `source` is the one `check` built from `config` (a trace is read once).
async fn metrics(config: &Config, source: &dyn MetricsSource, now: vocabulary::Instant) -> Reached {
    // Sources on this machine have no server to reach: the synthetic workload (whose cycle has a
    // metric outage on purpose, minutes 70-72) and a trace, read whole when the config was checked.
    match &config.metrics {
        crate::config::MetricsConfig::Synthetic | crate::config::MetricsConfig::Trace { .. } => {
            let local = format!(
                "on this machine, nothing to reach ({})",
                if source.span().is_some() { "the trace was read whole" } else { "built in" }
            );
            return Reached { dependency: "metrics".into(), target: source.describe(), outcome: Ok(local), took: Duration::ZERO };
        }
        _ => {}
    }
    timed("metrics", source.describe(), config.read_timeout, async {
        let reading = source.read(now).await.map_err(|e| format!("{e} (check [metrics]: the URL, the credentials and each query)"))?;
        let read = sentinel_core::ports::metrics::summary(&reading);
        // A configured query that answers nothing is most often a query that names no series:
        // a tick would read that signal as absent, minute after minute.
        if let crate::config::MetricsConfig::Prometheus(source) = &config.metrics {
            let q = source.queries();
            let silent: Vec<&str> = [
                ("cpu_pct", q.cpu_pct.is_some() && reading.cpu_pct.is_none()),
                ("connections_pct", q.connections_pct.is_some() && reading.connections_pct.is_none()),
                ("scaling", q.scaling.is_some() && reading.scaling.is_none()),
                ("latency_p95_ms", q.latency_p95_ms.is_some() && reading.latency.is_empty()),
            ]
            .into_iter()
            .filter_map(|(name, silent)| silent.then_some(name))
            .collect();
            if !silent.is_empty() {
                return Err(format!(
                    "read one minute ({read}), but metrics.queries.{} answered no series: check that each names series Prometheus has now",
                    silent.join(", metrics.queries.")
                ));
            }
        }
        Ok(format!("read one minute: {read}"))
    })
    .await
}

/// The store and its lock as found, changing neither: the schema's version is read, never
/// migrated (a newer binary's preflight must not lift it under the running sentinel), and the
/// lock is looked at, never taken (a running sentinel that met it held would stop).
async fn store(config: &Config) -> Vec<Reached> {
    let started = Instant::now();
    let (target, outcome, lock) = match &config.store {
        StoreConfig::Sqlite { path } => {
            let target = format!("sqlite {}", path.display());
            let folder = sentinel_core::plain_files::folder_of(path);
            match sentinel_adapters::sqlite::SqliteStore::schema_version(path) {
                Ok(None) => {
                    let outcome = sentinel_core::plain_files::nearest_writable_folder(folder)
                        .map(|at| {
                            format!("no database yet: the first tick creates {} (this user may write in {})", path.display(), at.display())
                        })
                        .map_err(|e| format!("{e} (check [store] path and the folder's owner)"));
                    let lock = outcome
                        .as_ref()
                        .map(|_| "no database yet: the first tick takes the lock".to_string())
                        .map_err(|_| NOT_TRIED.to_string());
                    (target, outcome, lock)
                }
                Ok(Some(found)) => {
                    let outcome = schema_said(found, sentinel_adapters::sqlite::SCHEMA_VERSION);
                    let lock = sentinel_core::plain_files::nearest_writable_folder(folder)
                        .map(|_| format!("not taken (a file lock beside the database, {}.lock): this user may write there", path.display()))
                        .map_err(|e| format!("{e}: the lock file cannot be made (check the folder's owner)"));
                    (target, outcome, lock)
                }
                Err(e) => (target, Err(e.to_string()), Err(NOT_TRIED.to_string())),
            }
        }
        StoreConfig::Postgres { url, timeout, lock_key, .. } => {
            let target = format!("postgres {} (lock key {lock_key})", sentinel_core::redact::redact(url));
            match tokio::time::timeout(*timeout + SLACK, sentinel_adapters::postgres::inspect(url, *timeout, *lock_key)).await {
                Ok(Ok(found)) => {
                    let lock = Ok(match found.lock_holder {
                        Some(holder) => format!("held by {holder} (a running sentinel holds it while it ticks); not taken"),
                        None => "free; not taken (a running sentinel would stop if it met it held)".to_string(),
                    });
                    (target, schema_said(found.schema, sentinel_adapters::postgres::SCHEMA_VERSION), lock)
                }
                Ok(Err(e)) => (target, Err(e.to_string()), Err(NOT_TRIED.to_string())),
                Err(_) => (
                    target,
                    Err(format!("no answer within {timeout:?}; check that PostgreSQL is up and not overloaded (store.timeout)")),
                    Err(NOT_TRIED.to_string()),
                ),
            }
        }
    };
    let took = started.elapsed();
    vec![
        Reached { dependency: "store".into(), target: target.clone(), outcome, took },
        Reached { dependency: "store lock".into(), target, outcome: lock, took: Duration::ZERO },
    ]
}

/// The schema's version `found` against the one this sentinel writes (`known`).
fn schema_said(found: i64, known: i64) -> Result<String, String> {
    use std::cmp::Ordering;
    match found.cmp(&known) {
        Ordering::Equal => Ok(format!("opened; schema version {found}, this sentinel's")),
        Ordering::Less if found == 0 => Ok(format!("opened; no sentinel schema yet: the first start creates version {known}")),
        Ordering::Less => Ok(format!(
            "opened; schema version {found}: this sentinel migrates it to {known} when it starts (older sentinels then refuse it)"
        )),
        Ordering::Greater => Err(format!(
            "schema version {found} is newer than this sentinel knows ({known}): it was written by a newer sentinel; run that one, or upgrade"
        )),
    }
}

async fn channel_reached(
    config: &Config,
    channel: sentinel_core::ports::publisher::Channel,
    settings: &crate::config::ChannelConfig,
) -> Reached {
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
    let controller: std::sync::Arc<dyn sentinel_core::ports::stages::StageController> = match crate::setup::stage_controller(config).await {
        Ok(controller) => controller.into(),
        Err(e) => {
            return vec![Reached {
                dependency: "stages".into(),
                target: "stages".into(),
                outcome: Err(format!("{e:#}")),
                took: Duration::ZERO,
            }];
        }
    };
    // Each target at once, in the order configured.
    let mut reads = tokio::task::JoinSet::new();
    for (index, target) in config.stage_targets.iter().enumerate() {
        let (controller, stage, limit) = (controller.clone(), target.stage_ref(), config.publish_timeout);
        reads.spawn(async move {
            let read = async {
                let limits = controller.read(&stage).await.map_err(|e| e.to_string())?;
                Ok(format!("GetStage: its stage-wide throttling now: {limits}; UpdateStage is not tried (it would throttle)"))
            };
            (index, timed(&format!("stages.targets[{index}]"), stage.id(), limit, read).await)
        });
    }
    let mut all: Vec<(usize, Reached)> = reads.join_all().await;
    all.sort_by_key(|(index, _)| *index);
    all.into_iter().map(|(_, reached)| reached).collect()
}

async fn oidc(config: &Config) -> Option<Reached> {
    let oidc = config.api.oidc.as_ref()?;
    let target = match &oidc.jwks {
        crate::config::oidc::JwksSource::Url(url) => format!("issuer keys {}", sentinel_core::redact::redact(url.as_str())),
        crate::config::oidc::JwksSource::File(path) => format!("issuer keys {}", path.display()),
    };
    let keys = match crate::api::oidc::jwks::KeySet::new(oidc) {
        Ok(keys) => keys,
        Err(e) => return Some(Reached { dependency: "api.oidc".into(), target, outcome: Err(e), took: Duration::ZERO }),
    };
    Some(
        timed("api.oidc", target, oidc.timeout, async {
            match keys.fetch_now().await {
                Ok(0) => Err(format!(
                    "the key set holds no key, so no token can be verified; check {}",
                    if matches!(oidc.jwks, crate::config::oidc::JwksSource::File(_)) { "api.oidc.jwks_file" } else { "api.oidc.jwks_url" }
                )),
                Ok(n) => Ok(format!("fetched the key set: {n} {}; tokens are verified against it", if n == 1 { "key" } else { "keys" })),
                Err(e) => Err(e.to_string()),
            }
        })
        .await,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_source_on_this_machine_is_not_read_so_the_synthetic_outage_fails_no_preflight() {
        // The embedded default: the synthetic workload, whose 80-minute cycle has a metric
        // outage (minutes 70-72). A preflight in any minute of it passes.
        let config = Config::load(None).unwrap();
        let start = sentinel_core::clock::current_minute();
        for minute in 0..80 {
            let source = crate::setup::metrics_source(&config, start + minute * 60).unwrap();
            let reached = metrics(&config, source.as_ref(), start + minute * 60).await;
            assert!(reached.outcome.as_ref().is_ok_and(|said| said.contains("nothing to reach")), "minute {minute}: {reached:?}");
        }
    }
}
