//! A duration setting within its bounds: the one check every timeout and interval key of the
//! configuration goes through, with the one message it gives.

use std::time::Duration;

/// `value` when it is within `[min, max]`, else the message naming both bounds.
pub fn duration_within(value: Duration, min: Duration, max: Duration) -> Result<Duration, String> {
    if value < min || value > max {
        let (min, max) = (sentinel_core::shown_duration::duration(min), sentinel_core::shown_duration::duration(max));
        return Err(format!("must be between {min} and {max}"));
    }
    Ok(value)
}
