//! From per-trace scores to a choice (docs/behaviour.md §10.8): each candidate's scores summed
//! over the training traces and over the hold-out, the Pareto front of flaps per day against bulk
//! capacity lost, and the chosen candidate: the fewest flaps per day among those that break no
//! invariant, miss no protection the base gave, delay no entry into critical by more than the
//! rule allows and lose no more bulk capacity than it allows, all on the training traces. Ties go
//! to less capacity lost, then the shorter delay, then the earlier candidate, so a choice never
//! depends on anything but the numbers.

use super::evidence::{EvidenceTrace, Set};
use super::score::TraceScore;
use super::space::ChoiceRule;
use serde::Serialize;

/// One candidate's scores over one side of the split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetScore {
    /// How many traces are summed.
    pub traces: usize,
    /// Ticks over those traces, one a minute: their length in minutes.
    pub ticks: u64,
    /// Flaps: changes undone (back to the state they left) within 15 minutes.
    pub flaps: u64,
    /// Flaps per day of trace (a set shorter than a day counts as one).
    pub flaps_per_day: f64,
    /// Changes of protection state.
    pub transitions: u64,
    /// The bulk factor summed over the ticks (a minute at full bulk counts 1).
    pub bulk_capacity_minutes: f64,
    /// Bulk capacity withheld: minutes minus bulk capacity-minutes, in percent of the minutes.
    pub bulk_capacity_withheld_pct: f64,
    /// Bulk capacity-minutes lost against the base, in percent of the base's (negative: gained).
    pub bulk_capacity_loss_vs_base_pct: f64,
    /// Minutes protected (above normal, no active pin) on readings the candidate assessed normal.
    pub over_protection_minutes: u64,
    /// Minutes in critical.
    pub minutes_critical: u64,
    /// Minutes in emergency.
    pub minutes_emergency: u64,
    /// The longest time from a first critical reading to protection, over the traces.
    pub worst_minutes_to_protect: Option<i64>,
    /// Traces where a critical reading came and protection never followed.
    pub never_protected: u32,
    /// Entries of the base into critical or above.
    pub base_entries: u32,
    /// The most minutes any of them came later; none without entries.
    pub max_protection_delay: Option<i64>,
    /// Base entries never matched before the trace ended.
    pub missed_protections: u32,
    /// Ticks that engaged the emergency stage throttles, the switch as the traces set it (off at
    /// the start).
    pub throttle_engagements: u64,
    /// Invariant violations (INV-01 to INV-03, INV-08), at most one a tick.
    pub violations: u64,
}

/// Sums `scores` (one per trace of `evidence`) over the traces of `set`.
pub fn aggregate(scores: &[TraceScore], base: &[TraceScore], evidence: &[EvidenceTrace], set: Set) -> SetScore {
    aggregate_where(scores, base, evidence, |e| e.set == set)
}

/// Sums `scores` (one per trace of `evidence`) over the traces `keep` keeps.
pub fn aggregate_where(
    scores: &[TraceScore],
    base: &[TraceScore],
    evidence: &[EvidenceTrace],
    keep: impl Fn(&EvidenceTrace) -> bool,
) -> SetScore {
    // One pass over the kept traces in evidence order (the folds of a cross-validation call this
    // for every candidate). Each float is summed as `Iterator::sum` sums, from its own starting
    // value and in the same order, so the figures keep every bit.
    let zero: f64 = std::iter::empty::<f64>().sum();
    let mut t = SetScore {
        traces: 0,
        ticks: 0,
        flaps: 0,
        flaps_per_day: 0.0,
        transitions: 0,
        bulk_capacity_minutes: zero,
        bulk_capacity_withheld_pct: 0.0,
        bulk_capacity_loss_vs_base_pct: 0.0,
        over_protection_minutes: 0,
        minutes_critical: 0,
        minutes_emergency: 0,
        worst_minutes_to_protect: None,
        never_protected: 0,
        base_entries: 0,
        max_protection_delay: None,
        missed_protections: 0,
        throttle_engagements: 0,
        violations: 0,
    };
    let mut base_bulk = zero;
    for ((s, b), _) in scores.iter().zip(base).zip(evidence).filter(|(_, e)| keep(e)) {
        t.traces += 1;
        t.ticks += s.ticks;
        t.flaps += s.flaps;
        t.transitions += s.transitions;
        t.bulk_capacity_minutes += s.bulk_capacity_minutes;
        base_bulk += b.bulk_capacity_minutes;
        t.over_protection_minutes += s.over_protection_minutes;
        t.minutes_critical += s.minutes[2];
        t.minutes_emergency += s.minutes[3];
        t.worst_minutes_to_protect = t.worst_minutes_to_protect.max(s.minutes_to_protect);
        t.never_protected += u32::from(s.never_protected);
        t.base_entries += s.base_entries;
        t.max_protection_delay = t.max_protection_delay.max(s.max_protection_delay);
        t.missed_protections += s.missed_protections;
        t.throttle_engagements += s.throttle_engagements;
        t.violations += s.violations;
    }
    let (ticks, bulk) = (t.ticks, t.bulk_capacity_minutes);
    t.flaps_per_day = t.flaps as f64 / (ticks as f64 / 1440.0).max(1.0);
    t.bulk_capacity_withheld_pct = if ticks > 0 { (ticks as f64 - bulk) / ticks as f64 * 100.0 } else { 0.0 };
    t.bulk_capacity_loss_vs_base_pct = if base_bulk > 0.0 { (base_bulk - bulk) / base_bulk * 100.0 } else { 0.0 };
    t
}

