//! One manifest found in the policy directory, before anything about it is checked: what
//! [`super::manifest`] reads and verifies and [`super::signing`] signs and checks.

use std::path::PathBuf;
use vocabulary::PolicyManifest;

/// One manifest found in the directory (not yet checked).
#[derive(Debug, Clone)]
pub struct Entry {
    pub manifest: PolicyManifest,
    pub manifest_path: PathBuf,
    /// The manifest's exact bytes: what the signature covers.
    pub manifest_bytes: Vec<u8>,
    pub component_path: PathBuf,
}
