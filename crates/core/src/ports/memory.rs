//! The sentinel's memory between ticks, and the one transaction that ends each tick.

use super::StoreError;
use super::pins::AuditRecord;
use serde::{Deserialize, Serialize};
use vocabulary::{Decision, Instant, LatencySample, Memory, Pin, Signal};

/// Which policy decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyRef {
    pub name: String,
    pub version: String,
    pub digest: String,
}

/// Everything one tick saw and decided, kept for audit and replay from the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickRecord {
    pub at: Instant,
    pub signal: Signal,
    pub pin: Option<Pin>,
    pub throttles_enabled: bool,
    /// Whether a stage was still throttled at the start of the tick (the decision's input).
    #[serde(default)]
    pub stages_throttled: bool,
    pub decision: Decision,
    pub policy: PolicyRef,
}

/// What one tick writes, all in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct TickCommit {
    pub memory: Memory,
    /// A pin that expired this tick: removed (only if it is still the stored pin) with an
    /// audit record by `expired_by`.
    pub expired_pin: Option<Pin>,
    pub expired_by: String,
    /// Latency samples of this tick's reading, per API, for baselines.
    pub samples: Vec<(String, LatencySample)>,
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
    pub expiry_audit: Option<AuditRecord>,
}

/// How one channel's publication went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelOutcome {
    pub channel: String,
    pub ok: bool,
    pub error: Option<String>,
}

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
