//! A minute is decided once. Under the leadership lock, before gathering anything, the tick
//! looks at the newest tick record: when it is for this very instant, another sentinel (or an
//! earlier run of this one, perhaps killed between its commit and its publication) already
//! decided it, so this tick publishes that record's document again, same sequence and same
//! content, instead of deciding a second time. That makes racing replicas decide exactly once
//! per minute and makes a rerun tick idempotent (docs/behaviour.md §11.6).
//!
//! The same holds when the newest record is for a *later* instant: a sentinel that fell behind
//! (it waited for the lock while another decided the next minute, or its clock is late) must
//! not decide an older minute after a newer one, which would decide that minute twice and feed
//! the memory a step back in time. It publishes the newest record again: the state in force.

use super::{Sentinel, TickError, TickReport, publish};
use crate::ports::memory::{MemoryStore, TickRecord};
use std::time::Duration;

/// The newest tick record, whatever its instant: when it is for `now` or later, the tick
/// publishes it again; otherwise its sequence is the one the tick's commit must follow (the
/// store refuses the commit if another tick was committed meanwhile). A store that cannot answer
/// is no record: the tick then decides, and its own commit reports the store.
pub(crate) async fn newest_tick(memory: &dyn MemoryStore, limit: Duration) -> Result<Option<(u64, TickRecord)>, String> {
    match tokio::time::timeout(limit, memory.recent_ticks(1)).await {
        Ok(Ok(newest)) => Ok(newest.into_iter().next()),
        Ok(Err(e)) => Err(format!("could not look for an earlier decision of this minute: {e}")),
        Err(_) => Err(format!("looking for an earlier decision of this minute timed out after {limit:?}")),
    }
}

/// Publishes the recorded document of tick `sequence` again on both channels.
pub(crate) async fn republish(s: &Sentinel, sequence: u64, record: TickRecord, mut notes: Vec<String>) -> Result<TickReport, TickError> {
    // Decided well ahead of the wall clock (racing replicas and a late clock are a minute or two
    // apart; a simulated run writes up to hours ahead): say why nothing is decided, and what to do.
    let minutes_ahead = (record.at - crate::clock::now_seconds()) / 60;
    if minutes_ahead > 5 {
        notes.push(format!(
            "this store already holds a decision for {}, {minutes_ahead} min ahead of the wall clock, so this tick decided nothing and published that decision again; \
             a simulated run (sentinel run --speed) on this store usually wrote it, and until that minute passes no tick here decides (a pin set now waits too). \
             Give simulated runs a store of their own (without --config they use sentinel-state/simulated/), or move this store aside",
            crate::instants::format_rfc3339(record.at)
        ));
    }
    let document = publish::recorded_document(sequence, &record);
    let outcomes = publish::publish_both(s.ports.cache.as_ref(), s.ports.parameter.as_ref(), s.settings.publish_timeout, &document).await;
    if let Err(e) = s.ports.memory.record_publication(sequence, &outcomes).await {
        notes.push(format!("could not record the publication outcome: {e}"));
    }
    // The metrics show the minute in force (a replica that lost the lock shows the holder's
    // decision, not its own last one), and count no change: this sentinel decided nothing.
    s.observe_tick(&record.signal, &record.decision, record.pin.as_ref(), &outcomes, record.at).await;
    let report = TickReport {
        sequence,
        reading: super::reading_of(&record.signal),
        pin: record.pin,
        decision: record.decision,
        document,
        outcomes,
        expiry_audit: None,
        stage_failures: Vec::new(),
        notes,
        republished: true,
        recovers: Vec::new(),
    };
    super::conclude(report)
}
