//! The policy catalog: every version of the policy directory, with whether it is active, in
//! shadow and healthy (the persisted state's verdict). One use case for its two readers: the
//! CLI's `sentinel policy list` (which adds each version's integrity and signature) and the
//! API's version list in the console; they differ only in what they call active (the state's
//! choice, or the version the running process decides with) and in how they present it.

use super::manifest::{self, Entry, IntegrityError};
use super::state::PolicyState;
use std::path::Path;

/// One version of the directory.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The version's manifest, where it was found and where its component is.
    pub entry: Entry,
    /// Whether this is the version the reader calls active (the persisted state's choice, or the
    /// one the running process decides with).
    pub active: bool,
    /// Whether this is the configured shadow version.
    pub shadow: bool,
    /// `healthy`, `unhealthy: <why>`, or `unknown: ...` when the state could not be read.
    pub health: String,
}

impl Listed {
    /// The version, as its manifest names it.
    pub fn version(&self) -> &str {
        &self.entry.manifest.version
    }
}

/// The versions of `dir` in the order the directory lists them, and the manifests that could not
/// be read. `active` and `shadow` name versions; `state` is `None` when it could not be read.
pub fn list(dir: &Path, active: Option<&str>, shadow: Option<&str>, state: Option<&PolicyState>) -> (Vec<Listed>, Vec<IntegrityError>) {
    let (entries, errors) = manifest::scan(dir);
    let listed = entries
        .into_iter()
        .map(|entry| {
            let v = entry.manifest.version.as_str();
            let health = match state {
                Some(state) => state.unhealthy.get(v).map_or_else(|| "healthy".to_string(), |why| format!("unhealthy: {why}")),
                None => "unknown: the policy state cannot be read".to_string(),
            };
            Listed { active: active == Some(v), shadow: shadow == Some(v), health, entry }
        })
        .collect();
    (listed, errors)
}
