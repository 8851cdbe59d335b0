//! The recorded trace: what a live sentinel stored, tick by tick, as a trace (docs/behaviour.md
//! §10.1). `sentinel replay --from-store`, `policy tune --from-store` and `policy export-trace`
//! read it, and the policy lifecycle replays the last day of it to try a version before it
//! decides: a pin or throttle-switch line wherever either changed, then the tick.

use super::TraceEvent;
use crate::ports::StoreError;
use crate::ports::memory::{MemoryStore, TickRecord};
use std::time::Duration;

/// The records of the last `window` before the newest one, oldest first (`recent_ticks`
/// returns newest first).
pub fn window(mut newest_first: Vec<(u64, TickRecord)>, window: Duration) -> Vec<TickRecord> {
    let Some(newest) = newest_first.first().map(|(_, r)| r.at) else { return Vec::new() };
    let since = newest - window.as_secs() as i64;
    newest_first.retain(|(_, r)| r.at > since);
    newest_first.reverse();
    newest_first.into_iter().map(|(_, r)| r).collect()
}

/// The store's records of the last `since` (minutes, and an hour's slack for gaps), oldest first.
pub async fn recent(memory: &dyn MemoryStore, since: Duration) -> Result<Vec<TickRecord>, StoreError> {
    let limit = u32::try_from(since.as_secs() / 60 + 60).unwrap_or(u32::MAX);
    Ok(window(memory.recent_ticks(limit).await?, since))
}

/// Records oldest first -> events in trace order.
pub fn events(records: &[TickRecord]) -> Vec<TraceEvent> {
    let mut events = Vec::new();
    let (mut pin, mut throttles) = (None, false);
    for r in records {
        if r.pin != pin {
            events.push(TraceEvent::Pin { at: r.at, pin: r.pin.clone() });
            pin = r.pin.clone();
        }
        if r.throttles_enabled != throttles {
            events.push(TraceEvent::Throttles { at: r.at, enabled: r.throttles_enabled });
            throttles = r.throttles_enabled;
        }
        events.push(TraceEvent::Tick { at: r.at, signal: r.signal.clone() });
    }
    events
}
