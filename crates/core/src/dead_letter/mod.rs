//! The dead letters (docs/behaviour.md §11.10): a tick that fails leaves, in a local file, what
//! it decided and why it failed, so that nothing it knew is lost with the failure; the next
//! tick that succeeds appends a line naming the failures it ends. The file is JSON lines, one
//! `failed` or `recovered` record each, appended and synced; it is local on purpose, since the
//! shared store may be the part that failed. One sentinel process writes a file (ids are
//! assigned in memory); the ticks call it off the async runtime (`spawn_blocking`). At 10 MiB it is moved to `<path>.1` (replacing the
//! older one) and a new file begins. `sentinel failures` lists it.

use crate::ports::memory::{ChannelOutcome, PolicyRef};
use crate::sync::Lock;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use vocabulary::{Cause, Factors, ProtectionState};

/// Past this size the file is rotated.
const ROTATE_BYTES: u64 = 10 << 20;

/// Why a tick failed: the label of `sentinel_tick_failures_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureReason {
    /// The leadership lock could not be taken (its store is unreachable), or another sentinel held it.
    Lock,
    /// The tick did not finish within its deadline and was dropped wherever it had got to.
    Deadline,
    /// The policy failed, so nothing was decided or published that minute.
    Policy,
    /// The store could not commit the tick (unreachable, unreadable, or superseded by another
    /// sentinel's tick), so nothing was published.
    Store,
    /// Both channels refused the document.
    Channels,
}

impl FailureReason {
    /// Every reason, so that the failure counter can show each one at 0 from the start.
    pub const ALL: [FailureReason; 5] =
        [FailureReason::Lock, FailureReason::Deadline, FailureReason::Policy, FailureReason::Store, FailureReason::Channels];

    /// The reason's label in `sentinel_tick_failures_total{reason}` and in the file (the serde
    /// name): `lock`, `deadline`, `policy`, `store` or `channels`.
    pub fn name(self) -> &'static str {
        match self {
            FailureReason::Lock => "lock",
            FailureReason::Deadline => "deadline",
            FailureReason::Policy => "policy",
            FailureReason::Store => "store",
            FailureReason::Channels => "channels",
        }
    }
}

/// What the failed tick had decided, when it got that far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecidedBeforeFailure {
    /// The protection state the tick decided.
    pub state: ProtectionState,
    /// The protection state in force before this tick.
    pub previous: ProtectionState,
    /// Why the decision is what it is (the decision's cause, docs/behaviour.md §5.7).
    pub cause: Cause,
    /// The workload factors of the decided state, as they would have been published.
    pub factors: Factors,
    /// The decision's one-line explanation, for a person.
    pub explanation: String,
    /// The policy version that decided.
    pub policy: PolicyRef,
}

/// One failed tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    /// The entry's number in the dead-letter file, counting from 1 and continuing across
    /// restarts; assigned by `DeadLetters::record`, which replaces whatever is given here.
    pub id: u64,
    /// The minute the tick was deciding (RFC 3339).
    pub minute: String,
    /// When the failure was recorded (wall clock, RFC 3339).
    pub failed_at: String,
    /// Why the tick failed, as counted in `sentinel_tick_failures_total{reason}`.
    pub reason: FailureReason,
    /// The tick's error message, as it was logged.
    pub error: String,
    /// What the tick had decided; `None` when it failed before the policy decided.
    pub decided: Option<DecidedBeforeFailure>,
    /// The stored tick's sequence, when the decision was stored before the failure.
    pub sequence: Option<u64>,
    /// Each channel's outcome, when publication was tried.
    #[serde(default)]
    pub channels: Vec<ChannelOutcome>,
}

/// The first tick to succeed after failures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// The dead letters it ends.
    pub ends: Vec<u64>,
    /// The store sequence of the successful tick that ends them.
    pub sequence: u64,
    /// The minute that tick decided for (RFC 3339, its document's `decided_at`).
    pub minute: String,
    /// When the recovery was recorded (wall clock, RFC 3339).
    pub recovered_at: String,
}

/// One line of the dead-letter file, told apart by its `kind`: `failed` or `recovered`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Entry {
    /// A tick that failed: its dead letter.
    Failed(DeadLetter),
    /// A tick that succeeded after failures, naming the dead letters it ends.
    Recovered(Recovery),
}

/// Why the dead-letter file could not be written or read. It never fails a tick: the tick logs
/// it, and the failure is then only in the log.
#[derive(Debug, thiserror::Error)]
pub enum DeadLetterError {
    /// Appending a line failed: the folder could not be created, the full file could not be
    /// rotated, or the file could not be opened (a link or a folder in its place), written or
    /// synced.
    #[error(
        "cannot write the dead-letter file {path}: {source}; the failure is only in the log. Check the folder exists and is writable, and the disk has room"
    )]
    Write {
        /// The dead-letter file being appended to.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A file that exists could not be read, or is over 40 MiB (a missing file reads as empty).
    #[error("cannot read the dead-letter file {path}: {source}; check its permissions, or point `dead_letter` in the config elsewhere")]
    Read {
        /// The file that could not be read: the current one or the rotated `<path>.1`.
        path: PathBuf,
        /// The operating system's error, or the size limit's.
        source: std::io::Error,
    },
}

/// A line of the file that is not a record (a crash mid-write, an edit by hand): skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct UnreadableLine {
    /// The file holding it: the current one or the rotated `<path>.1`.
    pub file: PathBuf,
    /// Its line number in that file, counting from 1.
    pub line: usize,
    /// Why it is not a record: the JSON parser's error.
    pub message: String,
}

