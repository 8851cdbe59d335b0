//! The replay's latency window (docs/behaviour.md §8) keeps each API's window sorted from hour
//! to hour; at every new hour its baselines must be exactly `baseline::compute` over every
//! sample seen so far (which takes the window itself), and a reading's missing baselines the
//! learnt ones. Random streams: minute steps, same-minute repeats, gaps of hours and of more
//! than a day, non-finite values, two APIs that come and go.

mod common;

use capacity_guest::baseline::compute;
use capacity_guest::baseline_window::BaselineWindow;
use common::{T, T0};
use proptest::prelude::*;
use vocabulary::{ApiLatency, ApiSamples, LatencySample, Reading, Thresholds};

fn gap() -> impl Strategy<Value = i64> {
    prop_oneof![30 => Just(60), 2 => Just(0), 2 => 1i64..3600, 1 => 3600i64..30_000, 1 => 86_000i64..200_000]
}

fn p95() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![20 => (50.0f64..500.0).prop_map(|v| Some((v * 4.0).round() / 4.0)), 2 => Just(None), 1 => Just(Some(f64::NAN)), 1 => Just(Some(f64::INFINITY))]
}

fn step() -> impl Strategy<Value = (i64, Vec<(bool, Option<f64>, bool)>)> {
    (gap(), prop::collection::vec((any::<bool>(), p95(), prop::bool::weighted(0.1)), 0..3))
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
            let latency: Vec<ApiLatency> = entries
                .iter()
                .map(|(crm, p95, given)| ApiLatency { api: if *crm { "crm" } else { "search" }.into(), p95_ms: *p95, baseline_ms: given.then_some(100.0) })
                .collect();
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
