//! The comparison of docs/behaviour.md §10.4, accumulated tick by tick from the outputs alone:
//! transitions, flaps, minutes in each state, time from the first critical reading to
//! protection, over-protection, bulk capacity-minutes, failed reads, throttle engagements and
//! invariant violations. One tick counts one minute (traces hold one reading a minute).

use super::Tick;
use crate::policy::invariants::{Floors, InvariantChecker, Violation};
use serde::Serialize;
use vocabulary::{Factors, Instant, Level, ProtectionState, Thresholds, ThrottleIntent};

/// A change undone within this long is a flap.
pub(crate) const FLAP_WINDOW_S: Instant = 15 * 60;

/// One policy's results over one trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The policy's label (its version unless given as `LABEL=PATH`).
    pub policy: String,
    /// The name of the trace replayed (for a trace file, its stem: `incident`).
    pub trace: String,
    /// Ticks replayed, one a minute: the trace's length in minutes.
    pub ticks: u64,
    /// Ticks whose state changed: each change of state counted once.
    pub transitions: u64,
    /// Changes that undo an earlier change (back to the state it left) within
    /// `FLAP_WINDOW_S`, 15 minutes.
    pub flaps: u64,
    /// Minutes in normal, constrained, critical, emergency (one tick counts one minute).
    pub minutes: [u64; 4],
    /// Minutes from the first critical reading to a state of at least critical; none when no
    /// reading was critical or protection never came (see `first_critical_at`).
    pub minutes_to_protect: Option<i64>,
    /// Minutes in a state above normal, with no active pin, whose reading the policy assessed
    /// normal: protection that no reading of that minute asked for.
    pub over_protection_minutes: u64,
    /// Incidents: changes from normal into a state above normal (a pin's included).
    pub incidents: u64,
    /// Sum over ticks of the bulk factor.
    pub bulk_capacity_minutes: f64,
    /// Ticks whose read failed (no reading, so no level assessed).
    pub failed_reads: u64,
    /// Ticks whose decision engaged the emergency stage throttles.
    pub throttle_engagements: u64,
    /// Ticks that released the throttles (the stages are restored then, or retried).
    pub throttle_releases: u64,
    /// Ticks held in emergency because a stage was still throttled (a restore failing).
    pub minutes_held_for_restore: u64,
    /// Ticks whose recovery flap damping held (docs/behaviour.md §5.4).
    pub minutes_held_by_damping: u64,
    /// Invariants the policy broke (INV-01 to INV-03, INV-08), at most one per tick, in tick
    /// order.
    pub violations: Vec<Violation>,
    /// The first tick (unix seconds), none for a trace without ticks.
    pub start_at: Option<Instant>,
    /// The first reading the policy assessed critical.
    pub first_critical_at: Option<Instant>,
    /// The first tick in a state of at least critical.
    pub first_protected_at: Option<Instant>,
    /// Traces shorter than a day only (empty past 1440 ticks): each tick's protection and
    /// reading, so the gate can count a candidate's protection on the minutes its baseline
    /// assessed calm (`max_calm_protection_minutes_per_incident`).
    #[serde(skip)]
    pub calm_marks: Vec<CalmMark>,
    /// Per state (normal to emergency), each lane's highest factor published in it; none for a
    /// state the policy never was in. The gate compares these, not state names (`state_factors`).
    #[serde(skip)]
    pub published: [Option<Factors>; 4],
}

/// One tick of a short trace, as the gate's calm-minute rule reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CalmMark {
    /// When the tick happened (unix seconds); the gate pairs the two policies' marks on it.
    pub at: Instant,
    /// A state above normal with no active pin.
    pub protected_unpinned: bool,
    /// The policy assessed the reading normal.
    pub reading_normal: bool,
}

/// Ticks a trace may have for [`Summary::calm_marks`] to be kept.
pub(crate) const CALM_MARKS_UP_TO: u64 = 1440;

impl Summary {
    /// Flaps per day of trace (1440 ticks a day; a trace shorter than a day counts as one, so
    /// that one flap in an hour is one flap, not 24).
    pub fn flaps_per_day(&self) -> f64 {
        self.flaps as f64 / self.days_at_least_one()
    }

    /// Days of trace (1440 ticks a day), a shorter trace counting as one day.
    pub fn days_at_least_one(&self) -> f64 {
        (self.ticks as f64 / 1440.0).max(1.0)
    }

    /// Bulk capacity-minutes withheld (one minute at bulk 0.0 withholds one) per day of trace,
    /// a shorter trace counting as a day: what an operator pays, in minutes of a day.
    pub fn bulk_minutes_withheld_per_day(&self) -> f64 {
        (self.ticks as f64 - self.bulk_capacity_minutes) / self.days_at_least_one()
    }

    /// Minutes from the trace's first tick to the first protected one.
    pub fn minutes_to_first_protection(&self) -> Option<i64> {
        Some((self.first_protected_at? - self.start_at?).div_euclid(60))
    }

