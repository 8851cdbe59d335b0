//! The sentinel's memory between ticks, and the one transaction that ends each tick.

use super::StoreError;
use super::pins::AuditRecord;
use serde::{Deserialize, Serialize};
use vocabulary::{Decision, Instant, LatencySample, Memory, Pin, Signal};

/// Which policy decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyRef {
    /// The policy's name, e.g. `capacity-policy`.
    pub name: String,
    /// The policy version, e.g. `1.0.0`.
    pub version: String,
    /// The sha256 of the component file (of the `policy.toml` for a native module), in hex.
    pub digest: String,
}

/// Everything one tick saw and decided, kept for audit and replay from the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickRecord {
    /// The minute the tick decided for (`now`, Unix seconds).
    pub at: Instant,
    /// What the metrics read gave: the reading (with the latency baselines filled in), or why
    /// the read failed.
    pub signal: Signal,
    /// The stored pin the tick saw, active or expired; `None` when there was none or it could
    /// not be read.
    pub pin: Option<Pin>,
    /// Whether the emergency stage-throttle switch was on (`throttles_enabled` in the
    /// configuration).
    pub throttles_enabled: bool,
    /// Whether a stage was still throttled at the start of the tick (the decision's input).
    #[serde(default)]
    pub stages_throttled: bool,
    /// What the policy decided, with the memory it leaves for the next tick.
    pub decision: Decision,
    /// The policy version that decided.
    pub policy: PolicyRef,
}

/// What one tick writes, all in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct TickCommit {
    /// The memory the decision leaves for the next tick: it replaces the stored memory.
    pub memory: Memory,
    /// A pin that expired this tick: removed (only if it is still the stored pin) with an
    /// audit record by `expired_by`.
    pub expired_pin: Option<Pin>,
    /// The actor of that `expire` audit record (`sentinel (expiry)`).
    pub expired_by: String,
    /// Latency samples of this tick's reading, per API, for baselines.
    pub samples: Vec<(String, LatencySample)>,
    /// The tick's record, stored under the sequence the commit assigns.
    pub record: TickRecord,
    /// The newest tick sequence the tick saw before deciding (0: none stored yet). The commit
    /// is refused with `StoreError::Superseded` when another tick was committed since, so a
    /// sentinel that decided on old memory (a leader frozen past its lease) never writes the
    /// memory back in time. `None` when the tick could not read it: not checked.
    pub follows: Option<u64>,
}

/// What a committed tick got back.
#[derive(Debug, Clone, PartialEq)]
pub struct Committed {
    /// Grows by one each tick, never goes backwards.
    pub sequence: u64,
    /// The `expire` audit record written with the commit; `None` when no pin expired, or the
    /// stored pin was no longer the one that expired (an operator had set another meanwhile).
    pub expiry_audit: Option<AuditRecord>,
}

/// How one channel's publication went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelOutcome {
    /// The channel's name: `cache` or `parameter`.
    pub channel: String,
    /// Whether the channel took the document.
    pub ok: bool,
    /// Why it did not (the publisher's error, or the publish timeout running out); `None` when
    /// it did.
    pub error: Option<String>,
}

/// The store's side of the tick: the memory one tick leaves the next, and the record of every
/// tick with how its publication went (SQLite or PostgreSQL). Tick sequences only grow, and a
/// commit is all or nothing.
#[async_trait::async_trait]
pub trait MemoryStore: Send + Sync {
    /// The last tick's memory; `Ok(None)` when there is none yet. An unreadable row is
    /// `Err(Corrupt)`: the tick starts fresh and says so.
    async fn load_memory(&self) -> Result<Option<Memory>, StoreError>;
    /// Commits one tick in one transaction and returns its sequence number.
    async fn commit_tick(&self, commit: &TickCommit) -> Result<Committed, StoreError>;
    /// Records how each channel's publication of tick `sequence` went.
    async fn record_publication(&self, sequence: u64, outcomes: &[ChannelOutcome]) -> Result<(), StoreError>;
    /// The newest tick records, newest first.
    async fn recent_ticks(&self, limit: u32) -> Result<Vec<(u64, TickRecord)>, StoreError>;
}
