//! The manifest beside a built component (`X.wasm` gets `X.manifest.json`): made from the very
//! bytes written, and both files written whole. `cargo policies` and `sentinel policy build`
//! both write through here, so a manifest is one format whoever built the component.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use vocabulary::{PolicyManifest, Thresholds};

/// What a component is, beside its bytes: the rest of its manifest.
#[derive(Debug, Clone, Copy)]
pub struct Described<'a> {
    /// The policy's name (`capacity-policy`).
    pub name: &'a str,
    /// Its version.
    pub version: &'a str,
    /// The WIT world it exports (`policy` or `admission-only`).
    pub world: &'a str,
    /// What it imports (nothing, for every component this project builds).
    pub imports: &'a [String],
    /// The numbers baked into a policy component (none for the admission component).
    pub thresholds: Option<&'a Thresholds>,
}

/// The manifest of the component `bytes`, written as `file` (its file name).
pub fn manifest_of(bytes: &[u8], file: &str, described: Described<'_>) -> PolicyManifest {
    PolicyManifest {
        name: described.name.to_string(),
        version: described.version.to_string(),
        file: file.to_string(),
        sha256: hex::encode(Sha256::digest(bytes)),
        size: bytes.len() as u64,
        world: described.world.to_string(),
        imports: described.imports.to_vec(),
        thresholds: described.thresholds.copied(),
    }
}

/// The manifest's text: pretty JSON and a final newline.
pub fn manifest_text(manifest: &PolicyManifest) -> String {
    serde_json::to_string_pretty(manifest).expect("a manifest (strings, numbers, a list of strings) serializes") + "\n"
}

/// Writes `manifest` beside `component` ([`PolicyManifest::path_for`]), whole; returns its path.
pub fn write_manifest(component: &Path, manifest: &PolicyManifest) -> std::io::Result<PathBuf> {
    let path = PolicyManifest::path_for(component);
    write_whole(&path, manifest_text(manifest).as_bytes())?;
    Ok(path)
}

/// Written beside, then renamed: a reader never sees half a component or a manifest. The
/// partial file is created new (a file or link left at its name is removed first, and one put
/// back meanwhile fails the write), so a link planted in a shared folder is never written through.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let partial = path.with_extension("partial");
    match std::fs::remove_file(&partial) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&partial)?;
    file.write_all(bytes).and_then(|()| file.sync_all())?;
    std::fs::rename(&partial, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_names_the_bytes_written_and_reads_back_the_same() {
        let dir = crate::scratch("manifest");
        let component = dir.join("capacity-policy-9.9.9.wasm");
        let bytes = b"\0asm not really";
        write_whole(&component, bytes).unwrap();
        let described = Described { name: "capacity-policy", version: "9.9.9", world: "policy", imports: &[], thresholds: None };
        let manifest = manifest_of(bytes, "capacity-policy-9.9.9.wasm", described);
        let path = write_manifest(&component, &manifest).unwrap();
        assert_eq!(path, dir.join("capacity-policy-9.9.9.manifest.json"));
        let read: PolicyManifest = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(read, manifest);
        assert_eq!(read.sha256, hex::encode(Sha256::digest(std::fs::read(&component).unwrap())));
        assert_eq!(read.size, bytes.len() as u64);
        assert!(!dir.join("capacity-policy-9.9.9.partial").exists(), "no partial file is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
