//! The protection states, the level of one reading, why a decision was taken, and what it asks
//! of the stage throttles.

use serde::{Deserialize, Serialize};

/// Seconds since the Unix epoch, UTC. Time enters the rules only as this.
pub type Instant = i64;

/// The protection state, ordered by rank (normal 0 < constrained 1 < critical 2 < emergency 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
pub enum ProtectionState {
    #[serde(alias = "Normal")]
    Normal,
    #[serde(alias = "Constrained")]
    Constrained,
    #[serde(alias = "Critical")]
    Critical,
    #[serde(alias = "Emergency")]
    Emergency,
}

impl ProtectionState {
    pub const ALL: [ProtectionState; 4] =
        [ProtectionState::Normal, ProtectionState::Constrained, ProtectionState::Critical, ProtectionState::Emergency];

    pub fn rank(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            ProtectionState::Normal => "normal",
            ProtectionState::Constrained => "constrained",
            ProtectionState::Critical => "critical",
            ProtectionState::Emergency => "emergency",
        }
    }

    /// The state named `name` exactly as written in docs/behaviour.md (`"critical"`).
    pub fn parse(name: &str) -> Option<ProtectionState> {
        ProtectionState::ALL.into_iter().find(|s| s.name() == name)
    }

    /// One rank lower (normal stays normal).
    pub fn step_down(self) -> ProtectionState {
        match self {
            ProtectionState::Normal | ProtectionState::Constrained => ProtectionState::Normal,
            ProtectionState::Critical => ProtectionState::Constrained,
            ProtectionState::Emergency => ProtectionState::Critical,
        }
    }
}

/// The pressure level of one reading (never emergency: that comes from time in critical).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    #[serde(alias = "Normal")]
    Normal,
    #[serde(alias = "Constrained")]
    Constrained,
    #[serde(alias = "Critical")]
    Critical,
}

impl Level {
    pub fn rank(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        self.as_state().name()
    }

    /// The state this level supports.
    pub fn as_state(self) -> ProtectionState {
        match self {
            Level::Normal => ProtectionState::Normal,
            Level::Constrained => ProtectionState::Constrained,
            Level::Critical => ProtectionState::Critical,
        }
    }
}

/// Why a decision was taken (docs/behaviour.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    #[serde(alias = "Pinned")]
    Pinned,
    #[serde(alias = "SignalHeld")]
    SignalHeld,
    #[serde(alias = "SignalLostRelease")]
    SignalLostRelease,
    #[serde(alias = "Escalate")]
    Escalate,
    #[serde(alias = "Emergency")]
    Emergency,
    #[serde(alias = "Recover")]
    Recover,
    #[serde(alias = "SpacingWait")]
    SpacingWait,
    #[serde(alias = "RestoreThrottlesFirst")]
    RestoreThrottlesFirst,
    #[serde(alias = "Fresh")]
    Fresh,
    #[serde(alias = "Hold")]
    Hold,
}

impl Cause {
    pub const ALL: [Cause; 10] = [
        Cause::Pinned,
        Cause::SignalHeld,
        Cause::SignalLostRelease,
        Cause::Escalate,
        Cause::Emergency,
        Cause::Recover,
        Cause::SpacingWait,
        Cause::RestoreThrottlesFirst,
        Cause::Fresh,
        Cause::Hold,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Cause::Pinned => "pinned",
            Cause::SignalHeld => "signal-held",
            Cause::SignalLostRelease => "signal-lost-release",
            Cause::Escalate => "escalate",
            Cause::Emergency => "emergency",
            Cause::Recover => "recover",
            Cause::SpacingWait => "spacing-wait",
            Cause::RestoreThrottlesFirst => "restore-throttles-first",
            Cause::Fresh => "fresh",
            Cause::Hold => "hold",
        }
    }

    /// Is this an automatic change (not a pin)?
    pub fn is_automatic(self) -> bool {
        matches!(self, Cause::Escalate | Cause::Emergency | Cause::Recover | Cause::SignalLostRelease)
    }
}

/// What a decision asks of the emergency stage throttles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
pub enum ThrottleIntent {
    #[serde(alias = "Engage")]
    Engage,
    #[serde(alias = "Release")]
    Release,
    #[serde(alias = "None")]
    None,
}

impl ThrottleIntent {
    pub fn name(self) -> &'static str {
        match self {
            ThrottleIntent::Engage => "engage",
            ThrottleIntent::Release => "release",
            ThrottleIntent::None => "none",
        }
    }
}
