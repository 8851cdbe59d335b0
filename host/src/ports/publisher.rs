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

/// One of the document's two independent channels. Its name is where it is configured
/// (`[publish.cache]`, `[publish.parameter]`), whatever kind of system serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    Cache,
    Parameter,
}

impl Channel {
    /// `cache` or `parameter`: in logs, metrics labels, stored outcomes and config keys.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Cache => "cache",
            Channel::Parameter => "parameter",
        }
    }
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
}
