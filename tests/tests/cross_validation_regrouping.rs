//! Leave-one-series-out cross-validation regroups per-series totals summed once (issue 53), and
//! must give exactly what re-summing every series in every fold gave (`capacity_tests::refolding`):
//! the same verdicts, choice, folds and held-out sums, bit for bit, on random worlds.

use capacity_tests::refolding;
use proptest::prelude::*;
use sentinel::tune::cross_validation::Scores;
use sentinel::tune::evidence::{EvidenceTrace, Set};
use sentinel::tune::score::TraceScore;
use sentinel::tune::space::ChoiceRule;
use sentinel_core::trace::Trace;

const NAMES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

fn trace(series: usize) -> EvidenceTrace {
    let name = NAMES[series];
    EvidenceTrace {
        set: Set::Train,
        series,
        series_name: name.to_string(),
        source: format!("{name}.csv"),
        source_sha256: "00".repeat(32),
        forward: false,
        ticks: 1440,
        trace: Trace { name: name.to_string(), events: Vec::new() },
    }
}

/// A trace's score from drawn numbers: flaps, capacity in tenths of a minute (sums of them are
/// where a regrouping could move a bit), a protection delay, its length.
fn drawn((flaps, tenths, delay, ticks): (u64, u32, Option<i64>, u64)) -> TraceScore {
    TraceScore {
        ticks,
        transitions: 2 * flaps,
        flaps,
        minutes: [ticks, 0, 0, 0],
        bulk_capacity_minutes: f64::from(tenths) * 0.1 + 0.25,
        over_protection_minutes: 0,
        minutes_to_protect: None,
        never_protected: false,
        base_entries: u32::from(delay.is_some()),
        max_protection_delay: delay,
        missed_protections: 0,
        throttle_engagements: 0,
        violations: 0,
        first_violation: None,
    }
}

fn score() -> impl Strategy<Value = (u64, u32, Option<i64>, u64)> {
    (0u64..12, 0u32..20_000, proptest::option::of(0i64..30), 60u64..3000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn regrouping_the_per_series_totals_changes_no_choice_and_no_bit(
        series_of in proptest::collection::vec(0usize..6, 1..12),
        base in proptest::collection::vec(score(), 12),
        candidates in proptest::collection::vec(proptest::collection::vec(score(), 12), 1..8),
        gate_fails in proptest::collection::vec(proptest::bool::weighted(0.2), 8),
        loss in 0.0f64..5.0,
    ) {
        let evidence: Vec<EvidenceTrace> = series_of.iter().map(|&s| trace(s)).collect();
        let n = evidence.len();
        let base: Vec<TraceScore> = base.into_iter().take(n).map(drawn).collect();
        let candidates: Vec<Vec<TraceScore>> = candidates.into_iter().map(|c| c.into_iter().take(n).map(drawn).collect()).collect();
        let rule = ChoiceRule { max_bulk_capacity_loss_pct: loss, ..ChoiceRule::default() };
        let gate: Vec<Result<(), String>> =
            (0..candidates.len()).map(|c| if gate_fails[c] { Err("the gate fails it".into()) } else { Ok(()) }).collect();
        let scores = Scores { evidence: &evidence, base: &base, candidates: &candidates, rule: &rule, gate: &gate };
        prop_assert_eq!(scores.choose(&|_| true), refolding::choose(&scores, &|_| true));
        let (choice, both) = scores.choose_and_cross_validate();
        prop_assert_eq!(choice, refolding::choose(&scores, &|_| true));
        prop_assert_eq!(format!("{both:?}"), format!("{:?}", refolding::cross_validate(&scores)));
        let (regrouped, reference) = (scores.cross_validate(), refolding::cross_validate(&scores));
        // Debug prints every float in full: equal text is equal bits.
        prop_assert_eq!(format!("{regrouped:?}"), format!("{reference:?}"));
    }
}
