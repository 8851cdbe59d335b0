//! `sentinel init --signed DIR`: a folder from which a sentinel reaches real servers at once. A
//! configuration that reaches a server runs only signed policies; this writes the key pair,
//! the embedded 1.0.0 policy (and any built versions named) with signed manifests, and a
//! config that uses them, into a new folder, all or nothing.

use crate::config::Config;
use anyhow::Context;
use sentinel_core::policy::embedded;
use sentinel_core::policy::lifecycle::{manifest, signing};
use sentinel_core::redact::redact;
use std::path::Path;
use std::process::ExitCode;

/// `init --signed DIR [--redis URL] [--policies FOLDER]`.
pub fn run(dir: &Path, redis: &str, policies: Option<&Path>) -> anyhow::Result<ExitCode> {
    // Judged before anything is written: the Redis URL, and a target that is new or empty.
    crate::config::redis_url::client(redis, "capacity:state").map_err(|e| anyhow::anyhow!("--redis: {}", e.message))?;
    let shown_redis = redact(redis);
    let versions = super::new_folder(dir, |root| {
        let versions = write(root, redis, policies)?;
        // The config loads as `run` will load it: a mistake here is ours, and nothing is left behind.
        Config::load(Some(&root.join("sentinel.toml")))
            .context("the written sentinel.toml does not load (a bug in `sentinel init`: please report it)")?;
        Ok(versions)
    })?;
    let shown = dir.display();
    super::super::emit(&format!(
        "wrote {shown}/: keys/policy.key (the signing key), keys/policy.pub, policies/ ({}, each manifest signed), sentinel.toml",
        versions.join(", ")
    ))?;
    super::super::emit(
        "keys/policy.key signs policies and a sentinel never reads it: outside a trial, keep it away from the machines \
         that run one (whoever can read it can sign any version)",
    )?;
    super::super::emit(&format!(
        "next, with a Redis at {shown_redis}:\n  sentinel check --connect --config {shown}/sentinel.toml\n  sentinel run --config {shown}/sentinel.toml\n\
         a new version: copy its .wasm and .manifest.json into {shown}/policies/, then\n  \
         sentinel policy sign --key {shown}/keys/policy.key {shown}/policies/\n  sentinel policy activate VERSION --config {shown}/sentinel.toml"
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the folder's contents into `root`; the versions written.
fn write(root: &Path, redis: &str, from: Option<&Path>) -> anyhow::Result<Vec<String>> {
    let (keys, policies) = (root.join("keys"), root.join("policies"));
    for d in [&keys, &policies] {
        std::fs::create_dir(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let (secret, _) = signing::keygen(&keys.join("policy")).context("writing the key pair")?;
    let secret = signing::read_secret(&secret).map_err(anyhow::Error::msg)?;
    let wasm = policies.join(embedded::FILE_NAME);
    std::fs::write(&wasm, embedded::BYTES).with_context(|| format!("writing {}", wasm.display()))?;
    let embedded_manifest = vocabulary::PolicyManifest::path_for(&wasm);
    std::fs::write(&embedded_manifest, embedded::MANIFEST).with_context(|| format!("writing {}", embedded_manifest.display()))?;
    if let Some(from) = from {
        copy_versions(from, &policies)?;
    }
    let (found, errors) = manifest::scan(&policies);
    if let Some(e) = errors.into_iter().next() {
        anyhow::bail!(e);
    }
    let any = signing::Trust { key: None, allow_unsigned: true };
    let mut versions = Vec::new();
    for entry in &found {
        manifest::verify(entry, &any).context("not signing it")?;
        signing::sign(entry, &secret).with_context(|| format!("signing {}", entry.manifest_path.display()))?;
        versions.push(entry.manifest.version.clone());
    }
    versions.sort();
    versions.dedup();
    let config = config_text(redis);
    std::fs::write(root.join("sentinel.toml"), config).context("writing sentinel.toml")?;
    Ok(versions)
}

/// Copies every policy version of `from` (component and manifest) into `to`, the embedded one
/// aside.
fn copy_versions(from: &Path, to: &Path) -> anyhow::Result<()> {
    let (found, errors) = manifest::scan(from);
    if let Some(e) = errors.into_iter().next() {
        anyhow::bail!("{e} (in --policies {})", from.display());
    }
    anyhow::ensure!(
        !found.is_empty(),
        "--policies {}: no policy manifests there (run `cargo policies` first, or leave it out)",
        from.display()
    );
    // The admission component is for services, not the sentinel.
    for entry in found.into_iter().filter(|e| e.manifest.world == "policy") {
        let component = entry.manifest_path.with_file_name(&entry.manifest.file);
        for source in [&component, &entry.manifest_path] {
            let Some(name) = source.file_name() else { continue };
            let target = to.join(name);
            if target.exists() {
                continue; // the embedded 1.0.0, written already
            }
            std::fs::copy(source, &target).with_context(|| format!("copying {} to {}", source.display(), target.display()))?;
        }
    }
    Ok(())
}

/// The configuration: the embedded default's store and synthetic readings, the cache channel
/// on Redis, and only the signed versions of `policies/`.
fn config_text(redis: &str) -> String {
    let redis = toml::Value::String(redis.to_owned());
    format!(
        r#"# Written by `sentinel init --signed`. A sentinel on this machine that publishes its state to
# Redis, and so runs only policies whose manifests are signed by keys/policy.key.
# Relative paths are relative to this file. docs/behaviour.md says what every key does.
tick_deadline = "20s"
throttles_enabled = false
dead_letter = "state/dead-letter.jsonl"

[store]
kind = "sqlite"
path = "state/sentinel.db"

[metrics]
kind = "synthetic"        # your database's readings: see the README's "Production" for Prometheus

[publish]
timeout = "5s"

[publish.cache]
kind = "redis"
url = {redis}
key = "capacity:state"
expiry = "5m"

[publish.parameter]
kind = "file"
path = "state/parameter.json"

[policies]
dir = "policies"
public_key = "keys/policy.pub"
active = "1.0.0"          # the embedded default's version; `sentinel policy activate` changes it
state_dir = "state/policy"
"#
    )
}
