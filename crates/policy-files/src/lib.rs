//! A policy version's files, read and written in one place.
//!
//! 1. [`description`]: a `policies/<version>/policy.toml`, read into the vocabulary's
//!    [`PolicyDescription`](vocabulary::PolicyDescription) and checked, for every reader: the
//!    guest's build script (which bakes the numbers into a component), `cargo policies`,
//!    `sentinel policy build|new-version|tune` and the native policy. Each error names the file
//!    and the first key that is wrong.
//! 2. [`manifest`] (feature `manifest`): the manifest written beside a built component, its
//!    digest computed from the very bytes written, and the whole-file write both files use.
//!
//! It depends on the vocabulary and toml only (and, for manifests, serde_json, sha2 and hex), so
//! that a build script can use it.
//!
//! ```no_run
//! let file = policy_files::description::read_version(std::path::Path::new("policies/1.0.0/policy.toml"))?;
//! println!("{} {}", file.description.name, file.description.version);
//! # Ok::<(), policy_files::description::PolicyFileError>(())
//! ```

#![deny(missing_docs)]

pub mod description;
#[cfg(feature = "manifest")]
pub mod manifest;

/// A fresh folder for one test under the system's temporary folder (this crate has no
/// dev-dependencies: see its Cargo.toml).
#[cfg(test)]
fn scratch(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("capacity-policy-files-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
