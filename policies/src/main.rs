//! `cargo policies`: builds every version under `policies/` into its own component.
//!
//! For each `policies/<version>/policy.toml` it builds the guest for `wasm32-unknown-unknown`
//! with that file baked in (`CAPACITY_POLICY`), and writes
//! `target/policies/capacity-policy-<version>.wasm` with a manifest beside it. It also builds
//! the admission world once, `capacity-admission-<guest version>.wasm`, and the template component
//! `sentinel policy build` rewrites, `target/policy-template/capacity-policy-template.wasm`
//! (1.0.0's numbers as data). Fixture policies of the
//! tests (`tests/policies/`) go to `target/test-policies/`. The build fails when a
//! component imports anything: a policy must have no file, network or clock access.

mod component;
mod manifest;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use vocabulary::PolicyDescription;

/// The template component's file name.
const TEMPLATE_FILE: &str = "capacity-policy-template.wasm";

fn main() -> Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("workspace root")?.to_path_buf();
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let out = target.join("policies");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let versions = policy_files(&root.join("policies"))?;
    if versions.is_empty() {
        bail!("no policies/<version>/policy.toml found under {}", root.display());
    }
    build_policies(&root, &target, &versions, &out, false)?;
    // Fixture policies for the tests (low thresholds, fast timings): never shipped.
    let fixtures = policy_files(&root.join("tests/policies"))?;
    let fixtures_out = target.join("test-policies");
    std::fs::create_dir_all(&fixtures_out).with_context(|| format!("creating {}", fixtures_out.display()))?;
    build_policies(&root, &target, &fixtures, &fixtures_out, true)?;

    // The template `sentinel policy build` rewrites (the binary carries a copy): 1.0.0's numbers
    // as its policy data region. No manifest: it is no version of its own.
    let first = root.join("policies/1.0.0/policy.toml");
    let wasm = build_world(&root, &target, "world-policy", Some(&first), &["policy-data".to_string()])?;
    // Its own folder: no version of its own, so no manifest, and not among the versions.
    let template_out = target.join("policy-template");
    std::fs::create_dir_all(&template_out).with_context(|| format!("creating {}", template_out.display()))?;
    let dest = template_out.join(TEMPLATE_FILE);
    let manifest = component::install(&wasm, &dest, "policy", "capacity-policy", "template", None)?;
    println!("built {} ({} bytes, sha256 {})", dest.display(), manifest.size, manifest.sha256);

    let version = capacity_guest::VERSION;
    let wasm = build_world(&root, &target, "world-admission", None, &[])?;
    let dest = out.join(format!("capacity-admission-{version}.wasm"));
    let manifest = component::install(&wasm, &dest, "admission-only", "capacity-admission", version, None)?;
    manifest::write(&dest, &manifest)?;
    println!("built {} ({} bytes, sha256 {})", dest.display(), manifest.size, manifest.sha256);
    Ok(())
}

/// Builds each policy file into `out`. A fixture folder may hold a `features` file naming
/// test-only `fault-*` guest features to build in; a shipped policy may not.
fn build_policies(root: &Path, target: &Path, versions: &[PathBuf], out: &Path, fixtures: bool) -> Result<()> {
    for path in versions {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let file: PolicyDescription = toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        file.check().map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let folder = path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or_default();
        if folder != file.version {
            bail!("{}: version {} does not match its folder {folder}", path.display(), file.version);
        }
        let faults = fault_features(path, fixtures)?;
        let wasm = build_world(root, target, "world-policy", Some(path), &faults)?;
        let dest = out.join(format!("{}-{}.wasm", file.name, file.version));
        let manifest = component::install(&wasm, &dest, "policy", &file.name, &file.version, Some(&file.thresholds))?;
        manifest::write(&dest, &manifest)?;
        println!("built {} ({} bytes, sha256 {})", dest.display(), manifest.size, manifest.sha256);
    }
    Ok(())
}

/// Every `<dir>/*/policy.toml`, in version order (none when `dir` does not exist).
fn policy_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    if !dir.is_dir() {
        return Ok(found);
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path().join("policy.toml");
        if path.is_file() {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// The test-only `fault-*` and bench-only `bench-*` features a fixture asks for in `features`
/// beside its policy.toml.
fn fault_features(policy: &Path, fixtures: bool) -> Result<Vec<String>> {
    let file = policy.with_file_name("features");
    if !file.is_file() {
        return Ok(Vec::new());
    }
    if !fixtures {
        bail!("{}: a shipped policy cannot ask for guest features", file.display());
    }
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let features: Vec<String> =
        text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()).map(String::from).collect();
    if let Some(bad) = features.iter().find(|f| !(f.starts_with("fault-") || f.starts_with("bench-"))) {
        bail!("{}: only test-only fault-* or bench-only bench-* features may be asked for, not {bad}", file.display());
    }
    Ok(features)
}

/// Builds the guest for one world and returns the built file.
fn build_world(root: &Path, target: &Path, feature: &str, policy: Option<&Path>, extra: &[String]) -> Result<PathBuf> {
    let feature = std::iter::once(feature.to_string()).chain(extra.iter().cloned()).collect::<Vec<_>>().join(",");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args([
        "build",
        "--quiet",
        "-p",
        "capacity-guest",
        "--lib",
        "--target",
        "wasm32-unknown-unknown",
        "--profile",
        "guest",
        "--features",
        &feature,
    ]);
    match policy {
        Some(p) => cmd.env("CAPACITY_POLICY", p),
        None => cmd.env_remove("CAPACITY_POLICY"),
    };
    let status = cmd.status().context("running cargo to build the guest")?;
    if !status.success() {
        bail!("building the guest ({feature}) failed: {status}");
    }
    Ok(target.join("wasm32-unknown-unknown/guest/capacity_guest.wasm"))
}
