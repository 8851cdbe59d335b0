//! docs/behaviour.md §8: per API, the median of the p95 samples in [H - 24 h, H - 1 h) (the mean of
//! the middle two for an even count) when there are at least 60; otherwise no baseline. The
//! newest hour is left out so an incident does not teach its own baseline.

mod common;

use capacity_guest::assess::assess;
use capacity_guest::baseline::{compute, hour_of};
use common::{HOUR, MIN, T, T0, latency};
use vocabulary::{ApiBaseline, ApiSamples, Instant, LatencySample, Level, Reading};

/// `values` as one sample a minute, starting at `from`.
fn samples(api: &str, from: Instant, values: &[f64]) -> ApiSamples {
    ApiSamples {
        api: api.into(),
        samples: values.iter().enumerate().map(|(i, &p95_ms)| LatencySample { at: from + i as i64 * MIN, p95_ms }).collect(),
    }
}

/// `n` samples counting up from 1.0 ms, inside the window of the hour `T0`.
fn counting(api: &str, n: usize) -> ApiSamples {
    let values: Vec<f64> = (1..=n).map(|v| v as f64).collect();
    samples(api, T0 - 20 * HOUR, &values)
}

fn only(result: Vec<ApiBaseline>) -> ApiBaseline {
    assert_eq!(result.len(), 1, "{result:?}");
    result.into_iter().next().unwrap()
}

#[test]
fn the_baseline_is_the_median_of_an_odd_count() {
    let b = only(compute(T0, &[counting("crm", 61)], &T));
    assert_eq!(b.samples, 61);
    assert_eq!(b.baseline_ms, Some(31.0));
}

#[test]
fn the_baseline_is_the_mean_of_the_middle_two_for_an_even_count() {
    let b = only(compute(T0, &[counting("crm", 60)], &T));
    assert_eq!(b.samples, 60);
    assert_eq!(b.baseline_ms, Some(30.5));
}

#[test]
fn the_median_does_not_depend_on_sample_order() {
    let mut values: Vec<f64> = (1..=61).map(f64::from).collect();
    values.reverse();
    values.swap(3, 40);
    let b = only(compute(T0, &[samples("crm", T0 - 10 * HOUR, &values)], &T));
    assert_eq!(b.baseline_ms, Some(31.0));
}

#[test]
fn fewer_than_60_samples_give_no_baseline() {
    let b = only(compute(T0, &[counting("crm", 59)], &T));
    assert_eq!(b.samples, 59);
    assert_eq!(b.baseline_ms, None);
}

#[test]
fn an_api_with_no_samples_has_no_baseline() {
    let b = only(compute(T0, &[ApiSamples { api: "crm".into(), samples: vec![] }], &T));
    assert_eq!((b.samples, b.baseline_ms), (0, None));
    assert!(compute(T0, &[], &T).is_empty());
}

#[test]
fn the_window_starts_at_h_minus_24_hours_inclusive() {
    let mut group = counting("crm", 59);
    group.samples.push(LatencySample { at: T0 - 24 * HOUR, p95_ms: 1000.0 });
    assert_eq!(only(compute(T0, &[group.clone()], &T)).samples, 60);
    group.samples.last_mut().unwrap().at = T0 - 24 * HOUR - 1;
    assert_eq!(only(compute(T0, &[group], &T)).samples, 59);
}

#[test]
fn the_window_ends_before_h_minus_1_hour() {
    let mut group = counting("crm", 59);
    group.samples.push(LatencySample { at: T0 - HOUR - 1, p95_ms: 1000.0 });
    assert_eq!(only(compute(T0, &[group.clone()], &T)).samples, 60);
    group.samples.last_mut().unwrap().at = T0 - HOUR;
    assert_eq!(only(compute(T0, &[group], &T)).samples, 59);
}

#[test]
fn the_newest_hour_does_not_teach_its_own_baseline() {
    // 60 calm samples in the window and 60 incident samples in the newest hour.
    let mut group = samples("crm", T0 - 5 * HOUR, &[100.0; 60]);
    group.samples.extend(samples("crm", T0 - HOUR, &[5000.0; 60]).samples);
    let b = only(compute(T0, &[group], &T));
    assert_eq!(b.samples, 60);
    assert_eq!(b.baseline_ms, Some(100.0));
}

#[test]
fn samples_at_or_after_the_hour_are_left_out() {
    let mut group = counting("crm", 60);
    group.samples.extend(samples("crm", T0, &[9999.0; 30]).samples);
    assert_eq!(only(compute(T0, &[group], &T)).samples, 60);
}

#[test]
fn non_finite_samples_are_not_counted() {
    let mut group = counting("crm", 59);
    for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        group.samples.push(LatencySample { at: T0 - 3 * HOUR, p95_ms: v });
    }
    let b = only(compute(T0, &[group], &T));
    assert_eq!(b.samples, 59);
    assert_eq!(b.baseline_ms, None);
}

#[test]
fn groups_of_the_same_api_count_together() {
    let a = samples("crm", T0 - 10 * HOUR, &[10.0; 30]);
    let b = samples("crm", T0 - 5 * HOUR, &[20.0; 31]);
    let r = only(compute(T0, &[a, b], &T));
    assert_eq!(r.samples, 61);
    assert_eq!(r.baseline_ms, Some(20.0));
}

#[test]
fn each_api_has_its_own_baseline_sorted_by_name() {
    let result = compute(T0, &[counting("search", 61), counting("billing", 10), counting("crm", 60)], &T);
    let names: Vec<&str> = result.iter().map(|b| b.api.as_str()).collect();
    assert_eq!(names, vec!["billing", "crm", "search"]);
    assert_eq!(result[0].baseline_ms, None);
    assert_eq!(result[1].baseline_ms, Some(30.5));
    assert_eq!(result[2].baseline_ms, Some(31.0));
}

#[test]
fn an_api_without_a_baseline_is_not_assessed_for_latency() {
    let b = only(compute(T0, &[counting("crm", 10)], &T));
    let r = Reading { latency: vec![latency("crm", Some(10_000.0), b.baseline_ms)], ..Reading::default() };
    assert_eq!(assess(&r, &T), Level::Normal);
}

#[test]
fn a_computed_baseline_feeds_the_latency_ratio() {
    let b = only(compute(T0, &[samples("crm", T0 - 6 * HOUR, &[100.0; 60])], &T));
    let r = Reading { latency: vec![latency("crm", Some(260.0), b.baseline_ms)], ..Reading::default() };
    assert_eq!(assess(&r, &T), Level::Critical);
}

#[test]
fn hour_of_is_the_start_of_the_clock_hour() {
    assert_eq!(hour_of(T0), T0);
    assert_eq!(hour_of(T0 + 1), T0);
    assert_eq!(hour_of(T0 + HOUR - 1), T0);
    assert_eq!(hour_of(T0 + HOUR), T0 + HOUR);
    assert_eq!(hour_of(0), 0);
    assert_eq!(hour_of(-1), -HOUR);
}

#[test]
fn extreme_hours_do_not_panic() {
    for hour in [i64::MIN, i64::MIN + 1, i64::MAX, 0] {
        let group = ApiSamples {
            api: "crm".into(),
            samples: vec![LatencySample { at: i64::MIN, p95_ms: 1.0 }, LatencySample { at: i64::MAX, p95_ms: 2.0 }],
        };
        let r = compute(hour, &[group], &T);
        assert_eq!(r.len(), 1);
        assert!(hour_of(hour) <= hour && hour - hour_of(hour) < HOUR);
    }
}
