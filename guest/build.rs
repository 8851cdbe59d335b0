//! Bakes one policy version's thresholds into the crate as a constant.
//!
//! `CAPACITY_POLICY` names a `policies/<version>/policy.toml` (default: 1.0.0). The file is
//! read and checked by the one reader of these files (`crates/policy-files`),
//! and written out as Rust, so a component carries its numbers without parsing anything. With
//! the `policy-data` feature it also writes the file's numbers as the template's policy data
//! region (`src/policy_data.rs`), which the template component reads instead.

#[allow(dead_code, reason = "the build script writes the policy data region; reading it is the template's")]
#[path = "src/policy_data.rs"]
mod policy_data;

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=CAPACITY_POLICY");
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let path = match std::env::var("CAPACITY_POLICY") {
        Ok(p) if !p.is_empty() => PathBuf::from(p),
        _ => manifest_dir.join("../policies/1.0.0/policy.toml"),
    };
    println!("cargo:rerun-if-changed={}", path.display());
    let file = policy_files::description::read(&path).unwrap_or_else(|e| panic!("{e}")).description;
    let code = format!(
        "/// The policy this build carries (from {path}).\n\
         pub const NAME: &str = {name:?};\n\
         pub const VERSION: &str = {version:?};\n\
         pub const THRESHOLDS: Thresholds = {thresholds:?};\n",
        path = path.display(),
        name = file.name,
        version = file.version,
        thresholds = file.thresholds,
    );
    // Only the template carries the region: every other build is the same as without the feature.
    let code = if std::env::var_os("CARGO_FEATURE_POLICY_DATA").is_some() {
        let region = policy_data::encode(&file).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        format!(
            "{code}/// The template's first policy data (policy_data.rs).\npub const POLICY_DATA: [u8; {}] = {region:?};\n",
            region.len()
        )
    } else {
        code
    };
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded_policy.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}
