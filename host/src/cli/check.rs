//! `sentinel check`: validates the config and the policy and prints what would run.

use crate::config::{ChannelConfig, Config, MetricsConfig, StoreConfig};
use clap::Args;
use sentinel_core::redact::redact;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Also reach every configured server with the sentinel's own clients and the calls a tick
    /// makes (nothing is published): one line each with its time and what to fix; exits 6 when
    /// any fails.
    #[arg(long)]
    pub connect: bool,
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.config.as_deref())?;
    let now = sentinel_core::clock::current_minute();
    // What a tick checks before it opens the store: [policies], Redis URLs, the metrics source.
    let metrics = crate::setup::preflight(&config, now)?;
    // The version `run` would decide with: with [policies], the persisted active version,
    // verified as `run` verifies it (never the single `policy` file).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let policy = runtime.block_on(crate::setup::active_policy(&config))?.shared();
    if args.connect {
        let identity = policy.lock().identity().clone();
        let reached = runtime.block_on(crate::connectivity::reach_all(&config, metrics.as_ref(), now));
        return super::connect_report::print(&config, &identity, &reached);
    }
    let (identity, thresholds) = {
        let mut p = policy.lock();
        let description = p.describe()?;
        (p.identity().clone(), description.thresholds)
    };
    let source = match &config.policies {
        None => match &config.policy {
            crate::config::PolicyChoice::Embedded => serde_json::json!({ "embedded": sentinel_core::policy::embedded::FILE_NAME }),
            crate::config::PolicyChoice::File(path) => serde_json::json!({ "file": path.display().to_string() }),
        },
        Some(p) => serde_json::json!({
            "dir": p.dir.display().to_string(),
            "state_dir": p.state_dir.display().to_string(),
            "minimum_version": p.minimum_version,
            "signatures": if p.public_key.is_some() { "required" } else { "not required (allow_unsigned)" },
        }),
    };
    let channel = |c: &ChannelConfig| match c {
        ChannelConfig::File { path } => format!("file {}", path.display()),
        ChannelConfig::Stdout => "stdout".into(),
        ChannelConfig::Redis { url, key, expiry } => {
            format!("redis {} key {key} expiring after {}", redact(url), sentinel_core::shown_duration::duration(*expiry))
        }
        ChannelConfig::Ssm { name } => format!("ssm parameter {name}"),
    };
    let report = serde_json::json!({
        "config": config.source,
        "policy": {
            "source": source,
            "name": identity.name,
            "version": identity.version,
            "digest": identity.digest,
            "deadline": sentinel_core::shown_duration::duration(config.policy_deadline),
            "memory_mib": config.policy_memory_bytes >> 20,
            "thresholds": thresholds,
        },
        "store": match &config.store {
            StoreConfig::Sqlite { path } => format!("sqlite {}", path.display()),
            StoreConfig::Postgres { url, lock_key, lease, .. } => {
                format!("postgres {} (lock key {lock_key}, lease {})", redact(url), sentinel_core::shown_duration::duration(*lease))
            }
        },
        "metrics": metrics.describe(),
        "metrics_kind": match &config.metrics { MetricsConfig::Synthetic => "synthetic", MetricsConfig::Trace { .. } => "trace", MetricsConfig::Prometheus(_) => "prometheus", MetricsConfig::CloudWatch(_) => "cloudwatch" },
        "stage_controller": config.stage_controller.kind(),
        "read_timeout": sentinel_core::shown_duration::duration(config.read_timeout),
        "publish": { "cache": channel(&config.cache), "parameter": channel(&config.parameter),
                      "timeout": sentinel_core::shown_duration::duration(config.publish_timeout) },
        "tick_deadline": sentinel_core::shown_duration::duration(config.tick_deadline),
        "dead_letter": config.dead_letter.display().to_string(),
        "throttles_enabled": config.throttles_enabled,
        "stage_targets": config.stage_targets.iter().map(|t| t.id()).collect::<Vec<_>>(),
        "malformed_stage_targets": config.malformed_targets.iter()
            .map(|m| format!("stages.targets[{}]: {}", m.index, m.message)).collect::<Vec<_>>(),
        // What this binary was built with (the AWS adapters are the `aws` feature).
        "build": { "aws_adapters": cfg!(feature = "aws") },
    });
    super::emit(&serde_json::to_string_pretty(&report)?)?;
    Ok(ExitCode::SUCCESS)
}
