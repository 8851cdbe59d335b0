//! The sentinel's private state directory (`[policies] state_dir`): what only the sentinel
//! writes and what decides which code runs, the persisted policy state and the precompiled
//! artifacts. It lives outside the policy directory (which others write: new versions are
//! dropped there), is created with mode 0700, and is trusted only while it is owned by the
//! user the sentinel runs as and writable by nobody else.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why a path cannot be trusted as private.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotPrivate {
    /// The path could not be looked at or created.
    #[error("{path} cannot be created or read: {message}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What the system said.
        message: String,
    },
    /// The path is another kind of file than the one expected (a link is never followed).
    #[error("{path} is not a {expected} (a symbolic link or another kind of file is never trusted)")]
    Kind {
        /// The path.
        path: PathBuf,
        /// `directory` or `regular file`.
        expected: &'static str,
    },
    /// Another user owns the path.
    #[error("{path} is owned by uid {owner}, not by uid {me} that the sentinel runs as: `chown {me} {path}` or remove it")]
    Owner {
        /// The path.
        path: PathBuf,
        /// The uid that owns it.
        owner: u32,
        /// The uid the sentinel runs as.
        me: u32,
    },
    /// The path's group or others may write it.
    #[error("{path} is writable by its group or by others (mode {mode:o}): `chmod go-w {path}`")]
    Writable {
        /// The path.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// The user the sentinel runs as.
pub(crate) fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Checks that `path` (not followed if it is a link) is a regular file (`dir = false`) or a
/// directory owned by the sentinel's user and not writable by group or others.
pub fn check(path: &Path, dir: bool) -> Result<std::fs::Metadata, NotPrivate> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| NotPrivate::Io { path: path.into(), message: e.to_string() })?;
    let (ok, expected) = if dir { (meta.is_dir(), "directory") } else { (meta.is_file(), "regular file") };
    if !ok {
        return Err(NotPrivate::Kind { path: path.into(), expected });
    }
    let me = effective_uid();
    if meta.uid() != me {
        return Err(NotPrivate::Owner { path: path.into(), owner: meta.uid(), me });
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(NotPrivate::Writable { path: path.into(), mode });
    }
    Ok(meta)
}

/// The private directory at `path`, created (with its parents) with mode 0700 when missing,
/// then checked.
pub fn ensure(path: &Path) -> Result<PathBuf, NotPrivate> {
    if std::fs::symlink_metadata(path).is_err() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .map_err(|e| NotPrivate::Io { path: path.into(), message: e.to_string() })?;
        // `mode` is filtered by the umask; a private directory is 0700 whatever the umask.
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| NotPrivate::Io { path: path.into(), message: e.to_string() })?;
    }
    check(path, true)?;
    Ok(path.to_path_buf())
}

/// Writes `bytes` to `path` atomically (a private temporary file renamed over it), mode 0600.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new().permissions(std::fs::Permissions::from_mode(0o600)).tempfile_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_directory_is_0700_whatever_the_umask_and_a_shared_one_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b/state");
        ensure(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = ensure(&dir).unwrap_err();
        assert!(matches!(err, NotPrivate::Writable { mode: 0o777, .. }), "{err}");
        assert!(err.to_string().contains("chmod go-w"), "says what to do: {err}");
    }

    #[test]
    fn a_link_is_never_trusted_as_a_file_or_a_directory() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("real");
        std::fs::write(&target, b"x").unwrap();
        std::os::unix::fs::symlink(&target, root.path().join("link")).unwrap();
        assert!(matches!(check(&root.path().join("link"), false), Err(NotPrivate::Kind { .. })));
        assert!(check(&target, false).is_ok());
        write_atomically(&root.path().join("w"), b"y").unwrap();
        assert_eq!(std::fs::metadata(root.path().join("w")).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
