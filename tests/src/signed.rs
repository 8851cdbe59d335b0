//! Signed policy directories for tests whose configuration reaches servers. Outside the
//! embedded default the sentinel runs only policies whose manifests are signed by the
//! configured key (`[policies]`), so such a test installs the components it needs into a
//! directory of its own, makes a key pair there and signs every manifest, exactly as an
//! operator would with `sentinel policy keygen` and `sentinel policy sign`.

use sentinel_core::policy::lifecycle::{manifest, signing};
use std::path::{Path, PathBuf};

/// A policy directory with signed manifests and the public key that verifies them.
#[derive(Debug, Clone)]
pub struct SignedPolicies {
    pub dir: PathBuf,
    pub public_key: PathBuf,
}

impl SignedPolicies {
    /// Copies each component (`X.wasm`, with `X.manifest.json` beside it) into `root/policies`,
    /// writes a key pair under `root/keys` and signs every manifest.
    pub fn install(root: &Path, components: &[PathBuf]) -> SignedPolicies {
        let dir = root.join("policies");
        let keys = root.join("keys");
        std::fs::create_dir_all(&dir).expect("creating the policy directory");
        std::fs::create_dir_all(&keys).expect("creating the key directory");
        let (secret, public_key) = signing::keygen(&keys.join("policy")).expect("writing a key pair");
        let key = signing::read_secret(&secret).expect("reading the signing key back");
        for component in components {
            let manifest = vocabulary::PolicyManifest::path_for(component);
            assert!(
                component.is_file() && manifest.is_file(),
                "{} or its manifest is missing: run `cargo policies` first",
                component.display()
            );
            for file in [component, &manifest] {
                std::fs::copy(file, dir.join(file.file_name().expect("a file name"))).expect("copying a policy file");
            }
            let entry = manifest::read_entry(&dir.join(manifest.file_name().expect("a file name"))).unwrap_or_else(|e| panic!("{e}"));
            signing::sign(&entry, &key).expect("signing a manifest");
        }
        SignedPolicies { dir, public_key }
    }

    /// The `[policies]` table that runs `active` from this directory (the last table of a
    /// config, or followed by another table header).
    pub fn toml(&self, active: &str) -> String {
        format!(
            "[policies]\ndir = {:?}\npublic_key = {:?}\nactive = {active:?}\npoll = \"1s\"\n",
            self.dir.display().to_string(),
            self.public_key.display().to_string(),
        )
    }
}
