//! The batch replay's records across the boundary (docs/behaviour.md §10.2): trace events
//! lowered with API names replaced by their session index, chunks of outcomes lifted. The
//! types shared with `decide` convert through [`super::convert`].

use super::bindings as w;
use super::convert::{
    baseline_from_wit, cause_from_wit, factors_from_wit, level_from_wit, memory_to_wit, pin_to_wit, state_from_wit, throttles_from_wit,
};
use vocabulary as v;

pub fn start_to_wit(s: &v::SessionStart) -> w::SessionStart {
    w::SessionStart {
        memory: s.memory.as_ref().map(memory_to_wit),
        pin: s.pin.as_ref().map(pin_to_wit),
        throttles_enabled: s.throttles_enabled,
        stages_throttled: s.stages_throttled,
        explain: s.explain,
    }
}

/// One trace event as the session takes it; `api_index` names each API by its index.
pub fn event_to_wit(e: &v::TraceEvent, api_index: &mut impl FnMut(&str) -> u32) -> w::TraceEvent {
    match e {
        v::TraceEvent::Tick { at, signal } => w::TraceEvent::Tick(w::Tick {
            at: *at,
            signal: match signal {
                v::Signal::Reading(r) => w::TickSignal::Reading(w::TickReading {
                    cpu_pct: r.cpu_pct,
                    connections_pct: r.connections_pct,
                    scaling: r.scaling,
                    latency: r
                        .latency
                        .iter()
                        .map(|l| w::TickLatency { api: api_index(&l.api), p95_ms: l.p95_ms, baseline_ms: l.baseline_ms })
                        .collect(),
                }),
                v::Signal::Failed(why) => w::TickSignal::Failed(why.clone()),
            },
        }),
        v::TraceEvent::Pin { at, pin } => w::TraceEvent::Pin(w::PinChange { at: *at, pin: pin.as_ref().map(pin_to_wit) }),
        v::TraceEvent::Throttles { at, enabled } => w::TraceEvent::Throttles(w::SwitchChange { at: *at, enabled: *enabled }),
        v::TraceEvent::StageRestores { at, fail } => w::TraceEvent::StageRestores(w::RestoresChange { at: *at, fail: *fail }),
    }
}

pub fn chunk_from_wit(c: w::ReplayChunk) -> v::ReplayChunk {
    v::ReplayChunk {
        outcomes: c.outcomes.into_iter().map(outcome_from_wit).collect(),
        learnt: c
            .learnt
            .into_iter()
            .map(|l| v::LearntBaselines { from_tick: l.from_tick, baselines: l.baselines.into_iter().map(baseline_from_wit).collect() })
            .collect(),
    }
}

fn outcome_from_wit(o: w::Outcome) -> v::Outcome {
    v::Outcome {
        state: state_from_wit(o.state),
        factors: factors_from_wit(o.factors),
        changed: o.changed,
        previous: state_from_wit(o.previous),
        cause: cause_from_wit(o.cause),
        level: o.level.map(level_from_wit),
        pending: o.pending.map(state_from_wit),
        throttles: throttles_from_wit(o.throttles),
        restore_held: o.restore_held,
        explanation: o.explanation,
    }
}
