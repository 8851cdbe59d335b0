//! Property tests: no input makes the pure rules panic. The decision takes arbitrary memory
//! (huge and negative times, overlong and unordered recent lists, saturated counters),
//! arbitrary readings (NaN, infinities) and arbitrary pins; assessment, baselines and pin
//! validation take arbitrary values. Cases: `PROPTEST_CASES` (default 1000).

mod common;

use capacity_guest::assess::assess;
use capacity_guest::baseline::{compute, hour_of};
use capacity_guest::decide::decide;
use capacity_guest::pin::validate;
use common::*;
use proptest::prelude::*;
use vocabulary::PinRequest;
use vocabulary::{
    ApiLatency, ApiSamples, DecisionInput, Instant, LatencySample, Level, Memory, Pin, ProtectionState, Reading, RecentEntry, Signal,
};

/// Any time at all, with the boundaries and the neighbourhood of `T0` well represented.
fn instant() -> impl Strategy<Value = Instant> {
    prop_oneof![
        2 => any::<i64>(),
        1 => prop::sample::select(vec![i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX]),
        3 => (T0 - 2 * HOUR)..(T0 + 2 * HOUR),
    ]
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        2 => prop::num::f64::ANY,
        1 => prop::sample::select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, f64::MAX, f64::MIN_POSITIVE]),
        3 => -10.0f64..200.0,
    ]
}

fn level() -> impl Strategy<Value = Level> {
    prop::sample::select(vec![Level::Normal, Level::Constrained, Level::Critical])
}

fn state() -> impl Strategy<Value = ProtectionState> {
    prop::sample::select(ProtectionState::ALL.to_vec())
}

fn reading() -> impl Strategy<Value = Reading> {
    let api = (prop::option::of(float()), prop::option::of(float())).prop_map(|(p95_ms, baseline_ms)| ApiLatency {
        api: "crm".into(),
        p95_ms,
        baseline_ms,
    });
    (prop::option::of(float()), prop::option::of(float()), prop::option::of(any::<bool>()), prop::collection::vec(api, 0..4))
        .prop_map(|(cpu_pct, connections_pct, scaling, latency)| Reading { cpu_pct, connections_pct, scaling, latency })
}

fn signal() -> impl Strategy<Value = Signal> {
    prop_oneof![3 => reading().prop_map(Signal::Reading), 1 => ".{0,20}".prop_map(Signal::Failed)]
}

fn memory() -> impl Strategy<Value = Memory> {
    let entry =
        (instant(), level(), prop::option::of(level())).prop_map(|(at, level, resolve_level)| RecentEntry { at, level, resolve_level });
    (
        state(),
        instant(),
        prop::option::of(instant()),
        prop::collection::vec(entry, 0..200),
        prop_oneof![any::<u32>(), Just(u32::MAX), 0u32..4],
        any::<bool>(),
        prop::option::of(instant()),
    )
        .prop_map(|(state, state_since, last_auto_change, recent, failed_reads, throttles_engaged, restore_held_since)| Memory {
            state,
            state_since,
            last_auto_change,
            recent,
            failed_reads,
            throttles_engaged,
            restore_held_since,
            flap: None,
        })
}

fn any_pin() -> impl Strategy<Value = Pin> {
    (state(), ".{0,10}", instant(), ".{0,10}").prop_map(|(state, reason, expires_at, actor)| Pin { state, reason, expires_at, actor })
}

