//! Where readings come from. A source returns one minute's reading or says why it could not.

use vocabulary::{Instant, Reading};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricsError {
    #[error("metrics source unavailable: {0}")]
    Unavailable(String),
    #[error("metrics read timed out after {0:?}")]
    Timeout(std::time::Duration),
    #[error("malformed metric {field}: {message}")]
    Malformed { field: String, message: String },
    #[error("no reading for this minute: {0}")]
    NoData(String),
}

#[async_trait::async_trait]
pub trait MetricsSource: Send + Sync {
    /// What this source reads, for logs and `sentinel check`.
    fn describe(&self) -> String;
    /// The reading for the minute ending at `now`.
    async fn read(&self, now: Instant) -> Result<Reading, MetricsError>;
    /// For recorded or simulated sources, the first and last minute worth running (a
    /// sped-up run starts at the first and, for a recording, stops after the last).
    fn span(&self) -> Option<(Instant, Instant)> {
        None
    }
}
