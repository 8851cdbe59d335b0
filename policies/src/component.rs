//! Installs a built component: refuses one that imports anything, copies it, digests it.

use anyhow::{Context, Result, bail};
use policy_files::manifest::{Described, manifest_of};
use std::path::Path;
use vocabulary::PolicyManifest;
use vocabulary::Thresholds;
use wasmparser::{Parser, Payload};

pub fn install(
    built: &Path,
    dest: &Path,
    world: &str,
    name: &str,
    version: &str,
    thresholds: Option<&Thresholds>,
) -> Result<PolicyManifest> {
    let bytes = std::fs::read(built).with_context(|| format!("reading {}", built.display()))?;
    let imports = top_level_imports(&bytes).with_context(|| format!("parsing {}", built.display()))?;
    if !imports.is_empty() {
        bail!(
            "{} imports {imports:?}: a policy component must import nothing (build for \
             wasm32-unknown-unknown with wasm-component-ld, and export every types interface it uses)",
            built.display()
        );
    }
    if built != dest {
        std::fs::write(dest, &bytes).with_context(|| format!("writing {}", dest.display()))?;
    }
    let file = dest.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    Ok(manifest_of(&bytes, file, Described { name, version, world, imports: &imports, thresholds }))
}

/// The names the component itself imports (not those of its inner core modules).
pub fn top_level_imports(bytes: &[u8]) -> Result<Vec<String>> {
    let mut depth = 0usize;
    let mut imports = Vec::new();
    for payload in Parser::new(0).parse_all(bytes) {
        match payload? {
            Payload::Version { encoding: wasmparser::Encoding::Module, .. } if depth == 0 => {
                bail!("this is a core module, not a component")
            }
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    imports.push(import?.name.name.to_string());
                }
            }
            _ => {}
        }
    }
    Ok(imports)
}

#[cfg(test)]
mod tests {
    use super::top_level_imports;

    #[test]
    fn a_component_importing_a_clock_is_seen_importing_it() {
        let bytes = wat::parse_str(r#"(component (import "wasi:clocks/wall-clock@0.2.0" (instance)))"#).unwrap();
        assert_eq!(top_level_imports(&bytes).unwrap(), vec!["wasi:clocks/wall-clock@0.2.0".to_string()]);
    }

    #[test]
    fn imports_of_inner_core_modules_do_not_count() {
        let bytes = wat::parse_str(r#"(component (core module (import "env" "memory" (memory 1))))"#).unwrap();
        assert!(top_level_imports(&bytes).unwrap().is_empty());
    }

    #[test]
    fn a_core_module_is_not_a_component() {
        let bytes = wat::parse_str("(module)").unwrap();
        assert!(top_level_imports(&bytes).unwrap_err().to_string().contains("not a component"));
    }
}
