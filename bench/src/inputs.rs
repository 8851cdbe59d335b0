//! The decision every per-call bench uses: a steady-state tick (docs/behaviour.md §5) with CPU,
//! connections and one API's latency, and a memory that already holds the five newest
//! readings, as the live sentinel sends it minute after minute. The same input goes to the
//! native modules, the component and the no-op echo, so their costs compare.

use sentinel_core::policy::Policy;
use vocabulary::{ApiLatency, DecisionInput, Reading, Signal};

/// 2026-01-01T00:00:00Z.
const START: i64 = 1_767_225_600;

/// A typical reading: CPU constrained, connections normal, one API at 1.5x its baseline.
pub fn reading() -> Reading {
    Reading {
        cpu_pct: Some(72.5),
        connections_pct: Some(40.0),
        scaling: Some(false),
        latency: vec![ApiLatency { api: "crm".into(), p95_ms: Some(180.0), baseline_ms: Some(120.0) }],
    }
}

/// The input of the eleventh tick of a steady run, its memory built by `policy` itself.
pub fn steady(policy: &mut dyn Policy) -> DecisionInput {
    let mut input = DecisionInput {
        now: START,
        signal: Signal::Reading(reading()),
        memory: None,
        pin: None,
        throttles_enabled: false,
        stages_throttled: false,
    };
    for _ in 0..10 {
        input.memory = Some(policy.decide(&input).expect("a steady tick decides").memory);
        input.now += 60;
    }
    input
}
