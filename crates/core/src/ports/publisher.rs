//! Publication of the decided state (docs/behaviour.md §7) to one channel.

use serde::{Deserialize, Serialize};
use vocabulary::{Cause, Factors, ProtectionState};

/// The published document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateDocument {
    /// The protection state the tick decided.
    pub state: ProtectionState,
    /// The workload factors of that state (`bulk`, `heavy`, `write`, `read`): what the services
    /// reading the channels apply to their background work.
    pub factors: Factors,
    /// RFC 3339.
    pub decided_at: String,
    /// The policy version that decided.
    pub policy: super::memory::PolicyRef,
    /// Whether an active pin decided the state.
    pub pinned: bool,
    /// RFC 3339, when pinned.
    pub pin_expires_at: Option<String>,
    /// Why the state is what it is (the decision's cause, docs/behaviour.md §5.7).
    pub cause: Cause,
    /// Grows by one each tick.
    pub sequence: u64,
}

/// One of the document's two independent channels (the vocabulary's word). Its name is where it
/// is configured (`[publish.cache]`, `[publish.parameter]`), whatever kind of system serves it.
pub use vocabulary::Channel;

/// Why one channel did not take the document: that channel's failure only, the other one is
/// unaffected and the next tick writes it again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("publishing to {channel} ({target}) failed: {message}")]
pub struct PublishError {
    /// The channel that failed.
    pub channel: Channel,
    /// Where it writes, as `Publisher::target` names it (`redis URL key KEY` without the
    /// password, `ssm parameter NAME`, `file PATH`).
    pub target: String,
    /// What failed and, when known, what to do; `superseded: ...` when the channel already
    /// holds a document with a higher sequence.
    pub message: String,
}

/// Writes the state document to one channel: Redis or an SSM parameter, or a file (or stdout)
/// in the embedded default. The tick publishes to both channels at once, each under the publish
/// timeout.
#[async_trait::async_trait]
pub trait Publisher: Send + Sync {
    /// The channel it serves, as configured.
    fn channel(&self) -> Channel;
    /// Where it writes, for logs.
    fn target(&self) -> String;
    /// Writes `document` so that a reader only ever sees a whole one. Redis and SSM never
    /// overwrite a stored document with a higher `sequence`: that write is refused as
    /// superseded (docs/behaviour.md §7).
    async fn publish(&self, document: &StateDocument) -> Result<(), PublishError>;
    /// Reaches where it writes with the calls a publish makes, without publishing
    /// (`sentinel check --connect`): what was done, or what failed and what to do.
    async fn reach(&self) -> Result<String, PublishError>;
}
