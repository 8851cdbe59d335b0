//! docs/behaviour.md §10.2: a recorded trace replayed inside the policy, many events a call.
//! The session carries what the live sentinel carries between ticks (the memory, the pin, the
//! stage-throttle switch, the stages still throttled, the latency window) and answers each
//! tick with its [`Outcome`]: the same as [`decide`](crate::decide::decide) tick by tick, with
//! the explanation only when asked for.

use crate::baseline_window::BaselineWindow;
use crate::decide::decide_with;
use vocabulary::{DecisionInput, LearntBaselines, Memory, Outcome, ReplayChunk, SessionStart, Signal, Thresholds, TraceEvent};

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

    /// Applies the events in order: one outcome per tick, and the baselines learnt on the way.
    pub fn feed(&mut self, events: impl IntoIterator<Item = TraceEvent>, t: &Thresholds) -> ReplayChunk {
        let mut chunk = ReplayChunk::default();
        for event in events {
            match event {
                TraceEvent::Pin { pin, .. } => self.input.pin = pin,
                TraceEvent::Throttles { enabled, .. } => self.input.throttles_enabled = enabled,
                TraceEvent::StageRestores { fail, .. } => self.restores_fail = fail,
                TraceEvent::Tick { at, signal } => {
                    self.input.now = at;
                    self.input.signal = match signal {
                        Signal::Reading(mut reading) => {
                            if let Some(baselines) = self.window.observe(at, &mut reading, t) {
                                let from_tick = u32::try_from(chunk.outcomes.len()).unwrap_or(u32::MAX);
                                chunk.learnt.push(LearntBaselines { from_tick, baselines });
                            }
                            Signal::Reading(reading)
                        }
                        failed => failed,
                    };
                    let mut decision = decide_with(&self.input, self.memory.take(), t, self.explain);
                    // The stages as the live sentinel leaves them (docs/behaviour.md §11.3):
                    // throttled while the policy wants them; restored once it no longer does,
                    // unless restores fail, when they stay throttled (and the next ticks see it).
                    self.input.stages_throttled = decision.memory.throttles_engaged || (self.input.stages_throttled && self.restores_fail);
                    let mut outcome = Outcome::of(&decision, false);
                    if self.explain {
                        outcome.explanation = Some(std::mem::take(&mut decision.explanation));
                    }
                    chunk.outcomes.push(outcome);
                    self.memory = Some(decision.memory);
                }
            }
        }
        chunk
    }
}
