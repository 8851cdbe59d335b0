//! Every number a policy version decides with, as data: a version's `policy.toml` is read into
//! [`PolicyDescription`] and checked by the policy builder, the guest's build script (which bakes
//! the values into the component) and the host's native modules, so the numbers exist once, in
//! `policies/`.

use crate::damping::FlapDamping;
use crate::state::ProtectionState;
use serde::{Deserialize, Serialize};

/// The two boundaries of one signal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelThresholds {
    /// At or above: at least constrained.
    pub constrained: f64,
    /// At or above: critical.
    pub critical: f64,
    /// Hysteresis on the level (docs/behaviour.md §3): a reading counts as calmer than a
    /// boundary, for a recovery, only below the boundary minus this band. Absent from a version's
    /// file: 0, the boundary itself (the seeds' rule).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub resolve_band: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl LevelThresholds {
    /// The boundaries a recovery measures against: each lowered by the resolve band.
    pub fn resolving(&self) -> LevelThresholds {
        LevelThresholds {
            constrained: self.constrained - self.resolve_band,
            critical: self.critical - self.resolve_band,
            resolve_band: 0.0,
        }
    }
}

/// The capacity factor of each workload class, 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Factors {
    #[cfg_attr(feature = "openapi", schema(minimum = 0.0, maximum = 1.0))]
    pub bulk: f64,
    #[cfg_attr(feature = "openapi", schema(minimum = 0.0, maximum = 1.0))]
    pub heavy: f64,
    #[cfg_attr(feature = "openapi", schema(minimum = 0.0, maximum = 1.0))]
    pub write: f64,
    #[cfg_attr(feature = "openapi", schema(minimum = 0.0, maximum = 1.0))]
    pub read: f64,
}

/// The factors of each state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateFactors {
    pub normal: Factors,
    pub constrained: Factors,
    pub critical: Factors,
    pub emergency: Factors,
}

/// As messages name them: `bulk 0 heavy 0.25 write 1 read 1`.
impl std::fmt::Display for Factors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bulk {} heavy {} write {} read {}", self.bulk, self.heavy, self.write, self.read)
    }
}

impl Factors {
    /// Each lane with its name, in the order people read them.
    pub fn lanes(&self) -> [(&'static str, f64); 4] {
        [("bulk", self.bulk), ("heavy", self.heavy), ("write", self.write), ("read", self.read)]
    }
}

impl StateFactors {
    /// The factors a version publishes in `state`.
    pub fn of(&self, state: ProtectionState) -> Factors {
        match state {
            ProtectionState::Normal => self.normal,
            ProtectionState::Constrained => self.constrained,
            ProtectionState::Critical => self.critical,
            ProtectionState::Emergency => self.emergency,
        }
    }

    /// Protection, the property every version must have (INV-08, docs/behaviour.md §12): no
    /// lane's factor rises with severity (normal >= constrained >= critical >= emergency), and
    /// critical and emergency withhold bulk work (their bulk factor is 0: new bulk work stops).
    /// The error names the lane and the states.
    pub fn check_protection(&self) -> Result<(), String> {
        for pair in ProtectionState::ALL.windows(2) {
            let (milder, severer) = (pair[0], pair[1]);
            for ((lane, mild), (_, severe)) in self.of(milder).lanes().into_iter().zip(self.of(severer).lanes()) {
                if severe > mild {
                    return Err(format!(
                        "thresholds.factors: {lane} rises from {mild:?} in {} to {severe:?} in {}: a lane's factor must never rise \
                         with severity (normal >= constrained >= critical >= emergency)",
                        milder.name(),
                        severer.name()
                    ));
                }
            }
        }
        for state in [ProtectionState::Critical, ProtectionState::Emergency] {
            let bulk = self.of(state).bulk;
            if bulk != 0.0 {
                return Err(format!(
                    "thresholds.factors.{}.bulk: is {bulk:?}, must be 0.0: critical and emergency withhold bulk work (new bulk work stops)",
                    state.name()
                ));
            }
        }
        Ok(())
    }
}

/// Every threshold of docs/behaviour.md §2 to §8 (all listed in §13).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    pub cpu_pct: LevelThresholds,
    pub connections_pct: LevelThresholds,
    pub latency_ratio: LevelThresholds,
    pub spacing_s: u32,
    pub escalate_readings: u32,
    pub recover_readings: u32,
    pub emergency_after_s: u32,
    pub throttle_after_s: u32,
    /// The longest a recovery from emergency waits for throttled stages to be restored
    /// (docs/behaviour.md §6); absent from a version's file: 600 (10 minutes).
    #[serde(default = "default_restore_hold_max_s")]
    pub restore_hold_max_s: u32,
    pub max_gap_s: u32,
    pub release_after_failed_reads: u32,
    pub baseline_min_samples: u32,
    pub pin_max_ahead_s: u32,
    pub pin_reason_max_chars: u32,
    pub factors: StateFactors,
    /// Flap damping (docs/behaviour.md §5.4); absent from a version's file: off, the seeds' rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<FlapDamping>,
}