    /// A critical reading came and the state never reached critical after it.
    pub fn never_protected(&self) -> bool {
        self.first_critical_at.is_some() && self.minutes_to_protect.is_none()
    }
}

/// Accumulates a [`Summary`] from a stream of ticks.
pub struct Accumulator {
    summary: Summary,
    checker: InvariantChecker,
    /// Recent changes (time, from, to), to find flaps.
    changes: Vec<(Instant, ProtectionState, ProtectionState)>,
}

impl Accumulator {
    /// Invariants checked against the policy's declared numbers.
    pub fn new(policy: &str, trace: &str, thresholds: &Thresholds) -> Accumulator {
        Accumulator::with_floors(policy, trace, thresholds, &Floors::default())
    }

    /// Invariants checked against the policy's declared numbers raised to `floors`.
    pub fn with_floors(policy: &str, trace: &str, thresholds: &Thresholds, floors: &Floors) -> Accumulator {
        Accumulator {
            summary: Summary {
                policy: policy.to_string(),
                trace: trace.to_string(),
                ticks: 0,
                transitions: 0,
                flaps: 0,
                minutes: [0; 4],
                minutes_to_protect: None,
                over_protection_minutes: 0,
                incidents: 0,
                bulk_capacity_minutes: 0.0,
                failed_reads: 0,
                throttle_engagements: 0,
                throttle_releases: 0,
                minutes_held_for_restore: 0,
                minutes_held_by_damping: 0,
                violations: Vec::new(),
                start_at: None,
                first_critical_at: None,
                first_protected_at: None,
                calm_marks: Vec::new(),
                published: [None; 4],
            },
            checker: InvariantChecker::with_floors(thresholds, floors),
            changes: Vec::new(),
        }
    }

    /// Counts one tick: its minute in its state, its bulk factor and published factors, a
    /// transition (and a flap when it undoes a change within `FLAP_WINDOW_S`), the first
    /// critical reading and first protection, and the invariant it breaks, if any.
    pub fn add(&mut self, tick: &Tick<'_>) {
        let d = tick.outcome;
        let s = &mut self.summary;
        s.ticks += 1;
        s.start_at.get_or_insert(tick.at);
        let state_rank = d.state.rank();
        s.minutes[state_rank as usize] += 1;
        s.bulk_capacity_minutes += d.factors.bulk;
        let f = d.factors;
        s.published[state_rank as usize] = Some(match s.published[state_rank as usize] {
            Some(p) => {
                Factors { bulk: p.bulk.max(f.bulk), heavy: p.heavy.max(f.heavy), write: p.write.max(f.write), read: p.read.max(f.read) }
            }
            None => f,
        });
        if d.level.is_none() {
            s.failed_reads += 1;
        }
        if d.damping_held {
            s.minutes_held_by_damping += 1;
        }
        match d.throttles {
            ThrottleIntent::Engage => s.throttle_engagements += 1,
            ThrottleIntent::Release => s.throttle_releases += 1,
            ThrottleIntent::None if d.restore_held => s.minutes_held_for_restore += 1,
            ThrottleIntent::None => {}
        }
        let pinned = tick.pin.is_some_and(|p| p.expires_at > tick.at);
        if state_rank > 0 && !pinned && d.level == Some(Level::Normal) {
            s.over_protection_minutes += 1;
        }
        if s.ticks <= CALM_MARKS_UP_TO {
            s.calm_marks.push(CalmMark {
                at: tick.at,
                protected_unpinned: state_rank > 0 && !pinned,
                reading_normal: d.level == Some(Level::Normal),
            });
        } else if !s.calm_marks.is_empty() {
            s.calm_marks = Vec::new();
        }
        if d.changed {
            s.transitions += 1;
            if d.previous == ProtectionState::Normal {
                s.incidents += 1;
            }
            self.changes.retain(|(at, _, _)| tick.at - at <= FLAP_WINDOW_S);
            if self.changes.iter().any(|(_, from, to)| *from == d.state && *to == d.previous) {
                s.flaps += 1;
            }
            self.changes.push((tick.at, d.previous, d.state));
        }
        if d.level == Some(Level::Critical) && s.first_critical_at.is_none() {
            s.first_critical_at = Some(tick.at);
        }
        let protected = state_rank >= ProtectionState::Critical.rank();
        if protected && s.first_protected_at.is_none() {
            s.first_protected_at = Some(tick.at);
        }
        if let (Some(first), None) = (s.first_critical_at, s.minutes_to_protect)
            && protected
        {
            s.minutes_to_protect = Some((tick.at - first).div_euclid(60));
        }
        if let Some(v) = self.checker.check(tick) {
            s.violations.push(v);
        }
    }

    /// The summary of every tick added.
    pub fn finish(self) -> Summary {
        self.summary
    }
}
