//! Hop 4b: the published document, sent to both channels concurrently, each with a timeout.

use super::backstop;
use super::policy_ref;
use crate::instants::format_rfc3339;
use crate::policy::PolicyIdentity;
use crate::ports::memory::{ChannelOutcome, PolicyRef, TickRecord};
use crate::ports::publisher::{Publisher, StateDocument};
use std::time::Duration;
use vocabulary::{Decision, Instant, Pin};

pub fn document(decision: &Decision, now: Instant, identity: &PolicyIdentity, pin: Option<&Pin>, sequence: u64) -> StateDocument {
    build(decision, now, policy_ref(identity), pin, sequence)
}

/// The document tick `sequence` published, rebuilt from its stored record (`GET /v1/state`).
pub fn recorded_document(sequence: u64, record: &TickRecord) -> StateDocument {
    build(&record.decision, record.at, record.policy.clone(), record.pin.as_ref(), sequence)
}

fn build(decision: &Decision, now: Instant, policy: PolicyRef, pin: Option<&Pin>, sequence: u64) -> StateDocument {
    let active = pin.filter(|p| p.expires_at > now);
    StateDocument {
        state: decision.state,
        factors: decision.factors,
        decided_at: format_rfc3339(now),
        policy,
        pinned: active.is_some(),
        pin_expires_at: active.map(|p| format_rfc3339(p.expires_at)),
        cause: decision.cause,
        sequence,
    }
}

async fn one(publisher: &dyn Publisher, document: &StateDocument, limit: Duration) -> ChannelOutcome {
    let channel = publisher.channel().name().to_string();
    match backstop::within(limit, publisher.publish(document)).await {
        Ok(Ok(())) => ChannelOutcome { channel, ok: true, error: None },
        Ok(Err(e)) => ChannelOutcome { channel, ok: false, error: Some(e.to_string()) },
        Err(waited) => ChannelOutcome {
            error: Some(format!("publishing to {channel} ({}) did not end within {waited:?} (its timeout {limit:?})", publisher.target())),
            channel,
            ok: false,
        },
    }
}

/// Both channels at once, each under `limit`: the cache's outcome, then the parameter's.
pub(crate) async fn publish_both(
    cache: &dyn Publisher,
    parameter: &dyn Publisher,
    limit: Duration,
    document: &StateDocument,
) -> Vec<ChannelOutcome> {
    let (cache, parameter) = tokio::join!(one(cache, document, limit), one(parameter, document, limit));
    vec![cache, parameter]
}
