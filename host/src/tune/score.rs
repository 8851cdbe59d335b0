//! What one replay of one trace scores (docs/behaviour.md §10.8): the comparison's own counts
//! (flaps, minutes per state, bulk capacity-minutes, over-protection, time to protect,
//! invariants: [`Accumulator`]) and, against the base's replay of the same trace, how much later
//! each of the base's entries into critical came. With the switch on, [`ReadinessTracker`]
//! follows every engagement of the stage throttles to what ended it.

use sentinel_core::policy::invariants::Floors;
use sentinel_core::replay::Tick;
use sentinel_core::replay::compare::{Accumulator, Summary};
use serde::Serialize;
use vocabulary::{Cause, Instant, ProtectionState, Thresholds, ThrottleIntent};

/// One candidate over one trace.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct TraceScore {
    /// Ticks replayed, one a minute: the trace's length in minutes.
    pub ticks: u64,
    /// Changes of protection state.
    pub transitions: u64,
    /// Changes undone (back to the state they left) within 15 minutes.
    pub flaps: u64,
    /// Minutes in normal, constrained, critical, emergency.
    pub minutes: [u64; 4],
    /// The bulk factor summed over the ticks (a minute at full bulk counts 1).
    pub bulk_capacity_minutes: f64,
    /// Minutes protected (above normal, no active pin) on readings this candidate assessed normal.
    pub over_protection_minutes: u64,
    /// Minutes from the first reading this candidate assessed critical to protection.
    pub minutes_to_protect: Option<i64>,
    /// A critical reading came and protection never followed.
    pub never_protected: bool,
    /// The base's entries into critical or above on this trace.
    pub base_entries: u32,
    /// The most minutes any of them came later with this candidate; none without entries.
    pub max_protection_delay: Option<i64>,
    /// Base entries this candidate had not matched when the trace ended.
    pub missed_protections: u32,
    /// Ticks that engaged the emergency stage throttles, the switch as the trace sets it (off at
    /// the start).
    pub throttle_engagements: u64,
    /// Invariant violations (INV-01 to INV-03, INV-08), at most one a tick.
    pub violations: u64,
    /// The first violation, as `INV-NN at TIME: DETAIL` (TIME in RFC 3339); none without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_violation: Option<String>,
}

/// Scores a stream of ticks.
pub struct Scorer {
    acc: Accumulator,
    /// The base's entries not yet matched, oldest first.
    pending: std::collections::VecDeque<Instant>,
    base_entries: u32,
    max_delay: Option<i64>,
    /// Entries into critical or above of this replay (what a candidate is later held to).
    entries: Vec<Instant>,
}

impl Scorer {
    /// `base_entries`: when the base entered critical or above on this trace (empty for the base).
    pub fn new(label: &str, trace: &str, thresholds: &Thresholds, floors: &Floors, base_entries: &[Instant]) -> Scorer {
        Scorer {
            acc: Accumulator::with_floors(label, trace, thresholds, floors),
            pending: base_entries.iter().copied().collect(),
            base_entries: base_entries.len() as u32,
            max_delay: None,
            entries: Vec::new(),
        }
    }

    /// Counts one tick: the comparison's counts, an entry of this replay into critical or above,
    /// and, when the tick is critical or above, each pending base entry at or before it matched,
    /// with how many minutes later it came.
    pub fn add(&mut self, tick: &Tick<'_>) {
        self.acc.add(tick);
        let d = tick.outcome;
        let protected = d.state.rank() >= ProtectionState::Critical.rank();
        if d.changed && protected && d.previous.rank() < ProtectionState::Critical.rank() {
            self.entries.push(tick.at);
        }
        if protected {
            while let Some(&entry) = self.pending.front()
                && entry <= tick.at
            {
                let delay = (tick.at - entry).div_euclid(60);
                self.max_delay = Some(self.max_delay.map_or(delay, |m| m.max(delay)));
                self.pending.pop_front();
            }
        }
    }

