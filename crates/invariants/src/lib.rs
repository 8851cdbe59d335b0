//! The invariants INV-01 to INV-03 and INV-08 (docs/behaviour.md §12), checked from a policy's outputs alone (the decision
//! lines and the inputs the replay gave it), independently of the policy's own code: the
//! checker assesses every reading itself (docs/behaviour.md §3, with the thresholds the policy
//! declares), so a policy that misjudges a reading and acts on it is caught, not excused.
//!
//! The numbers of INV-01 are the policy's own (docs/behaviour.md §13: every number is a policy
//! parameter); [`Floors`] raise them to the least the project accepts (INV-01's 3 readings, 5
//! calmer readings, 5 minutes), so a candidate that loosens them breaks INV-01 in its outputs.
//!
//! A crate of its own, on the vocabulary and the trace format's instants alone: the sentinel's
//! replay checks every policy with it, and the fuzz targets check the rules' native code with it
//! without building the sentinel.

use serde::{Deserialize, Serialize};
use trace_format::instants::format_rfc3339;
use vocabulary::{Cause, Instant, Level, LevelThresholds, Outcome, Pin, ProtectionState, Reading, Thresholds};

/// One replayed tick of one policy.
#[derive(Debug, Clone)]
pub struct Tick<'a> {
    pub at: Instant,
    /// The reading as the policy saw it (baselines filled in); none for a failed read.
    pub reading: Option<&'a Reading>,
    /// The pin in force (active or not) at this tick.
    pub pin: Option<&'a Pin>,
    pub throttles_enabled: bool,
    pub outcome: &'a Outcome,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub invariant: &'static str,
    pub at: String,
    pub detail: String,
}

/// The least INV-01 accepts, whatever a policy declares (none: the policy's own numbers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Floors {
    /// Automatic changes at least this far apart (the seed: 300 s).
    pub min_spacing_s: Option<u32>,
    /// Escalations supported by at least this many readings (the seed: 3).
    pub min_escalate_readings: Option<u32>,
    /// Recoveries after at least this many calmer readings (the seed: 5).
    pub min_recover_readings: Option<u32>,
}

/// The level of one reading by docs/behaviour.md §3, computed here rather than by the policy.
/// Absent or non-finite values contribute nothing; latency counts only where the baseline is
/// above 0; scaling alone is constrained at most.
pub fn assess(reading: &Reading, t: &Thresholds) -> Level {
    let against = |value: f64, b: &LevelThresholds| {
        if !value.is_finite() || value < b.constrained {
            Level::Normal
        } else if value < b.critical {
            Level::Constrained
        } else {
            Level::Critical
        }
    };
    let levels = [
        reading.cpu_pct.map(|v| against(v, &t.cpu_pct)),
        reading.connections_pct.map(|v| against(v, &t.connections_pct)),
        worst_latency_ratio(reading).map(|r| against(r, &t.latency_ratio)),
        (reading.scaling == Some(true)).then_some(Level::Constrained),
    ];
    levels.into_iter().flatten().max_by_key(|l| l.rank()).unwrap_or(Level::Normal)
}

/// The level a reading counts as for a recovery (docs/behaviour.md §3): [`assess`] against each
/// signal's boundaries lowered by its resolve band.
pub fn assess_for_recovery(reading: &Reading, t: &Thresholds) -> Level {
    let mut lowered = *t;
    for l in [&mut lowered.cpu_pct, &mut lowered.connections_pct, &mut lowered.latency_ratio] {
        *l = LevelThresholds { constrained: l.constrained - l.resolve_band, critical: l.critical - l.resolve_band, resolve_band: 0.0 };
    }
    assess(reading, &lowered)
}

/// The highest p95 / baseline ratio among APIs with a finite baseline above 0.
pub fn worst_latency_ratio(reading: &Reading) -> Option<f64> {
    reading
        .latency
        .iter()
        .filter_map(|l| match (l.p95_ms, l.baseline_ms) {
            (Some(p95), Some(base)) if p95.is_finite() && base.is_finite() && base > 0.0 => Some(p95 / base),
            _ => None,
        })
        .filter(|r| r.is_finite())
        .reduce(f64::max)
}

pub struct InvariantChecker {
    thresholds: Thresholds,
    spacing_s: Instant,
    escalate_readings: usize,
    recover_readings: usize,
    last_auto_change: Option<Instant>,
    /// The checker's own levels of the newest consecutive readings, each with the level it
    /// counts as for a recovery (cleared by failed reads and gaps, as docs/behaviour.md §5.1
    /// says).
    levels: Vec<(Instant, Level, Level)>,
    max_gap_s: Instant,
    previous_failed: bool,
    /// Why the declared factors do not protect (INV-08), reported once, at the first tick.
    unprotective: Option<String>,
}

impl InvariantChecker {
    /// Checks against the policy's declared numbers.
    pub fn new(t: &Thresholds) -> InvariantChecker {
        InvariantChecker::with_floors(t, &Floors::default())
    }

    /// Checks against the policy's declared numbers, raised to `floors`.
    pub fn with_floors(t: &Thresholds, floors: &Floors) -> InvariantChecker {
        let at_least = |own: u32, floor: Option<u32>| own.max(floor.unwrap_or(0));
        InvariantChecker {
            thresholds: *t,
            spacing_s: Instant::from(at_least(t.spacing_s, floors.min_spacing_s)),
            escalate_readings: at_least(t.escalate_readings, floors.min_escalate_readings) as usize,
            recover_readings: at_least(t.recover_readings, floors.min_recover_readings) as usize,
            last_auto_change: None,
            levels: Vec::new(),
            max_gap_s: Instant::from(t.max_gap_s),
            previous_failed: false,
            unprotective: t.factors.check_protection().err(),
        }
    }

