//! The A/B gate: a candidate policy against a baseline, trace by trace, failing when the
//! candidate breaks an invariant or regresses beyond a configured limit. The gate file is
//! TOML with only the keys below (anything else is refused, naming the key):
//!
//! ```toml
//! fail_on_invariant = true                   # the candidate breaks INV-01..03, 08: fail (default)
//! max_minutes_to_protect_regression = 2      # minutes, first critical reading -> critical
//! max_protection_delay_minutes = 30          # minutes, the candidate's first protection later
//! max_flaps_per_day_increase = 1.0
//! flap_safety_traces = ["bursts_*"]          # traces (a name, or a prefix and *) that are a
//!                                            # safety check: no more flaps than the baseline at
//!                                            # all, costs not judged (generated shapes)
//! max_transitions_increase = 10
//! max_over_protection_increase_minutes = 30
//! max_bulk_capacity_loss_pct_of_day = 1      # bulk withheld more, % of each day (a shorter
//!                                            # trace counts as a day)
//! max_calm_protection_minutes_per_incident = 10  # traces under a day: minutes protected on
//!                                            # calm readings more, per incident of the base
//! [invariants]                               # the least INV-01 accepts, whatever a policy says
//! min_spacing_s = 300
//! min_escalate_readings = 3
//! min_recover_readings = 5
//! [[waive]]                                  # a regression accepted for one candidate version
//! candidate = "2.0.0"
//! metric = "minutes_to_first_protection"     # optional: every metric
//! trace = "direct_critical"                  # optional: every trace
//! reason = "the critical boundaries moved up on purpose"
//! ```
//!
//! Whatever the file says, the gate judges what each version publishes: in every state both
//! were in on a trace, a lane's factor from the candidate above the baseline's fails it
//! (`state_factors`, waivable as any finding), and with `fail_on_invariant` a decision whose
//! factors are not the ones its version declares, or declared factors that do not protect,
//! break INV-08.
//! An absent limit is not gated. Limits are "worse by more than": equal to the limit passes.
//! Costs are judged in what an operator pays: capacity as a share of a day, and on short
//! scenarios minutes per incident, never as a share of a trace's own length. The key that did
//! (`max_bulk_capacity_loss_pct`, the gate of 1.1.0 and 1.2.0) still works as it did, so a gate
//! file written for it judges as before (and those versions' tunings reproduce), with a warning
//! naming the two keys that replace it.
//! A waived finding is still reported, with its reason, but does not fail the gate.

use super::compare::{CALM_MARKS_UP_TO, Summary};
use super::metrics::{Row, Verdict, metric};
pub use super::waivers::{Retired, Waiver};
use crate::policy::invariants::Floors;
use serde::{Deserialize, Serialize};
use std::path::Path;
use vocabulary::ProtectionState;

/// A gate file: the limits a candidate is judged by against its baseline, trace by trace.
/// Each limit is "worse by more than" (equal passes); an absent one is not gated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// Fail when the candidate breaks an invariant (INV-01 to INV-03, INV-08) on a trace; true
    /// unless the file says otherwise.
    #[serde(default = "yes")]
    pub fail_on_invariant: bool,
    /// Minutes from the first critical reading to protection the candidate may take more than
    /// the baseline; a candidate that never protects after it, where the baseline did, fails.
    pub max_minutes_to_protect_regression: Option<f64>,
    /// Minutes later than the baseline the candidate may first protect (reach critical), from
    /// the trace's start; never reaching critical where the baseline does fails.
    pub max_protection_delay_minutes: Option<f64>,
    /// Flaps per day the candidate may have more than the baseline (not used on
    /// `flap_safety_traces`, where no increase at all passes).
    pub max_flaps_per_day_increase: Option<f64>,
    /// Traces (a name, or a prefix ending in `*`) that are a safety check only: generated shapes
    /// such as the burst family. The candidate may not flap more often than the baseline there at
    /// all (whatever `max_flaps_per_day_increase` allows elsewhere), the other safety limits apply
    /// as everywhere, and the costs (transitions, over-protection, capacity, calm minutes) are not
    /// judged there: a generated day is not a day an operator pays for.
    #[serde(default)]
    pub flap_safety_traces: Vec<String>,
    /// Transitions the candidate may have more than the baseline on a trace.
    pub max_transitions_increase: Option<f64>,
    /// Over-protection minutes (protected, unpinned, on readings the policy assessed normal)
    /// the candidate may have more than the baseline.
    pub max_over_protection_increase_minutes: Option<f64>,
    /// Bulk capacity-minutes the candidate may withhold per day more than the baseline, in
    /// percent of a day's 1440 minutes (a trace under a day counts as a day).
    pub max_bulk_capacity_loss_pct_of_day: Option<f64>,
    /// On traces under a day only: minutes protected (no pin) on readings the baseline assessed
    /// normal, the candidate's more than the baseline's, per incident of the baseline (at least
    /// one).
    pub max_calm_protection_minutes_per_incident: Option<f64>,
    /// The old key (a percentage of each trace's bulk capacity-minutes): judged as before, with
    /// a warning naming the keys that replace it ([`Gate::warnings`]).
    pub max_bulk_capacity_loss_pct: Option<f64>,
    /// `[invariants]`: the least INV-01 accepts whatever a policy declares; the replay checks
    /// both policies against these floors (none set: each policy's own numbers).
    #[serde(default)]
    pub invariants: Floors,
    /// `[[waive]]`: regressions accepted for one candidate version, each with its reason (still
    /// reported, not failing).
    #[serde(default)]
    pub waive: Vec<Waiver>,
    /// Versions kept in `policies/` that are not on the way to production: CI's chain of gates
    /// (`tests/ab_gate.sh`, each version against the one before it) passes over them.
    #[serde(default)]
    pub retire: Vec<Retired>,
}

