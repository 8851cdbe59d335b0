//! Leave-one-series-out cross-validation as `sentinel policy tune` computed it before issue 53:
//! every fold re-summed every series for every candidate. The reference the regrouped
//! [`Scores::cross_validate`] must equal bit for bit (tests/cross_validation_regrouping.rs) and the
//! bench measures it against (bench/benches/cross_validation.rs).

use sentinel::tune::choose::{SetScore, meets};
use sentinel::tune::cross_validation::{CrossValidation, Fold, Scores};
use sentinel::tune::evidence::EvidenceTrace;
use sentinel::tune::score::TraceScore;

fn on(s: &Scores, scores: &[TraceScore], keep: impl Fn(&EvidenceTrace) -> bool) -> SetScore {
    aggregate_listing(scores, s.base, s.evidence, keep)
}

/// `choose::aggregate_where` as it was: the kept traces listed first, then each field summed.
fn aggregate_listing(
    scores: &[TraceScore],
    base: &[TraceScore],
    evidence: &[EvidenceTrace],
    keep: impl Fn(&EvidenceTrace) -> bool,
) -> SetScore {
    fn pick<'a>(s: &'a [TraceScore], evidence: &[EvidenceTrace], keep: &dyn Fn(&EvidenceTrace) -> bool) -> Vec<&'a TraceScore> {
        s.iter().zip(evidence).filter(|(_, e)| keep(e)).map(|(s, _)| s).collect()
    }
    let (mine, theirs) = (pick(scores, evidence, &keep), pick(base, evidence, &keep));
    let ticks: u64 = mine.iter().map(|s| s.ticks).sum();
    let flaps: u64 = mine.iter().map(|s| s.flaps).sum();
    let bulk: f64 = mine.iter().map(|s| s.bulk_capacity_minutes).sum();
    let base_bulk: f64 = theirs.iter().map(|s| s.bulk_capacity_minutes).sum();
    let delays: Vec<i64> = mine.iter().filter_map(|s| s.max_protection_delay).collect();
    SetScore {
        traces: mine.len(),
        ticks,
        flaps,
        flaps_per_day: flaps as f64 / (ticks as f64 / 1440.0).max(1.0),
        transitions: mine.iter().map(|s| s.transitions).sum(),
        bulk_capacity_minutes: bulk,
        bulk_capacity_withheld_pct: if ticks > 0 { (ticks as f64 - bulk) / ticks as f64 * 100.0 } else { 0.0 },
        bulk_capacity_loss_vs_base_pct: if base_bulk > 0.0 { (base_bulk - bulk) / base_bulk * 100.0 } else { 0.0 },
        over_protection_minutes: mine.iter().map(|s| s.over_protection_minutes).sum(),
        minutes_critical: mine.iter().map(|s| s.minutes[2]).sum(),
        minutes_emergency: mine.iter().map(|s| s.minutes[3]).sum(),
        worst_minutes_to_protect: mine.iter().filter_map(|s| s.minutes_to_protect).max(),
        never_protected: mine.iter().filter(|s| s.never_protected).count() as u32,
        base_entries: mine.iter().map(|s| s.base_entries).sum(),
        max_protection_delay: delays.into_iter().max(),
        missed_protections: mine.iter().map(|s| s.missed_protections).sum(),
        throttle_engagements: mine.iter().map(|s| s.throttle_engagements).sum(),
        violations: mine.iter().map(|s| s.violations).sum(),
    }
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

fn series<'a>(s: &Scores<'a>) -> Vec<(usize, &'a str)> {
    let mut seen: Vec<(usize, &str)> = Vec::new();
    for e in s.evidence {
        if !seen.iter().any(|(k, _)| *k == e.series) {
            seen.push((e.series, &e.series_name));
        }
    }
    seen
}

fn judge(s: &Scores, c: usize, among: &dyn Fn(usize) -> bool, series: &[(usize, &str)]) -> Result<(f64, f64, f64, i64), String> {
    s.gate[c].clone()?;
    let scores = &s.candidates[c];
    let all = on(s, scores, |e| among(e.series));
    meets(&all, s.rule)?;
    let mut worst: f64 = 0.0;
    for &(k, name) in series.iter().filter(|(k, _)| among(*k)) {
        let (mine, base) = (on(s, scores, |e| e.series == k), on(s, s.base, |e| e.series == k));
        if mine.flaps_per_day > base.flaps_per_day + 1e-9 {
            return Err(format!(
                "series {name} flaps {:.2} a day, more than under the base ({:.2})",
                mine.flaps_per_day, base.flaps_per_day
            ));
        }
        if let Some(r) = ratio(mine.flaps_per_day, base.flaps_per_day) {
            worst = worst.max(r);
        }
    }
    Ok((worst, all.flaps_per_day, all.bulk_capacity_loss_vs_base_pct, all.max_protection_delay.unwrap_or(0)))
}

/// Each candidate's verdict on the series `among` keeps, and the robust choice among them.
pub fn choose(s: &Scores, among: &dyn Fn(usize) -> bool) -> (Vec<Result<(), String>>, Option<usize>) {
    let series = series(s);
    let judged: Vec<_> = (0..s.candidates.len()).map(|c| judge(s, c, among, &series)).collect();
    let chosen = judged
        .iter()
        .enumerate()
        .filter_map(|(c, j)| j.as_ref().ok().map(|k| (c, *k)))
        .min_by(|(i, a), (j, b)| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.total_cmp(&b.2)).then(a.3.cmp(&b.3)).then(i.cmp(j)))
        .map(|(c, _)| c);
    (judged.into_iter().map(|j| j.map(|_| ())).collect(), chosen)
}

/// Leave-one-series-out: each series judged by the robust choice made on the others.
pub fn cross_validate(s: &Scores) -> CrossValidation {
    let mut judged_by: Vec<Option<usize>> = vec![None; s.evidence.len()];
    let mut folds = Vec::new();
    for (held, name) in series(s) {
        let (_, chosen) = choose(s, &|k| k != held);
        let scores = chosen.map_or(s.base, |c| s.candidates[c].as_slice());
        let train_flap_ratio = chosen.and_then(|c| {
            let (mine, base) = (on(s, &s.candidates[c], |e| e.series != held), on(s, s.base, |e| e.series != held));
            ratio(mine.flaps_per_day, base.flaps_per_day)
        });
        for (i, e) in s.evidence.iter().enumerate() {
            if e.series == held {
                judged_by[i] = chosen;
            }
        }
        folds.push(Fold {
            series: name.to_string(),
            chosen,
            train_flap_ratio,
            base: on(s, s.base, |e| e.series == held),
            candidate: on(s, scores, |e| e.series == held),
        });
    }
    let held_out: Vec<TraceScore> =
        judged_by.iter().enumerate().map(|(i, c)| c.map_or(&s.base[i], |c| &s.candidates[c][i]).clone()).collect();
    let series_worse = folds.iter().filter(|f| f.candidate.flaps_per_day > f.base.flaps_per_day + 1e-9).count();
    CrossValidation { base: on(s, s.base, |_| true), held_out: on(s, &held_out, |_| true), folds, series_worse }
}
