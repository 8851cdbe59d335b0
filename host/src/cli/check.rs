//! `sentinel check`: validates the config and the policy and prints what would run.

use crate::config::{ChannelConfig, Config, MetricsConfig, StoreConfig};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[arg(long)]
    pub config: Option<PathBuf>,
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.config.as_deref())?;
    let policy = crate::setup::load_policy(&config)?;
    let (identity, thresholds) = {
        let mut p = policy.lock().expect("policy lock poisoned");
        let description = p.describe()?;
        (p.identity().clone(), description.thresholds)
    };
    // What a tick checks before it opens the store: [policies], Redis URLs, the metrics source.
    let metrics = crate::setup::preflight(&config, super::current_minute())?;
    let channel = |c: &ChannelConfig| match c {
        ChannelConfig::File { path } => format!("file {}", path.display()),
        ChannelConfig::Stdout => "stdout".into(),
        ChannelConfig::Redis { url, key, expiry } => {
            format!("redis {} key {key} expiring after {}", redact(url), humantime::format_duration(*expiry))
        }
        ChannelConfig::Ssm { name } => format!("ssm parameter {name}"),
    };
    let report = serde_json::json!({
        "config": config.source,
        "policy": {
            "file": config.policy.display().to_string(),
            "name": identity.name,
            "version": identity.version,
            "digest": identity.digest,
            "deadline": humantime::format_duration(config.policy_deadline).to_string(),
            "memory_mib": config.policy_memory_bytes >> 20,
            "thresholds": thresholds,
        },
        "store": match &config.store {
            StoreConfig::Sqlite { path } => format!("sqlite {}", path.display()),
            StoreConfig::Postgres { url, lock_key, .. } => format!("postgres {} (lock key {lock_key})", redact(url)),
        },
        "metrics": metrics.describe(),
        "metrics_kind": match &config.metrics { MetricsConfig::Synthetic => "synthetic", MetricsConfig::Trace { .. } => "trace", MetricsConfig::Prometheus { .. } => "prometheus" },
        "stage_controller": format!("{:?}", config.stage_controller),
        "read_timeout": humantime::format_duration(config.read_timeout).to_string(),
        "publish": { "cache": channel(&config.cache), "parameter": channel(&config.parameter),
                      "timeout": humantime::format_duration(config.publish_timeout).to_string() },
        "tick_deadline": humantime::format_duration(config.tick_deadline).to_string(),
        "throttles_enabled": config.throttles_enabled,
        "stage_targets": config.stage_targets.iter().map(|t| t.id()).collect::<Vec<_>>(),
        "malformed_stage_targets": config.malformed_targets.iter()
            .map(|m| format!("stages.targets[{}]: {}", m.index, m.message)).collect::<Vec<_>>(),
    });
    super::emit(&serde_json::to_string_pretty(&report)?)?;
    Ok(ExitCode::SUCCESS)
}

/// A connection string with any password replaced by `***` (URL or key=value form).
fn redact(url: &str) -> String {
    if let (Some(scheme), Some(at)) = (url.find("://"), url.rfind('@'))
        && at > scheme
        && let Some((user, _)) = url[scheme + 3..at].split_once(':')
    {
        return format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]);
    }
    url.split_whitespace()
        .map(|part| if part.starts_with("password=") { "password=***" } else { part })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_never_reach_the_output() {
        assert_eq!(redact("postgres://sentinel:s3cret@db:5432/x"), "postgres://sentinel:***@db:5432/x");
        assert_eq!(redact("redis://:s3cret@cache:6379/0"), "redis://:***@cache:6379/0");
        assert_eq!(redact("host=db user=s password=s3cret dbname=x"), "host=db user=s password=*** dbname=x");
        assert_eq!(redact("redis://cache:6379/0"), "redis://cache:6379/0");
    }
}
