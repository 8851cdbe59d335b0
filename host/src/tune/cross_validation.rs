//! Judging thresholds on series they were not chosen on (docs/behaviour.md §10.8, "Hold-out by
//! series"). A series is one file of evidence (a server's metric history): its segments are
//! never split between choosing and judging, because a number fitted to a server's idle level
//! looks good on another week of the same server and says nothing about the next server.
//!
//! **The robust choice** on a set of series: among the candidates that meet the rule on those
//! series together ([`super::choose::meets`], and the gate when there is one), and under which
//! no series flaps more often than under the base, the one whose worst series decides: the
//! smallest largest ratio of its flaps per day to the base's over the series (series the base
//! never flaps on count only through the condition). Ties go to fewer flaps per day over all,
//! then less capacity lost, then the shorter delay, then the earlier candidate.
//!
//! **Leave-one-series-out cross-validation** estimates how that choice does on a server it has
//! never seen: for each series, the robust choice is made on all the others and judged on the
//! one held out. Every series is held out exactly once, so the folds' held-out scores together
//! cover the evidence once; their sum against the base's is the cross-validated result, and
//! each fold's held-out ratio against its training ratio is its generalization gap. The sweep
//! replays each candidate over each trace once: the folds only regroup those scores.

use super::choose::{SetScore, aggregate_where, meets, meets_rule};
use super::evidence::EvidenceTrace;
use super::score::TraceScore;
use super::space::ChoiceRule;
use rayon::prelude::*;
use serde::Serialize;

/// One fold: a series held out, the candidate chosen on the others, and both judged on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fold {
    /// The held-out series' name: its file's stem (`store` for recorded ticks).
    pub series: String,
    /// The candidate chosen without this series; none: no candidate met the rule there, so the
    /// base stays (and is what is judged).
    pub chosen: Option<usize>,
    /// On the other series: the chosen candidate's flaps per day over the base's.
    pub train_flap_ratio: Option<f64>,
    /// On the held-out series: the base, and the chosen candidate (the base when none).
    pub base: SetScore,
    /// The held-out series judged by the candidate chosen without it (by the base when none was).
    pub candidate: SetScore,
}

impl Fold {
    /// The chosen candidate's flaps per day over the base's on the held-out series.
    pub fn held_out_flap_ratio(&self) -> Option<f64> {
        ratio(self.candidate.flaps_per_day, self.base.flaps_per_day)
    }
}

/// Every fold, and their held-out scores summed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CrossValidation {
    /// One fold per series, in the order the series first appear in the evidence.
    pub folds: Vec<Fold>,
    /// The base over all the evidence, and each series judged by the candidate chosen without it.
    pub base: SetScore,
    /// Every trace judged by the candidate chosen without its series, summed: the estimate of
    /// the tuning on a server it has never seen.
    pub held_out: SetScore,
    /// Folds whose held-out series flaps more often under its candidate than under the base.
    pub series_worse: usize,
}

/// `a / b`, none when `b` is zero.
fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// The scores a choice is made from: every candidate's and the base's, per trace.
pub struct Scores<'a> {
    /// The traces of the evidence, each with its series; the scores are in this order.
    pub evidence: &'a [EvidenceTrace],
    /// The base's score on each trace.
    pub base: &'a [TraceScore],
    /// Each candidate's score on each trace: `candidates[candidate][trace]`.
    pub candidates: &'a [Vec<TraceScore>],
    /// The space's `[choose]` limits, held to on the series a choice is made on.
    pub rule: &'a ChoiceRule,
    /// What the gate (or anything else besides the rule) says of each candidate.
    pub gate: &'a [Result<(), String>],
}

/// Each candidate's verdict (why it may not be chosen, in words) and the index of the one chosen.
pub type Choice = (Vec<Result<(), String>>, Option<usize>);

/// A candidate's sort key: its worst series' flaps against the base's, its flaps per day, the
/// bulk capacity it loses, its longest delay into critical.
type Key = (f64, f64, f64, i64);

