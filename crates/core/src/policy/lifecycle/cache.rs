//! Precompiled artifacts, in the private state directory (`<state_dir>/policy-cache/`, never
//! in the policy directory that others write), keyed by the engine's compatibility hash
//! (wasmtime version and every setting that affects code) and the component's sha256.
//!
//! Deserializing an artifact runs its machine code unchecked, so an artifact is used only
//! when it is provably this sentinel's own output: beside each one the sentinel records, when
//! it compiles, the artifact's sha256 and the digest of the verified component it came from
//! (`<artifact>.sha256`). Before `deserialize` the directory, the artifact and the record
//! must be owned by the sentinel's user and writable by nobody else, the artifact must hash
//! to the record, and the record must name the component being loaded; the bytes hashed are
//! the bytes deserialized (read once into memory). Anything else is refused, never run, and the
//! component compiled from the verified `.wasm` instead; the compile replaces the artifact and
//! a warning says what was found and that it was replaced.
//!
//! `sentinel replay` uses this same code with the user's cache directory (`user_cache_dir`),
//! keyed by the sha256 of the bytes it replays. The record is no secret: a process running as
//! the same user can write an artifact and a record that matches it, so a cache is only as
//! private as the user that owns it (docs/threat-model.md).

use super::manifest::Verified;
use super::private_dir;
use crate::policy::Runtime;
use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::component::Component;

/// How a component was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Compiled from the verified `.wasm` (no cache, or no artifact yet).
    Compiled,
    /// Deserialized from an artifact this sentinel compiled and recorded.
    Cached,
    /// An artifact was there but refused (the reason); compiled from the verified `.wasm`.
    ArtifactRefused(String),
}

impl Origin {
    /// How the component was obtained, in words for the activation log (`compiled`, `precompiled
    /// cache, sha256 checked`, or why an artifact was refused).
    pub fn describe(&self) -> String {
        match self {
            Origin::Compiled => "compiled".into(),
            Origin::Cached => "precompiled cache, sha256 checked".into(),
            Origin::ArtifactRefused(why) => format!("compiled; precompiled artifact refused: {why}"),
        }
    }
}

/// Where a state directory keeps the artifacts.
pub fn cache_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("policy-cache")
}

/// Where commands without a state directory (`sentinel replay`, `sentinel policy ...`) keep
/// their artifacts: `$SENTINEL_CACHE_DIR` (`off` for none), else
/// `$XDG_CACHE_HOME/capacity-sentinel/policy-cache`, else `~/.cache/capacity-sentinel/policy-cache`.
pub(crate) fn user_cache_dir() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("SENTINEL_CACHE_DIR") {
        return (dir.as_os_str() != "off").then_some(dir);
    }
    let base = var("XDG_CACHE_HOME").or_else(|| var("HOME").map(|home| home.join(".cache")))?;
    Some(base.join("capacity-sentinel").join("policy-cache"))
}

/// [`user_cache_dir`] when it exists or can be created. A directory that cannot be created (a
/// service whose home is read-only) is no fault: the commands then compile, and an info line
/// says how to give them a cache. One that exists but is not private is returned, so that the
/// loader refuses it with a warning.
pub(crate) fn usable_user_cache_dir() -> Option<PathBuf> {
    let dir = user_cache_dir()?;
    match private_dir::ensure(&dir) {
        Err(e @ private_dir::NotPrivate::Io { .. }) => {
            tracing::info!(
                "no precompiled policy cache for this user ({e}): each command compiles its policy; set SENTINEL_CACHE_DIR to a private directory to keep one"
            );
            None
        }
        _ => Some(dir),
    }
}

/// A component wasmtime could not compile: `compiler` is its message, the root cause.
#[derive(Debug, thiserror::Error)]
#[error("{path} is not a loadable component: {compiler}")]
pub struct NotLoadable {
    /// The component file, or the name its bytes go by in messages.
    pub path: PathBuf,
    /// wasmtime's message: the root cause.
    pub compiler: String,
}

