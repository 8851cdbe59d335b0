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
    /// The server refuses a request this large: one over fewer steps may pass.
    #[error("{0}")]
    TooLarge(String),
    /// Asking again will not help: the server refuses the query, or its answer is not one.
    #[error("{0}")]
    Refused(String),
}

/// The times of a window's steps: every `step` seconds from `start` to `end`, both included.
pub fn step_times(start: Instant, end: Instant, step: u32) -> impl Iterator<Item = Instant> {
    let step = Instant::from(step.max(1));
    (0..).map(move |i| start + i * step).take_while(move |at| *at <= end)
}

/// A metrics source asked for a past window at once, for `sentinel trace fetch` (Prometheus or
/// CloudWatch): each step must be what the live source would have read at that minute, the
/// same failed reads included. A failure of the whole request is a `HistoryError`.
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

#[cfg(test)]
mod tests {
    use super::step_times;

    #[test]
    fn a_windows_steps_include_both_ends_and_an_empty_window_has_none() {
        assert_eq!(step_times(1_000, 1_180, 60).collect::<Vec<_>>(), [1_000, 1_060, 1_120, 1_180]);
        assert_eq!(step_times(1_000, 1_179, 60).collect::<Vec<_>>(), [1_000, 1_060, 1_120]);
        assert_eq!(step_times(1_000, 1_000, 60).collect::<Vec<_>>(), [1_000]);
        assert_eq!(step_times(1_000, 999, 60).count(), 0);
    }
}
