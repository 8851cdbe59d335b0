//! One minute's question to the policy and its answer.

use crate::damping::DampingHold;
use crate::memory::{Memory, Pin, RecentEntry};
use crate::reading::Signal;
use crate::state::{Cause, Instant, Level, ProtectionState, ThrottleIntent};
use crate::thresholds::Factors;
use serde::{Deserialize, Serialize};

/// Everything a decision depends on; `now` is the only clock the rules see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionInput {
    pub now: Instant,
    pub signal: Signal,
    pub memory: Option<Memory>,
    pub pin: Option<Pin>,
    pub throttles_enabled: bool,
    /// Whether any stage is still throttled by the sentinel, as its stage records say at the
    /// start of the tick (unreadable records count as throttled). Absent: none is.
    #[serde(default)]
    pub stages_throttled: bool,
}

/// The decided state, its factors, why, and the memory to keep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Decision {
    pub state: ProtectionState,
    pub factors: Factors,
    pub changed: bool,
    pub previous: ProtectionState,
    pub cause: Cause,
    pub level: Option<Level>,
    pub pending: Option<ProtectionState>,
    pub throttles: ThrottleIntent,
    pub supporting: Vec<RecentEntry>,
    pub memory: Memory,
    pub explanation: String,
    /// A recovery qualified this tick but flap damping held it (docs/behaviour.md §5.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping_hold: Option<DampingHold>,
}
