//! `Leadership` for the embedded store: an exclusive lock on the sibling file `<db>.lock`
//! (`flock` on Unix, `LockFileEx` on Windows), held by an open file handle for the whole tick.
//! The operating system drops it when the process dies, so a crashed sentinel never leaves a
//! stale lock behind. The file itself is left in place (deleting it would let two processes
//! lock two different files of the same name); it holds the holder's pid, for messages.

use sentinel_core::ports::leadership::{Leadership, Lease, LockError};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often a waiting `acquire` tries again.
pub const RETRY_EVERY: Duration = Duration::from_millis(100);

/// The leadership lock beside one database file.
#[derive(Debug, Clone)]
pub struct SqliteLock {
    path: PathBuf,
}

/// The held lock; dropping it releases the lock.
#[derive(Debug)]
pub struct SqliteLease {
    file: File,
    path: PathBuf,
}

impl Lease for SqliteLease {}

impl Drop for SqliteLease {
    fn drop(&mut self) {
        // Closing the handle releases the lock too; unlocking first makes it immediate even
        // if the handle were duplicated.
        if let Err(e) = self.file.unlock() {
            tracing::warn!(lock = %self.path.display(), error = %e, "releasing the leadership lock failed; it is released when the process exits");
        }
    }
}

impl SqliteLock {
    /// The lock for the store at `db_path`: the file `<db_path>.lock`. Nothing is touched
    /// until `acquire`.
    pub fn new(db_path: &Path) -> SqliteLock {
        let mut name = db_path.as_os_str().to_owned();
        name.push(".lock");
        SqliteLock { path: PathBuf::from(name) }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One attempt: the lease, or `None` when another handle holds the lock.
    fn try_acquire(&self) -> Result<Option<SqliteLease>, LockError> {
        let failed = |message: String| LockError::Failed { what: self.path.display().to_string(), message };
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                failed(format!("cannot create its directory {} ({e}); check the path and its permissions", parent.display()))
            })?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .map_err(|e| failed(format!("cannot open it ({e}); check the path and its permissions")))?;
        match file.try_lock() {
            Ok(()) => {
                note_holder(&file);
                Ok(Some(SqliteLease { file, path: self.path.clone() }))
            }
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => {
                Err(failed(format!("the file system refused the lock ({e}); put the database on a local file system")))
            }
        }
    }

    /// The lock file and, when it names one, the process holding it, for messages.
    fn describe_held(&self) -> String {
        let mut text = String::new();
        let holder = File::open(&self.path).and_then(|mut f| f.read_to_string(&mut text)).ok();
        match holder.and_then(|_| text.trim().parse::<u32>().ok()) {
            Some(pid) => format!("{} (held by process {pid})", self.path.display()),
            None => self.path.display().to_string(),
        }
    }
}

/// Writes this process's id into the locked file (best effort: it only improves messages).
fn note_holder(mut file: &File) {
    let written = file.set_len(0).and_then(|()| file.write_all(format!("{}\n", std::process::id()).as_bytes()));
    if let Err(e) = written {
        tracing::debug!(error = %e, "could not note the lock holder's pid");
    }
}

#[async_trait::async_trait]
impl Leadership for SqliteLock {
    async fn acquire(&self, wait: Option<Duration>) -> Result<Box<dyn Lease>, LockError> {
        // Opening and locking a local file takes microseconds: done inline, not on the
        // blocking pool.
        let started = std::time::Instant::now();
        loop {
            if let Some(lease) = self.try_acquire()? {
                return Ok(Box::new(lease));
            }
            let Some(wait) = wait else {
                return Err(LockError::Held { what: self.describe_held() });
            };
            let waited = started.elapsed();
            if waited >= wait {
                return Err(LockError::TimedOut { what: self.describe_held(), waited });
            }
            tokio::time::sleep(RETRY_EVERY.min(wait - waited)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock_in(dir: &tempfile::TempDir) -> SqliteLock {
        SqliteLock::new(&dir.path().join("nested/sentinel.db"))
    }

    #[tokio::test]
    async fn lock_file_sits_beside_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let lock = lock_in(&dir);
        assert_eq!(lock.path(), dir.path().join("nested/sentinel.db.lock"));
        let _lease = lock.acquire(None).await.unwrap();
        assert!(lock.path().exists(), "acquire creates the directory and the file");
    }

    #[tokio::test]
    async fn second_handle_is_refused_at_once_while_held() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (lock_in(&dir), lock_in(&dir));
        let _lease = first.acquire(None).await.unwrap();
        let started = std::time::Instant::now();
        let err = second.acquire(None).await.err().expect("held");
        assert!(started.elapsed() < Duration::from_millis(50));
        match &err {
            LockError::Held { what } => {
                assert!(what.contains("sentinel.db.lock"), "{what}");
                assert!(what.contains(&std::process::id().to_string()), "names the holder: {what}");
            }
            other => panic!("expected Held, got {other:?}"),
        }
        assert!(err.to_string().contains("--wait"), "says what to do: {err}");
        // The same handle cannot take it twice either: each acquire is a new file handle.
        assert!(matches!(first.acquire(None).await, Err(LockError::Held { .. })));
    }

    #[tokio::test]
    async fn waiting_times_out_while_held() {
        let dir = tempfile::tempdir().unwrap();
        let _lease = lock_in(&dir).acquire(None).await.unwrap();
        let started = std::time::Instant::now();
        let err = lock_in(&dir).acquire(Some(Duration::from_millis(350))).await.err().expect("times out");
        let elapsed = started.elapsed();
        match err {
            LockError::TimedOut { waited, .. } => assert!(waited >= Duration::from_millis(350), "{waited:?}"),
            other => panic!("expected TimedOut, got {other:?}"),
        }
        assert!(elapsed >= Duration::from_millis(350) && elapsed < Duration::from_secs(2), "{elapsed:?}");
    }

    #[tokio::test]
    async fn released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let lease = lock_in(&dir).acquire(None).await.unwrap();
        drop(lease);
        let again = lock_in(&dir).acquire(None).await.unwrap();
        drop(again);
    }

    #[tokio::test]
    async fn a_waiter_gets_the_lock_once_it_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let lease = lock_in(&dir).acquire(None).await.unwrap();
        let waiter = {
            let lock = lock_in(&dir);
            tokio::spawn(async move { lock.acquire(Some(Duration::from_secs(5))).await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(!waiter.is_finished(), "waits while held");
        drop(lease);
        let started = std::time::Instant::now();
        waiter.await.unwrap().unwrap();
        assert!(started.elapsed() < Duration::from_secs(1), "retries about every {RETRY_EVERY:?}");
    }

    /// Another process sees the lock (util-linux `flock -n` exits 1 while it is held).
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn another_process_sees_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let lock = lock_in(&dir);
        let other_process_locks =
            || std::process::Command::new("flock").arg("-n").arg(lock.path()).arg("true").status().map(|s| s.success());
        let lease = lock.acquire(None).await.unwrap();
        let Ok(while_held) = other_process_locks() else {
            eprintln!("skipped: no flock(1) on this machine");
            return;
        };
        assert!(!while_held, "another process must not get the lock while it is held");
        drop(lease);
        assert!(other_process_locks().unwrap(), "another process gets it once released");
    }
}
