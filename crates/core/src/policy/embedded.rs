//! The embedded default policy: the 1.0.0 component, built into the binary so that an
//! installed or copied `sentinel` runs anywhere, with no build tree beside it. The bytes are
//! `crates/core/embedded/capacity-policy-1.0.0.wasm`, the exact output of `cargo policies` for
//! `policies/1.0.0` (a test keeps the two identical).

use super::{ComponentPolicy, Policy, PolicyError, Runtime};
use std::path::Path;
use std::sync::Arc;

/// The component's file name, as `cargo policies` names it.
pub const FILE_NAME: &str = "capacity-policy-1.0.0.wasm";

/// How the embedded default is named in logs, errors and `sentinel check`.
pub const LABEL: &str = "embedded:capacity-policy-1.0.0.wasm";

/// The component's bytes.
pub const BYTES: &[u8] = include_bytes!("../../embedded/capacity-policy-1.0.0.wasm");

/// Its manifest, as `cargo policies` wrote it (`sentinel init --signed` signs a copy).
pub const MANIFEST: &str = include_str!("../../embedded/capacity-policy-1.0.0.manifest.json");

/// Instantiates the embedded component, compiled once per binary and engine and then loaded
/// from the user's cache (as `sentinel replay` loads a component), so a command on the embedded
/// default does not compile it again.
pub fn open(runtime: &Arc<Runtime>) -> Result<Box<dyn Policy>, PolicyError> {
    let path = Path::new(LABEL);
    let (component, digest) = super::source::compile_cached(runtime, path, BYTES)?;
    Ok(Box::new(ComponentPolicy::from_component(runtime, path, &component, digest, None)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    /// The embedded bytes are what `cargo policies` builds from this tree: a change to the
    /// guest or to `policies/1.0.0` must be copied in, or this fails.
    #[test]
    fn the_embedded_default_is_the_built_1_0_0_component_byte_for_byte() {
        let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/policies").join(FILE_NAME);
        let bytes = std::fs::read(&built).unwrap_or_else(|e| panic!("{}: {e} (run `cargo policies` first)", built.display()));
        assert!(
            bytes == BYTES,
            "crates/core/embedded/{FILE_NAME} (sha256 {}) is not the component `cargo policies` built (sha256 {}): \
             copy it in with `cp target/policies/capacity-policy-1.0.0.* crates/core/embedded/`",
            hex::encode(Sha256::digest(BYTES)),
            hex::encode(Sha256::digest(&bytes))
        );
        let manifest = built.with_file_name("capacity-policy-1.0.0.manifest.json");
        assert_eq!(
            std::fs::read_to_string(&manifest).unwrap(),
            MANIFEST,
            "crates/core/embedded's manifest is not the one `cargo policies` wrote: copy it in with the component"
        );
        let runtime = Runtime::new(crate::policy::Limits::default()).unwrap();
        let policy = open(&runtime).unwrap();
        assert_eq!((policy.identity().name.as_str(), policy.identity().version.as_str()), ("capacity-policy", "1.0.0"));
    }
}
