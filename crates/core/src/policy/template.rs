//! A policy component from a `policy.toml` without a compiler (docs/behaviour.md §11.11): the
//! binary carries the template component `cargo policies` builds (the policy rules with their
//! numbers as one data region, `capacity_guest::policy_data`), and a version is that template
//! with its own numbers written into the region. Nothing else changes, so it decides exactly as
//! the component `cargo policies` builds from the same file.

use super::{ComponentPolicy, Limits, Policy, PolicyError, Runtime};
use capacity_guest::policy_data::{self, DataError, REGION_LEN};
use policy_files::manifest::{Described, manifest_of, write_manifest, write_whole};
use std::path::{Path, PathBuf};
use vocabulary::PolicyDescription;

/// The template's file name, as `cargo policies` names it.
pub const FILE_NAME: &str = "capacity-policy-template.wasm";

/// The template's bytes: `crates/core/embedded/capacity-policy-template.wasm`, the exact output of
/// `cargo policies` (a test keeps the two identical).
pub const BYTES: &[u8] = include_bytes!("../../embedded/capacity-policy-template.wasm");

/// Why a version could not be built from the template (`sentinel policy build`).
#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    /// The template in the binary has no policy data region, or more than one.
    #[error("the built-in template has no single policy data region: this binary is damaged; reinstall it")]
    NoRegion,
    /// The numbers could not be written into the region: too long for it, or refused by the
    /// checks a `policy.toml` must pass.
    #[error("{0}")]
    Data(#[from] DataError),
    /// The built component does not compile, instantiate or describe itself (a defect).
    #[error("the built component does not load ({0}): this is a defect of the sentinel, please report it")]
    Load(#[from] PolicyError),
    /// The built component describes another name, version or thresholds than it was built
    /// from (a defect).
    #[error("the built component describes other numbers than its file: this is a defect of the sentinel, please report it")]
    Mismatch,
    /// The output folder, the component or its manifest could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The folder or file that could not be written.
        path: PathBuf,
        /// The file system's error.
        source: std::io::Error,
    },
}

/// The component deciding by `description`'s numbers.
pub(crate) fn component_for(description: &PolicyDescription) -> Result<Vec<u8>, TemplateError> {
    let at = policy_data::locate(BYTES).ok_or(TemplateError::NoRegion)?;
    let region = policy_data::encode(description)?;
    let mut bytes = BYTES.to_vec();
    bytes[at..at + REGION_LEN].copy_from_slice(&region);
    Ok(bytes)
}

/// Writes `<name>-<version>.wasm` and its manifest into `out`, ready for `policy sign`; returns
/// the component's path. Proven before it is written: the component loads, imports nothing and
/// describes exactly `description`.
pub fn build_into(description: &PolicyDescription, out: &Path) -> Result<PathBuf, TemplateError> {
    let bytes = component_for(description)?;
    let runtime = Runtime::new(Limits::default())?;
    let label = format!("{} {} (built)", description.name, description.version);
    // Compiled through the user's cache: a command that then loads the written file as a
    // config's `policy` (same bytes, same engine) starts from the artifact, not a compile.
    let (compiled, digest) = super::source::compile_cached(&runtime, Path::new(&label), &bytes)?;
    let described = ComponentPolicy::from_component(&runtime, Path::new(&label), &compiled, digest, None)?.describe()?;
    if (described.name.as_str(), described.version.as_str(), &described.thresholds)
        != (description.name.as_str(), description.version.as_str(), &description.thresholds)
    {
        return Err(TemplateError::Mismatch);
    }
    std::fs::create_dir_all(out).map_err(|source| TemplateError::Write { path: out.to_path_buf(), source })?;
    let file = format!("{}-{}.wasm", description.name, description.version);
    let component = out.join(&file);
    let described = Described {
        name: &description.name,
        version: &description.version,
        world: "policy",
        imports: &[],
        thresholds: Some(&description.thresholds),
    };
    let manifest = manifest_of(&bytes, &file, described);
    write_whole(&component, &bytes).map_err(|source| TemplateError::Write { path: component.clone(), source })?;
    write_manifest(&component, &manifest)
        .map_err(|source| TemplateError::Write { path: vocabulary::PolicyManifest::path_for(&component), source })?;
    Ok(component)
}

/// What a person is told once [`build_into`] wrote `component` into `out`.
pub fn built_message(component: &Path, out: &Path) -> String {
    format!("built {} and its manifest: sign them with `sentinel policy sign --key KEY {}`", component.display(), out.display())
}

