//! The manifest written beside each component: what it is and the digest of its bytes.

use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use vocabulary::Thresholds;

#[derive(Debug, Serialize)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub file: String,
    pub sha256: String,
    pub size: u64,
    pub world: String,
    pub imports: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<Thresholds>,
}

/// `capacity-policy-1.0.0.wasm` gets `capacity-policy-1.0.0.manifest.json`.
pub fn path_for(component: &Path) -> PathBuf {
    component.with_extension("manifest.json")
}

pub fn write(component: &Path, manifest: &Manifest) -> Result<()> {
    let path = path_for(component);
    let text = serde_json::to_string_pretty(manifest)? + "\n";
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}
