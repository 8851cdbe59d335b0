//! `sentinel init --signed DIR`: a folder from which a sentinel reaches real servers at once. A
//! configuration that reaches a server runs only signed policies; this writes the key pair,
//! the embedded 1.0.0 policy (and any built versions named) with signed manifests, and a
//! config that uses them, into a new folder, all or nothing.

use crate::config::Config;
use crate::policy::embedded;
use crate::policy::lifecycle::{manifest, signing};
use crate::redact::redact;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The folder to write (new, or empty): keys/, policies/ with signed manifests, sentinel.toml.
    #[arg(long, value_name = "DIR")]
    pub signed: PathBuf,
    /// The Redis the config publishes the state to (the cache channel).
    #[arg(long, value_name = "URL", default_value = "redis://127.0.0.1:6379/0")]
    pub redis: String,
    /// Also copy and sign every policy version in this folder (`target/policies` after `cargo
    /// policies`); without it, the embedded 1.0.0 alone.
    #[arg(long, value_name = "FOLDER")]
    pub policies: Option<PathBuf>,
}

pub fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.signed;
    // Judged before anything is written: the Redis URL, and a target that is new or empty.
    crate::config::redis_url::client(&args.redis, "capacity:state").map_err(|e| anyhow::anyhow!("--redis: {}", e.message))?;
    let shown_redis = redact(&args.redis);
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => anyhow::bail!("reading {}: {e}", dir.display()),
        Ok(m) if !m.is_dir() => anyhow::bail!(
            "{} is a file or a link, not a folder: `sentinel init` writes a new folder; name one that does not exist",
            dir.display()
        ),
        Ok(_) => {
            let mut entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
            anyhow::ensure!(
                entries.next().is_none(),
                "{} exists and is not empty: `sentinel init` writes a new folder and changes nothing that exists; name another folder",
                dir.display()
            );
        }
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    create_parent(&parent).with_context(|| format!("creating {}", parent.display()))?;
    // Everything is written beside the target, then renamed into place (over an empty folder,
    // atomically): a failure leaves nothing, the working folder included.
    let work = tempfile::Builder::new()
        .prefix(".sentinel-init-")
        .tempdir_in(&parent)
        .with_context(|| format!("creating a working folder in {}", parent.display()))?;
    let versions = write(work.path(), &args)?;
    no_one_else_writes(work.path())?;
    // The config loads as `run` will load it: a mistake here is ours, and nothing is left behind.
    let config_path = work.path().join("sentinel.toml");
    Config::load(Some(&config_path)).context("the written sentinel.toml does not load (a bug in `sentinel init`: please report it)")?;
    let kept = work.keep();
    if let Err(e) = std::fs::rename(&kept, dir) {
        let _ = std::fs::remove_dir_all(&kept);
        anyhow::bail!("moving the new folder into place at {}: {e}; nothing was written there, name another folder", dir.display());
    }
    let shown = dir.display();
    super::emit(&format!(
        "wrote {shown}/: keys/policy.key (the signing key), keys/policy.pub, policies/ ({}, each manifest signed), sentinel.toml",
        versions.join(", ")
    ))?;
    super::emit(
        "keys/policy.key signs policies and a sentinel never reads it: outside a trial, keep it away from the machines \
         that run one (whoever can read it can sign any version)",
    )?;
    super::emit(&format!(
        "next, with a Redis at {shown_redis}:\n  sentinel check --config {shown}/sentinel.toml\n  sentinel run --config {shown}/sentinel.toml\n\
         a new version: copy its .wasm and .manifest.json into {shown}/policies/, then\n  \
         sentinel policy sign --key {shown}/keys/policy.key {shown}/policies/\n  sentinel policy activate VERSION --config {shown}/sentinel.toml"
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes the folder's contents into `root`; the versions written.
fn write(root: &Path, args: &InitArgs) -> anyhow::Result<Vec<String>> {
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
    if let Some(from) = &args.policies {
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
    let config = config_text(&args.redis);
    std::fs::write(root.join("sentinel.toml"), config).context("writing sentinel.toml")?;
    Ok(versions)
}

/// The folders above the new one, created 0755 whatever the umask (under umask 000 they were
/// 0777, and another user could have swapped the new folder for one of their own).
#[cfg(unix)]
fn create_parent(parent: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o755).create(parent)
}

#[cfg(not(unix))]
fn create_parent(parent: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(parent)
}

/// Takes the write bits of group and others off everything written, whatever the umask: the
/// public key, the config and the policies decide what runs, so no other user may swap them
/// (under umask 000 they were 0666 and 0777, and another user's signed version ran).
#[cfg(unix)]
fn no_one_else_writes(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path).with_context(|| format!("reading {}", path.display()))?;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & !0o022))
            .with_context(|| format!("setting the permissions of {}", path.display()))?;
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).with_context(|| format!("reading {}", path.display()))? {
            no_one_else_writes(&entry.with_context(|| format!("reading {}", path.display()))?.path())?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn no_one_else_writes(_: &Path) -> anyhow::Result<()> {
    Ok(())
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