/// `<cache>/wasmtime-<engine hash>-<sha256>.cwasm`.
pub(crate) fn artifact_path(cache: &Path, runtime: &Runtime, digest: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    runtime.engine().precompile_compatibility_hash().hash(&mut hasher);
    cache.join(format!("wasmtime-{:016x}-{digest}.cwasm", hasher.finish()))
}

/// The record beside an artifact.
pub(crate) fn record_path(artifact: &Path) -> PathBuf {
    artifact.with_extension("cwasm.sha256")
}

/// The compiled component: from the cache (`Some(<state_dir>/policy-cache)`) when it holds an
/// authenticated artifact of this digest for this engine, else compiled (and cached).
pub fn load(cache: Option<&Path>, runtime: &Runtime, verified: &Verified) -> Result<(Component, Origin), NotLoadable> {
    let digest = verified.entry.manifest.sha256.to_ascii_lowercase();
    load_bytes(cache, runtime, &verified.entry.component_path, &verified.bytes, &digest)
}

/// [`load`] for a command that follows the sentinel's choice (`pin`, `check`, `serve`): an
/// authenticated artifact is used exactly as [`load`] uses it, but nothing is created or written
/// (no directory, no artifact, no replacement): a follower may run as another user than the
/// sentinel that owns the cache, and the leader keeps it. Without a usable artifact it compiles.
pub(crate) fn load_read_only(cache: Option<&Path>, runtime: &Runtime, verified: &Verified) -> Result<(Component, Origin), NotLoadable> {
    let digest = verified.entry.manifest.sha256.to_ascii_lowercase();
    load_from(cache, false, runtime, &verified.entry.component_path, &verified.bytes, &digest)
}

/// [`load`] for component bytes whose sha256 (`digest`, lower-case hex) the caller computed
/// from those very bytes; `path` names them in errors.
pub(crate) fn load_bytes(
    cache: Option<&Path>,
    runtime: &Runtime,
    path: &Path,
    bytes: &[u8],
    digest: &str,
) -> Result<(Component, Origin), NotLoadable> {
    load_from(cache, true, runtime, path, bytes, digest)
}

/// The cache directory as a loader may use it: created when `writes`, else only an existing one.
fn usable_dir(cache: &Path, writes: bool) -> Result<Option<PathBuf>, private_dir::NotPrivate> {
    if writes {
        return private_dir::ensure(cache).map(Some);
    }
    if std::fs::symlink_metadata(cache).is_err() {
        return Ok(None);
    }
    private_dir::check(cache, true).map(|_| Some(cache.to_path_buf()))
}

fn load_from(
    cache: Option<&Path>,
    writes: bool,
    runtime: &Runtime,
    path: &Path,
    bytes: &[u8],
    digest: &str,
) -> Result<(Component, Origin), NotLoadable> {
    let mut origin = Origin::Compiled;
    let mut artifact = None;
    if let Some(cache) = cache {
        match usable_dir(cache, writes) {
            Ok(None) => {}
            Ok(Some(dir)) => {
                let cached = artifact_path(&dir, runtime, digest);
                if std::fs::symlink_metadata(&cached).is_ok() {
                    match authenticated(&cached, digest).and_then(|bytes| deserialize(runtime, &bytes)) {
                        Ok(c) => return Ok((c, Origin::Cached)),
                        Err(why) => origin = Origin::ArtifactRefused(why),
                    }
                }
                artifact = writes.then_some(cached);
            }
            Err(e) => {
                tracing::warn!("precompiled cache not used: {e}");
                origin = Origin::ArtifactRefused(format!("the cache directory is not private: {e}"));
            }
        }
    }
    // A cold compile takes from a tenth of a second to several seconds (BENCHMARKS.md): say so.
    match (&artifact, cache) {
        (Some(_), _) => tracing::info!(
            policy = %path.display(),
            "compiling the policy component for this machine; once per version: later commands load the precompiled artifact"
        ),
        (None, None) => tracing::info!(
            policy = %path.display(),
            "compiling the policy component for this machine (no precompiled cache: each command compiles it)"
        ),
        (None, Some(_)) => tracing::info!(policy = %path.display(), "compiling the policy component for this machine"),
    }
    let compiled =
        Component::from_binary(runtime.engine(), bytes).map_err(|e| NotLoadable { path: path.to_path_buf(), compiler: format!("{e:#}") });
    let refused = |outcome: &str| {
        if let (Some(artifact), Origin::ArtifactRefused(why)) = (&artifact, &origin) {
            tracing::warn!(
                artifact = %artifact.display(),
                reason = %why,
                "precompiled artifact refused, never run; {outcome}. If neither you nor an interrupted compile changed it, something else running as this user writes {}: find it (docs/threat-model.md, precompiled artifacts)",
                artifact.parent().unwrap_or(Path::new(".")).display()
            );
        }
    };
    let component = match compiled {
        Ok(component) => component,
        Err(e) => {
            refused(&format!("{} did not compile either", path.display()));
            return Err(e);
        }
    };
    if let (false, Origin::ArtifactRefused(why)) = (writes, &origin) {
        tracing::warn!(reason = %why, "precompiled artifact refused, never run; compiled {} instead (this command only reads the cache: the sentinel replaces it at its next load)", path.display());
    }
    if let Some(artifact) = &artifact {
        match store(artifact, &component, digest) {
            Ok(()) => refused(&format!("compiled {} instead and replaced the artifact with that compile", path.display())),
            Err(e) => {
                refused(&format!("compiled {} instead; it could not be replaced, so it is refused again at the next load", path.display()));
                tracing::warn!("cannot cache the precompiled artifact {}: {e}", artifact.display());
            }
        }
    }
    Ok((component, origin))
}

