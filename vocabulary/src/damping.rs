//! Flap damping (docs/behaviour.md §5.4), after BGP route-flap damping (RFC 2439): an automatic
//! change that undoes the previous one within a window is a flap and adds a penalty; the penalty
//! halves every half-life; once it reaches the suppress limit, recovery from a protecting state
//! waits until it has decayed below the reuse limit. Its numbers, what the memory keeps of it,
//! and what a held tick reports.

use crate::state::Instant;
use serde::{Deserialize, Serialize};

/// A version's damping numbers (`[thresholds.damping]` in its `policy.toml`). Absent: damping is
/// off and the version decides as the seeds do.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FlapDamping {
    /// The penalty one flap adds.
    pub penalty_per_flap: f64,
    /// An automatic change that reverses the previous automatic change within this many seconds
    /// of it is a flap.
    pub flap_window_s: u32,
    /// The penalty halves every this many seconds.
    pub half_life_s: u32,
    /// At or above this penalty (reached by a flap), recovery is held.
    pub suppress_limit: f64,
    /// Once held, recovery is allowed again when the penalty has decayed below this.
    pub reuse_limit: f64,
    /// The penalty never exceeds this, so the longest suppression is bounded: from
    /// `max_penalty` to `reuse_limit` takes `half_life_s * log2(max_penalty / reuse_limit)` s.
    pub max_penalty: f64,
    /// While suppressed, a recovery needs this many calm readings in a row instead of
    /// `recover_readings` (a longer calm); absent: a recovery is held until the penalty decays
    /// below the reuse limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppressed_recover_readings: Option<u32>,
}

impl FlapDamping {
    /// The numbers `sentinel policy tune` starts from when a search space turns damping on
    /// without naming every one: a flap is a change undone within 30 minutes, each adds 1, the
    /// penalty halves every 15 minutes, two quick flaps suppress recovery until the penalty is
    /// below 0.5, and the penalty never exceeds 4 (a hold of at most 45 minutes).
    pub const DEFAULT: FlapDamping = FlapDamping {
        penalty_per_flap: 1.0,
        flap_window_s: 1800,
        half_life_s: 900,
        suppress_limit: 2.0,
        reuse_limit: 0.5,
        max_penalty: 4.0,
        suppressed_recover_readings: None,
    };

    /// Checks every value; the error names the first key that is wrong.
    pub fn check(&self) -> Result<(), String> {
        let key = "thresholds.damping";
        let finite_positive = |v: f64| v.is_finite() && v > 0.0;
        if !finite_positive(self.penalty_per_flap) {
            return Err(format!("{key}.penalty_per_flap: must be finite and above 0"));
        }
        if self.flap_window_s < 60 {
            return Err(format!("{key}.flap_window_s: must be at least 60 (one minute)"));
        }
        if self.half_life_s < 60 {
            return Err(format!("{key}.half_life_s: must be at least 60 (one minute)"));
        }
        if !(finite_positive(self.reuse_limit) && self.reuse_limit < self.suppress_limit) {
            return Err(format!("{key}.reuse_limit: must be above 0 and below suppress_limit ({})", self.suppress_limit));
        }
        if !(self.suppress_limit.is_finite() && self.suppress_limit <= self.max_penalty && self.max_penalty.is_finite()) {
            return Err(format!("{key}.max_penalty: must be finite and at least suppress_limit ({})", self.suppress_limit));
        }
        if let Some(n) = self.suppressed_recover_readings
            && !(1..=60).contains(&n)
        {
            return Err(format!("{key}.suppressed_recover_readings: must be from 1 to 60"));
        }
        // A hold longer than a day would be a stuck protection, not damping.
        if f64::from(self.half_life_s) * (self.max_penalty / self.reuse_limit).log2() > 86_400.0 {
            return Err(format!(
                "{key}: the longest hold, half_life_s * log2(max_penalty / reuse_limit), must be at most 86400 s (one day)"
            ));
        }
        Ok(())
    }
}

/// Which way an automatic change went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ChangeDirection {
    /// Escalate or emergency: more protection.
    Raised,
    /// Recover: less protection.
    Lowered,
}

/// What the memory keeps of damping (absent: no penalty, no automatic change seen yet).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FlapRecord {
    /// The penalty as it stood at `updated_at` (it decays from there).
    pub penalty: f64,
    pub updated_at: Instant,
    /// Recovery is held until the penalty decays below the reuse limit.
    pub suppressed: bool,
    /// The last change the automatic rules made (escalate, emergency or recover); a pin or a
    /// signal-loss release is not one.
    pub last_change: Option<AutoChange>,
}

/// One automatic change: when, and which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AutoChange {
    pub at: Instant,
    pub direction: ChangeDirection,
}

/// A tick whose recovery qualified but was held by damping.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DampingHold {
    /// The penalty at this tick, decayed.
    pub penalty: f64,
    pub suppress_limit: f64,
    pub reuse_limit: f64,
    /// Seconds until the penalty decays below the reuse limit, rounded up.
    pub reuse_in_s: u32,
    /// The calm readings in a row a recovery needs meanwhile (`suppressed_recover_readings`);
    /// absent: none will do, the recovery waits for the reuse limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calm_readings_needed: Option<u32>,
}
