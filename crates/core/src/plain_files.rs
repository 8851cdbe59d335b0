//! Files opened without trusting their path (docs/threat-model.md): never through a symbolic
//! link (`O_NOFOLLOW`), never blocking on a FIFO (`O_NONBLOCK` at the open; a regular file
//! ignores it), and used only when the opened file is a regular file. Reads are bounded, so a
//! link to `/dev/zero` or a huge file cannot fill the memory. For the files in a directory
//! others may write (the policy directory) and for the files the sentinel creates (0600).

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

fn flags() -> i32 {
    (rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32
}

fn regular(file: std::fs::File, path: &Path) -> std::io::Result<std::fs::File> {
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(std::io::Error::other(format!("{} is not a regular file (a FIFO, a device or a directory is never read)", path.display())))
    }
}

/// Opens `path` to append to it, created with mode 0600 when missing.
pub fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new().append(true).create(true).mode(0o600).custom_flags(flags()).open(path)?;
    regular(file, path)
}

/// Opens `path` to read it (a missing file is `NotFound`, as with `File::open`).
pub(crate) fn open_read(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new().read(true).custom_flags(flags()).open(path)?;
    regular(file, path)
}

/// Up to `max + 1` bytes of `path` from its start: more than `max` says the file is larger.
pub(crate) fn read_at_most(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = open_read(path)?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// All of `path`, which must be at most `limit` bytes.
pub(crate) fn read_whole(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let bytes = read_at_most(path, limit)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!("{} is larger than {limit} bytes, more than it may be", path.display())));
    }
    Ok(bytes)
}

/// The folder `path` is in: its parent, or `.` for a bare file name.
pub fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// The nearest folder of `folder` and its parents that exists, once a temporary file was made
/// and removed there: where a writer that creates `folder` would write. An error says what
/// could not be written.
pub fn nearest_writable_folder(folder: &Path) -> std::io::Result<std::path::PathBuf> {
    let existing = folder
        .ancestors()
        .map(|a| if a.as_os_str().is_empty() { Path::new(".") } else { a })
        .find(|a| a.is_dir())
        .unwrap_or(Path::new("/"))
        .to_path_buf();
    tempfile::NamedTempFile::new_in(&existing)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot write in {}: {e}", existing.display())))?;
    Ok(existing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn fifo(path: &Path) {
        assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
    }

    #[test]
    fn a_link_is_never_followed_and_a_fifo_never_waited_on() {
        let root = tempfile::tempdir().unwrap();
        let victim = root.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let link = root.path().join("log.jsonl");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(open_append(&link).is_err(), "a link is not followed");
        assert!(read_whole(&link, 100).is_err(), "a link is not followed");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        // Without O_NONBLOCK both opens would wait for the FIFO's other end, here for ever.
        let pipe = root.path().join("fifo");
        fifo(&pipe);
        assert!(read_whole(&pipe, 100).unwrap_err().to_string().contains("not a regular file"));
        assert!(open_append(&pipe).is_err());
        assert!(read_whole(Path::new("/dev/zero"), 100).unwrap_err().to_string().contains("not a regular file"));
    }

    #[test]
    fn new_files_are_0600_and_reads_are_bounded() {
        let root = tempfile::tempdir().unwrap();
        let fresh = root.path().join("fresh.jsonl");
        std::io::Write::write_all(&mut open_append(&fresh).unwrap(), b"12\n").unwrap();
        std::io::Write::write_all(&mut open_append(&fresh).unwrap(), b"3\n").unwrap();
        assert_eq!(std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(read_whole(&fresh, 5).unwrap(), b"12\n3\n");
        assert!(read_whole(&fresh, 4).unwrap_err().to_string().contains("larger than 4 bytes"));
        assert_eq!(read_at_most(&fresh, 2).unwrap(), b"12\n", "one byte past the limit, no more");
    }
}
