//! `sentinel policy build POLICY_DIR -o OUT_DIR` (docs/behaviour.md §11.11): a version's
//! component and manifest from its `policy.toml`, with the installed binary alone. The file is
//! read and checked as `cargo policies` reads and checks it; the component is the built-in
//! template with the file's numbers ([`sentinel_core::policy::template::build_into`]), loaded and asked to
//! describe itself before it is written, so what lands in OUT_DIR is proven to carry the file's
//! numbers.

use policy_files::description::{self, PolicyFileError};
use sentinel_core::policy::template;
use std::path::{Path, PathBuf};
use vocabulary::PolicyDescription;

/// The version a folder's `policy.toml` describes, refused as `cargo policies` refuses it (the
/// one reader, `policy_files::description`).
pub fn read_policy(dir: &Path) -> anyhow::Result<PolicyDescription> {
    match description::read_version(&dir.join("policy.toml")) {
        Ok(file) => Ok(file.description),
        Err(e @ PolicyFileError::Read { .. }) => Err(anyhow::anyhow!("{e} (POLICY_DIR is the folder holding a version's policy.toml)")),
        Err(e) => Err(e.into()),
    }
}

/// Writes `<name>-<version>.wasm` and its manifest into `out`; returns the component's path.
pub fn build(dir: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    Ok(template::build_into(&read_policy(dir)?, out)?)
}