    /// The score, and this replay's own entries into critical or above.
    pub fn finish(self) -> (TraceScore, Vec<Instant>) {
        let s: Summary = self.acc.finish();
        let score = TraceScore {
            ticks: s.ticks,
            transitions: s.transitions,
            flaps: s.flaps,
            minutes: s.minutes,
            bulk_capacity_minutes: s.bulk_capacity_minutes,
            over_protection_minutes: s.over_protection_minutes,
            minutes_to_protect: s.minutes_to_protect,
            never_protected: s.never_protected(),
            base_entries: self.base_entries,
            max_protection_delay: if self.base_entries > 0 { Some(self.max_delay.unwrap_or(0)) } else { None },
            missed_protections: self.pending.len() as u32,
            throttle_engagements: s.throttle_engagements,
            violations: s.violations.len() as u64,
            first_violation: s.violations.first().map(|v| format!("{} at {}: {}", v.invariant, v.at, v.detail)),
        };
        (score, self.entries)
    }
}

/// How the stage throttles would have gone with the switch on, over one trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Readiness {
    /// Times the stage throttles engaged.
    pub engagements: u64,
    /// Minutes from each engage to its release, summed.
    pub minutes_engaged: u64,
    /// Minutes of the longest single engagement.
    pub longest_minutes: u64,
    /// Released because the readings calmed (a recovery from emergency).
    pub ended_by_recovery: u64,
    /// Released because a pin set a state below emergency.
    pub ended_by_pin: u64,
    /// Released because the signal was lost (two failed reads).
    pub ended_by_signal_loss: u64,
    /// Released because the switch was turned off.
    pub ended_by_switch: u64,
    /// Still engaged when the trace ended.
    pub engaged_at_end: u64,
}

impl Readiness {
    /// Adds `other`'s counts and minutes to these (the longest engagement: the longer of the
    /// two), to sum traces.
    pub fn merge(&mut self, other: &Readiness) {
        self.engagements += other.engagements;
        self.minutes_engaged += other.minutes_engaged;
        self.longest_minutes = self.longest_minutes.max(other.longest_minutes);
        self.ended_by_recovery += other.ended_by_recovery;
        self.ended_by_pin += other.ended_by_pin;
        self.ended_by_signal_loss += other.ended_by_signal_loss;
        self.ended_by_switch += other.ended_by_switch;
        self.engaged_at_end += other.engaged_at_end;
    }
}

/// Follows engagements through a replay with the switch on.
#[derive(Debug, Default)]
pub struct ReadinessTracker {
    readiness: Readiness,
    engaged_at: Option<Instant>,
}

impl ReadinessTracker {
    /// Follows one tick: an engage starts an engagement; a release ends the open one, counting
    /// its minutes and what ended it (the switch off, a pin, a lost signal, else a recovery).
    pub fn add(&mut self, tick: &Tick<'_>) {
        let d = tick.outcome;
        match d.throttles {
            ThrottleIntent::Engage => {
                self.readiness.engagements += 1;
                self.engaged_at = Some(tick.at);
            }
            ThrottleIntent::Release => {
                let Some(since) = self.engaged_at.take() else { return };
                let minutes = (tick.at - since).div_euclid(60).max(0) as u64;
                let r = &mut self.readiness;
                r.minutes_engaged += minutes;
                r.longest_minutes = r.longest_minutes.max(minutes);
                match d.cause {
                    _ if !tick.throttles_enabled => r.ended_by_switch += 1,
                    Cause::Pinned => r.ended_by_pin += 1,
                    Cause::SignalLostRelease => r.ended_by_signal_loss += 1,
                    _ => r.ended_by_recovery += 1,
                }
            }
            ThrottleIntent::None => {}
        }
    }

    /// The replay's readiness; an engagement still open is counted as engaged at the end, its
    /// minutes running to `last_at` (the trace's last tick, none for an empty trace) inclusive.
    pub fn finish(mut self, last_at: Option<Instant>) -> Readiness {
        if let (Some(since), Some(end)) = (self.engaged_at, last_at) {
            let minutes = (end - since).div_euclid(60).max(0) as u64 + 1;
            self.readiness.minutes_engaged += minutes;
            self.readiness.longest_minutes = self.readiness.longest_minutes.max(minutes);
            self.readiness.engaged_at_end += 1;
        }
        self.readiness
    }
}
