//! A policy as a command names it (`[LABEL=]PATH`: a component, or a `policy.toml` or its folder
//! for the native modules), ready to open any number of instances: a component is compiled (or
//! loaded from the user's cache) once, and instances are pooled, so a replay across cores creates
//! at most one instance per policy and worker thread. What `sentinel replay` and the tests and
//! benches that replay open their policies with.

use super::lifecycle::cache;
use super::{ComponentPolicy, Policy, PolicyError, PolicyIdentity, Runtime};
use crate::sync::Lock;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use vocabulary::Thresholds;
use wasmtime::component::Component;

/// `[LABEL=]PATH` -> the label (when given) and the path. A `=` after a `/` belongs to the path.
pub(crate) fn split_spec(spec: &str) -> (Option<&str>, &Path) {
    match spec.split_once('=') {
        Some((label, path)) if !label.is_empty() && !label.contains('/') => (Some(label), Path::new(path)),
        _ => (None, Path::new(spec)),
    }
}

/// `bytes` (a component named `path` in messages) compiled for `runtime`'s engine once per version
/// and engine, then loaded from the user's cache ([`cache::usable_user_cache_dir`]); with its sha256.
pub(crate) fn compile_cached(runtime: &Runtime, path: &Path, bytes: &[u8]) -> Result<(Component, String), PolicyError> {
    let digest = hex::encode(Sha256::digest(bytes));
    let (component, origin) = cache::load_bytes(cache::usable_user_cache_dir().as_deref(), runtime, path, bytes, &digest)
        .map_err(|e| PolicyError::Compile { path: path.to_path_buf(), message: e.compiler })?;
    tracing::debug!(policy = %path.display(), origin = %origin.describe(), "component loaded");
    Ok((component, digest))
}

/// Opens one instance of `[LABEL=]PATH` as [`super::open`] does, but a component is compiled once
/// per version and engine (`compile_cached`): what the commands that load a single `policy`
/// file (`tick`, `run`, `pin`, `check`, `serve`) use, so only the first of them compiles.
pub fn open_cached(spec: &str, runtime: &Arc<Runtime>) -> Result<Box<dyn Policy>, PolicyError> {
    let (label, path) = split_spec(spec);
    if path.extension().is_none_or(|e| e != "wasm") {
        return super::open(spec, runtime);
    }
    let bytes = std::fs::read(path).map_err(|source| PolicyError::Read { path: path.to_path_buf(), source })?;
    let (component, digest) = compile_cached(runtime, path, &bytes)?;
    Ok(Box::new(ComponentPolicy::from_component(runtime, path, &component, digest, label).map_err(|e| e.or_damaged_data(path, &bytes))?))
}

/// A policy as given on the command line, ready to open any number of instances.
pub struct PolicySource {
    spec: String,
    kind: SourceKind,
    identity: PolicyIdentity,
    thresholds: Thresholds,
    idle: Lock<Vec<Box<dyn Policy>>>,
}

enum SourceKind {
    /// Compiled once; each instance is a fresh store of the same component.
    Component { runtime: Arc<Runtime>, path: PathBuf, component: Component, digest: String, label: Option<String> },
    /// Native modules: each instance reads the policy file again (a few microseconds).
    Native { runtime: Arc<Runtime> },
}

impl std::fmt::Debug for PolicySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicySource").field("spec", &self.spec).field("identity", &self.identity).finish_non_exhaustive()
    }
}

impl PolicySource {
    /// Opens `[LABEL=]PATH` as [`crate::policy::open`] does, compiling a component only once.
    pub fn open(spec: &str, runtime: &Arc<Runtime>) -> Result<PolicySource, PolicyError> {
        let (label, path) = split_spec(spec);
        let (label, path) = (label.map(str::to_string), path.to_path_buf());
        let mut bytes = Vec::new();
        let kind = if path.extension().is_some_and(|e| e == "wasm") {
            bytes = std::fs::read(&path).map_err(|source| PolicyError::Read { path: path.clone(), source })?;
            let (component, digest) = compile_cached(runtime, &path, &bytes)?;
            SourceKind::Component { runtime: runtime.clone(), path: path.clone(), component, digest, label }
        } else {
            SourceKind::Native { runtime: runtime.clone() }
        };
        let damaged = |e: PolicyError| e.or_damaged_data(&path, &bytes);
        let mut first = instantiate(&kind, spec).map_err(damaged)?;
        let thresholds = first.describe().map_err(damaged)?.thresholds;
        Ok(PolicySource {
            spec: spec.to_string(),
            identity: first.identity().clone(),
            kind,
            thresholds,
            idle: Lock::new("idle policy instances", vec![first]),
        })
    }

    /// Which policy the source opens: the identity of its first instance, which every instance
    /// shares.
    pub fn identity(&self) -> &PolicyIdentity {
        &self.identity
    }

    /// The short name reports and replay lines give the policy: its identity's label.
    pub fn label(&self) -> &str {
        &self.identity.label
    }

    /// The thresholds the policy declares (what its invariants are checked against).
    pub fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }

    /// An idle instance, or a new one; give it back with [`PolicySource::give_back`].
    pub fn take(&self) -> Result<Box<dyn Policy>, PolicyError> {
        let idle = self.idle.lock().pop();
        match idle {
            Some(p) => Ok(p),
            None => instantiate(&self.kind, &self.spec),
        }
    }

    /// Returns an instance from [`PolicySource::take`] to the pool, for the next caller to reuse.
    pub fn give_back(&self, policy: Box<dyn Policy>) {
        self.idle.lock().push(policy);
    }
}

fn instantiate(kind: &SourceKind, spec: &str) -> Result<Box<dyn Policy>, PolicyError> {
    match kind {
        SourceKind::Component { runtime, path, component, digest, label } => {
            Ok(Box::new(ComponentPolicy::from_component(runtime, path, component, digest.clone(), label.as_deref())?))
        }
        SourceKind::Native { runtime } => super::open(spec, runtime),
    }
}
