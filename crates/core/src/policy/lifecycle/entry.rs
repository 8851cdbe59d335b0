//! One manifest found in the policy directory, before anything about it is checked: what
//! [`super::manifest`] reads and verifies and [`super::signing`] signs and checks.

use std::path::PathBuf;
use vocabulary::PolicyManifest;

/// One manifest found in the directory (not yet checked).
#[derive(Debug, Clone)]
pub struct Entry {
    /// The manifest, parsed: name, version, component file, size, sha256 and world.
    pub manifest: PolicyManifest,
    /// Where the manifest was found: `X.manifest.json` in the policy directory.
    pub manifest_path: PathBuf,
    /// The manifest's exact bytes: what the signature covers.
    pub manifest_bytes: Vec<u8>,
    /// The component the manifest names, beside it (not yet read, nor known to exist).
    pub component_path: PathBuf,
}
