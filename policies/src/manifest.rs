//! Writes the manifest (the vocabulary's `PolicyManifest`) beside each component.

use anyhow::{Context, Result};
use std::path::Path;
use vocabulary::PolicyManifest;

pub fn write(component: &Path, manifest: &PolicyManifest) -> Result<()> {
    let path = PolicyManifest::path_for(component);
    let text = serde_json::to_string_pretty(manifest)? + "\n";
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}
