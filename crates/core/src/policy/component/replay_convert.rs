//! The batch replay's records across the boundary (docs/behaviour.md §10.2): a chunk of trace
//! events lowered column by column (API names replaced by their session index, pins and
//! switches as changes between ticks), and the outcome columns lifted, each enum from its
//! case's index in WIT. The types shared with `decide` convert through [`super::convert`].

use super::bindings as w;
use super::convert::{baseline_from_wit, cause_to_wit, level_from_wit, memory_to_wit, pin_to_wit, state_from_wit, throttles_from_wit};
use vocabulary as v;

use vocabulary::column_bits::{
    BASELINE, CHANGED, CONNECTIONS, CPU, DAMPING_HELD, FAILED, NONE, P95, RESTORE_HELD, SCALING, SCALING_PRESENT,
};

pub(crate) fn start_to_wit(s: &v::SessionStart) -> w::SessionStart {
    w::SessionStart {
        memory: s.memory.as_ref().map(memory_to_wit),
        pin: s.pin.as_ref().map(pin_to_wit),
        throttles_enabled: s.throttles_enabled,
        stages_throttled: s.stages_throttled,
        explain: s.explain,
    }
}

pub(crate) fn empty_columns() -> w::TickColumns {
    w::TickColumns {
        at: Vec::new(),
        flags: Vec::new(),
        cpu_pct: Vec::new(),
        connections_pct: Vec::new(),
        latency_count: Vec::new(),
        latency_api: Vec::new(),
        latency_flags: Vec::new(),
        latency_p95_ms: Vec::new(),
        latency_baseline_ms: Vec::new(),
        failures: Vec::new(),
    }
}

/// Writes `events` into `ticks` (emptied first, its buffers reused) and returns the changes
/// between them; `api_index` names each API by its index.
pub(crate) fn events_to_wit(
    events: &[v::TraceEvent],
    ticks: &mut w::TickColumns,
    api_index: &mut impl FnMut(&str) -> u32,
) -> Vec<w::ChangeAt> {
    let t = ticks;
    for column in [&mut t.cpu_pct, &mut t.connections_pct, &mut t.latency_p95_ms, &mut t.latency_baseline_ms] {
        column.clear();
    }
    t.at.clear();
    t.flags.clear();
    t.latency_count.clear();
    t.latency_api.clear();
    t.latency_flags.clear();
    t.failures.clear();
    let mut changes = Vec::new();
    for event in events {
        let before_tick = t.at.len() as u32;
        let change = match event {
            v::TraceEvent::Tick { at, signal } => {
                t.at.push(*at);
                match signal {
                    v::Signal::Reading(r) => {
                        let scaling = match r.scaling {
                            Some(true) => SCALING_PRESENT | SCALING,
                            Some(false) => SCALING_PRESENT,
                            None => 0,
                        };
                        t.flags.push(
                            if r.cpu_pct.is_some() { CPU } else { 0 } | if r.connections_pct.is_some() { CONNECTIONS } else { 0 } | scaling,
                        );
                        t.cpu_pct.push(r.cpu_pct.unwrap_or(0.0));
                        t.connections_pct.push(r.connections_pct.unwrap_or(0.0));
                        t.latency_count.push(r.latency.len() as u32);
                        for l in &r.latency {
                            t.latency_api.push(api_index(&l.api));
                            t.latency_flags
                                .push(if l.p95_ms.is_some() { P95 } else { 0 } | if l.baseline_ms.is_some() { BASELINE } else { 0 });
                            t.latency_p95_ms.push(l.p95_ms.unwrap_or(0.0));
                            t.latency_baseline_ms.push(l.baseline_ms.unwrap_or(0.0));
                        }
                    }
                    v::Signal::Failed(why) => {
                        t.flags.push(FAILED);
                        t.cpu_pct.push(0.0);
                        t.connections_pct.push(0.0);
                        t.latency_count.push(0);
                        t.failures.push(why.clone());
                    }
                }
                continue;
            }
            v::TraceEvent::Pin { pin, .. } => w::Change::Pin(pin.as_ref().map(pin_to_wit)),
            v::TraceEvent::Throttles { enabled, .. } => w::Change::Throttles(*enabled),
            v::TraceEvent::StageRestores { fail, .. } => w::Change::StageRestores(*fail),
        };
        changes.push(w::ChangeAt { before_tick, change });
    }
    changes
}

/// The chunk's outcomes and learnt baselines; an enum code outside its WIT cases is an error.
pub(crate) fn chunk_from_wit(c: w::ReplayChunk) -> Result<v::ReplayChunk, String> {
    let o = c.outcomes;
    let n = o.state.len();
    let lengths = [o.previous.len(), o.cause.len(), o.level.len(), o.pending.len(), o.throttles.len(), o.flags.len(), o.bulk.len()];
    if lengths.iter().chain([o.heavy.len(), o.write.len(), o.read.len()].iter()).any(|len| *len != n)
        || !(o.explanations.is_empty() || o.explanations.len() == n)
    {
        return Err(format!("the outcome columns differ in length ({n} states)"));
    }
    let mut explanations = o.explanations.into_iter();
    let mut outcomes = Vec::with_capacity(n);
    for i in 0..n {
        outcomes.push(v::Outcome {
            state: state_from_wit(state_code(o.state[i])?),
            factors: v::Factors { bulk: o.bulk[i], heavy: o.heavy[i], write: o.write[i], read: o.read[i] },
            changed: o.flags[i] & CHANGED != 0,
            previous: state_from_wit(state_code(o.previous[i])?),
            cause: cause_code(o.cause[i])?,
            level: optional(o.level[i], level_code)?.map(level_from_wit),
            pending: optional(o.pending[i], state_code)?.map(state_from_wit),
            throttles: throttles_from_wit(throttles_code(o.throttles[i])?),
            restore_held: o.flags[i] & RESTORE_HELD != 0,
            damping_held: o.flags[i] & DAMPING_HELD != 0,
            explanation: explanations.next(),
        });
    }
    let learnt = c
        .learnt
        .into_iter()
        .map(|l| v::LearntBaselines { from_tick: l.from_tick, baselines: l.baselines.into_iter().map(baseline_from_wit).collect() })
        .collect();
    Ok(v::ReplayChunk { outcomes, learnt })
}

fn optional<T>(code: u8, decode: fn(u8) -> Result<T, String>) -> Result<Option<T>, String> {
    if code == NONE { Ok(None) } else { decode(code).map(Some) }
}

fn state_code(code: u8) -> Result<w::ProtectionState, String> {
    use w::ProtectionState::*;
    [Normal, Constrained, Critical, Emergency].get(code as usize).copied().ok_or_else(|| format!("protection-state code {code}"))
}

fn level_code(code: u8) -> Result<w::Level, String> {
    use w::Level::*;
    [Normal, Constrained, Critical].get(code as usize).copied().ok_or_else(|| format!("level code {code}"))
}

/// The vocabulary's cause whose WIT case has discriminant `code`: every cause is tried (the
/// vocabulary's one list, checked complete in its tests) through the exhaustive conversion, so
/// no second list of the causes' order exists here.
fn cause_code(code: u8) -> Result<v::Cause, String> {
    v::Cause::ALL.into_iter().find(|c| cause_to_wit(*c) as u8 == code).ok_or_else(|| format!("cause code {code}"))
}

fn throttles_code(code: u8) -> Result<w::ThrottleIntent, String> {
    use w::ThrottleIntent::*;
    [Engage, Release, None].get(code as usize).copied().ok_or_else(|| format!("throttle-intent code {code}"))
}
