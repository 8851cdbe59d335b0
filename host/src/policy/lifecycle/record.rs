//! The store's tick records as trace events, for `policy export-trace` (and the replay from
//! the record): a pin or throttle-switch line wherever it changed, then the tick.

use crate::ports::memory::TickRecord;
use crate::trace::TraceEvent;

/// Records oldest first -> events in trace order.
pub fn record_events(records: &[TickRecord]) -> Vec<TraceEvent> {
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