/// Whether a candidate's training score meets the rule (and why not).
pub fn meets(score: &SetScore, rule: &ChoiceRule) -> Result<(), String> {
    first_break(score, rule).map_or(Ok(()), |b| Err(b.to_string()))
}

/// Whether a score meets the rule, without saying why not (the folds of a cross-validation ask
/// this of every candidate, and need no words).
pub(crate) fn meets_rule(score: &SetScore, rule: &ChoiceRule) -> bool {
    first_break(score, rule).is_none()
}

/// The first rule of `[choose]` a score breaks.
enum RuleBreak {
    Violations(u64),
    Missed(u32),
    Delay(i64),
    Loss(f64),
}

impl std::fmt::Display for RuleBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleBreak::Violations(n) => write!(f, "{n} invariant violations"),
            RuleBreak::Missed(n) => write!(f, "{n} entries into critical of the base never matched"),
            RuleBreak::Delay(delay) => write!(f, "an entry into critical {delay} min later than the base"),
            RuleBreak::Loss(pct) => write!(f, "{pct:.3} % bulk capacity lost against the base"),
        }
    }
}

fn first_break(score: &SetScore, rule: &ChoiceRule) -> Option<RuleBreak> {
    if score.violations > 0 {
        return Some(RuleBreak::Violations(score.violations));
    }
    if score.missed_protections > 0 {
        return Some(RuleBreak::Missed(score.missed_protections));
    }
    if let Some(delay) = score.max_protection_delay
        && delay > rule.max_protection_delay_minutes
    {
        return Some(RuleBreak::Delay(delay));
    }
    if score.bulk_capacity_loss_vs_base_pct > rule.max_bulk_capacity_loss_pct + 1e-9 {
        return Some(RuleBreak::Loss(score.bulk_capacity_loss_vs_base_pct));
    }
    None
}

/// The index of the chosen candidate among `train` scores: the best of those whose verdict is
/// `Ok` (they meet the rule, [`meets`], and any other constraint such as the gate).
pub fn choose(train: &[SetScore], verdicts: &[Result<(), String>]) -> Option<usize> {
    let key = |s: &SetScore| (s.flaps_per_day, s.bulk_capacity_loss_vs_base_pct, s.max_protection_delay.unwrap_or(0));
    train
        .iter()
        .enumerate()
        .filter(|(i, _)| verdicts[*i].is_ok())
        .min_by(|(i, a), (j, b)| {
            let (ka, kb) = (key(a), key(b));
            ka.0.total_cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(ka.2.cmp(&kb.2)).then(i.cmp(j))
        })
        .map(|(i, _)| i)
}

/// The candidates no other candidate beats on both flaps per day and bulk capacity lost
/// (violation-free candidates only), ordered by flaps per day.
pub fn pareto_front(train: &[SetScore]) -> Vec<usize> {
    let eligible: Vec<usize> = (0..train.len()).filter(|&i| train[i].violations == 0).collect();
    let point = |i: usize| (train[i].flaps_per_day, train[i].bulk_capacity_loss_vs_base_pct);
    let mut front: Vec<usize> = eligible
        .iter()
        .copied()
        .filter(|&i| {
            let (f, c) = point(i);
            !eligible.iter().any(|&j| {
                let (fj, cj) = point(j);
                (fj <= f && cj <= c) && (fj < f || cj < c)
            })
        })
        .collect();
    front.sort_by(|&a, &b| point(a).0.total_cmp(&point(b).0).then(point(a).1.total_cmp(&point(b).1)).then(a.cmp(&b)));
    // Equal points: keep the first candidate of each.
    front.dedup_by(|a, b| point(*a) == point(*b));
    front
}

#[cfg(test)]
mod tests;
