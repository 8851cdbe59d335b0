//! What survives a restart: the active version, the versions active before it (for
//! `policy rollback`), and the versions found unhealthy. One small JSON file in the
//! sentinel's private state directory (never in the policy directory, which others write: a
//! state file there could bring an older version back), replaced atomically, mode 0600.
//!
//! Every change is a [`update`]: read, change and write under an exclusive lock on
//! `policy-state.lock` beside the file, so that a running sentinel and `sentinel policy
//! activate|rollback` never lose each other's writes. A file that cannot be read is an error
//! and stays as it is: it is never replaced by an empty state.

use super::private_dir;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The state's file name, in the private state directory.
pub(crate) const STATE_FILE: &str = "policy-state.json";
/// Held (exclusively) by whoever changes the state file.
pub(crate) const LOCK_FILE: &str = "policy-state.lock";
/// Where earlier releases kept the state, in the policy directory: ignored (and said so).
pub(crate) const FORMER_STATE_FILE: &str = "sentinel-policy-state.json";

/// The persisted choice of versions: which one is active, which were active before it, and which
/// were found unhealthy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyState {
    /// The version the sentinel runs (none: not chosen yet; the configured one is tried first).
    pub active: Option<String>,
    /// Previously active versions, oldest first.
    #[serde(default)]
    pub history: Vec<String>,
    /// Version -> why it was marked unhealthy (a trap at runtime, a refused activation).
    #[serde(default)]
    pub unhealthy: BTreeMap<String, String>,
}

/// Why the policy state could not be read or changed. Each message is whole (it names the file
/// and the fix), so it is shown as it is.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The state directory exists but cannot be trusted as private (not a directory, another
    /// owner, writable by others, or unreadable).
    #[error("the policy state directory (policies.state_dir) is not private: {0}")]
    DirNotPrivate(private_dir::NotPrivate),
    /// The state file is not a private regular file (a link, another owner, writable by others).
    #[error("the policy state file is not trusted: {0}")]
    FileNotTrusted(private_dir::NotPrivate),
    /// The state file was read but is not a policy state (not JSON, or unknown fields).
    #[error("policy state {path} is unreadable: {message}")]
    Unreadable {
        /// The state file.
        path: PathBuf,
        /// The parser's error.
        message: String,
    },
    /// The state file could not be read.
    #[error("cannot read policy state {path}: {message}")]
    Read {
        /// The state file.
        path: PathBuf,
        /// The read's error.
        message: String,
    },
    /// Before a write, the state directory could not be created (mode 0700) or is not private.
    #[error("the policy state directory (policies.state_dir): {0}")]
    Dir(private_dir::NotPrivate),
    /// The state file could not be replaced with the new state.
    #[error("cannot write policy state in {dir}: {message}")]
    Write {
        /// The state directory.
        dir: PathBuf,
        /// The write's error.
        message: String,
    },
    /// The lock file beside the state could not be opened or created.
    #[error("cannot open the policy state lock {path}: {message}")]
    OpenLock {
        /// The lock file.
        path: PathBuf,
        /// The open's error.
        message: String,
    },
    /// The exclusive lock on the lock file could not be taken.
    #[error("cannot lock {path}: {message}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The lock's error.
        message: String,
    },
    /// An [`update`] found the saved state unreadable or untrusted and left it as it was.
    #[error("the policy state was not changed: fix or remove {path} (the sentinel then starts from the configured version): {cause}")]
    NotChanged {
        /// The state file.
        path: PathBuf,
        /// Why it could not be loaded.
        cause: Box<StateError>,
    },
}

/// The state file of the private `state_dir`: `<state_dir>/policy-state.json`.
pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(STATE_FILE)
}