const MINUTES_A_DAY: f64 = 1440.0;

/// The finding of a candidate publishing a higher factor than the baseline in the same state;
/// always judged (a waiver names it to accept a deliberate change of factors).
pub(crate) const STATE_FACTORS: &str = "state_factors";

/// On a trace shorter than a day: the minutes each policy was protected (no pin) while the
/// baseline assessed the reading normal: calm by one judge for both, so a candidate whose
/// boundaries call more readings normal is not charged for protecting on the baseline's
/// constrained ones. None for a trace of a day or more (its cost is the share of a day).
fn calm_protection(baseline: &Summary, candidate: &Summary) -> Option<(u64, u64)> {
    if baseline.ticks > CALM_MARKS_UP_TO || baseline.calm_marks.len() != candidate.calm_marks.len() {
        return None;
    }
    let mut minutes = (0, 0);
    for (b, c) in baseline.calm_marks.iter().zip(&candidate.calm_marks) {
        if b.reading_normal && b.at == c.at {
            minutes.0 += u64::from(b.protected_unpinned);
            minutes.1 += u64::from(c.protected_unpinned);
        }
    }
    Some(minutes)
}

/// The warning a gate file with the old capacity key gets: what it measures, and what replaces it.
const OLD_CAPACITY_KEY: &str = "max_bulk_capacity_loss_pct is kept for gate files written before 1.3.0 and judged as before, but it measures capacity as a share of each trace, so a few calm minutes weighed 8-35 % on a 23-minute scenario; use max_bulk_capacity_loss_pct_of_day (bulk capacity withheld more than the baseline, in % of a day; a trace under a day counts as one) and max_calm_protection_minutes_per_incident (traces under a day: minutes protected on calm readings more, per incident), as policies/gate.toml does";

fn yes() -> bool {
    true
}

impl Default for Gate {
    fn default() -> Gate {
        toml::from_str("").expect("an empty gate file is valid")
    }
}

/// Why a gate file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The gate file could not be read.
    #[error("cannot read gate file {path}: {source}")]
    Read {
        /// The gate file, as it was named.
        path: String,
        /// The I/O error that reading it returned.
        source: std::io::Error,
    },
    /// The file is not a gate: invalid TOML, an unknown key, a limit negative or not finite, a
    /// waiver or retirement without its version or reason, an unknown metric, a bad trace
    /// pattern.
    #[error("gate file {path} is invalid: {message}")]
    Invalid {
        /// The gate file, as it was named.
        path: String,
        /// What is wrong, naming the key.
        message: String,
    },
}

/// One metric on one trace that failed the gate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Regression {
    /// The trace the candidate regressed on.
    pub trace: String,
    /// The metric's key (`minutes_to_protect`, `invariant_violations`, ...).
    pub metric: &'static str,
    /// The gate key that caught it (`max_minutes_to_protect_regression`, `fail_on_invariant`).
    pub limit_key: &'static str,
    /// What regressed and by how much against the limit (`+3 min, limit +2`).
    pub message: String,
    /// The waiver's reason when the gate file accepts this finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waived: Option<String>,
}