fn input() -> impl Strategy<Value = DecisionInput> {
    (instant(), signal(), prop::option::of(memory()), prop::option::of(any_pin()), any::<bool>(), any::<bool>()).prop_map(
        |(now, signal, memory, pin, throttles_enabled, stages_throttled)| DecisionInput {
            now,
            signal,
            memory,
            pin,
            throttles_enabled,
            stages_throttled,
        },
    )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn decide_never_panics_on_arbitrary_input(input in input()) {
        let d = decide(&input, &T);
        assert_consistent(&d);
        prop_assert_eq!(d.previous, input.memory.as_ref().map_or(ProtectionState::Normal, |m| m.state));
        prop_assert_eq!(decide(&input, &T), d, "pure");
    }

    #[test]
    fn decide_keeps_working_when_arbitrary_memory_is_threaded_on(
        first in input(),
        steps in prop::collection::vec((prop_oneof![Just(0i64), Just(60), any::<i64>()], signal()), 1..10),
    ) {
        let mut d = decide(&first, &T);
        let mut now = first.now;
        for (gap, signal) in steps {
            now = now.saturating_add(gap);
            let input = DecisionInput { now, signal, memory: Some(d.memory.clone()), pin: first.pin.clone(), throttles_enabled: first.throttles_enabled, stages_throttled: first.stages_throttled };
            d = decide(&input, &T);
            assert_consistent(&d);
        }
    }

    #[test]
    fn an_arbitrary_reading_is_assessed_without_panicking(r in reading()) {
        let level = assess(&r, &T);
        if r.scaling == Some(true) {
            prop_assert!(level >= Level::Constrained);
        }
        let all_absent = r.cpu_pct.is_none() && r.connections_pct.is_none() && r.latency.is_empty() && r.scaling != Some(true);
        if all_absent {
            prop_assert_eq!(level, Level::Normal);
        }
    }

    #[test]
    fn non_finite_values_never_raise_the_level(r in reading()) {
        let finite_only = |v: Option<f64>| v.filter(|x| x.is_finite());
        let cleaned = Reading {
            cpu_pct: finite_only(r.cpu_pct),
            connections_pct: finite_only(r.connections_pct),
            scaling: r.scaling,
            latency: r.latency.iter().map(|l| ApiLatency { api: l.api.clone(), p95_ms: finite_only(l.p95_ms), baseline_ms: finite_only(l.baseline_ms) }).collect(),
        };
        prop_assert_eq!(assess(&r, &T), assess(&cleaned, &T));
    }

    #[test]
    fn baselines_never_panic_and_stay_within_the_window_samples(
        hour in instant(),
        groups in prop::collection::vec(
            (prop::sample::select(vec!["crm", "billing"]), prop::collection::vec((instant(), float()), 0..150)),
            0..3,
        ),
        dense in prop::collection::vec(-10.0f64..1000.0, 0..130),
    ) {
        let mut groups: Vec<ApiSamples> = groups
            .into_iter()
            .map(|(api, s)| ApiSamples { api: api.into(), samples: s.into_iter().map(|(at, p95_ms)| LatencySample { at, p95_ms }).collect() })
            .collect();
        groups.push(ApiSamples {
            api: "search".into(),
            samples: dense.iter().enumerate().map(|(i, &p95_ms)| LatencySample { at: T0 - 3 * HOUR + i as i64, p95_ms }).collect(),
        });
        let _ = hour_of(hour);
        for b in compute(hour, &groups, &T) {
            prop_assert_eq!(b.baseline_ms.is_some(), b.samples >= T.baseline_min_samples);
            if let Some(v) = b.baseline_ms { prop_assert!(v.is_finite()); }
        }
        let search = compute(T0, &groups, &T).into_iter().find(|b| b.api == "search").unwrap();
        prop_assert_eq!(search.samples as usize, dense.len());
        if let Some(v) = search.baseline_ms {
            let (lo, hi) = dense.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
            prop_assert!(lo <= v && v <= hi);
            let below = dense.iter().filter(|&&x| x < v).count();
            let above = dense.iter().filter(|&&x| x > v).count();
            prop_assert!(below <= dense.len() / 2 && above <= dense.len() / 2, "the median splits the samples");
        }
    }

    #[test]
    fn pin_validation_never_panics_and_accepts_only_valid_pins(
        state in ".{0,12}",
        reason in ".{0,600}",
        expires_at in instant(),
        actor in ".{0,12}",
        now in instant(),
    ) {
        let request = PinRequest { state, reason, expires_at, actor };
        if let Ok(pin) = validate(&request, now, &T) {
            prop_assert!(pin.expires_at > now);
            prop_assert!(pin.expires_at.saturating_sub(now) <= i64::from(T.pin_max_ahead_s));
            prop_assert!(!pin.reason.trim().is_empty() && pin.reason.chars().count() <= 500);
            prop_assert!(!pin.actor.trim().is_empty());
        }
    }
}
