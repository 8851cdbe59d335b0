//! Writes the manifest (the vocabulary's `PolicyManifest`) beside each component, through the
//! one manifest writer (`policy_files::manifest`).

use anyhow::{Context, Result};
use std::path::Path;
use vocabulary::PolicyManifest;

pub fn write(component: &Path, manifest: &PolicyManifest) -> Result<()> {
    policy_files::manifest::write_manifest(component, manifest)
        .map(drop)
        .with_context(|| format!("writing {}", PolicyManifest::path_for(component).display()))
}