/// Why a candidate may not be chosen on some series: the gate fails it, the summed scores break
/// the rule, or the `k`th series flaps more than under the base.
#[derive(Debug, Clone, Copy)]
enum Refusal {
    Gate,
    Rule,
    Series(usize),
}

/// Each candidate's and the base's scores on each series alone, summed once: a fold only
/// regroups them. Each is summed over its series' traces in evidence order, exactly as a fold
/// would sum it, so the regrouping changes no bit of any score.
struct BySeries<'a> {
    /// The series in the order they first appear in the evidence: (series, name).
    series: Vec<(usize, &'a str)>,
    /// The base's score on each series, in that order.
    base: Vec<SetScore>,
    /// `candidates[candidate]`: the candidate's score on each series, summed the first time a
    /// fold needs it (a candidate that never meets the rule never needs it).
    candidates: Vec<std::sync::OnceLock<Vec<SetScore>>>,
}

impl BySeries<'_> {
    /// Candidate `c`'s score on each series.
    fn of(&self, scores: &Scores, c: usize) -> &[SetScore] {
        self.candidates[c].get_or_init(|| scores.alone(&self.series, &scores.candidates[c]))
    }
}

impl<'a> Scores<'a> {
    fn series(&self) -> Vec<(usize, &'a str)> {
        let mut seen: Vec<(usize, &str)> = Vec::new();
        for e in self.evidence {
            if !seen.iter().any(|(s, _)| *s == e.series) {
                seen.push((e.series, &e.series_name));
            }
        }
        seen
    }

    /// `scores` on each of `series` alone.
    fn alone(&self, series: &[(usize, &str)], scores: &[TraceScore]) -> Vec<SetScore> {
        series.iter().map(|&(s, _)| self.on(scores, |e| e.series == s)).collect()
    }

