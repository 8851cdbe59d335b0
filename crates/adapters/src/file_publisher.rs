//! The embedded publisher: the state document as a JSON file, written atomically (a temp file
//! in the same folder, synced, then renamed over the old one), so a reader never sees half.

use sentinel_core::ports::publisher::{Channel, PublishError, Publisher, StateDocument};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The embedded publisher for one channel: writes the state document as pretty JSON to a file,
/// atomically, creating its folder when missing.
pub struct FilePublisher {
    channel: Channel,
    path: PathBuf,
}

impl FilePublisher {
    /// A publisher for `channel` writing the document to `path`.
    pub fn new(channel: Channel, path: &Path) -> FilePublisher {
        FilePublisher { channel, path: path.to_path_buf() }
    }

    fn write(&self, document: &StateDocument) -> std::io::Result<()> {
        let dir = sentinel_core::plain_files::folder_of(&self.path);
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        serde_json::to_writer_pretty(&mut tmp, document)?;
        tmp.write_all(b"\n")?;
        tmp.as_file().sync_all()?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl Publisher for FilePublisher {
    fn channel(&self) -> Channel {
        self.channel
    }

    fn target(&self) -> String {
        format!("file {}", self.path.display())
    }

    async fn publish(&self, document: &StateDocument) -> Result<(), PublishError> {
        self.write(document).map_err(|e| PublishError {
            channel: self.channel,
            target: self.target(),
            message: format!("{e} (check that the folder exists and is writable)"),
        })
    }

    /// A temporary file made and removed in the document's folder (which a publish creates
    /// when missing, so a missing folder whose nearest existing parent is writable passes).
    async fn reach(&self) -> Result<String, PublishError> {
        let folder = sentinel_core::plain_files::folder_of(&self.path);
        let existing = sentinel_core::plain_files::nearest_writable_folder(folder).map_err(|e| PublishError {
            channel: self.channel,
            target: self.target(),
            message: format!("{e} (check that the folder exists and is writable by this user)"),
        })?;
        Ok(if existing == folder {
            format!("wrote and removed a temporary file in {}", folder.display())
        } else {
            format!(
                "{} does not exist yet; the first publish creates it in {}, where this user may write",
                folder.display(),
                existing.display()
            )
        })
    }
}

/// Prints the document as one JSON line on stdout.
pub struct StdoutPublisher {
    channel: Channel,
}

impl StdoutPublisher {
    /// A publisher for `channel` printing each document on stdout.
    pub fn new(channel: Channel) -> StdoutPublisher {
        StdoutPublisher { channel }
    }
}

#[async_trait::async_trait]
impl Publisher for StdoutPublisher {
    fn channel(&self) -> Channel {
        self.channel
    }

    fn target(&self) -> String {
        "stdout".into()
    }

    async fn publish(&self, document: &StateDocument) -> Result<(), PublishError> {
        let line = serde_json::to_string(document).map_err(|e| PublishError {
            channel: self.channel,
            target: self.target(),
            message: e.to_string(),
        })?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").and_then(|_| out.flush()).map_err(|e| PublishError {
            channel: self.channel,
            target: self.target(),
            message: e.to_string(),
        })
    }

    async fn reach(&self) -> Result<String, PublishError> {
        Ok("the document goes to this process's standard output: nothing to reach".into())
    }
}
