//! Random traces for the property tests: streaky readings in four pressure regimes, same-minute
//! repeats, gaps, failed reads, pins that expire or are cleared, throttle switches, stage
//! restores that start and stop failing, and (`odd`) absent, non-finite and absurd values.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sentinel_core::trace::{Trace, TraceEvent};
use vocabulary::{ApiLatency, Instant, Pin, ProtectionState, Reading, Signal};

pub const START: Instant = 1_792_501_200;

pub fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000)
}

pub fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() })
}

/// A stretch of the trace.
#[derive(Debug, Clone)]
enum Block {
    /// Readings around one pressure regime: (seconds since the previous event, reading).
    Readings(Vec<(Instant, Reading)>),
    /// Consecutive failed reads, a minute apart.
    Failures(u8),
    /// A pin set 30 s after the previous event, expiring `expires_in` seconds after it is set.
    Pin(ProtectionState, Instant),
    ClearPin,
    Throttles(bool),
    /// From here on stage restores fail (`true`) or succeed again.
    StageRestores(bool),
}

pub fn state() -> impl Strategy<Value = ProtectionState> {
    prop_oneof![
        Just(ProtectionState::Normal),
        Just(ProtectionState::Constrained),
        Just(ProtectionState::Critical),
        Just(ProtectionState::Emergency),
    ]
}

/// Seconds between readings: mostly a minute, sometimes the same minute, sometimes a gap.
fn gap() -> impl Strategy<Value = Instant> {
    prop_oneof![12 => Just(60), 2 => 0i64..60, 1 => 61i64..=90, 2 => 91i64..900]
}

/// A value: mostly within the regime's range, sometimes absent, rarely non-finite or absurd
/// (`odd` only: a trace file cannot hold those, the policy must still agree with itself).
fn value(low: f64, high: f64, odd: bool) -> BoxedStrategy<Option<f64>> {
    if odd {
        prop_oneof![
            8 => (low..high).prop_map(Some),
            1 => Just(None),
            1 => prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(-5.0), Just(1e308)]
                .prop_map(Some),
        ]
        .boxed()
    } else {
        prop_oneof![8 => (low..high).prop_map(Some), 1 => Just(None)].boxed()
    }
}

fn latency(ratio_low: f64, ratio_high: f64, odd: bool) -> impl Strategy<Value = Vec<ApiLatency>> {
    let api = prop_oneof![Just("crm".to_string()), Just("search".to_string())];
    let entry = (api, value(ratio_low, ratio_high, odd), prop_oneof![4 => Just(Some(100.0)), 1 => Just(Some(0.0)), 1 => Just(None)])
        .prop_map(|(api, ratio, baseline)| ApiLatency { api, p95_ms: ratio.map(|r| r * 100.0), baseline_ms: baseline });
    prop::collection::vec(entry, 0..3)
}

/// One reading in a regime: 0 calm, 1 constrained, 2 critical, 3 hovering across the boundaries.
fn reading(regime: u8, odd: bool) -> BoxedStrategy<Reading> {
    let (low, high, r_low, r_high) = match regime {
        0 => (0.0, 69.9, 0.5, 1.49),
        1 => (70.0, 84.9, 1.5, 2.49),
        2 => (85.0, 100.0, 2.5, 4.0),
        _ => (65.0, 90.0, 1.3, 2.8),
    };
    (value(low, high, odd), value(0.0, high, odd), prop::option::of(prop::bool::weighted(0.2)), latency(r_low, r_high, odd))
        .prop_map(|(cpu_pct, connections_pct, scaling, latency)| Reading { cpu_pct, connections_pct, scaling, latency })
        .boxed()
}

fn block(odd: bool) -> impl Strategy<Value = Block> {
    let readings = (0u8..4, 1usize..12)
        .prop_flat_map(move |(regime, n)| prop::collection::vec((gap(), reading(regime, odd)), n))
        .prop_map(Block::Readings);
    prop_oneof![
        10 => readings,
        2 => (1u8..4).prop_map(Block::Failures),
        1 => (state(), -120i64..1800).prop_map(|(s, e)| Block::Pin(s, e)),
        1 => Just(Block::ClearPin),
        1 => any::<bool>().prop_map(Block::Throttles),
        1 => any::<bool>().prop_map(Block::StageRestores),
    ]
}

/// A random trace and the stage-throttle switch it starts with.
pub fn trace(odd: bool) -> impl Strategy<Value = (Trace, bool)> {
    (0i64..7200, prop::collection::vec(block(odd), 1..14), any::<bool>()).prop_map(|(offset, blocks, throttles)| {
        let mut at = START + offset;
        let mut events = Vec::new();
        for block in blocks {
            match block {
                Block::Readings(readings) => {
                    for (gap, reading) in readings {
                        at += gap;
                        events.push(TraceEvent::Tick { at, signal: Signal::Reading(reading) });
                    }
                }
                Block::Failures(n) => {
                    for _ in 0..n {
                        at += 60;
                        events.push(TraceEvent::Tick { at, signal: Signal::Failed("timeout".into()) });
                    }
                }
                Block::Pin(state, expires_in) => {
                    at += 30;
                    let pin = Pin { state, reason: "random".into(), expires_at: at + expires_in, actor: "prop@example.com".into() };
                    events.push(TraceEvent::Pin { at, pin: Some(pin) });
                }
                Block::ClearPin => events.push(TraceEvent::Pin { at, pin: None }),
                Block::Throttles(enabled) => events.push(TraceEvent::Throttles { at, enabled }),
                Block::StageRestores(fail) => events.push(TraceEvent::StageRestores { at, fail }),
            }
        }
        (Trace { name: "random".into(), events }, throttles)
    })
}