    fn by_series(&self) -> BySeries<'a> {
        let series = self.series();
        let candidates = (0..self.candidates.len()).map(|_| std::sync::OnceLock::new()).collect();
        BySeries { base: self.alone(&series, self.base), candidates, series }
    }

    fn on(&self, scores: &[TraceScore], keep: impl Fn(&EvidenceTrace) -> bool) -> SetScore {
        aggregate_where(scores, self.base, self.evidence, keep)
    }

    /// Candidate `c`'s sort key on the series `among` keeps, or what stops it being chosen
    /// there (put in words only when asked, [`Scores::why_not`]).
    fn judge(&self, c: usize, among: &(dyn Fn(usize) -> bool + Sync), by: &BySeries) -> Result<Key, Refusal> {
        if self.gate[c].is_err() {
            return Err(Refusal::Gate);
        }
        let all = self.on(&self.candidates[c], |e| among(e.series));
        if !meets_rule(&all, self.rule) {
            return Err(Refusal::Rule);
        }
        let mut worst: f64 = 0.0;
        let alone = by.of(self, c);
        for (k, _) in by.series.iter().enumerate().filter(|(_, (s, _))| among(*s)) {
            let (mine, base) = (&alone[k], &by.base[k]);
            if mine.flaps_per_day > base.flaps_per_day + 1e-9 {
                return Err(Refusal::Series(k));
            }
            if let Some(r) = ratio(mine.flaps_per_day, base.flaps_per_day) {
                worst = worst.max(r);
            }
        }
        Ok((worst, all.flaps_per_day, all.bulk_capacity_loss_vs_base_pct, all.max_protection_delay.unwrap_or(0)))
    }

    /// A refusal in words, as the report gives it.
    fn why_not(&self, c: usize, refusal: Refusal, among: &(dyn Fn(usize) -> bool + Sync), by: &BySeries) -> String {
        match refusal {
            Refusal::Gate => self.gate[c].clone().err().unwrap_or_default(),
            Refusal::Rule => meets(&self.on(&self.candidates[c], |e| among(e.series)), self.rule).err().unwrap_or_default(),
            Refusal::Series(k) => format!(
                "series {} flaps {:.2} a day, more than under the base ({:.2})",
                by.series[k].1,
                by.of(self, c)[k].flaps_per_day,
                by.base[k].flaps_per_day
            ),
        }
    }

    /// Each candidate's verdict on the series `among` keeps, and the robust choice among them.
    pub fn choose(&self, among: &(dyn Fn(usize) -> bool + Sync)) -> Choice {
        self.verdicts_by(among, &self.by_series())
    }

    fn verdicts_by(&self, among: &(dyn Fn(usize) -> bool + Sync), by: &BySeries) -> Choice {
        let (judged, chosen) = self.choose_by(among, by);
        let verdicts = judged.into_iter().enumerate().map(|(c, j)| j.map(|_| ()).map_err(|r| self.why_not(c, r, among, by))).collect();
        (verdicts, chosen)
    }

    /// The choice on every series ([`Scores::choose`]) and the cross-validation
    /// ([`Scores::cross_validate`]), the per-series scores summed once for both.
    pub fn choose_and_cross_validate(&self) -> (Choice, CrossValidation) {
        let by = self.by_series();
        (self.verdicts_by(&|_| true, &by), self.cross_validate_by(&by))
    }

    fn choose_by(&self, among: &(dyn Fn(usize) -> bool + Sync), by: &BySeries) -> (Vec<Result<Key, Refusal>>, Option<usize>) {
        let judged: Vec<_> = (0..self.candidates.len()).into_par_iter().with_min_len(256).map(|c| self.judge(c, among, by)).collect();
        let chosen = judged
            .iter()
            .enumerate()
            .filter_map(|(c, j)| j.as_ref().ok().map(|k| (c, *k)))
            .min_by(|(i, a), (j, b)| {
                a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.total_cmp(&b.2)).then(a.3.cmp(&b.3)).then(i.cmp(j))
            })
            .map(|(c, _)| c);
        (judged, chosen)
    }

    /// Leave-one-series-out: each series judged by the robust choice made on the others. The
    /// scores of each candidate on each series are summed once ([`BySeries`]); a fold sums only
    /// its training side again (one pass over the traces per candidate), never every series.
    pub fn cross_validate(&self) -> CrossValidation {
        self.cross_validate_by(&self.by_series())
    }

    fn cross_validate_by(&self, by: &BySeries) -> CrossValidation {
        let mut judged_by: Vec<Option<usize>> = vec![None; self.evidence.len()];
        let mut folds = Vec::new();
        for (k, &(held, name)) in by.series.iter().enumerate() {
            let (_, chosen) = self.choose_by(&|s| s != held, by);
            let train_flap_ratio = chosen.and_then(|c| {
                let (mine, base) = (self.on(&self.candidates[c], |e| e.series != held), self.on(self.base, |e| e.series != held));
                ratio(mine.flaps_per_day, base.flaps_per_day)
            });
            for (i, e) in self.evidence.iter().enumerate() {
                if e.series == held {
                    judged_by[i] = chosen;
                }
            }
            folds.push(Fold {
                series: name.to_string(),
                chosen,
                train_flap_ratio,
                base: by.base[k].clone(),
                candidate: chosen.map_or(&by.base[k], |c| &by.of(self, c)[k]).clone(),
            });
        }
        // Each trace scored by the candidate chosen without its series.
        let held_out_scores: Vec<TraceScore> =
            judged_by.iter().enumerate().map(|(i, c)| c.map_or(&self.base[i], |c| &self.candidates[c][i]).clone()).collect();
        let series_worse = folds.iter().filter(|f| f.candidate.flaps_per_day > f.base.flaps_per_day + 1e-9).count();
        CrossValidation { base: self.on(self.base, |_| true), held_out: self.on(&held_out_scores, |_| true), folds, series_worse }
    }
}

#[cfg(test)]
mod tests;
