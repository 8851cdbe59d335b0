use super::*;
use crate::tune::evidence::Set;
use sentinel_core::trace::Trace;

/// One day of a series with `flaps` flaps.
fn day(flaps: u64) -> TraceScore {
    TraceScore {
        ticks: 1440,
        transitions: 2 * flaps,
        flaps,
        minutes: [1440, 0, 0, 0],
        bulk_capacity_minutes: 1440.0,
        over_protection_minutes: 0,
        minutes_to_protect: None,
        never_protected: false,
        base_entries: 0,
        max_protection_delay: None,
        missed_protections: 0,
        throttle_engagements: 0,
        violations: 0,
        first_violation: None,
    }
}

fn evidence(names: &[&str]) -> Vec<EvidenceTrace> {
    names
        .iter()
        .enumerate()
        .map(|(series, name)| EvidenceTrace {
            set: Set::Train,
            series,
            series_name: name.to_string(),
            source: format!("{name}.csv"),
            source_sha256: "00".repeat(32),
            forward: false,
            ticks: 1440,
            trace: Trace { name: name.to_string(), events: Vec::new() },
        })
        .collect()
}

/// Series A and B flap ten times a day under the base, C never. Candidate 0 calms A and B and
/// makes C flap; candidate 1 halves A and B; candidate 2 calms A and leaves B nearly as it was.
fn world() -> (Vec<EvidenceTrace>, Vec<TraceScore>, Vec<Vec<TraceScore>>) {
    let base = vec![day(10), day(10), day(0)];
    let candidates = vec![vec![day(1), day(1), day(2)], vec![day(5), day(5), day(0)], vec![day(0), day(9), day(0)]];
    (evidence(&["a", "b", "c"]), base, candidates)
}

#[test]
fn the_worst_series_decides_and_none_may_flap_more_than_under_the_base() {
    let (evidence, base, candidates) = world();
    let rule = ChoiceRule::default();
    let gate = vec![Ok(()); 3];
    let scores = Scores { evidence: &evidence, base: &base, candidates: &candidates, rule: &rule, gate: &gate };
    let (verdicts, chosen) = scores.choose(&|_| true);
    assert!(verdicts[0].as_ref().unwrap_err().contains("series c flaps 2.00 a day, more than under the base (0.00)"), "{verdicts:?}");
    // Candidate 2 has fewer flaps over all (9 against 10 a day) but its worst series keeps 0.9x.
    assert_eq!(chosen, Some(1));
    // The gate (or any other constraint) comes first.
    let gate = vec![Ok(()), Err("the gate fails it".to_string()), Ok(())];
    let gated = Scores { gate: &gate, ..scores };
    assert_eq!(gated.choose(&|_| true).1, Some(2));
}

#[test]
fn each_series_is_judged_by_a_choice_made_without_it() {
    let (evidence, base, candidates) = world();
    let rule = ChoiceRule::default();
    let gate = vec![Ok(()); 3];
    let cv = Scores { evidence: &evidence, base: &base, candidates: &candidates, rule: &rule, gate: &gate }.cross_validate();
    let folds: Vec<(&str, Option<usize>, u64, u64)> =
        cv.folds.iter().map(|f| (f.series.as_str(), f.chosen, f.base.flaps, f.candidate.flaps)).collect();
    // Without a, b decides between 1 (0.5x) and 2 (0.9x); without b, a lets 2 through (0x); without
    // c nothing stops 0 (0.1x), which then makes c flap: the fit looked best and generalizes worst.
    assert_eq!(folds, vec![("a", Some(1), 10, 5), ("b", Some(2), 10, 9), ("c", Some(0), 0, 2)]);
    assert_eq!(cv.series_worse, 1);
    assert_eq!((cv.base.flaps, cv.held_out.flaps), (20, 16), "every series held out once");
    assert_eq!(cv.folds[2].train_flap_ratio, Some(0.1));
    assert_eq!(cv.folds[2].held_out_flap_ratio(), None, "the base never flapped there");
    assert_eq!(cv.folds[0].held_out_flap_ratio(), Some(0.5));
}

#[test]
fn a_fold_where_nothing_meets_the_rule_keeps_the_base() {
    let (evidence, base, _) = world();
    let candidates = vec![vec![day(20), day(20), day(20)]];
    let rule = ChoiceRule::default();
    let gate = vec![Ok(())];
    let cv = Scores { evidence: &evidence, base: &base, candidates: &candidates, rule: &rule, gate: &gate }.cross_validate();
    assert!(cv.folds.iter().all(|f| f.chosen.is_none() && f.candidate == f.base));
    assert_eq!(cv.held_out, cv.base);
}
