//! The batch replay export (docs/behaviour.md §10.2): the WIT `session` resource around the pure
//! [`crate::replay::Session`]. API names cross the boundary once (`feed`'s `new-apis`) and ticks
//! carry their index; everything else is converted here, as in `policy.rs`.

use super::Component;
use super::exports::capacity::sentinel::replay as wit;
use super::policy::{cause_out, factors_out, level_out, memory_in, pin_in, state_out, throttles_out};
use crate::embedded::THRESHOLDS;
use crate::replay::Session;
use std::cell::RefCell;
use vocabulary::{self as core};

pub struct ReplaySession {
    session: RefCell<Session>,
    /// The API names told so far; a tick's latency names one by its index.
    apis: RefCell<Vec<String>>,
}

impl wit::Guest for Component {
    type Session = ReplaySession;
}

impl wit::GuestSession for ReplaySession {
    fn new(start: wit::SessionStart) -> ReplaySession {
        let start = core::SessionStart {
            memory: start.memory.map(memory_in),
            pin: start.pin.map(pin_in),
            throttles_enabled: start.throttles_enabled,
            stages_throttled: start.stages_throttled,
            explain: start.explain,
        };
        ReplaySession { session: RefCell::new(Session::new(start)), apis: RefCell::new(Vec::new()) }
    }

    fn feed(&self, new_apis: Vec<String>, events: Vec<wit::TraceEvent>) -> Result<wit::ReplayChunk, String> {
        let mut apis = self.apis.borrow_mut();
        let told = apis.len() + new_apis.len();
        if let Some((at, index)) = events.iter().find_map(|e| unknown_api(e, told)) {
            return Err(format!("the tick at {at} names API index {index}, but only {told} API names were told"));
        }
        apis.extend(new_apis);
        let events = events.into_iter().map(|e| event_in(e, &apis));
        let chunk = self.session.borrow_mut().feed(events, &THRESHOLDS);
        Ok(chunk_out(chunk))
    }
}

/// The first latency entry whose API index is not among the `told` names.
fn unknown_api(event: &wit::TraceEvent, told: usize) -> Option<(i64, u32)> {
    match event {
        wit::TraceEvent::Tick(wit::Tick { at, signal: wit::TickSignal::Reading(r) }) => {
            r.latency.iter().find(|l| l.api as usize >= told).map(|l| (*at, l.api))
        }
        _ => None,
    }
}

fn event_in(e: wit::TraceEvent, apis: &[String]) -> core::TraceEvent {
    match e {
        wit::TraceEvent::Tick(t) => core::TraceEvent::Tick {
            at: t.at,
            signal: match t.signal {
                wit::TickSignal::Reading(r) => core::Signal::Reading(core::Reading {
                    cpu_pct: r.cpu_pct,
                    connections_pct: r.connections_pct,
                    scaling: r.scaling,
                    latency: r
                        .latency
                        .into_iter()
                        .map(|l| core::ApiLatency { api: apis[l.api as usize].clone(), p95_ms: l.p95_ms, baseline_ms: l.baseline_ms })
                        .collect(),
                }),
                wit::TickSignal::Failed(why) => core::Signal::Failed(why),
            },
        },
        wit::TraceEvent::Pin(p) => core::TraceEvent::Pin { at: p.at, pin: p.pin.map(pin_in) },
        wit::TraceEvent::Throttles(s) => core::TraceEvent::Throttles { at: s.at, enabled: s.enabled },
        wit::TraceEvent::StageRestores(r) => core::TraceEvent::StageRestores { at: r.at, fail: r.fail },
    }
}

fn chunk_out(chunk: core::ReplayChunk) -> wit::ReplayChunk {
    wit::ReplayChunk {
        outcomes: chunk
            .outcomes
            .into_iter()
            .map(|o| wit::Outcome {
                state: state_out(o.state),
                factors: factors_out(o.factors),
                changed: o.changed,
                previous: state_out(o.previous),
                cause: cause_out(o.cause),
                level: o.level.map(level_out),
                pending: o.pending.map(state_out),
                throttles: throttles_out(o.throttles),
                restore_held: o.restore_held,
                explanation: o.explanation,
            })
            .collect(),
        learnt: chunk
            .learnt
            .into_iter()
            .map(|l| wit::LearntBaselines {
                from_tick: l.from_tick,
                baselines: l
                    .baselines
                    .into_iter()
                    .map(|b| wit::ApiBaseline { api: b.api, baseline_ms: b.baseline_ms, samples: b.samples })
                    .collect(),
            })
            .collect(),
    }
}