/// The numbers a component built from the template carries (none: not built from it).
#[cfg(test)]
pub(crate) fn numbers_of(component: &[u8]) -> Option<Result<PolicyDescription, DataError>> {
    let at = policy_data::locate(component)?;
    Some(policy_data::decode(&component[at..at + REGION_LEN]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A byte inside the payload's first number (cpu_pct.constrained) of a version named
    /// "capacity-policy" with a five-byte version: the region's header (60 bytes), the name and
    /// the version (4 + 15 and 4 + 5 bytes), then two bytes into the number.
    const NUMBER_AT: usize = 60 + 19 + 9 + 2;

    #[test]
    fn the_template_is_the_one_cargo_policies_built_byte_for_byte() {
        let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/policy-template").join(FILE_NAME);
        let bytes = std::fs::read(&built).unwrap_or_else(|e| panic!("{}: {e} (run `cargo policies` first)", built.display()));
        assert!(
            bytes == BYTES,
            "crates/core/embedded/{FILE_NAME} is not the template `cargo policies` built: copy it in with \
             `cp target/policy-template/{FILE_NAME} crates/core/embedded/`"
        );
    }

    #[test]
    fn the_template_is_at_most_half_again_the_size_of_a_version_with_its_numbers_built_in() {
        // What the template adds is reading and checking its numbers: a few tens of KB. It was
        // 2.56 times 1.0.0 (398,788 bytes, 4.4 s to compile on the quick install) while its
        // region was read as 4,096 single-byte copies and its numbers parsed as JSON.
        let (template, built) = (BYTES.len(), super::super::embedded::BYTES.len());
        assert!(template * 2 <= built * 3, "the template is {template} bytes against {built} for 1.0.0 with its numbers built in");
    }

    #[test]
    fn a_component_for_a_description_carries_it_and_nothing_else_changes() {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/1.1.0/policy.toml")).unwrap();
        let description: PolicyDescription = toml::from_str(&text).unwrap();
        let bytes = component_for(&description).unwrap();
        assert_eq!(bytes.len(), BYTES.len());
        let at = policy_data::locate(&bytes).unwrap();
        let changed: Vec<usize> = (0..bytes.len()).filter(|i| bytes[*i] != BYTES[*i]).collect();
        assert!(changed.iter().all(|i| (at..at + REGION_LEN).contains(i)), "only the region changes");
        assert_eq!(numbers_of(&bytes).unwrap().unwrap(), description);
        // The template itself carries 1.0.0's numbers.
        assert_eq!(numbers_of(BYTES).unwrap().unwrap().version, "1.0.0");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_the_partial_name_is_replaced_not_written_through() {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/1.1.0/policy.toml")).unwrap();
        let description: PolicyDescription = toml::from_str(&text).unwrap();
        let shared = tempfile::tempdir().unwrap();
        let victim = shared.path().join("victim");
        std::fs::write(&victim, "the victim's own bytes").unwrap();
        for planted in ["capacity-policy-1.1.0.partial", "capacity-policy-1.1.0.manifest.partial"] {
            std::os::unix::fs::symlink(&victim, shared.path().join(planted)).unwrap();
        }
        std::os::unix::fs::symlink(shared.path().join("nowhere"), shared.path().join("capacity-policy-1.1.0.manifest.partial.json"))
            .unwrap();
        let component = build_into(&description, shared.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the victim's own bytes");
        assert!(!shared.path().join("nowhere").exists());
        assert_eq!(numbers_of(&std::fs::read(&component).unwrap()).unwrap().unwrap(), description);
        assert!(!std::fs::symlink_metadata(&component).unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_damaged_region_is_refused_by_its_checksum() {
        let mut bytes = BYTES.to_vec();
        let at = policy_data::locate(&bytes).unwrap();
        bytes[at + NUMBER_AT] ^= 0x10; // a bit of cpu_pct.constrained
        assert_eq!(numbers_of(&bytes).unwrap(), Err(DataError::Checksum));
    }

    #[test]
    fn a_built_component_describes_its_numbers_and_a_damaged_one_traps_before_any_answer() {
        let runtime = crate::policy::Runtime::new(crate::policy::Limits::default()).unwrap();
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policies/2.0.0/policy.toml")).unwrap();
        let description: PolicyDescription = toml::from_str(&text).unwrap();
        let bytes = component_for(&description).unwrap();
        let mut built = crate::policy::ComponentPolicy::from_bytes(&runtime, Path::new("built"), &bytes, None).unwrap();
        let described = crate::policy::Policy::describe(&mut built).unwrap();
        assert_eq!((described.name.as_str(), described.version.as_str()), ("capacity-policy", "2.0.0"));
        assert_eq!(described.thresholds, description.thresholds);
        // A number changed past `policy build` (the checksum not): the component never answers.
        let mut damaged = bytes.clone();
        let at = policy_data::locate(&damaged).unwrap();
        damaged[at + NUMBER_AT] ^= 0x10;
        let refused = crate::policy::ComponentPolicy::from_bytes(&runtime, Path::new("damaged"), &damaged, None);
        // The trap says only `unreachable`: the host names the damage and what to do.
        match refused {
            Err(PolicyError::DamagedData { message, .. }) => assert!(message.contains("SHA-256"), "{message}"),
            Err(other) => panic!("a damaged region must be named, not {other}"),
            Ok(_) => panic!("a damaged region must trap at the first call"),
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("capacity-policy-2.0.0.wasm");
        std::fs::write(&file, &damaged).unwrap();
        let runtime = std::sync::Arc::new(runtime);
        for (what, refused) in [
            ("a config's policy file", crate::policy::source::open_cached(&file.display().to_string(), &runtime).err()),
            ("replay", crate::policy::source::PolicySource::open(&file.display().to_string(), &runtime).err()),
            ("policy info", crate::policy::inspect::inspect_component(&runtime, &file).err()),
        ] {
            let text = refused.map(|e| e.to_string()).unwrap_or_default();
            assert!(text.contains("numbers are damaged") && text.contains("sentinel policy build"), "{what}: {text}");
        }
    }
}
