//! A failed tick (docs/behaviour.md §11.10): counted by reason, and kept as a dead letter with
//! what it had decided, stored and published before it failed; the next tick that succeeds
//! names the dead letters it ends.

use super::{Sentinel, TickError, TickReport};
use crate::dead_letter::{DeadLetter, DecidedBeforeFailure, FailureReason};
use crate::instants::format_rfc3339;
use crate::ports::leadership::LockError;
use crate::ports::memory::{ChannelOutcome, PolicyRef};
use vocabulary::{Decision, Instant};

/// How far a tick got, written as it goes (kept when the deadline drops the tick).
#[derive(Debug, Default)]
pub struct Progress {
    pub decided: Option<(Decision, PolicyRef)>,
    pub sequence: Option<u64>,
    pub channels: Vec<ChannelOutcome>,
}

pub fn reason(e: &TickError) -> FailureReason {
    match e {
        TickError::Lock(_) => FailureReason::Lock,
        TickError::Deadline(_) => FailureReason::Deadline,
        TickError::Policy(_) => FailureReason::Policy,
        TickError::Store(_) => FailureReason::Store,
        TickError::BothChannelsFailed(_) => FailureReason::Channels,
    }
}

fn wall_now() -> String {
    format_rfc3339(crate::clock::now_seconds())
}

/// The longest a dead letter's write may hold up the loop (a hung disk): it is then only in the log.
const WRITE_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Counts the failure and, unless another sentinel decides this minute, writes its dead letter.
pub async fn record(s: &Sentinel, now: Instant, e: &TickError, progress: Progress) {
    let reason = reason(e);
    s.telemetry.tick_failed(reason);
    // Another sentinel holding the lock decides this minute: nothing of it is lost here.
    if matches!(e, TickError::Lock(LockError::Held { .. } | LockError::TimedOut { .. })) {
        return;
    }
    let (decided, sequence, channels) = match e {
        TickError::BothChannelsFailed(report) => {
            (Some((report.decision.clone(), report.document.policy.clone())), Some(report.sequence), report.outcomes.clone())
        }
        _ => (progress.decided, progress.sequence, progress.channels),
    };
    let decided = decided.map(|(d, policy)| DecidedBeforeFailure {
        state: d.state,
        previous: d.previous,
        cause: d.cause,
        factors: d.factors,
        explanation: d.explanation,
        policy,
    });
    let letter =
        DeadLetter { id: 0, minute: format_rfc3339(now), failed_at: wall_now(), reason, error: e.to_string(), decided, sequence, channels };
    let letters = s.dead_letters.clone();
    let written = tokio::time::timeout(WRITE_LIMIT, tokio::task::spawn_blocking(move || letters.record(letter))).await;
    let written = match written {
        Ok(Ok(result)) => result,
        Ok(Err(panicked)) => {
            tracing::error!("writing the dead letter failed: {panicked}; the failure is only in the log");
            return;
        }
        Err(_) => {
            tracing::error!(
                file = %s.dead_letters.path().display(),
                "writing the dead letter took longer than {WRITE_LIMIT:?} (a hung disk?); the failure is only in the log"
            );
            return;
        }
    };
    match written {
        Ok(id) => {
            s.telemetry.dead_letters.inc();
            tracing::error!(
                dead_letter = id,
                reason = reason.name(),
                file = %s.dead_letters.path().display(),
                "the failed tick's decision and error are kept as dead letter {id}: list them with `sentinel failures`"
            );
        }
        Err(e) => tracing::error!("{e}"),
    }
}

/// After a success: the dead letters it ends (logged), or none.
pub async fn recovered(s: &Sentinel, report: &TickReport) -> Vec<u64> {
    if !s.dead_letters.has_open() {
        return Vec::new();
    }
    let (letters, sequence, minute) = (s.dead_letters.clone(), report.sequence, report.document.decided_at.clone());
    let written =
        tokio::time::timeout(WRITE_LIMIT, tokio::task::spawn_blocking(move || letters.recover(sequence, minute, wall_now()))).await;
    let Ok(Ok(written)) = written else {
        tracing::error!("ending the dead letters did not finish within {WRITE_LIMIT:?}; the next success tries again");
        return Vec::new();
    };
    match written {
        Ok(ends) => {
            if !ends.is_empty() {
                tracing::info!(
                    sequence = report.sequence,
                    ends = ?ends,
                    "published again after {} failed tick(s); their dead letters are marked ended by sequence {} (`sentinel failures`)",
                    ends.len(),
                    report.sequence
                );
            }
            ends
        }
        Err(e) => {
            tracing::error!("{e}");
            Vec::new()
        }
    }
}
