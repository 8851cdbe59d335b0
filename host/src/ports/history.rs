//! Where history comes from: a metrics source that can answer for a past window at once, one
//! reading (or why there is none) per step, as the live source would have read each minute.

use super::metrics::MetricsError;
use vocabulary::{Instant, Reading};

/// One step of history: its time and the reading, or why the live source would have had none.
pub type HistoryStep = (Instant, Result<Reading, MetricsError>);

/// Why a window of history could not be fetched at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HistoryError {
    /// Asking again later may succeed: a timeout, a refused connection, a server error.
    #[error("{0}")]
    Transient(String),
    /// Asking again will not help: the server refuses the query, or its answer is not one.
    #[error("{0}")]
    Refused(String),
}

#[async_trait::async_trait]
pub trait MetricsHistory: Send + Sync {
    /// What this source reads, for logs and messages (never a password).
    fn describe(&self) -> String;
    /// Everything that decides the answers (server, queries, labels), so that a fetch resumed
    /// later goes on only against the same questions.
    fn fingerprint(&self) -> String;
    /// The most steps one call may cover (the server's own limit per request).
    fn max_steps(&self) -> u64;
    /// One entry for every `step` seconds from `start` to `end`, both included, in time order.
    async fn steps(&self, start: Instant, end: Instant, step: u32) -> Result<Vec<HistoryStep>, HistoryError>;
}
