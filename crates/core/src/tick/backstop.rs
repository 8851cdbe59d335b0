//! The tick's guard around a call that bounds itself. A publisher or a stage controller gives up
//! after the configured timeout by itself and cleans up when it does (Redis drops the kept
//! connection); a second timer of the same length around it used to win the race now and then
//! and skip that cleanup. This guard waits a little longer, so it only stops a call that breaks
//! that promise, and the tick still ends on time.

use std::future::Future;
use std::time::Duration;

/// How long past its own timeout a call may run before the tick stops it.
pub const SLACK: Duration = Duration::from_secs(2);

/// Runs `call`, whose own timeout is `limit`; `Err(waited)` when it ran past `limit + SLACK`.
pub async fn within<T>(limit: Duration, call: impl Future<Output = T>) -> Result<T, Duration> {
    let waited = limit + SLACK;
    tokio::time::timeout(waited, call).await.map_err(|_| {
        tracing::error!(?limit, ?waited, "a call did not give up within its own timeout; the tick stopped it");
        waited
    })
}
