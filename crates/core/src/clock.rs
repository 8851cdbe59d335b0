//! The wall clock, read here only. Decisions never read it: each tick's `now` is passed in as
//! data (docs/behaviour.md §4), so a replay decides exactly as the live minute did.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The wall clock, in whole seconds since the Unix epoch (0 before 1970).
pub fn now_seconds() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The wall clock, in seconds with fractions since the Unix epoch (for metrics' timestamps).
pub(crate) fn now_fractional() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// The current minute (the wall clock rounded down to the minute).
pub fn current_minute() -> i64 {
    now_seconds().div_euclid(60) * 60
}

/// How long until the next minute boundary.
pub fn until_next_minute() -> Duration {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let into = now.as_millis() % 60_000;
    Duration::from_millis((60_000 - into) as u64)
}
