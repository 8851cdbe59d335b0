//! `sentinel init`: a new folder, written whole or not at all: `--signed DIR`, a sentinel's
//! folder that reaches real servers at once (signed.rs); `--policy-repo DIR`, an operator's
//! policy repository ready for the CI gate (policy_repo.rs).

mod policy_repo;
mod signed;

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["signed", "policy_repo"]))]
pub struct InitArgs {
    /// The folder to write (new, or empty): keys/, policies/ with signed manifests, sentinel.toml.
    #[arg(long, value_name = "DIR")]
    pub signed: Option<PathBuf>,
    /// The Redis the config publishes the state to (the cache channel; with --signed).
    #[arg(long, value_name = "URL", default_value = "redis://127.0.0.1:6379/0", requires = "signed")]
    pub redis: String,
    /// Also copy and sign every policy version in this folder (`target/policies` after `cargo
    /// policies`); without it, the embedded 1.0.0 alone (with --signed).
    #[arg(long, value_name = "FOLDER", requires = "signed")]
    pub policies: Option<PathBuf>,
    /// The folder to write (new, or empty): an operator's policy repository for the CI gate:
    /// policies/ with the built-in versions, gate.toml and tune-space.toml, traces/, ci/ and the
    /// GitHub and GitLab recipes, and a README saying what each is.
    #[arg(long, value_name = "DIR")]
    pub policy_repo: Option<PathBuf>,
}

pub fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    match (&args.signed, &args.policy_repo) {
        (Some(dir), _) => signed::run(dir, &args.redis, args.policies.as_deref()),
        (None, Some(dir)) => policy_repo::run(dir),
        (None, None) => unreachable!("clap requires --signed or --policy-repo"),
    }
}

/// Writes a new folder at `dir` with `fill`, all or nothing: `dir` must not exist or be empty;
/// everything is written into a hidden sibling, which is renamed into place once `fill` and
/// the permissions are done. A failure leaves nothing, the working folder included.
fn new_folder<T>(dir: &Path, fill: impl FnOnce(&Path) -> anyhow::Result<T>) -> anyhow::Result<T> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => anyhow::bail!("reading {}: {e}", dir.display()),
        Ok(m) if !m.is_dir() => anyhow::bail!(
            "{} is a file or a link, not a folder: `sentinel init` writes a new folder; name one that does not exist",
            dir.display()
        ),
        Ok(_) => {
            let mut entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
            anyhow::ensure!(
                entries.next().is_none(),
                "{} exists and is not empty: `sentinel init` writes a new folder and changes nothing that exists; name another folder",
                dir.display()
            );
        }
    }
    let parent = sentinel_core::plain_files::folder_of(dir).to_path_buf();
    create_parent(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let work = tempfile::Builder::new()
        .prefix(".sentinel-init-")
        .tempdir_in(&parent)
        .with_context(|| format!("creating a working folder in {}", parent.display()))?;
    let made = fill(work.path())?;
    no_one_else_writes(work.path())?;
    let kept = work.keep();
    if let Err(e) = std::fs::rename(&kept, dir) {
        let _ = std::fs::remove_dir_all(&kept);
        anyhow::bail!("moving the new folder into place at {}: {e}; nothing was written there, name another folder", dir.display());
    }
    Ok(made)
}

/// The folders above the new one, created 0755 whatever the umask (under umask 000 they were
/// 0777, and another user could have swapped the new folder for one of their own).
#[cfg(unix)]
fn create_parent(parent: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o755).create(parent)
}

#[cfg(not(unix))]
fn create_parent(parent: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(parent)
}

/// Takes the write bits of group and others off everything written, whatever the umask: the
/// public key, the config and the policies decide what runs, so no other user may swap them
/// (under umask 000 they were 0666 and 0777, and another user's signed version ran).
#[cfg(unix)]
fn no_one_else_writes(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path).with_context(|| format!("reading {}", path.display()))?;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode & !0o022))
            .with_context(|| format!("setting the permissions of {}", path.display()))?;
    }
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).with_context(|| format!("reading {}", path.display()))? {
            no_one_else_writes(&entry.with_context(|| format!("reading {}", path.display()))?.path())?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn no_one_else_writes(_: &Path) -> anyhow::Result<()> {
    Ok(())
}
