//! The policy directory: each component `X.wasm` with `X.manifest.json` beside it (written by
//! `cargo policies`) and, once signed, `X.manifest.sig`. A manifest names the file and the
//! sha256 of its bytes; the signature covers the manifest's exact bytes, so one signature
//! vouches for the component through its digest.

pub use super::entry::Entry;
use super::signing::{self, SignatureStatus, Trust};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use vocabulary::PolicyManifest;

/// A component whose bytes matched its manifest and whose manifest is trusted.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The manifest, and where it and its component are.
    pub entry: Entry,
    /// The component's bytes as checked against the manifest: the ones to compile.
    pub bytes: Vec<u8>,
    /// What the manifest's signature says (valid, or one `trust` lets through).
    pub signature: SignatureStatus,
}

/// Why a manifest, or the component it names, cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IntegrityError {
    /// The manifest cannot be read, is not a manifest, or names a file that is not a plain
    /// file name beside it.
    #[error("manifest {path} is unreadable: {message}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The component the manifest names cannot be read: missing, not a regular file (a link is
    /// never followed), or unreadable.
    #[error("policy file {file} (named by {manifest}) cannot be read: {message}")]
    Missing {
        /// The component file.
        file: PathBuf,
        /// The manifest that names it.
        manifest: PathBuf,
        /// The read's error.
        message: String,
    },
    /// The component's sha256 is not the manifest's: it was changed or damaged since.
    #[error("policy file {file} does not match its manifest {manifest}: sha256 is {actual}, the manifest says {expected}")]
    Digest {
        /// The component file.
        file: PathBuf,
        /// The manifest that names it.
        manifest: PathBuf,
        /// The sha256 the manifest gives, hex.
        expected: String,
        /// The sha256 of the file's bytes, hex.
        actual: String,
    },
    /// The component's size is not the manifest's (checked before its sha256).
    #[error("policy file {file} does not match its manifest {manifest}: {actual} bytes, the manifest says {expected}")]
    Size {
        /// The component file.
        file: PathBuf,
        /// The manifest that names it.
        manifest: PathBuf,
        /// The size the manifest gives, in bytes.
        expected: u64,
        /// The file's size, in bytes.
        actual: u64,
    },
    /// The manifest's signature does not let it load: unsigned, invalid, or by an untrusted
    /// key. Its component is never read.
    #[error("manifest {manifest} is refused: {reason}")]
    Signature {
        /// The manifest file.
        manifest: PathBuf,
        /// Why the signature is refused, and what to do.
        reason: String,
    },
    /// No decision policy's manifest in the directory names this version.
    #[error("no policy version {version} in {dir} (found: {found})")]
    NoSuchVersion {
        /// The version asked for.
        version: String,
        /// The policy directory.
        dir: PathBuf,
        /// The versions that are there, comma-separated (`none` when there are none).
        found: String,
    },
}

/// Every manifest in `dir`, in version order (oldest first). Unreadable manifests are
/// returned as errors beside the good ones so `policy list` can show them.
pub fn scan(dir: &Path) -> (Vec<Entry>, Vec<IntegrityError>) {
    let (mut entries, mut errors) = (Vec::new(), Vec::new());
    let Ok(listing) = std::fs::read_dir(dir) else {
        return (entries, errors);
    };
    let mut paths: Vec<PathBuf> =
        listing.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.to_str().is_some_and(|s| s.ends_with(".manifest.json"))).collect();
    paths.sort();
    for path in paths {
        match read_entry(&path) {
            Ok(entry) => entries.push(entry),
            Err(e) => errors.push(e),
        }
    }
    entries.sort_by(|a, b| compare_versions(&a.manifest.version, &b.manifest.version));
    (entries, errors)
}

/// The largest manifest read (one is about a kilobyte).
const MANIFEST_LIMIT: u64 = 64 << 10;

