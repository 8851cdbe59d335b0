//! `sentinel policy promote VERSION --config CONFIG --gate GATE.toml [--force --reason TEXT]`
//! (docs/behaviour.md §11.9): the shadow version becomes active only when its shadow evidence
//! passes the gate ([`super::shadow_evidence`]); past the gate only with `--force` and a
//! reason. Every promotion is recorded, with the gate's verdict, in `promotions.jsonl` in the
//! private policy state directory.

use super::shadow_evidence::evidence;
use crate::config::Config;
use crate::instants::format_rfc3339;
use anyhow::Context;
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

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

pub fn promote(config: &Path, version: &str, gate: &Path, force: bool, reason: Option<&str>) -> anyhow::Result<ExitCode> {
    let config = Config::load(Some(config))?;
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    if force && reason.is_none() {
        anyhow::bail!("--force needs --reason TEXT: a promotion past the gate is recorded with why");
    }
    let p = config.policies.clone().with_context(|| format!("{} has no [policies] table (the policy directory)", config.source))?;
    let evidence = evidence(&config, version, Some(gate))?;
    super::super::emit(&evidence.text())?;
    let passed = evidence.passes();
    if !passed && !force {
        eprintln!(
            "error: {version} is not promoted: its shadow evidence does not pass {} (above). Let it run in shadow longer, or \
             change it; `--force --reason TEXT` promotes it anyway, and the promotion is recorded with the reason",
            gate.display()
        );
        return Ok(ExitCode::from(1));
    }
    let code = super::lifecycle::activate_loaded(&config, version, if passed { "promoted" } else { "promoted past the gate" })?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    let record = Promotion {
        at: format_rfc3339(crate::clock::now_seconds()),
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
    crate::plain_files::open_append(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .with_context(|| format!("{version} is active, but recording the promotion in {} failed", path.display()))?;
    if passed {
        tracing::info!(version, replaced = %evidence.active_version, "promoted on shadow evidence that passes {}", gate.display());
    } else {
        tracing::warn!(version, replaced = %evidence.active_version, reason, "promoted past the gate {}", gate.display());
    }
    Ok(ExitCode::SUCCESS)
}
