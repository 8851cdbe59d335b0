//! Only one sentinel decides at a time: a lease held for the whole tick.

use std::time::Duration;

/// Why the leadership lock was not taken: the tick then decides, stores and publishes nothing.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another sentinel holds the lock, and this one was not asked to wait for it.
    #[error("another sentinel holds the lock {what}; this one will not decide or publish (use --wait to wait for it)")]
    Held {
        /// The lock as messages name it, with its holder (a process id or a session) when known:
        /// the lock file's path, or `pg_advisory_lock(KEY) on host:port/db`.
        what: String,
    },
    /// Another sentinel still held the lock when the wait for it ran out.
    #[error("waited {waited:?} for the lock {what}, still held by another sentinel")]
    TimedOut {
        /// The lock as messages name it, with its holder (a process id or a session) when known:
        /// the lock file's path, or `pg_advisory_lock(KEY) on host:port/db`.
        what: String,
        /// How long this sentinel waited.
        waited: Duration,
    },
    /// The lock could not be tried at all: its file cannot be opened or locked, or the
    /// PostgreSQL server cannot be reached or refuses the call.
    #[error("cannot take the lock {what}: {message}")]
    Failed {
        /// The lock as messages name it: the lock file's path, or
        /// `pg_advisory_lock(KEY) on host:port/db`.
        what: String,
        /// What failed, as the file system or the server said, with what to do when known.
        message: String,
    },
}

/// Held while the tick runs; released when dropped.
pub trait Lease: Send + 'static {
    /// Gives the lease back and returns once the next holder can take it. Dropping a lease
    /// releases it too, but may finish in the background: a tick calls this, so that its own
    /// lease can never stand in the way of its next minute.
    fn release(self: Box<Self>) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(async move { drop(self) })
    }
}

/// The lock that lets only one sentinel decide at a time: a lock file beside the SQLite store, or
/// a PostgreSQL advisory lock kept as a lease. A tick takes it before anything else and holds
/// it until it ends.
#[async_trait::async_trait]
pub trait Leadership: Send + Sync {
    /// Takes the lease now, or fails with `Held`; with `wait`, retries until it is free or the
    /// wait is over.
    async fn acquire(&self, wait: Option<Duration>) -> Result<Box<dyn Lease>, LockError>;
}
