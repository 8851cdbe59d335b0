//! docs/behaviour.md §10.2: a recorded trace replayed inside the policy, many events a call.
//! The session carries what the live sentinel carries between ticks (the memory, the pin, the
//! stage-throttle switch, the stages still throttled, the latency window) and answers each
//! tick with its [`Outcome`]: the same as [`decide`](crate::decide::decide) tick by tick, with
//! the explanation only when asked for.

use crate::baseline_window::BaselineWindow;
use crate::decide::decide_with;
use vocabulary::{
    ApiBaseline, DecisionInput, Instant, LearntBaselines, Memory, Outcome, Pin, ReplayChunk, SessionStart, Signal, Thresholds, TraceEvent,
};

#[derive(Debug)]
pub struct Session {
    /// The next tick's input; its memory stays `None` (the memory is carried apart).
    input: DecisionInput,
    memory: Option<Memory>,
    /// Stage restores fail from a `stage_restores_fail` line on (API Gateway unreachable).
    restores_fail: bool,
    window: BaselineWindow,
    explain: bool,
}

/// A change between ticks: a trace's pin, switch or stage-restore line.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Pin(Option<Pin>),
    Throttles(bool),
    StageRestores(bool),
}

/// One tick's answer: its outcome and, at the first tick of an hour, the baselines learnt.
#[derive(Debug, Clone, PartialEq)]
pub struct TickAnswer {
    pub outcome: Outcome,
    pub learnt: Option<Vec<ApiBaseline>>,
}

impl Session {
    /// A replay from `start`: its memory, pin, switch and stages.
    pub fn new(start: SessionStart) -> Session {
        let input = DecisionInput {
            now: 0,
            signal: Signal::Failed(String::new()),
            memory: None,
            pin: start.pin,
            throttles_enabled: start.throttles_enabled,
            stages_throttled: start.stages_throttled,
        };
        Session { input, memory: start.memory, restores_fail: false, window: BaselineWindow::default(), explain: start.explain }
    }

    pub fn apply(&mut self, change: Change) {
        match change {
            Change::Pin(pin) => self.input.pin = pin,
            Change::Throttles(enabled) => self.input.throttles_enabled = enabled,
            Change::StageRestores(fail) => self.restores_fail = fail,
        }
    }

    /// Decides the tick at `at`. `fill` sets its signal in place, over the previous tick's
    /// (whose allocations it may reuse).
    pub fn tick(&mut self, at: Instant, fill: impl FnOnce(&mut Signal), t: &Thresholds) -> TickAnswer {
        self.input.now = at;
        fill(&mut self.input.signal);
        let learnt = match &mut self.input.signal {
            Signal::Reading(reading) => self.window.observe(at, reading, t),
            Signal::Failed(_) => None,
        };
        let mut decision = decide_with(&self.input, self.memory.take(), t, self.explain);
        // The stages as the live sentinel leaves them (docs/behaviour.md §11.3): throttled
        // while the policy wants them; restored once it no longer does, unless restores fail,
        // when they stay throttled (and the next ticks see it).
        self.input.stages_throttled = decision.memory.throttles_engaged || (self.input.stages_throttled && self.restores_fail);
        let mut outcome = Outcome::of(&decision, false);
        if self.explain {
            outcome.explanation = Some(std::mem::take(&mut decision.explanation));
        }
        self.memory = Some(decision.memory);
        TickAnswer { outcome, learnt }
    }

    /// Applies the events in order: one outcome per tick, and the baselines learnt on the way.
    pub fn feed(&mut self, events: &[TraceEvent], t: &Thresholds) -> ReplayChunk {
        let mut chunk = ReplayChunk::default();
        for event in events {
            match event {
                TraceEvent::Pin { pin, .. } => self.apply(Change::Pin(pin.clone())),
                TraceEvent::Throttles { enabled, .. } => self.apply(Change::Throttles(*enabled)),
                TraceEvent::StageRestores { fail, .. } => self.apply(Change::StageRestores(*fail)),
                TraceEvent::Tick { at, signal } => {
                    let answer = self.tick(*at, |s| copy_signal(s, signal), t);
                    if let Some(baselines) = answer.learnt {
                        let from_tick = u32::try_from(chunk.outcomes.len()).unwrap_or(u32::MAX);
                        chunk.learnt.push(LearntBaselines { from_tick, baselines });
                    }
                    chunk.outcomes.push(answer.outcome);
                }
            }
        }
        chunk
    }
}

/// `*to = from.clone()`, reusing `to`'s latency entries and names when both are readings.
fn copy_signal(to: &mut Signal, from: &Signal) {
    let (Signal::Reading(to), Signal::Reading(from)) = (&mut *to, from) else {
        *to = from.clone();
        return;
    };
    to.cpu_pct = from.cpu_pct;
    to.connections_pct = from.connections_pct;
    to.scaling = from.scaling;
    to.latency.truncate(from.latency.len());
    for (k, l) in from.latency.iter().enumerate() {
        match to.latency.get_mut(k) {
            Some(entry) => {
                if entry.api != l.api {
                    entry.api.clone_from(&l.api);
                }
                entry.p95_ms = l.p95_ms;
                entry.baseline_ms = l.baseline_ms;
            }
            None => to.latency.push(l.clone()),
        }
    }
}
