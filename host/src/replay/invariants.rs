//! The seed invariants INV-01 to INV-03, checked from a policy's outputs alone (the decision
//! lines and the inputs the replay gave it), independently of the policy's own code.

use super::Tick;
use crate::bindings::{Cause, Instant, Level, ProtectionState, Thresholds};
use crate::instants::format_rfc3339;
use crate::names::{self, is_automatic, level_rank, rank};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub invariant: &'static str,
    pub at: String,
    pub detail: String,
}

pub struct InvariantChecker {
    spacing_s: Instant,
    escalate_readings: usize,
    recover_readings: usize,
    last_auto_change: Option<Instant>,
    /// Levels of the newest consecutive readings (cleared by failed reads and gaps).
    levels: Vec<(Instant, Level)>,
    max_gap_s: Instant,
    previous_failed: bool,
}

impl InvariantChecker {
    pub fn new(t: &Thresholds) -> InvariantChecker {
        InvariantChecker {
            spacing_s: Instant::from(t.spacing_s),
            escalate_readings: t.escalate_readings as usize,
            recover_readings: t.recover_readings as usize,
            last_auto_change: None,
            levels: Vec::new(),
            max_gap_s: Instant::from(t.max_gap_s),
            previous_failed: false,
        }
    }

    /// The first invariant this tick breaks, if any.
    pub fn check(&mut self, tick: &Tick<'_>) -> Option<Violation> {
        let d = tick.decision;
        let pinned = tick.pin.is_some_and(|p| p.expires_at > tick.at);
        let violation = |invariant, detail: String| Some(Violation { invariant, at: format_rfc3339(tick.at), detail });
        self.remember(tick.at, d.level);
        let failed_twice = d.level.is_none() && self.previous_failed;
        let first_failure = d.level.is_none() && !self.previous_failed;
        self.previous_failed = d.level.is_none();

        let mut found = None;
        if d.changed && !pinned {
            // INV-01: automatic changes observe the spacing.
            // (A signal-loss release goes ahead whatever the spacing.)
            if let Some(last) = self.last_auto_change
                && d.cause != Cause::SignalLostRelease
                && tick.at - last < self.spacing_s
            {
                found = found.or(violation(
                    "INV-01",
                    format!("automatic change {}s after the previous one", tick.at - last),
                ));
            }
            if !is_automatic(d.cause) {
                found = found.or(violation("INV-01", format!("unpinned change with cause {}", names::cause(d.cause))));
            }
            // INV-02: automatic emergency only from critical.
            if d.state == ProtectionState::Emergency && d.previous != ProtectionState::Critical {
                found = found.or(violation(
                    "INV-02",
                    format!("emergency reached from {} without a pin", names::state(d.previous)),
                ));
            }
            if rank(d.state) > rank(d.previous) {
                let need = self.escalate_readings;
                let support = self.levels.len() >= need
                    && self.levels[self.levels.len() - need..].iter().all(|(_, l)| level_rank(*l) >= rank(d.state).min(2));
                if !support {
                    found = found.or(violation(
                        "INV-01",
                        format!("escalation to {} without {need} supporting readings", names::state(d.state)),
                    ));
                }
            } else if d.cause == Cause::Recover {
                let need = self.recover_readings;
                let bar = rank(d.previous).min(2);
                let calm = self.levels.len() >= need
                    && self.levels[self.levels.len() - need..].iter().all(|(_, l)| level_rank(*l) < bar);
                if !calm || rank(d.previous) - rank(d.state) != 1 {
                    found = found.or(violation(
                        "INV-01",
                        format!("recovery {} -> {} without {need} calmer readings", names::state(d.previous), names::state(d.state)),
                    ));
                }
            }
            self.last_auto_change = Some(tick.at);
        }
        // INV-02: scaling alone never classifies a reading above constrained.
        if let Some(r) = tick.reading {
            let scaling_only = r.scaling == Some(true)
                && r.cpu_pct.is_none()
                && r.connections_pct.is_none()
                && r.latency.iter().all(|l| l.p95_ms.is_none());
            if scaling_only && d.level == Some(Level::Critical) {
                found = found.or(violation("INV-02", "scaling alone was assessed critical".into()));
            }
        }
        // INV-03: without a pin, one failed read holds and the next restores normal.
        if !pinned && first_failure && d.changed {
            found = found.or(violation("INV-03", "the first failed read changed the state".into()));
        }
        if !pinned && failed_twice && d.state != ProtectionState::Normal {
            found = found.or(violation("INV-03", format!("{} after two failed reads", names::state(d.state))));
        }
        found
    }

    fn remember(&mut self, at: Instant, level: Option<Level>) {
        match level {
            None => self.levels.clear(),
            Some(level) => {
                if let Some((newest, _)) = self.levels.last().copied() {
                    if newest.div_euclid(60) == at.div_euclid(60) {
                        self.levels.pop();
                    } else if at < newest || at - newest > self.max_gap_s {
                        self.levels.clear();
                    }
                }
                self.levels.push((at, level));
                let keep = self.escalate_readings.max(self.recover_readings);
                if self.levels.len() > keep {
                    self.levels.remove(0);
                }
            }
        }
    }
}
