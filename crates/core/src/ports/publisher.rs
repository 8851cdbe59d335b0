//! Publication of the decided state (docs/behaviour.md §7) to one channel.

use serde::{Deserialize, Serialize};
use vocabulary::{Cause, Factors, ProtectionState};

/// The published document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateDocument {
    pub state: ProtectionState,
    pub factors: Factors,
    /// RFC 3339.
    pub decided_at: String,
    pub policy: super::memory::PolicyRef,
    pub pinned: bool,
    /// RFC 3339, when pinned.
    pub pin_expires_at: Option<String>,
    pub cause: Cause,
    /// Grows by one each tick.
    pub sequence: u64,
}

/// One of the document's two independent channels (the vocabulary's word). Its name is where it
/// is configured (`[publish.cache]`, `[publish.parameter]`), whatever kind of system serves it.
pub use vocabulary::Channel;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("publishing to {channel} ({target}) failed: {message}")]
pub struct PublishError {
    pub channel: Channel,
    pub target: String,
    pub message: String,
}

#[async_trait::async_trait]
pub trait Publisher: Send + Sync {
    /// The channel it serves, as configured.
    fn channel(&self) -> Channel;
    /// Where it writes, for logs.
    fn target(&self) -> String;
    async fn publish(&self, document: &StateDocument) -> Result<(), PublishError>;
    /// Reaches where it writes with the calls a publish makes, without publishing
    /// (`sentinel check --connect`): what was done, or what failed and what to do.
    async fn reach(&self) -> Result<String, PublishError>;
}