/// Reads the manifest at `path` (at most 64 KiB) into an [`Entry`]; the component it names must be
/// a plain file name, which is looked for beside it. Nothing is verified yet.
pub fn read_entry(path: &Path) -> Result<Entry, IntegrityError> {
    let bad = |message: String| IntegrityError::Manifest { path: path.into(), message };
    let bytes = crate::plain_files::read_whole(path, MANIFEST_LIMIT).map_err(|e| bad(e.to_string()))?;
    let manifest: PolicyManifest = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    if manifest.file.contains('/') || manifest.file.contains('\\') || manifest.file.starts_with('.') {
        return Err(bad(format!("file `{}` must be a plain file name beside the manifest", manifest.file)));
    }
    let component_path = path.parent().unwrap_or(Path::new(".")).join(&manifest.file);
    Ok(Entry { manifest, manifest_path: path.into(), manifest_bytes: bytes, component_path })
}

/// The policy versions of `dir` that decide (admission-only components are skipped).
pub(crate) fn policy_entries(dir: &Path) -> Vec<Entry> {
    scan(dir).0.into_iter().filter(|e| e.manifest.world == "policy").collect()
}

/// The versions `entries` announce: those whose component is beside their manifest. A manifest
/// copied in before its component announces nothing yet, so the version arrives with its
/// component (the directory changes again then) instead of being refused, and counted as a
/// refusal, for a file still on its way.
pub(crate) fn announced(entries: &[Entry]) -> BTreeSet<String> {
    entries
        .iter()
        .filter(|e| {
            let here = e.component_path.exists();
            if !here {
                tracing::debug!(
                    "policy {}: its manifest is here, its component {} not yet; waiting for it",
                    e.manifest.version,
                    e.component_path.display()
                );
            }
            here
        })
        .map(|e| e.manifest.version.clone())
        .collect()
}

/// Finds one version in `dir`.
pub fn find(dir: &Path, version: &str) -> Result<Entry, IntegrityError> {
    let entries = policy_entries(dir);
    let found = entries.iter().map(|e| e.manifest.version.clone()).collect::<Vec<_>>().join(", ");
    entries.into_iter().find(|e| e.manifest.version == version).ok_or_else(|| IntegrityError::NoSuchVersion {
        version: version.into(),
        dir: dir.into(),
        found: if found.is_empty() { "none".into() } else { found },
    })
}

/// Checks the manifest's signature against `trust`, then reads the component (a regular file,
/// at most the signed size and one byte more: a link, a FIFO or a device is refused unread)
/// and checks its size and sha256 against the manifest. Nothing unsigned is read past its
/// manifest. The bytes returned are the ones checked (compile those).
pub fn verify(entry: &Entry, trust: &Trust) -> Result<Verified, IntegrityError> {
    let (file, manifest) = (entry.component_path.clone(), entry.manifest_path.clone());
    let signature = signing::check(entry, trust);
    if let Some(reason) = signing::refusal(&signature, trust) {
        return Err(IntegrityError::Signature { manifest, reason });
    }
    let bytes = crate::plain_files::read_at_most(&file, entry.manifest.size).map_err(|e| IntegrityError::Missing {
        file: file.clone(),
        manifest: manifest.clone(),
        message: e.to_string(),
    })?;
    if bytes.len() as u64 != entry.manifest.size {
        // Read no further than one byte past the signed size: a larger file's size is its own.
        let actual = if bytes.len() as u64 > entry.manifest.size {
            std::fs::symlink_metadata(&file).map_or(bytes.len() as u64, |m| m.len())
        } else {
            bytes.len() as u64
        };
        return Err(IntegrityError::Size { file, manifest, expected: entry.manifest.size, actual });
    }
    let actual = hex::encode(Sha256::digest(&bytes));
    if !actual.eq_ignore_ascii_case(&entry.manifest.sha256) {
        return Err(IntegrityError::Digest { file, manifest, expected: entry.manifest.sha256.clone(), actual });
    }
    Ok(Verified { entry: entry.clone(), bytes, signature })
}

/// Orders `1.10.0` after `1.9.0`; non-numeric parts compare as text.
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |v: &str| -> Vec<(u64, String)> {
        v.split(['.', '-', '+']).map(|p| (p.parse::<u64>().unwrap_or(u64::MAX), p.to_string())).collect()
    };
    parts(a).cmp(&parts(b))
}
