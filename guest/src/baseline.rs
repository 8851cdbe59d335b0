//! SPEC section 8: the hourly latency baseline, the median of the window that leaves the
//! newest hour out so an incident does not teach its own baseline.

use crate::model::{ApiBaseline, ApiSamples, Instant};
use crate::thresholds::Thresholds;
use std::collections::BTreeMap;

const HOUR: i64 = 3600;

/// Baselines for the clock hour starting at `hour`: per API the median of the finite samples in
/// [hour - 24 h, hour - 1 h), when there are at least `baseline_min_samples` of them. Samples
/// of one API given in several groups count together. Sorted by API name.
pub fn compute(hour: Instant, groups: &[ApiSamples], t: &Thresholds) -> Vec<ApiBaseline> {
    let from = hour.saturating_sub(24 * HOUR);
    let until = hour.saturating_sub(HOUR);
    let mut by_api: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for group in groups {
        let values = by_api.entry(group.api.as_str()).or_default();
        values.extend(
            group
                .samples
                .iter()
                .filter(|s| s.at >= from && s.at < until && s.p95_ms.is_finite())
                .map(|s| s.p95_ms),
        );
    }
    by_api
        .into_iter()
        .map(|(api, mut values)| {
            let samples = u32::try_from(values.len()).unwrap_or(u32::MAX);
            let baseline_ms = (samples >= t.baseline_min_samples && !values.is_empty())
                .then(|| median(&mut values));
            ApiBaseline { api: api.to_string(), baseline_ms, samples }
        })
        .collect()
}

/// The median; the mean of the middle two for an even count. `values` must not be empty.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

/// The start of the clock hour holding `at` (saturating at the far past, so it never traps).
pub fn hour_of(at: Instant) -> Instant {
    at.saturating_sub(at.rem_euclid(HOUR))
}
