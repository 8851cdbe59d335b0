//! `sentinel policy list | keygen | sign | verify | activate | rollback | shadow-report |
//! export-trace`: the policy directory of a `[policies]` config.

use super::{block_on, policies};
use crate::config::Config;
use anyhow::Context;
use sentinel_core::policy::Runtime;
use sentinel_core::policy::lifecycle::{self, catalog, manifest, shadow, signing, state::PolicyState};
use sentinel_core::replay::shadow_score::ShadowPeriod;
use sentinel_core::trace::write_event;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Serialize)]
struct Row {
    version: String,
    file: String,
    sha256: String,
    world: String,
    integrity: String,
    signature: String,
    active: bool,
    shadow: bool,
    health: String,
}

/// `policy list`: every manifest of the directory and what the sentinel makes of it.
pub fn list(config: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let config = Config::load(Some(config))?;
    let p = policies(&config)?;
    let trust = lifecycle::trust(&p)?;
    let state = PolicyState::load(&p.state_dir)?;
    let (listed, errors) = catalog::list(&p.dir, state.active.as_deref(), p.shadow.as_deref(), Some(&state));
    let rows: Vec<Row> = listed
        .into_iter()
        .map(|l| {
            let e = &l.entry;
            // Checked under the config's own trust: a component whose manifest is not signed
            // (where signatures are required) is never read, whatever size that manifest claims.
            let integrity = match manifest::verify(e, &trust) {
                Ok(_) => "ok".to_string(),
                Err(err) => format!("REFUSED: {err}"),
            };
            Row {
                version: e.manifest.version.clone(),
                file: e.manifest.file.clone(),
                sha256: e.manifest.sha256.clone(),
                world: e.manifest.world.clone(),
                integrity,
                signature: signing::check(e, &trust).label(),
                active: l.active,
                shadow: l.shadow,
                health: l.health,
            }
        })
        .collect();
    if json {
        super::super::emit(&serde_json::to_string_pretty(&rows)?)?;
    } else {
        super::super::emit(&format!(
            "{:<10} {:<14} {:<16} {:<8} {:<7} {:<6} {:<24} HEALTH",
            "VERSION", "WORLD", "SHA256", "INTEGRITY", "ACTIVE", "SHADOW", "SIGNATURE"
        ))?;
        for r in &rows {
            let integrity = if r.integrity == "ok" { "ok" } else { "REFUSED" };
            super::super::emit(&format!(
                "{:<10} {:<14} {:<16} {:<9} {:<7} {:<6} {:<24} {}",
                r.version,
                r.world,
                &r.sha256[..r.sha256.len().min(16)],
                integrity,
                if r.active { "*" } else { "" },
                if r.shadow { "*" } else { "" },
                r.signature,
                r.health
            ))?;
            if integrity != "ok" {
                super::super::emit(&format!("    {}", r.integrity))?;
            }
        }
    }
    for e in errors {
        eprintln!("warning: {e}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn keygen(out: &Path) -> anyhow::Result<ExitCode> {
    let (secret, public) = signing::keygen(out).with_context(|| {
        format!("writing the key pair {} and {}", out.with_extension("key").display(), out.with_extension("pub").display())
    })?;
    super::super::emit(&format!("signing key {} (keep it secret), public key {}", secret.display(), public.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// Manifests named directly, or every manifest of a directory.
fn entries(paths: &[PathBuf]) -> anyhow::Result<Vec<manifest::Entry>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let (found, errors) = manifest::scan(p);
            if let Some(e) = errors.into_iter().next() {
                anyhow::bail!(e);
            }
            out.extend(found);
        } else {
            let path = if p.extension().is_some_and(|e| e == "wasm") { vocabulary::PolicyManifest::path_for(p) } else { p.clone() };
            out.push(manifest::read_entry(&path)?);
        }
    }
    Ok(out)
}

/// `policy sign`: signs each manifest whose component matches it.
pub fn sign(key: &Path, paths: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let key = signing::read_secret(key).map_err(anyhow::Error::msg)?;
    let any = signing::Trust { key: None, allow_unsigned: true };
    for entry in entries(paths)? {
        manifest::verify(&entry, &any).with_context(|| "not signing it")?;
        let sig = signing::sign(&entry, &key)?;
        super::super::emit(&format!("signed {} -> {}", entry.manifest_path.display(), sig.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `policy verify`: digest and signature of each manifest; exit 4 when any is refused.
pub fn verify(config: Option<&Path>, public_key: Option<&Path>, paths: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let (trust, targets) = match config {
        Some(c) => {
            let p = policies(&Config::load(Some(c))?)?;
            let targets = if paths.is_empty() { vec![p.dir.clone()] } else { paths.to_vec() };
            (lifecycle::trust(&p)?, targets)
        }
        None => {
            let key = public_key.context("give --config, or --public-key with the manifests or directories")?;
            anyhow::ensure!(!paths.is_empty(), "name the manifests or directories to verify");
            (signing::Trust { key: Some(signing::read_public(key).map_err(anyhow::Error::msg)?), allow_unsigned: false }, paths.to_vec())
        }
    };
    let mut refused = 0;
    for entry in entries(&targets)? {
        match manifest::verify(&entry, &trust) {
            Ok(v) => super::super::emit(&format!(
                "ok       {} ({}, signature {})",
                entry.manifest_path.display(),
                entry.manifest.version,
                v.signature.label()
            ))?,
            Err(e) => {
                refused += 1;
                super::super::emit(&format!("REFUSED  {e}"))?;
            }
        }
    }
    Ok(if refused == 0 { ExitCode::SUCCESS } else { ExitCode::from(super::super::exit::INVALID_INPUT) })
}

/// Prepares `version` exactly as the running sentinel will (verify, load, checks, trial
/// replay of the store's last day), then persists it as active; a running sentinel picks the
/// change up at its next look at the directory.
fn switch_to(config: &Config, target: impl FnOnce(&PolicyState) -> anyhow::Result<String>, why: &str) -> anyhow::Result<ExitCode> {
    let p = policies(config)?;
    let version = target(&PolicyState::load(&p.state_dir)?)?;
    let runtime = Runtime::new(crate::setup::policy_limits(config))?;
    let preparer = lifecycle::preparer(&p, runtime, lifecycle::Role::Leader)?;
    // Refused before the store is opened: a version below the minimum never runs.
    if let Err(e) = preparer.at_least_minimum(&version) {
        eprintln!("error: {e}");
        return Ok(ExitCode::from(super::super::exit::INVALID_INPUT));
    }
    let records = block_on(async {
        let stores = crate::setup::open_store(config).await?;
        Ok::<_, crate::setup::SetupError>(lifecycle::recent(&stores.memory).await)
    })?;
    match preparer.version(&version, &records) {
        Ok(c) => {
            let t = c.timings;
            // Under the state's lock: a running sentinel's own changes are kept.
            lifecycle::state::update(&p.state_dir, |s| s.activated(&version))?;
            super::super::emit(&format!(
                "{why} {version} ({}): verified in {:.1} ms, loaded ({}) in {:.1} ms, self-check {:.1} ms, trial replay of {} ticks {:.1} ms",
                c.digest,
                ms(t.verify),
                c.origin.describe(),
                ms(t.load),
                ms(t.checks),
                t.trial_ticks,
                ms(t.trial)
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(super::super::exit::INVALID_INPUT))
        }
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub fn activate(config: &Path, version: &str) -> anyhow::Result<ExitCode> {
    switch_to(&Config::load(Some(config))?, |_| Ok(version.to_string()), "activated")
}

/// `version` activated as `policy activate` does, saying `why` (`promoted`).
pub fn activate_loaded(config: &Config, version: &str, why: &str) -> anyhow::Result<ExitCode> {
    switch_to(config, |_| Ok(version.to_string()), why)
}

pub fn rollback(config: &Path) -> anyhow::Result<ExitCode> {
    switch_to(
        &Config::load(Some(config))?,
        |s| s.previous().map(str::to_string).context("no previous healthy version to roll back to"),
        "rolled back to",
    )
}

pub fn shadow_report(config: &Path, version: Option<&str>, gate: Option<&Path>, json: bool) -> anyhow::Result<ExitCode> {
    let config = Config::load(Some(config))?;
    let p = policies(&config)?;
    let version = version.map(str::to_string).or(p.shadow.clone()).context("no shadow configured; name a --version")?;
    let lines = shadow::lines(&p.state_dir, &version)?;
    let r = shadow::report(&version, &lines);
    // The divergence stands on the log alone; the scorecard needs ticks, the store and both versions.
    let scorecard = ShadowPeriod::of(&version, lines)
        .map_err(anyhow::Error::from)
        .and_then(|period| super::shadow_evidence::evidence(&config, &period, gate));
    if json {
        let card = match &scorecard {
            Ok(card) => serde_json::json!({
                "active_version": card.active_version,
                "period": [card.period.0, card.period.1],
                "ticks": card.ticks,
                "live_record": card.agreement.is_ok(),
                "passes": card.passes(),
                "report": card.report,
            }),
            Err(e) => serde_json::json!({ "error": format!("{e:#}") }),
        };
        super::super::emit(&serde_json::to_string_pretty(&serde_json::json!({ "divergence": r, "scorecard": card }))?)?;
        return Ok(ExitCode::SUCCESS);
    }
    super::super::emit(&format!(
        "shadow {} beside {}: {} ticks, {} divergent ({:.1}%), longest divergent run {} ticks",
        r.shadow_version,
        r.active_versions.join(", "),
        r.ticks,
        r.divergent_ticks,
        r.divergence_ratio * 100.0,
        r.longest_run
    ))?;
    for (field, n) in &r.by_field {
        super::super::emit(&format!("  {field:<10} differed in {n} ticks"))?;
    }
    for (pair, n) in &r.state_pairs {
        super::super::emit(&format!("  active -> shadow {pair}: {n} ticks"))?;
    }
    if let (Some(a), Some(b)) = (&r.first_divergence, &r.last_divergence) {
        super::super::emit(&format!("  first divergence {a}, last {b}"))?;
    }
    match scorecard {
        Ok(card) => super::super::emit(&card.text())?,
        Err(e) => super::super::emit(&format!("no scorecard: {e:#}"))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `policy export-trace`: the store's recorded ticks as a trace file (pins and the throttle
/// switch as their own lines), so `sentinel replay` can run production inputs through any
/// version.
pub fn export_trace(config: &Path, since: std::time::Duration, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (_, records) = crate::cli::replay::recorded_ticks(config, since)?;
    let mut text = String::new();
    for event in sentinel_core::trace::recorded::events(&records) {
        text.push_str(&write_event(&event));
        text.push('\n');
    }
    match out {
        Some(path) => std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?,
        None => print!("{text}"),
    }
    eprintln!("{} recorded ticks exported", records.len());
    Ok(ExitCode::SUCCESS)
}