/// The default bound on holding emergency for a failed restore: 10 minutes.
pub const DEFAULT_RESTORE_HOLD_MAX_S: u32 = 600;

fn default_restore_hold_max_s() -> u32 {
    DEFAULT_RESTORE_HOLD_MAX_S
}

/// A version's `policy.toml`: who it is and its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyDescription {
    pub name: String,
    pub version: String,
    pub thresholds: Thresholds,
}

impl PolicyDescription {
    /// Checks every value; the error names the first key that is wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("name: must not be blank".into());
        }
        // The name becomes a file name (`<name>-<version>.wasm`), so it can name no other folder.
        let name_ok = self.name.len() <= 64
            && self.name.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
            && self.name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
            && !self.name.contains("..");
        if !name_ok {
            return Err(format!(
                "name: {:?} is not a policy name: use at most 64 letters, digits, '-', '_' and '.', starting with a letter or digit \
                 (it becomes the component's file name, such as capacity-policy)",
                self.name
            ));
        }
        check_semver(&self.version).map_err(|e| format!("version: {e}"))?;
        self.thresholds.check()
    }
}

impl Thresholds {
    /// Checks every value; the error names the first key that is wrong.
    pub fn check(&self) -> Result<(), String> {
        let t = self;
        for (key, l) in [
            ("thresholds.cpu_pct", t.cpu_pct),
            ("thresholds.connections_pct", t.connections_pct),
            ("thresholds.latency_ratio", t.latency_ratio),
        ] {
            if !(l.constrained.is_finite() && l.critical.is_finite() && l.constrained > 0.0) {
                return Err(format!("{key}: boundaries must be finite and above 0"));
            }
            if l.constrained > l.critical {
                return Err(format!("{key}: constrained must not exceed critical"));
            }
            if !(l.resolve_band.is_finite() && l.resolve_band >= 0.0 && l.resolve_band < l.constrained) {
                return Err(format!("{key}.resolve_band: must be at least 0 and below the constrained boundary ({})", l.constrained));
            }
        }
        for (key, n) in [
            ("thresholds.escalate_readings", t.escalate_readings),
            ("thresholds.recover_readings", t.recover_readings),
            ("thresholds.release_after_failed_reads", t.release_after_failed_reads),
            ("thresholds.max_gap_s", t.max_gap_s),
            ("thresholds.pin_max_ahead_s", t.pin_max_ahead_s),
            ("thresholds.pin_reason_max_chars", t.pin_reason_max_chars),
        ] {
            if n == 0 {
                return Err(format!("{key}: must be at least 1"));
            }
        }
        if t.escalate_readings > 60 || t.recover_readings > 60 {
            return Err("thresholds: escalate_readings and recover_readings must be at most 60".into());
        }
        for (key, f) in [
            ("thresholds.factors.normal", t.factors.normal),
            ("thresholds.factors.constrained", t.factors.constrained),
            ("thresholds.factors.critical", t.factors.critical),
            ("thresholds.factors.emergency", t.factors.emergency),
        ] {
            for v in [f.bulk, f.heavy, f.write, f.read] {
                if !(0.0..=1.0).contains(&v) {
                    return Err(format!("{key}: every factor must be within [0, 1]"));
                }
            }
        }
        t.factors.check_protection()?;
        if let Some(damping) = &t.damping {
            damping.check()?;
            if damping.suppressed_recover_readings.is_some_and(|n| n <= t.recover_readings) {
                return Err(format!(
                    "thresholds.damping.suppressed_recover_readings: must be above recover_readings ({}): it is the longer calm",
                    t.recover_readings
                ));
            }
        }
        Ok(())
    }
}

/// `MAJOR.MINOR.PATCH`, digits only.
fn check_semver(v: &str) -> Result<(), String> {
    let parts: Vec<&str> = v.split('.').collect();
    let ok = parts.len() == 3 && parts.iter().all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if ok { Ok(()) } else { Err(format!("`{v}` is not MAJOR.MINOR.PATCH")) }
}
