//! A policy component's manifest: what `cargo policies` writes beside each component
//! (`X.wasm` gets `X.manifest.json`) and what the host reads, checks against the component's
//! bytes and, once signed, trusts.

use crate::thresholds::Thresholds;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Unknown fields are ignored when read, so a newer builder may add some.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyManifest {
    pub name: String,
    pub version: String,
    /// The component's file name, beside the manifest.
    pub file: String,
    /// The sha256 of the component's bytes, in hex.
    pub sha256: String,
    pub size: u64,
    /// The WIT world it exports (`policy` or `admission-only`).
    pub world: String,
    /// What it imports (nothing, for every component this project builds).
    #[serde(default)]
    pub imports: Vec<String>,
    /// The numbers baked into a policy component (absent for the admission component).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<Thresholds>,
}

impl PolicyManifest {
    /// `capacity-policy-1.0.0.wasm` -> `capacity-policy-1.0.0.manifest.json`.
    pub fn path_for(component: &Path) -> PathBuf {
        component.with_extension("manifest.json")
    }
}