/// Everything the files hold, oldest first, and the lines that could not be read.
#[derive(Debug, Default)]
pub struct Contents {
    /// Every record, in the order written: the rotated file's, then the current one's.
    pub entries: Vec<Entry>,
    /// The lines skipped because they are not records, in the same order.
    pub unreadable: Vec<UnreadableLine>,
}

impl Contents {
    /// The dead letters with the recovery that ended each (if any), newest first.
    pub fn failures(&self) -> Vec<(&DeadLetter, Option<&Recovery>)> {
        let mut out: Vec<(&DeadLetter, Option<&Recovery>)> = Vec::new();
        for entry in &self.entries {
            match entry {
                Entry::Failed(letter) => out.push((letter, None)),
                Entry::Recovered(recovery) => {
                    for (letter, ended) in out.iter_mut() {
                        if ended.is_none() && recovery.ends.contains(&letter.id) {
                            *ended = Some(recovery);
                        }
                    }
                }
            }
        }
        out.reverse();
        out
    }

    /// The ids of dead letters no recovery has ended yet, oldest first.
    pub fn open(&self) -> Vec<u64> {
        let mut open: Vec<u64> = self.failures().iter().filter(|(_, r)| r.is_none()).map(|(l, _)| l.id).collect();
        open.reverse();
        open
    }

    fn last_id(&self) -> u64 {
        self.entries.iter().filter_map(|e| if let Entry::Failed(l) = e { Some(l.id) } else { None }).max().unwrap_or(0)
    }
}

/// Whether the file is non-empty and its last byte is not a line's end.
fn ends_torn(path: &Path) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match crate::plain_files::open_read(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// The rotated older file of `path`.
pub fn rotated(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".1");
    PathBuf::from(name)
}

/// Reads the rotated file, then the current one; missing files are empty.
pub fn read(path: &Path) -> Result<Contents, DeadLetterError> {
    let mut contents = Contents::default();
    for file in [rotated(path), path.to_path_buf()] {
        let text = match crate::plain_files::read_whole(&file, 4 * ROTATE_BYTES) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(DeadLetterError::Read { path: file, source }),
        };
        for (index, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            match serde_json::from_str::<Entry>(line) {
                Ok(entry) => contents.entries.push(entry),
                Err(e) => contents.unreadable.push(UnreadableLine { file: file.clone(), line: index + 1, message: e.to_string() }),
            }
        }
    }
    Ok(contents)
}

/// The file a sentinel appends to, with the dead letters no recovery has ended yet.
#[derive(Debug)]
pub struct DeadLetters {
    path: PathBuf,
    state: Lock<Open>,
}

#[derive(Debug)]
struct Open {
    next_id: u64,
    open: Vec<u64>,
}

impl DeadLetters {
    /// Opens `path` (created at the first failure), picking up the failures a previous run
    /// left open. An unreadable file is logged and treated as empty: it must never stop a tick.
    pub fn open(path: PathBuf) -> DeadLetters {
        let contents = read(&path).unwrap_or_else(|e| {
            tracing::error!("{e}; new dead letters are appended to it");
            Contents::default()
        });
        for bad in &contents.unreadable {
            tracing::warn!(file = %bad.file.display(), line = bad.line, "a dead-letter line is not a record and is skipped: {}", bad.message);
        }
        let state = Open { next_id: contents.last_id() + 1, open: contents.open() };
        DeadLetters { path, state: Lock::new("dead letters open", state) }
    }

    /// The file this sentinel appends to (`dead_letter` in the config), for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether failures wait for a success to end them.
    pub fn has_open(&self) -> bool {
        !self.state.lock().open.is_empty()
    }

    /// Appends a failed tick; its id is assigned here.
    pub fn record(&self, mut letter: DeadLetter) -> Result<u64, DeadLetterError> {
        let mut state = self.state.lock();
        // The id is spent even when the write fails: a partly written line never shares it.
        let id = state.next_id;
        state.next_id += 1;
        letter.id = id;
        self.append(&Entry::Failed(letter))?;
        state.open.push(id);
        Ok(id)
    }

    /// After a successful tick: the open dead letters it ends (appending the recovery line),
    /// or none. On a write error they stay open, for the next success to try again.
    pub fn recover(&self, sequence: u64, minute: String, recovered_at: String) -> Result<Vec<u64>, DeadLetterError> {
        let mut state = self.state.lock();
        if state.open.is_empty() {
            return Ok(Vec::new());
        }
        let ends = state.open.clone();
        self.append(&Entry::Recovered(Recovery { ends: ends.clone(), sequence, minute, recovered_at }))?;
        state.open.clear();
        Ok(ends)
    }

    fn append(&self, entry: &Entry) -> Result<(), DeadLetterError> {
        let failed = |source| DeadLetterError::Write { path: self.path.clone(), source };
        let mut line = serde_json::to_string(entry).expect("a dead letter serializes");
        line.push('\n');
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        if std::fs::metadata(&self.path).is_ok_and(|m| m.len() + line.len() as u64 > ROTATE_BYTES) {
            std::fs::rename(&self.path, rotated(&self.path)).map_err(failed)?;
        }
        if ends_torn(&self.path).map_err(failed)? {
            // A crash mid-write left a line without its end: the next record starts on its own line.
            line.insert(0, '\n');
        }
        // Never through a planted link, and private (0600) when created: the folder may be shared.
        let mut file = crate::plain_files::open_append(&self.path).map_err(failed)?;
        file.write_all(line.as_bytes()).map_err(failed)?;
        file.sync_data().map_err(failed)
    }
}

#[cfg(test)]
mod tests;
