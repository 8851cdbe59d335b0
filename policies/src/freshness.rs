//! Whether a component is already built from the inputs it would be built from now.
//!
//! Every guest build of `cargo policies` runs the same crate with a different `CAPACITY_POLICY`,
//! which its build script declares with `rerun-if-env-changed`: cargo therefore rebuilds every
//! job on every run (two workers alternate between versions), about 30 s on two cores with
//! nothing changed. A job is skipped instead when its component is still the one a build
//! recorded (its SHA-256) for the same inputs: the bytes of every file the guest build can read
//! (the guest, the policy file reader its build script uses, the vocabulary, the WIT contract, the lock file, the workspace manifest and cargo
//! configuration), the compiler's version, the environment variables that change a build, and
//! the job's own world, features and policy file. Anything else changed builds it again.

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The folders and files (relative to the workspace root) a guest build reads.
const GUEST_INPUTS: &[&str] = &[
    "guest/src",
    "guest/build.rs",
    "guest/Cargo.toml",
    "crates/policy-files",
    "vocabulary",
    "wit",
    "Cargo.lock",
    "Cargo.toml",
    ".cargo/config.toml",
    "rust-toolchain",
    "rust-toolchain.toml",
];

/// The digest of everything every guest build shares.
pub fn shared_inputs(root: &Path) -> Result<String> {
    let mut hash = Sha256::new();
    let mut files = Vec::new();
    for input in GUEST_INPUTS {
        collect(&root.join(input), &mut files)?;
    }
    files.sort();
    for file in &files {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        hash.update(file.strip_prefix(root).unwrap_or(file).to_string_lossy().as_bytes());
        hash.update([0]);
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = Command::new(&rustc).arg("-vV").output().context("running rustc -vV")?;
    hash.update(&version.stdout);
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(name, _)| name.contains("RUSTFLAGS") || name.starts_with("CARGO_PROFILE_") || name == "RUSTC_WRAPPER")
        .collect();
    vars.sort();
    for (name, value) in vars {
        hash.update(format!("{name}={value}\0").as_bytes());
    }
    Ok(hex::encode(hash.finalize()))
}

/// The digest of one job's inputs: the shared ones, its world, features and policy file.
pub fn job_inputs(shared: &str, world: &str, features: &[String], policy: Option<&Path>) -> Result<String> {
    let mut hash = Sha256::new();
    hash.update(shared.as_bytes());
    hash.update(format!("\0{world}\0{}\0", features.join(",")).as_bytes());
    if let Some(policy) = policy {
        hash.update(std::fs::read(policy).with_context(|| format!("reading {}", policy.display()))?);
    }
    Ok(hex::encode(hash.finalize()))
}

/// Where the record of `dest`'s build is kept.
pub fn record_path(target: &Path, dest: &Path) -> PathBuf {
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let folder = dest.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.join("policy-builds").join(format!("{folder}--{name}.inputs"))
}

/// Whether `dest` holds the component recorded for `inputs`.
pub fn is_fresh(record: &Path, dest: &Path, inputs: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(record) else { return false };
    let mut lines = text.lines();
    let (Some(recorded_inputs), Some(recorded_sha)) = (lines.next(), lines.next()) else { return false };
    if recorded_inputs != inputs {
        return false;
    }
    std::fs::read(dest).is_ok_and(|bytes| hex::encode(Sha256::digest(&bytes)) == recorded_sha)
}

/// Records that `dest` (with digest `sha256`) was built from `inputs`.
pub fn record(record: &Path, inputs: &str, sha256: &str) -> Result<()> {
    if let Some(parent) = record.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(record, format!("{inputs}\n{sha256}\n")).with_context(|| format!("writing {}", record.display()))
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let Ok(meta) = std::fs::metadata(path) else { return Ok(()) };
    if meta.is_file() {
        files.push(path.to_path_buf());
    } else if meta.is_dir() {
        for entry in std::fs::read_dir(path).with_context(|| format!("listing {}", path.display()))? {
            collect(&entry?.path(), files)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workspace of the inputs' shape: a guest, a contract and a policy file.
    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temporary folder");
        for (file, text) in [
            ("guest/src/lib.rs", "pub fn rules() {}"),
            ("guest/Cargo.toml", "[package]"),
            ("wit/policy.wit", "package capacity:policy@1.0.0;"),
            ("Cargo.lock", "version = 4"),
            ("policies/1.0.0/policy.toml", "version = \"1.0.0\""),
            ("policies/1.0.0/README.md", "not an input"),
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
            std::fs::write(path, text).expect("file");
        }
        dir
    }

    fn inputs(root: &Path) -> String {
        let shared = shared_inputs(root).expect("shared inputs");
        job_inputs(&shared, "world-policy", &[], Some(&root.join("policies/1.0.0/policy.toml"))).expect("job inputs")
    }

    #[test]
    fn a_component_is_fresh_only_for_the_inputs_and_bytes_recorded() {
        let dir = workspace();
        let root = dir.path();
        let dest = root.join("target/policies/capacity-policy-1.0.0.wasm");
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("folder");
        std::fs::write(&dest, b"component").expect("component");
        let record_file = record_path(&root.join("target"), &dest);
        let built = inputs(root);
        assert!(!is_fresh(&record_file, &dest, &built), "nothing recorded yet");
        record(&record_file, &built, &hex::encode(Sha256::digest(b"component"))).expect("record");
        assert!(is_fresh(&record_file, &dest, &built));

        // A file no build reads changes nothing.
        std::fs::write(root.join("policies/1.0.0/README.md"), "edited").expect("edit");
        assert_eq!(inputs(root), built);

        // Each input the build reads makes it stale: the guest, the contract, the lock file, the
        // policy, a new source file.
        for (file, text) in [
            ("guest/src/lib.rs", "pub fn rules() { }"),
            ("wit/policy.wit", "package capacity:policy@1.1.0;"),
            ("Cargo.lock", "version = 3"),
            ("policies/1.0.0/policy.toml", "version = \"1.0.1\""),
            ("guest/src/new_rule.rs", ""),
        ] {
            let path = root.join(file);
            let before = std::fs::read(&path).ok();
            std::fs::write(&path, text).expect("edit");
            assert!(!is_fresh(&record_file, &dest, &inputs(root)), "{file} changed, the component is stale");
            match before {
                Some(bytes) => std::fs::write(&path, bytes).expect("restore"),
                None => std::fs::remove_file(&path).expect("remove"),
            }
            assert!(is_fresh(&record_file, &dest, &inputs(root)), "{file} restored");
        }

        // Another world or feature set is another build.
        let shared = shared_inputs(root).expect("shared inputs");
        let policy = root.join("policies/1.0.0/policy.toml");
        let faulty = job_inputs(&shared, "world-policy", &["fault-trap".into()], Some(&policy)).expect("inputs");
        assert!(!is_fresh(&record_file, &dest, &faulty));

        // The component replaced or removed after its build is built again.
        std::fs::write(&dest, b"another component").expect("overwrite");
        assert!(!is_fresh(&record_file, &dest, &built));
        std::fs::remove_file(&dest).expect("remove");
        assert!(!is_fresh(&record_file, &dest, &built));
    }
}
