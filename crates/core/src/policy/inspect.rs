//! `sentinel policy info`: what a component file is, read from the file itself.

use super::contract;
use super::runtime::Runtime;
use super::{ComponentPolicy, Policy, PolicyError};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use vocabulary::Thresholds;

/// What `sentinel policy info` prints.
#[derive(Debug, Serialize)]
pub struct ComponentInfo {
    /// The component file, as given.
    pub file: String,
    /// The policy's name: from its description, else from the manifest beside the file (none:
    /// neither says).
    pub name: Option<String>,
    /// The policy's version, from the same place as `name` (none: neither says).
    pub version: Option<String>,
    /// The sha256 of the file's bytes, in hex.
    pub sha256: String,
    /// The file's size, in bytes.
    pub size: usize,
    /// `policy`, `admission-only`, or `unknown`.
    pub world: String,
    /// The contract it was built for (`2.0.0` of `capacity:sentinel@3.0.0`), from its export names.
    pub contract: Option<String>,
    /// The names of what the component imports (empty for a policy that may run here).
    pub imports: Vec<String>,
    /// The names of what it exports (`capacity:sentinel/decision@3.2.0`, ...).
    pub exports: Vec<String>,
    /// The numbers it decides by, from its description (none: not a policy component this
    /// sentinel can run).
    pub thresholds: Option<Thresholds>,
}

/// Reads a component's imports and exports, and for a policy its description. An admission
/// component has no description: its name and version come from the manifest beside it.
pub fn inspect_component(runtime: &Arc<Runtime>, path: &Path) -> Result<ComponentInfo, PolicyError> {
    let bytes = std::fs::read(path).map_err(|source| PolicyError::Read { path: path.into(), source })?;
    let engine = runtime.engine();
    // Compiled once per version into the user's cache, as the commands that run a single policy
    // file are: inspecting it again loads the artifact (milliseconds, not a compile).
    let (component, digest) = super::source::compile_cached(runtime, path, &bytes)?;
    let ty = component.component_type();
    let imports: Vec<String> = ty.imports(engine).map(|(n, _)| n.to_string()).collect();
    let exports: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
    let has = |interface: &str| contract::exports_interface(exports.iter().map(String::as_str), interface);
    let contract = contract::contract_of(exports.iter().map(String::as_str));
    let world = if has("decision") {
        "policy"
    } else if has("admission") {
        "admission-only"
    } else {
        "unknown"
    };
    let (mut name, mut version, mut thresholds) = (None, None, None);
    // A component of another contract is described only by its export names (activation refuses it).
    let runs_here = contract.as_deref().is_some_and(contract::runs_here);
    if world == "policy" && imports.is_empty() && runs_here {
        let description = ComponentPolicy::from_component(runtime, path, &component, digest.clone(), None)
            .and_then(|mut policy| policy.describe())
            .map_err(|e| e.or_damaged_data(path, &bytes))?;
        name = Some(description.name);
        version = Some(description.version);
        thresholds = Some(description.thresholds);
    } else if let Some(manifest) = manifest_beside(path) {
        name = manifest.get("name").and_then(|v| v.as_str()).map(str::to_string);
        version = manifest.get("version").and_then(|v| v.as_str()).map(str::to_string);
    }
    Ok(ComponentInfo {
        file: path.display().to_string(),
        name,
        version,
        sha256: digest,
        size: bytes.len(),
        world: world.to_string(),
        contract,
        imports,
        exports,
        thresholds,
    })
}

fn manifest_beside(path: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(path.with_extension("manifest.json")).ok()?;
    serde_json::from_str(&text).ok()
}