    /// The first invariant this tick breaks, if any.
    pub fn check(&mut self, tick: &Tick<'_>) -> Option<Violation> {
        let d = tick.outcome;
        let pinned = tick.pin.is_some_and(|p| p.expires_at > tick.at);
        let violation = |invariant, detail: String| Some(Violation { invariant, at: format_rfc3339(tick.at), detail });
        let own_level = tick.reading.map(|r| assess(r, &self.thresholds));
        let t = &self.thresholds;
        let banded = [t.cpu_pct, t.connections_pct, t.latency_ratio].iter().any(|l| l.resolve_band != 0.0);
        let own_recovery_level = if banded { tick.reading.map(|r| assess_for_recovery(r, t)) } else { own_level };
        self.remember(tick.at, own_level.zip(own_recovery_level));
        let failed = tick.reading.is_none();
        let failed_twice = failed && self.previous_failed;
        let first_failure = failed && !self.previous_failed;
        self.previous_failed = failed;

        let mut found = None;
        if d.changed && !pinned {
            // INV-01: automatic changes observe the spacing.
            // (A signal-loss release goes ahead whatever the spacing.)
            if let Some(last) = self.last_auto_change
                && d.cause != Cause::SignalLostRelease
                && tick.at - last < self.spacing_s
            {
                found = found.or(violation("INV-01", format!("automatic change {}s after the previous one", tick.at - last)));
            }
            if !d.cause.is_automatic() {
                found = found.or(violation("INV-01", format!("unpinned change with cause {}", d.cause.name())));
            }
            // INV-02: automatic emergency only from critical.
            if d.state == ProtectionState::Emergency && d.previous != ProtectionState::Critical {
                found = found.or(violation("INV-02", format!("emergency reached from {} without a pin", d.previous.name())));
            }
            if d.state.rank() > d.previous.rank() {
                let need = self.escalate_readings;
                let support = self.newest(need).is_some_and(|mut n| n.all(|(l, _)| l.rank() >= d.state.rank().min(2)));
                if !support {
                    found = found.or(violation("INV-01", format!("escalation to {} without {need} supporting readings", d.state.name())));
                }
            } else if d.cause == Cause::Recover {
                let need = self.recover_readings;
                let bar = d.previous.rank().min(2);
                let calm = self.newest(need).is_some_and(|mut n| n.all(|(_, recovery)| recovery.rank() < bar));
                if !calm || d.previous.rank() - d.state.rank() != 1 {
                    found = found.or(violation(
                        "INV-01",
                        format!("recovery {} -> {} without {need} calmer readings", d.previous.name(), d.state.name()),
                    ));
                }
            }
            self.last_auto_change = Some(tick.at);
        }
        // INV-02: scaling alone never classifies a reading above constrained.
        if let (Some(r), Some(Level::Critical)) = (tick.reading, d.level)
            && r.scaling == Some(true)
            && own_level != Some(Level::Critical)
        {
            found = found.or(violation("INV-02", "a scaling reading was assessed critical without a critical signal".into()));
        }
        // INV-08: protection. The factors published are the ones the version declares for its
        // state, and those protect (no lane rises with severity; critical and emergency
        // withhold bulk work), so a version cannot publish a weaker state than it names.
        if self.unprotective.is_some() {
            // Reported once, at the first tick no other invariant is reported at.
            if found.is_none() {
                let why = self.unprotective.take().unwrap_or_default();
                found = violation("INV-08", format!("the version's declared factors do not protect: {why}"));
            }
        } else if d.factors != self.thresholds.factors.of(d.state) {
            let declared = self.thresholds.factors.of(d.state);
            found = found
                .or(violation("INV-08", format!("published {} in {}, where the version declares {declared}", d.factors, d.state.name())));
        }
        // INV-03: without a pin, one failed read holds and the next restores normal.
        if !pinned && first_failure && d.changed {
            found = found.or(violation("INV-03", "the first failed read changed the state".into()));
        }
        if !pinned && failed_twice && d.state != ProtectionState::Normal {
            found = found.or(violation("INV-03", format!("{} after two failed reads", d.state.name())));
        }
        found
    }

    /// The newest `n` (level, recovery level) pairs, when there are that many consecutive ones.
    fn newest(&self, n: usize) -> Option<impl Iterator<Item = (Level, Level)>> {
        (self.levels.len() >= n).then(|| self.levels[self.levels.len() - n..].iter().map(|&(_, l, r)| (l, r)))
    }

    fn remember(&mut self, at: Instant, levels: Option<(Level, Level)>) {
        match levels {
            None => self.levels.clear(),
            Some((level, recovery_level)) => {
                if let Some((newest, _, _)) = self.levels.last().copied() {
                    if newest.div_euclid(60) == at.div_euclid(60) {
                        self.levels.pop();
                    } else if at < newest || at - newest > self.max_gap_s {
                        self.levels.clear();
                    }
                }
                self.levels.push((at, level, recovery_level));
                let keep = self.escalate_readings.max(self.recover_readings);
                if self.levels.len() > keep {
                    self.levels.remove(0);
                }
            }
        }
    }
}
