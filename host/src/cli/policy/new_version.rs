//! `sentinel policy new VERSION --from BASE [--dir policies] [--purpose TEXT]`
//! (docs/behaviour.md §11.11): a version folder for people who tune by hand: `policy.toml` with
//! the base's numbers under the new version, and a README saying what the version is for and
//! how it ships. The base is `<dir>/<BASE>/policy.toml`, or, in an empty directory, the built-in
//! default (1.0.0).

use super::build::read_policy;
use crate::tune::write::policy_toml;
use anyhow::Context;
use sentinel_core::policy::{Limits, Runtime, embedded};
use std::path::{Path, PathBuf};
use vocabulary::PolicyDescription;

/// What `policy new` is asked.
#[derive(Debug)]
pub struct NewArgs<'a> {
    pub version: &'a str,
    pub from: &'a str,
    /// The folder holding the version folders.
    pub dir: &'a Path,
    /// What the version is for, written into its README.
    pub purpose: Option<&'a str>,
}

/// The base's numbers: its folder in `dir`, else the built-in default of that version.
fn base(dir: &Path, from: &str) -> anyhow::Result<(PolicyDescription, String)> {
    let folder = dir.join(from);
    if folder.join("policy.toml").is_file() {
        return Ok((read_policy(&folder)?, folder.join("policy.toml").display().to_string()));
    }
    let runtime = Runtime::new(Limits::default())?;
    let described = embedded::open(&runtime)?.describe()?;
    if described.version != from {
        anyhow::bail!(
            "there is no {}/policy.toml, and the built-in default is {}, not {from}: name a version folder of {} with --from \
             (or --dir the folder that holds it)",
            folder.display(),
            described.version,
            dir.display()
        );
    }
    Ok((
        PolicyDescription { name: described.name, version: described.version, thresholds: described.thresholds },
        "the built-in default".into(),
    ))
}

/// Writes `<dir>/<version>/policy.toml` and its README; returns the folder.
pub fn new_version(args: NewArgs<'_>) -> anyhow::Result<PathBuf> {
    let (base, source) = base(args.dir, args.from)?;
    let description = PolicyDescription { version: args.version.to_string(), ..base.clone() };
    description.check().map_err(|e| anyhow::anyhow!("{} is no version: {e}", args.version))?;
    if args.version == base.version {
        anyhow::bail!("{} is the base's own version: name the new version (for example a minor version above it)", args.version);
    }
    let folder = args.dir.join(args.version);
    if folder.exists() {
        anyhow::bail!("{} exists: choose another version, or edit the policy.toml there", folder.display());
    }
    let summary = format!("{} {}'s numbers, to be changed by hand (sentinel policy new).", base.name, base.version);
    let text = policy_toml(&base.name, args.version, &summary, &base.thresholds);
    let parsed: PolicyDescription = toml::from_str(&text).context("the scaffolded policy.toml does not read back")?;
    if parsed != description {
        anyhow::bail!("the scaffolded policy.toml does not read back as {}'s numbers: this is a defect of the sentinel", base.version);
    }
    std::fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    std::fs::write(folder.join("policy.toml"), text).with_context(|| format!("cannot write {}/policy.toml", folder.display()))?;
    let readme = readme(&description, &base, &source, args);
    std::fs::write(folder.join("README.md"), readme).with_context(|| format!("cannot write {}/README.md", folder.display()))?;
    Ok(folder)
}

fn readme(new: &PolicyDescription, base: &PolicyDescription, source: &str, args: NewArgs<'_>) -> String {
    let (version, dir) = (&new.version, args.dir.display());
    let purpose = args.purpose.map(str::trim).filter(|p| !p.is_empty()).map_or_else(
        || {
            "Not said yet: write here what this version changes against the base, and why (the incident, the \
            tuning report or the A/B report that asks for it)."
                .to_string()
        },
        str::to_string,
    );
    format!(
        "# {name} {version}\n\n\
         ## What it is for\n\n{purpose}\n\n\
         ## Where it comes from\n\n\
         Scaffolded by `sentinel policy new {version} --from {from}` from {source}: every number is {from}'s until\n\
         `policy.toml` is edited. Say each change here.\n\n\
         ## How it ships\n\n\
         ```sh\n\
         sentinel policy build {dir}/{version} -o dist/\n\
         sentinel replay --baseline BASELINE.wasm --candidate dist/{name}-{version}.wasm --gate gate.toml --report ab TRACES...\n\
         sentinel policy sign --key KEY dist/\n\
         cp dist/{name}-{version}.* POLICY_DIRECTORY/ && sentinel policy activate {version} --config CONFIG\n\
         ```\n",
        name = new.name,
        from = base.version,
    )
}
