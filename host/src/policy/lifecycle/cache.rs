//! Precompiled artifacts, cached under `<policy dir>/.cache/` and keyed by the engine's
//! compatibility hash (wasmtime version and every setting that affects code) and the
//! component's sha256. Only this cache is ever deserialized: an artifact is written here by
//! this sentinel right after it compiled a verified component, never taken from elsewhere.

use super::manifest::Verified;
use crate::policy::Runtime;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::component::Component;

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Compiled,
    Cached,
}

pub fn cache_dir(policy_dir: &Path) -> PathBuf {
    policy_dir.join(".cache")
}

/// `<cache>/<engine hash>-<sha256>.cwasm`.
pub fn artifact_path(policy_dir: &Path, runtime: &Runtime, digest: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    runtime.engine().precompile_compatibility_hash().hash(&mut hasher);
    cache_dir(policy_dir).join(format!("wasmtime-{:016x}-{digest}.cwasm", hasher.finish()))
}

/// The compiled component: from the cache when it holds this digest for this engine, else
/// compiled (and cached when `use_cache`). A cache entry that fails to load is recompiled.
pub fn load(policy_dir: &Path, runtime: &Runtime, verified: &Verified, use_cache: bool) -> anyhow::Result<(Component, Origin)> {
    let digest = verified.entry.manifest.sha256.to_ascii_lowercase();
    let artifact = artifact_path(policy_dir, runtime, &digest);
    if use_cache && artifact.is_file() {
        match deserialize(runtime, &artifact) {
            Ok(c) => return Ok((c, Origin::Cached)),
            Err(e) => tracing::warn!("precompiled artifact {} unusable, recompiling: {e:#}", artifact.display()),
        }
    }
    let component = Component::from_binary(runtime.engine(), &verified.bytes).map_err(|e| {
        anyhow::anyhow!("{} is not a loadable component: {e:#}", verified.entry.component_path.display())
    })?;
    if use_cache && let Err(e) = store(&artifact, &component) {
        tracing::warn!("cannot cache the precompiled artifact {}: {e:#}", artifact.display());
    }
    Ok((component, Origin::Compiled))
}

fn store(artifact: &Path, component: &Component) -> anyhow::Result<()> {
    let bytes = component.serialize().map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let dir = artifact.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, &bytes)?;
    tmp.persist(artifact)?;
    Ok(())
}

#[allow(unsafe_code)]
fn deserialize(runtime: &Runtime, artifact: &Path) -> anyhow::Result<Component> {
    // SAFETY: `deserialize_file` trusts the artifact to be wasmtime's own output. It is: the
    // file lives in this sentinel's cache, was written by `store` above from a component this
    // process compiled from bytes whose sha256 matched a trusted manifest, and its name carries
    // that digest and the engine's compatibility hash (wasmtime also checks its version and
    // settings in the artifact's header and refuses a mismatch). Nothing else writes there,
    // and artifacts are only ever replaced by a rename, never rewritten in place (the file is
    // mapped: truncating it under a loaded component would fault the process).
    unsafe { Component::deserialize_file(runtime.engine(), artifact) }.map_err(|e| anyhow::anyhow!("{e:#}"))
}