impl PolicyState {
    /// The saved state in the private `state_dir`; none saved yet is the default. An
    /// unreadable file, or a directory or file that others could have written, is an error
    /// (it names the path and the fix) rather than silently trusting or forgetting it.
    pub fn load(state_dir: &Path) -> Result<PolicyState, StateError> {
        let p = path(state_dir);
        if std::fs::symlink_metadata(state_dir).is_err() {
            return Ok(PolicyState::default());
        }
        private_dir::check(state_dir, true).map_err(StateError::DirNotPrivate)?;
        if std::fs::symlink_metadata(&p).is_err() {
            return Ok(PolicyState::default());
        }
        private_dir::check(&p, false).map_err(StateError::FileNotTrusted)?;
        match std::fs::read_to_string(&p) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| StateError::Unreadable { path: p, message: e.to_string() }),
            Err(e) => Err(StateError::Read { path: p, message: e.to_string() }),
        }
    }

    /// Saves into the private `state_dir` (created 0700 when missing). Changes go through
    /// [`update`], which holds the lock; this writes whatever it is given.
    pub fn save(&self, state_dir: &Path) -> Result<(), StateError> {
        let dir = private_dir::ensure(state_dir).map_err(StateError::Dir)?;
        let text = serde_json::to_string_pretty(self).expect("a policy state (strings and maps of strings) serializes") + "\n";
        private_dir::write_atomically(&path(&dir), text.as_bytes())
            .map_err(|e| StateError::Write { dir: dir.clone(), message: e.to_string() })?;
        Ok(())
    }

    /// Records that `version` failed (a trap during a tick, a refused activation).
    pub fn mark_unhealthy(&mut self, version: &str, why: String) {
        self.unhealthy.insert(version.to_string(), why);
    }

    /// Records `version` as active; the one before goes onto the history.
    pub fn activated(&mut self, version: &str) {
        if let Some(previous) = self.active.take()
            && previous != version
        {
            self.history.retain(|v| v != &previous);
            self.history.push(previous);
        }
        self.history.retain(|v| v != version);
        self.unhealthy.remove(version);
        self.active = Some(version.to_string());
        let keep = self.history.len().saturating_sub(20);
        self.history.drain(..keep);
    }

    /// The newest previous version that is not unhealthy.
    pub fn previous(&self) -> Option<&str> {
        self.history.iter().rev().map(String::as_str).find(|v| !self.unhealthy.contains_key(*v))
    }
}

/// Applies `change` to the saved state and saves the result, holding the exclusive lock on
/// `LOCK_FILE` from the read to the write (blocking while another writer holds it). Returns
/// the state as saved. An unreadable or untrusted state file is an error, and nothing is written.
pub fn update(state_dir: &Path, change: impl FnOnce(&mut PolicyState)) -> Result<PolicyState, StateError> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = private_dir::ensure(state_dir).map_err(StateError::Dir)?;
    let lock_path = dir.join(LOCK_FILE);
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_path)
        .map_err(|e| StateError::OpenLock { path: lock_path.clone(), message: e.to_string() })?;
    lock.lock().map_err(|e| StateError::Lock { path: lock_path.clone(), message: e.to_string() })?;
    let mut state = PolicyState::load(&dir).map_err(|e| StateError::NotChanged { path: path(&dir), cause: Box::new(e) })?;
    change(&mut state);
    state.save(&dir)?;
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activation_pushes_the_previous_version_onto_the_history() {
        let mut s = PolicyState::default();
        s.activated("1.0.0");
        s.activated("2.0.0");
        s.activated("3.0.0");
        assert_eq!(s.active.as_deref(), Some("3.0.0"));
        assert_eq!(s.history, ["1.0.0", "2.0.0"]);
        s.unhealthy.insert("2.0.0".into(), "trapped".into());
        assert_eq!(s.previous(), Some("1.0.0"));
    }

    #[test]
    fn the_state_survives_a_save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(PolicyState::load(dir.path()).unwrap(), PolicyState::default());
        let mut s = PolicyState::default();
        s.activated("1.0.0");
        s.save(dir.path()).unwrap();
        assert_eq!(PolicyState::load(dir.path()).unwrap(), s);
    }

    #[test]
    fn concurrent_updates_are_never_lost() {
        let dir = tempfile::tempdir().unwrap();
        let writers: Vec<_> = (0..8)
            .map(|w| {
                let dir = dir.path().to_path_buf();
                std::thread::spawn(move || {
                    for i in 0..25 {
                        update(&dir, |s| s.mark_unhealthy(&format!("{w}.{i}.0"), "test".into())).unwrap();
                    }
                })
            })
            .collect();
        writers.into_iter().for_each(|w| w.join().unwrap());
        assert_eq!(PolicyState::load(dir.path()).unwrap().unhealthy.len(), 200, "every writer's change is kept");
    }

    #[test]
    fn an_unreadable_state_is_an_error_and_stays_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        update(dir.path(), |s| s.activated("1.0.0")).unwrap();
        private_dir::write_atomically(&path(dir.path()), b"{ not json").unwrap();
        let err = update(dir.path(), |s| s.activated("2.0.0")).unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("was not changed: fix or remove") && text.contains(STATE_FILE), "{text}");
        assert_eq!(std::fs::read(path(dir.path())).unwrap(), b"{ not json");
    }
}
