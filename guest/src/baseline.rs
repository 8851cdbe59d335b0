//! docs/behaviour.md §8: the hourly latency baseline, the median of the window that leaves the
//! newest hour out so an incident does not teach its own baseline.

use std::collections::BTreeMap;
use vocabulary::Thresholds;
use vocabulary::{ApiBaseline, ApiSamples, Instant, LatencySample};

const HOUR: i64 = 3600;

/// Baselines for the clock hour starting at `hour`: per API the median of the finite samples in
/// [hour - 24 h, hour - 1 h), when there are at least `baseline_min_samples` of them. Samples
/// of one API given in several groups count together. Sorted by API name.
pub fn compute(hour: Instant, groups: &[ApiSamples], t: &Thresholds) -> Vec<ApiBaseline> {
    let mut by_api: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for group in groups {
        let values = by_api.entry(group.api.as_str()).or_default();
        values.extend(in_window(hour, &group.samples));
    }
    by_api.into_iter().map(|(api, mut values)| baseline_of(api, &mut values, t)).collect()
}

/// The p95 values of `samples` that count for the baseline of the hour starting at `hour`:
/// finite, and in [hour - 24 h, hour - 1 h).
pub fn in_window<'a>(hour: Instant, samples: impl IntoIterator<Item = &'a LatencySample>) -> impl Iterator<Item = f64> {
    samples.into_iter().filter(move |s| counts(hour, s.at, s.p95_ms)).map(|s| s.p95_ms)
}

/// Whether a sample taken at `at` of `p95_ms` counts for the baseline of the hour starting at
/// `hour`: finite, and in [hour - 24 h, hour - 1 h).
pub fn counts(hour: Instant, at: Instant, p95_ms: f64) -> bool {
    at >= hour.saturating_sub(24 * HOUR) && at < hour.saturating_sub(HOUR) && p95_ms.is_finite()
}

/// One API's baseline from the values in its window (reordered in place): their median when
/// there are at least `baseline_min_samples` of them.
pub fn baseline_of(api: &str, values: &mut [f64], t: &Thresholds) -> ApiBaseline {
    let samples = u32::try_from(values.len()).unwrap_or(u32::MAX);
    let baseline_ms = (samples >= t.baseline_min_samples && !values.is_empty()).then(|| median(values));
    ApiBaseline { api: api.to_string(), baseline_ms, samples }
}

/// The median; the mean of the middle two for an even count. `values` must not be empty.
///
/// Selected, not sorted (linear, where sorting a day of samples every hour was most of a
/// replay's baseline work). Under `total_cmp` equal values are the same bits, so the selected
/// elements are exactly those a full sort puts in the middle.
fn median(values: &mut [f64]) -> f64 {
    let n = values.len();
    let (below, &mut middle, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        middle
    } else {
        let lower = below.iter().copied().max_by(f64::total_cmp).expect("an even count has a lower middle");
        (lower + middle) / 2.0
    }
}

/// The start of the clock hour holding `at` (saturating at the far past, so it never traps).
pub fn hour_of(at: Instant) -> Instant {
    at.saturating_sub(at.rem_euclid(HOUR))
}

#[cfg(test)]
mod tests {
    use super::median;
    use proptest::prelude::*;

    /// The definition: sort, take the middle (or the mean of the middle two).
    fn sorted_median(values: &[f64]) -> f64 {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
    }

    proptest! {
        #[test]
        fn selecting_gives_the_bits_sorting_gives(
            values in prop::collection::vec(prop_oneof![Just(0.0), Just(-0.0), Just(120.0), 0.0f64..1e6], 1..300)
        ) {
            let mut v = values.clone();
            prop_assert_eq!(median(&mut v).to_bits(), sorted_median(&values).to_bits());
        }
    }
}
