//! Publication of the decided state (docs/behaviour.md §7) to one channel.

use crate::bindings::Factors;
use serde::{Deserialize, Serialize};

/// The published document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateDocument {
    pub state: String,
    pub factors: Factors,
    /// RFC 3339.
    pub decided_at: String,
    pub policy: super::memory::PolicyRef,
    pub pinned: bool,
    /// RFC 3339, when pinned.
    pub pin_expires_at: Option<String>,
    pub cause: String,
    /// Grows by one each tick.
    pub sequence: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("publishing to {channel} ({target}) failed: {message}")]
pub struct PublishError {
    pub channel: String,
    pub target: String,
    pub message: String,
}

#[async_trait::async_trait]
pub trait Publisher: Send + Sync {
    /// `cache` or `parameter`.
    fn channel(&self) -> &str;
    /// Where it writes, for logs.
    fn target(&self) -> String;
    async fn publish(&self, document: &StateDocument) -> Result<(), PublishError>;
}
