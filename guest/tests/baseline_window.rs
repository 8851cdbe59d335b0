//! The replay's latency window (docs/behaviour.md §8): at every new hour its baselines must be
//! exactly `baseline::compute` over every sample seen so far (which takes the window itself),
//! and a reading's missing baselines the learnt ones. Random streams: minute steps, same-minute
//! repeats, gaps of hours and of more than a day, non-finite values, two APIs that come and go.
//! Times that go back (a session's caller may send them) must give what the window gave before
//! it kept its samples as columns: the straightforward one below, kept as the reference.

mod common;

use capacity_guest::baseline::compute;
use capacity_guest::baseline_window::BaselineWindow;
use common::{T, T0};
use proptest::prelude::*;
use std::collections::{BTreeMap, VecDeque};
use vocabulary::{ApiBaseline, ApiLatency, ApiSamples, LatencySample, Reading, Thresholds};

fn gap() -> impl Strategy<Value = i64> {
    prop_oneof![30 => Just(60), 2 => Just(0), 2 => 1i64..3600, 1 => 3600i64..30_000, 1 => 86_000i64..200_000]
}

fn p95() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![20 => (50.0f64..500.0).prop_map(|v| Some((v * 4.0).round() / 4.0)), 2 => Just(None), 1 => Just(Some(f64::NAN)), 1 => Just(Some(f64::INFINITY))]
}

fn step() -> impl Strategy<Value = (i64, Vec<(bool, Option<f64>, bool)>)> {
    (gap(), prop::collection::vec((any::<bool>(), p95(), prop::bool::weighted(0.1)), 0..3))
}

/// One step's readings: per entry, which API ("crm" or "search"), its p95 and whether the
/// reading brings its own baseline (100 ms).
fn latency_of(entries: &[(bool, Option<f64>, bool)]) -> Vec<ApiLatency> {
    entries
        .iter()
        .map(|(crm, p95, given)| ApiLatency {
            api: if *crm { "crm" } else { "search" }.into(),
            p95_ms: *p95,
            baseline_ms: given.then_some(100.0),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn the_sorted_window_learns_what_compute_learns(steps in prop::collection::vec(step(), 1..2500), min_samples in 1u32..40) {
        let t = Thresholds { baseline_min_samples: min_samples, ..T };
        let mut window = BaselineWindow::default();
        let mut seen: Vec<ApiSamples> = vec![ApiSamples { api: "crm".into(), samples: vec![] }, ApiSamples { api: "search".into(), samples: vec![] }];
        let mut learnt: Vec<(String, f64)> = Vec::new();
        let mut at = T0;
        for (gap, entries) in steps {
            at += gap;
            let latency = latency_of(&entries);
            let mut reading = Reading { cpu_pct: Some(10.0), connections_pct: None, scaling: None, latency: latency.clone() };
            if let Some(baselines) = window.observe(at, &mut reading, &t) {
                let hour = at - at.rem_euclid(3600);
                let present: Vec<ApiSamples> = seen.iter().filter(|s| s.samples.iter().any(|x| x.at >= hour - 86_400)).cloned().collect();
                prop_assert_eq!(&baselines, &compute(hour, &present, &t), "at hour {}", hour);
                learnt = baselines.into_iter().filter_map(|b| b.baseline_ms.map(|ms| (b.api, ms))).collect();
            }
            for (given, filled) in latency.iter().zip(&reading.latency) {
                let expected = given.baseline_ms.or_else(|| learnt.iter().find(|(api, _)| *api == given.api).map(|(_, ms)| *ms));
                prop_assert_eq!(filled.baseline_ms.map(f64::to_bits), expected.map(f64::to_bits));
            }
            for l in &latency {
                if let Some(p95) = l.p95_ms.filter(|v| v.is_finite()) {
                    seen.iter_mut().find(|s| s.api == l.api).expect("two APIs").samples.push(LatencySample { at, p95_ms: p95 });
                }
            }
        }
    }
}

/// The window before its samples were columns: a queue of samples per API, popped from the
/// front while older than a day, every kept sample filtered at each hour.
#[derive(Default)]
struct Reference {
    samples: BTreeMap<String, VecDeque<LatencySample>>,
    hour: Option<i64>,
    learnt: BTreeMap<String, f64>,
}

impl Reference {
    fn observe(&mut self, at: i64, reading: &mut Reading, t: &Thresholds) -> Option<Vec<ApiBaseline>> {
        let hour = at - at.rem_euclid(3600);
        let learnt = (self.hour != Some(hour)).then(|| {
            self.hour = Some(hour);
            for series in self.samples.values_mut() {
                while series.front().is_some_and(|s| s.at < hour - 86_400) {
                    series.pop_front();
                }
            }
            self.samples.retain(|_, s| !s.is_empty());
            let present: Vec<ApiSamples> =
                self.samples.iter().map(|(api, s)| ApiSamples { api: api.clone(), samples: s.iter().cloned().collect() }).collect();
            let baselines = compute(hour, &present, t);
            // `compute` leaves out an API none of whose samples are in the window; the window
            // reports it with no samples.
            let baselines: Vec<ApiBaseline> = self
                .samples
                .keys()
                .map(|api| {
                    baselines.iter().find(|b| &b.api == api).cloned().unwrap_or(ApiBaseline {
                        api: api.clone(),
                        baseline_ms: None,
                        samples: 0,
                    })
                })
                .collect();
            self.learnt = baselines.iter().filter_map(|b| b.baseline_ms.map(|ms| (b.api.clone(), ms))).collect();
            baselines
        });
        for latency in &mut reading.latency {
            if latency.baseline_ms.is_none() {
                latency.baseline_ms = self.learnt.get(&latency.api).copied();
            }
            if let Some(p95) = latency.p95_ms.filter(|v| v.is_finite()) {
                self.samples.entry(latency.api.clone()).or_default().push_back(LatencySample { at, p95_ms: p95 });
            }
        }
        learnt
    }
}

fn any_gap() -> impl Strategy<Value = i64> {
    prop_oneof![30 => Just(60), 2 => Just(0), 3 => -90_000i64..-1, 2 => 1i64..3600, 1 => 86_000i64..200_000]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn times_that_go_back_learn_what_the_queue_learnt(
        steps in prop::collection::vec((any_gap(), prop::collection::vec((any::<bool>(), p95(), prop::bool::weighted(0.1)), 0..3)), 1..1500),
        min_samples in 1u32..40,
    ) {
        let t = Thresholds { baseline_min_samples: min_samples, ..T };
        let (mut window, mut reference) = (BaselineWindow::default(), Reference::default());
        let mut at = T0;
        for (gap, entries) in steps {
            at += gap;
            let latency = latency_of(&entries);
            let mut reading = Reading { cpu_pct: Some(10.0), connections_pct: None, scaling: None, latency: latency.clone() };
            let mut expected = reading.clone();
            let (got, want) = (window.observe(at, &mut reading, &t), reference.observe(at, &mut expected, &t));
            prop_assert_eq!(got, want, "at {}", at);
            let bits = |r: &Reading| r.latency.iter().map(|l| l.baseline_ms.map(f64::to_bits)).collect::<Vec<_>>();
            prop_assert_eq!(bits(&reading), bits(&expected));
        }
    }
}