/// The artifact's bytes, when it and its record are private, the bytes hash to the record and
/// the record names `digest`; else why not.
fn authenticated(artifact: &Path, digest: &str) -> Result<Vec<u8>, String> {
    let record_file = record_path(artifact);
    private_dir::check(artifact, false).map_err(|e| e.to_string())?;
    private_dir::check(&record_file, false).map_err(|e| format!("{e} (the artifact's record)"))?;
    let record = std::fs::read_to_string(&record_file).map_err(|e| format!("its record {} is unreadable: {e}", record_file.display()))?;
    let (recorded, component) =
        record.trim().split_once(' ').ok_or_else(|| format!("its record {} is malformed", record_file.display()))?;
    if component != digest {
        return Err(format!("its record says it was compiled from component {component}, not {digest}"));
    }
    let bytes = std::fs::read(artifact).map_err(|e| format!("unreadable: {e}"))?;
    let actual = hex::encode(Sha256::digest(&bytes));
    if actual != recorded {
        return Err(format!("its sha256 is {actual}, the sentinel recorded {recorded} when it compiled it"));
    }
    Ok(bytes)
}

fn store(artifact: &Path, component: &Component, digest: &str) -> Result<(), String> {
    let bytes = component.serialize().map_err(|e| format!("{e:#}"))?;
    // The artifact first, then its record: a crash between the two leaves an artifact
    // without a record, which is refused and rewritten.
    private_dir::write_atomically(artifact, &bytes).map_err(|e| e.to_string())?;
    let record = format!("{} {digest}\n", hex::encode(Sha256::digest(&bytes)));
    private_dir::write_atomically(&record_path(artifact), record.as_bytes()).map_err(|e| e.to_string())?;
    Ok(())
}

#[expect(unsafe_code, reason = "wasmtime deserializes precompiled code only unsafely; the SAFETY note says why these bytes are ours")]
fn deserialize(runtime: &Runtime, bytes: &[u8]) -> Result<Component, String> {
    // SAFETY: `deserialize` trusts the bytes to be wasmtime's own output for this engine.
    // They are: `authenticated` checked that they hash to the record this sentinel wrote in
    // its private directory (owned by its user, writable by no one else) right after it
    // compiled them from a component whose sha256 matched a verified manifest, and that
    // record names that component. The bytes checked are the bytes deserialized (no file is
    // mapped, so nothing can change them in between). wasmtime also checks its version and
    // settings in the artifact's header and refuses a mismatch.
    unsafe { Component::deserialize(runtime.engine(), bytes) }.map_err(|e| format!("wasmtime refused it: {e:#}"))
}
