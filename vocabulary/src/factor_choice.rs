//! Which published document a service acts on (docs/behaviour.md §9.1): what each channel
//! returned, and the choice between them.

use crate::state::Instant;
use serde::{Deserialize, Serialize};

/// What one channel gave the service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChannelRead {
    /// Not configured, or not read (the cache was already usable).
    NotRead,
    /// The published document, as read.
    Document(String),
    /// Why the read failed.
    Failed(String),
}

/// What the rule made of one channel's read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
pub enum ChannelVerdict {
    NotRead,
    Usable,
    ReadFailed,
    Unreadable,
    OutOfRange,
    Stale,
    FromTheFuture,
}

impl ChannelVerdict {
    /// The WIT name, as counters and logs show it.
    pub fn name(self) -> &'static str {
        match self {
            ChannelVerdict::NotRead => "not-read",
            ChannelVerdict::Usable => "usable",
            ChannelVerdict::ReadFailed => "read-failed",
            ChannelVerdict::Unreadable => "unreadable",
            ChannelVerdict::OutOfRange => "out-of-range",
            ChannelVerdict::Stale => "stale",
            ChannelVerdict::FromTheFuture => "from-the-future",
        }
    }
}

/// The two channels the sentinel publishes to: the cache and the parameter, whatever kind of
/// system serves each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
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

/// What each channel returned, the service's clock and its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactorChoiceRequest {
    pub cache: ChannelRead,
    pub parameter: ChannelRead,
    pub now: Instant,
    pub max_age_s: u32,
    pub max_skew_s: u32,
}

/// The factor to admit with, where it came from, and what each channel's read was worth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FactorChoice {
    pub factor: Option<f64>,
    pub source: Option<Channel>,
    pub state: Option<String>,
    pub sequence: Option<u64>,
    pub decided_at: Option<Instant>,
    pub age_s: Option<i64>,
    pub cache: ChannelVerdict,
    pub parameter: ChannelVerdict,
    pub reason: Option<String>,
}
