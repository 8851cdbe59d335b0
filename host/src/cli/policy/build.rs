//! `sentinel policy build POLICY_DIR -o OUT_DIR` (docs/behaviour.md §11.11): a version's
//! component and manifest from its `policy.toml`, with the installed binary alone. The file is
//! read and checked as `cargo policies` reads and checks it; the component is the built-in
//! template with the file's numbers ([`sentinel_core::policy::template::build_into`]), loaded and asked to
//! describe itself before it is written, so what lands in OUT_DIR is proven to carry the file's
//! numbers.

use anyhow::Context;
use sentinel_core::policy::template;
use std::path::{Path, PathBuf};
use vocabulary::PolicyDescription;

/// The version a folder's `policy.toml` describes, refused as `cargo policies` refuses it.
pub fn read_policy(dir: &Path) -> anyhow::Result<PolicyDescription> {
    let path = dir.join("policy.toml");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {} (POLICY_DIR is the folder holding a version's policy.toml)", path.display()))?;
    let description: PolicyDescription = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    description.check().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let folder = dir.canonicalize().ok().and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or_default();
    if folder != description.version {
        anyhow::bail!(
            "{}: version {} does not match its folder {folder}: name the folder by the version (policies/{}/policy.toml)",
            path.display(),
            description.version,
            description.version
        );
    }
    Ok(description)
}

/// Writes `<name>-<version>.wasm` and its manifest into `out`; returns the component's path.
pub fn build(dir: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    Ok(template::build_into(&read_policy(dir)?, out)?)
}
