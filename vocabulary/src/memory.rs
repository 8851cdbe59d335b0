//! What the sentinel remembers between minutes, and a staff pin.

use crate::damping::FlapRecord;
use crate::state::{Instant, Level, ProtectionState};
use serde::{Deserialize, Serialize};

/// The level of one recent reading, kept for the escalate and recover counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RecentEntry {
    pub at: Instant,
    pub level: Level,
    /// The level the reading counts as for a recovery, against boundaries lowered by their
    /// resolve bands (docs/behaviour.md §3), when it is above `level`; absent: the same as
    /// `level` (always so without a band, and in memory written before contract 3.0.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolve_level: Option<Level>,
}

impl RecentEntry {
    /// An entry whose recovery level is its level (no resolve band moved it).
    pub fn new(at: Instant, level: Level) -> RecentEntry {
        RecentEntry { at, level, resolve_level: None }
    }

    /// An entry with the level it counts as for a recovery (kept only when it differs).
    pub fn resolving(at: Instant, level: Level, resolve_level: Level) -> RecentEntry {
        RecentEntry { at, level, resolve_level: (resolve_level != level).then_some(resolve_level) }
    }

    /// The level this reading counts as for a recovery.
    pub fn recovery_level(&self) -> Level {
        self.resolve_level.unwrap_or(self.level)
    }
}

/// The persisted memory of the decision (docs/behaviour.md §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Memory {
    pub state: ProtectionState,
    pub state_since: Instant,
    pub last_auto_change: Option<Instant>,
    pub recent: Vec<RecentEntry>,
    pub failed_reads: u32,
    pub throttles_engaged: bool,
    /// Since when a recovery from emergency has waited for stages still throttled after their
    /// release (docs/behaviour.md §6). Absent in memory written before contract 2.0.0.
    #[serde(default)]
    pub restore_held_since: Option<Instant>,
    /// Flap damping's penalty and the direction of the last automatic change (docs/behaviour.md
    /// §5.7); absent under a version without damping, and in memory written before contract 3.2.0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flap: Option<FlapRecord>,
}

impl Memory {
    /// What an absent or unreadable memory starts as.
    pub fn fresh(now: Instant) -> Memory {
        Memory {
            state: ProtectionState::Normal,
            state_since: now,
            last_auto_change: None,
            recent: Vec::new(),
            failed_reads: 0,
            throttles_engaged: false,
            restore_held_since: None,
            flap: None,
        }
    }
}

/// A staff override: hold `state` until `expires_at`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Pin {
    pub state: ProtectionState,
    pub reason: String,
    pub expires_at: Instant,
    pub actor: String,
}
