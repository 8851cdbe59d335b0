//! Only one sentinel decides at a time: a lease held for the whole tick.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another sentinel holds the lock {what}; this one will not decide or publish (use --wait to wait for it)")]
    Held { what: String },
    #[error("waited {waited:?} for the lock {what}, still held by another sentinel")]
    TimedOut { what: String, waited: Duration },
    #[error("cannot take the lock {what}: {message}")]
    Failed { what: String, message: String },
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

#[async_trait::async_trait]
pub trait Leadership: Send + Sync {
    /// Takes the lease now, or fails with `Held`; with `wait`, retries until it is free or the
    /// wait is over.
    async fn acquire(&self, wait: Option<Duration>) -> Result<Box<dyn Lease>, LockError>;
}