impl Gate {
    /// Reads and checks a gate file; each of its [`Gate::warnings`] is logged.
    pub fn load(path: &Path) -> Result<Gate, GateError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| GateError::Read { path: name.clone(), source })?;
        let gate = Gate::parse(&name, &text)?;
        for warning in gate.warnings() {
            tracing::warn!(gate = %name, "{warning}");
        }
        Ok(gate)
    }

    /// What the file still says in an older way, and what to write instead.
    pub fn warnings(&self) -> Vec<&'static str> {
        self.max_bulk_capacity_loss_pct.map(|_| OLD_CAPACITY_KEY).into_iter().collect()
    }

    /// Parses and checks a gate file: limits are finite and not negative.
    pub fn parse(name: &str, text: &str) -> Result<Gate, GateError> {
        let gate: Gate = toml::from_str(text).map_err(|e| GateError::Invalid { path: name.into(), message: e.message().to_string() })?;
        for (key, value) in gate.limits() {
            if let Some(v) = value
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(GateError::Invalid { path: name.into(), message: format!("{key}: must be a number >= 0, got {v}") });
            }
        }
        for (i, w) in gate.waive.iter().enumerate() {
            if let Some(m) = &w.metric
                && metric(m).is_none()
                && m != STATE_FACTORS
            {
                return Err(GateError::Invalid { path: name.into(), message: format!("waive[{i}].metric: unknown metric {m:?}") });
            }
            if w.reason.trim().is_empty() || w.candidate.trim().is_empty() {
                return Err(GateError::Invalid { path: name.into(), message: format!("waive[{i}]: needs a candidate and a reason") });
            }
        }
        for (i, pattern) in gate.flap_safety_traces.iter().enumerate() {
            let stem = pattern.strip_suffix('*').unwrap_or(pattern);
            if stem.is_empty() || stem.contains('*') {
                return Err(GateError::Invalid {
                    path: name.into(),
                    message: format!("flap_safety_traces[{i}]: {pattern:?} is not a trace name or a prefix ending in one * (\"bursts_*\")"),
                });
            }
        }
        for (i, r) in gate.retire.iter().enumerate() {
            if r.reason.trim().is_empty() || r.version.trim().is_empty() {
                return Err(GateError::Invalid { path: name.into(), message: format!("retire[{i}]: needs a version and a reason") });
            }
        }
        Ok(gate)
    }

    fn limits(&self) -> [(&'static str, Option<f64>); 8] {
        [
            ("max_minutes_to_protect_regression", self.max_minutes_to_protect_regression),
            ("max_protection_delay_minutes", self.max_protection_delay_minutes),
            ("max_flaps_per_day_increase", self.max_flaps_per_day_increase),
            ("max_transitions_increase", self.max_transitions_increase),
            ("max_over_protection_increase_minutes", self.max_over_protection_increase_minutes),
            ("max_bulk_capacity_loss_pct", self.max_bulk_capacity_loss_pct),
            ("max_bulk_capacity_loss_pct_of_day", self.max_bulk_capacity_loss_pct_of_day),
            ("max_calm_protection_minutes_per_incident", self.max_calm_protection_minutes_per_incident),
        ]
    }

    /// A trace `flap_safety_traces` names (exactly, or by the prefix before its `*`).
    pub fn is_flap_safety_trace(&self, trace: &str) -> bool {
        self.flap_safety_traces.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => trace.starts_with(prefix),
            None => p == trace,
        })
    }

    /// Checks one trace's comparison of `candidate_version`; marks the rows that regressed and
    /// returns every finding (waived ones with their reason).
    pub fn check(&self, candidate_version: &str, baseline: &Summary, candidate: &Summary, rows: &mut [Row]) -> Vec<Regression> {
        let mut found = Vec::new();
        let trace = candidate.trace.clone();
        let mut fail = |rows: &mut [Row], key: &'static str, limit_key: &'static str, message: String| {
            let waived = self.waive.iter().find(|w| w.covers(candidate_version, &trace, key)).map(|w| w.reason.clone());
            if let Some(row) = rows.iter_mut().find(|r| r.key == key) {
                row.verdict = if waived.is_some() { Verdict::Waived } else { Verdict::Regressed };
                row.note = Some(match &waived {
                    Some(reason) => format!("{message}; waived: {reason}"),
                    None => message.clone(),
                });
            }
            found.push(Regression { trace: trace.clone(), metric: key, limit_key, message, waived });
        };
        if self.fail_on_invariant && !candidate.violations.is_empty() {
            let mut ids: Vec<&str> = candidate.violations.iter().map(|v| v.invariant).collect();
            ids.sort_unstable();
            ids.dedup();
            let first = &candidate.violations[0];
            let message = format!(
                "{} violation(s) of {} (first {} at {}: {})",
                candidate.violations.len(),
                ids.join(", "),
                first.invariant,
                first.at,
                first.detail
            );
            fail(rows, "invariant_violations", "fail_on_invariant", message);
        }
        // What is published, not what a state is called: in each state both were in, no lane
        // may get a higher factor from the candidate than from the baseline.
        for state in ProtectionState::ALL {
            let i = state.rank() as usize;
            let (Some(base), Some(cand)) = (baseline.published[i], candidate.published[i]) else { continue };
            for ((lane, b), (_, c)) in base.lanes().into_iter().zip(cand.lanes()) {
                if c > b + 1e-12 {
                    fail(
                        rows,
                        STATE_FACTORS,
                        "state_factors",
                        format!(
                            "publishes {lane} {c} in {} where the baseline publishes {b}: less protection in the same state",
                            state.name()
                        ),
                    );
                }
            }
        }
        let value = |key: &str, s: &Summary| metric(key).and_then(|m| (m.value)(s));
        let increase = |key: &str| value(key, baseline).zip(value(key, candidate)).map(|(b, c)| c - b);
        if let Some(limit) = self.max_minutes_to_protect_regression {
            if let Some(d) = increase("minutes_to_protect").filter(|d| *d > limit) {
                fail(rows, "minutes_to_protect", "max_minutes_to_protect_regression", format!("{d:+} min, limit +{limit}"));
            } else if candidate.never_protected() && baseline.minutes_to_protect.is_some() {
                fail(
                    rows,
                    "minutes_to_protect",
                    "max_minutes_to_protect_regression",
                    "never protected after its first critical reading".into(),
                );
            }
        }
        if let Some(limit) = self.max_protection_delay_minutes {
            let key = "minutes_to_first_protection";
            if let Some(d) = increase(key).filter(|d| *d > limit) {
                fail(rows, key, "max_protection_delay_minutes", format!("protects {d} min later, limit {limit}"));
            } else if baseline.first_protected_at.is_some() && candidate.first_protected_at.is_none() {
                fail(rows, key, "max_protection_delay_minutes", "never reaches critical where the baseline does".into());
            }
        }
        if self.is_flap_safety_trace(&trace) {
            if let Some(d) = increase("flaps_per_day").filter(|d| *d > 1e-9) {
                fail(
                    rows,
                    "flaps_per_day",
                    "flap_safety_traces",
                    format!("{d:+.2}: on this trace a candidate may not flap more than the baseline"),
                );
            }
            return found;
        }
        for (key, limit_key, limit) in [
            ("flaps_per_day", "max_flaps_per_day_increase", self.max_flaps_per_day_increase),
            ("transitions", "max_transitions_increase", self.max_transitions_increase),
            ("over_protection_minutes", "max_over_protection_increase_minutes", self.max_over_protection_increase_minutes),
        ] {
            if let Some(limit) = limit
                && let Some(d) = increase(key).filter(|d| *d > limit + 1e-9)
            {
                fail(rows, key, limit_key, format!("{d:+.2}, limit +{limit}"));
            }
        }
        if let Some(limit) = self.max_bulk_capacity_loss_pct
            && baseline.bulk_capacity_minutes > 0.0
        {
            let loss = (baseline.bulk_capacity_minutes - candidate.bulk_capacity_minutes) / baseline.bulk_capacity_minutes * 100.0;
            if loss > limit + 1e-9 {
                fail(rows, "bulk_capacity_minutes", "max_bulk_capacity_loss_pct", format!("{loss:.1} % less, limit {limit} %"));
            }
        }
        if let Some(limit) = self.max_bulk_capacity_loss_pct_of_day {
            // Minutes of each day's bulk capacity the candidate withholds more than the base.
            let more = candidate.bulk_minutes_withheld_per_day() - baseline.bulk_minutes_withheld_per_day();
            let pct = more / MINUTES_A_DAY * 100.0;
            if pct > limit + 1e-9 {
                fail(
                    rows,
                    "bulk_minutes_withheld_per_day",
                    "max_bulk_capacity_loss_pct_of_day",
                    format!("withholds {more:.1} more bulk capacity-minutes a day ({pct:.2} % of a day), limit {limit} %"),
                );
            }
        }
        if let Some(limit) = self.max_calm_protection_minutes_per_incident
            && let Some((base_minutes, candidate_minutes)) = calm_protection(baseline, candidate)
        {
            let incidents = baseline.incidents.max(1);
            let more = (candidate_minutes as f64 - base_minutes as f64) / incidents as f64;
            if more > limit + 1e-9 {
                fail(
                    rows,
                    "over_protection_minutes",
                    "max_calm_protection_minutes_per_incident",
                    format!(
                        "protected {more:+.1} min more per incident on readings the baseline assessed calm ({candidate_minutes} min against {base_minutes}, {incidents} incident(s) of the baseline), limit +{limit}"
                    ),
                );
            }
        }
        found
    }
}
