//! `sentinel policy promote VERSION --config CONFIG --gate GATE.toml [--min-period 7d] [--force
//! --reason TEXT]` (docs/behaviour.md §11.9): the shadow version becomes active only when its
//! shadow evidence covers at least the minimum period, was scored against the version active
//! now, and passes the gate ([`super::shadow_evidence`]); otherwise only with `--force` and a
//! reason. Every promotion is recorded, with the gate's verdict, in `promotions.jsonl` in the
//! private policy state directory.

use super::shadow_evidence::evidence;
use crate::config::Config;
use crate::config::policies::Selection;
use anyhow::Context;
use sentinel_core::instants::format_rfc3339;
use sentinel_core::policy::lifecycle::state::PolicyState;
use sentinel_core::replay::shadow_score::ShadowPeriod;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

/// The file promotions are recorded in, in the policy state directory.
pub const PROMOTIONS_FILE: &str = "promotions.jsonl";

/// One line of `promotions.jsonl`.
#[derive(Debug, Serialize)]
struct Promotion<'a> {
    at: String,
    version: &'a str,
    replaced: &'a str,
    gate: String,
    gate_passed: bool,
    live_record: bool,
    forced: bool,
    reason: Option<&'a str>,
    by: String,
}

/// What `policy promote` is asked.
#[derive(Debug)]
pub struct PromoteArgs<'a> {
    pub version: &'a str,
    pub gate: &'a Path,
    /// The shortest shadow period that counts as evidence.
    pub min_period: Duration,
    pub force: bool,
    pub reason: Option<&'a str>,
}

pub fn promote(config: &Path, args: PromoteArgs<'_>) -> anyhow::Result<ExitCode> {
    let PromoteArgs { version, gate, min_period, force, reason } = args;
    let config = Config::load(Some(config))?;
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    if force && reason.is_none() {
        anyhow::bail!("--force needs --reason TEXT: a promotion past the gate is recorded with why");
    }
    let p = super::policies(&config)?;
    // The persisted choice, else the configuration's (`latest` names none: not checked).
    let active_now = PolicyState::load(&p.state_dir)?.active.or(match &p.active {
        Selection::Version(v) => Some(v.clone()),
        Selection::Latest => None,
    });
    if active_now.as_deref() == Some(version) {
        anyhow::bail!("{version} is already the active version: there is nothing to promote");
    }
    let period = ShadowPeriod::read(&p.state_dir, version)?;
    let evidence = evidence(&config, &period, Some(gate))?;
    super::super::emit(&evidence.text())?;
    if let Some(active) = active_now.as_deref().filter(|a| *a != evidence.active_version) {
        eprintln!(
            "error: {version} is not promoted: its shadow evidence was scored against {}, but {active} is active now; let it \
             run in shadow beside {active} first",
            evidence.active_version
        );
        return Ok(ExitCode::from(1));
    }
    let period = Duration::from_secs(evidence.ticks * 60);
    let short = period < min_period;
    if short && !force {
        eprintln!(
            "error: {version} is not promoted: its shadow period is {} ticks ({}), shorter than --min-period {}; let it run in \
             shadow longer (or give a shorter --min-period)",
            evidence.ticks,
            sentinel_core::shown_duration::duration(period),
            sentinel_core::shown_duration::duration(min_period)
        );
        return Ok(ExitCode::from(1));
    }
    let passed = evidence.passes() && !short;
    if !passed && !force {
        let why = match &evidence.agreement {
            Err(why) => format!("its scorecard is not the shadow's live record ({why})"),
            Ok(()) => format!("its shadow evidence does not pass {} (above)", gate.display()),
        };
        eprintln!(
            "error: {version} is not promoted: {why}. Let it run in shadow longer, or change it; `--force --reason TEXT` \
             promotes it anyway, and the promotion is recorded with the reason"
        );
        return Ok(ExitCode::from(1));
    }
    let code = super::lifecycle::activate_loaded(&config, version, if passed { "promoted" } else { "promoted past the gate" })?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    let record = Promotion {
        at: format_rfc3339(sentinel_core::clock::now_seconds()),
        version,
        replaced: &evidence.active_version,
        gate: gate.display().to_string(),
        gate_passed: evidence.report.gate.as_ref().is_some_and(|g| g.passed),
        live_record: evidence.agreement.is_ok(),
        forced: !passed,
        reason,
        by: std::env::var("USER").unwrap_or_else(|_| "unknown".into()),
    };
    let path = p.state_dir.join(PROMOTIONS_FILE);
    let line = serde_json::to_string(&record)? + "\n";
    sentinel_core::plain_files::open_append(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .with_context(|| format!("{version} is active, but recording the promotion in {} failed", path.display()))?;
    if passed {
        tracing::info!(version, replaced = %evidence.active_version, "promoted on shadow evidence that passes {}", gate.display());
    } else {
        tracing::warn!(version, replaced = %evidence.active_version, reason, "promoted past the gate {}", gate.display());
    }
    Ok(ExitCode::SUCCESS)
}
