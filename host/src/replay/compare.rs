//! The comparison of SPEC section 10, accumulated tick by tick from the outputs alone:
//! transitions, flaps, minutes in each state, time from the first critical reading to
//! protection, bulk capacity-minutes, failed reads and invariant violations.

use super::Tick;
use super::invariants::{InvariantChecker, Violation};
use crate::bindings::{Instant, Level, ProtectionState, Thresholds};
use crate::names;
use serde::Serialize;

/// A change undone within this long is a flap.
pub const FLAP_WINDOW_S: Instant = 15 * 60;

/// One policy's results over one trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub policy: String,
    pub trace: String,
    pub ticks: u64,
    pub transitions: u64,
    pub flaps: u64,
    /// Minutes in normal, constrained, critical, emergency (one tick counts one minute).
    pub minutes: [u64; 4],
    /// Minutes from the first critical reading to a state of at least critical; none when no
    /// reading was critical or protection never came.
    pub minutes_to_protect: Option<i64>,
    /// Sum over ticks of the bulk factor.
    pub bulk_capacity_minutes: f64,
    pub failed_reads: u64,
    pub throttle_engagements: u64,
    pub violations: Vec<Violation>,
}

/// Accumulates a [`Summary`] from a stream of ticks.
pub struct Accumulator {
    summary: Summary,
    checker: InvariantChecker,
    /// Recent changes (time, from, to), to find flaps.
    changes: Vec<(Instant, ProtectionState, ProtectionState)>,
    first_critical: Option<Instant>,
}

impl Accumulator {
    pub fn new(policy: &str, trace: &str, thresholds: &Thresholds) -> Accumulator {
        Accumulator {
            summary: Summary {
                policy: policy.to_string(),
                trace: trace.to_string(),
                ticks: 0,
                transitions: 0,
                flaps: 0,
                minutes: [0; 4],
                minutes_to_protect: None,
                bulk_capacity_minutes: 0.0,
                failed_reads: 0,
                throttle_engagements: 0,
                violations: Vec::new(),
            },
            checker: InvariantChecker::new(thresholds),
            changes: Vec::new(),
            first_critical: None,
        }
    }

    pub fn add(&mut self, tick: &Tick<'_>) {
        let d = tick.decision;
        let s = &mut self.summary;
        s.ticks += 1;
        s.minutes[names::rank(d.state) as usize] += 1;
        s.bulk_capacity_minutes += d.factors.bulk;
        if d.level.is_none() {
            s.failed_reads += 1;
        }
        if d.throttles == crate::bindings::ThrottleIntent::Engage {
            s.throttle_engagements += 1;
        }
        if d.changed {
            s.transitions += 1;
            self.changes.retain(|(at, _, _)| tick.at - at <= FLAP_WINDOW_S);
            if self.changes.iter().any(|(_, from, to)| *from == d.state && *to == d.previous) {
                s.flaps += 1;
            }
            self.changes.push((tick.at, d.previous, d.state));
        }
        if d.level == Some(Level::Critical) && self.first_critical.is_none() {
            self.first_critical = Some(tick.at);
        }
        if let (Some(first), None) = (self.first_critical, s.minutes_to_protect)
            && names::rank(d.state) >= names::rank(ProtectionState::Critical)
        {
            s.minutes_to_protect = Some((tick.at - first).div_euclid(60));
        }
        if let Some(v) = self.checker.check(tick) {
            s.violations.push(v);
        }
    }

    pub fn finish(self) -> Summary {
        self.summary
    }
}
