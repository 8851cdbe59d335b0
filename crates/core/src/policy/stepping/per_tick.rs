//! Replay tick by tick through `decide` (docs/behaviour.md §10.2): the path of a component
//! built before contract 3.1.0, which has no batch session, and the reference the batch path is
//! tested against. The host carries what the session would carry inside the policy: the next
//! decision's input (memory, pin and switch from event to event), the stages still throttled
//! and the latency window, whose baselines the policy computes at each new hour.

use super::Baselines;
use crate::policy::{Policy, PolicyError, ReplaySession};
use vocabulary::{DecisionInput, LearntBaselines, Outcome, ReplayChunk, SessionStart, Signal, TraceEvent};

/// A replay session the host runs tick by tick through `decide`, carrying between ticks what a
/// batch session carries inside the policy: for a policy without a batch session, and as the
/// reference the batch path is tested against.
pub struct PerTick<'p> {
    policy: &'p mut dyn Policy,
    input: DecisionInput,
    baselines: Baselines,
    /// Stage restores fail from a `stage_restores_fail` line on (API Gateway unreachable).
    restores_fail: bool,
    explain: bool,
}

impl<'p> PerTick<'p> {
    /// A replay from `start`: its memory, pin, switch and stages.
    pub fn new(policy: &'p mut dyn Policy, start: SessionStart) -> PerTick<'p> {
        let input = DecisionInput {
            now: 0,
            signal: Signal::Failed(String::new()),
            memory: start.memory,
            pin: start.pin,
            throttles_enabled: start.throttles_enabled,
            stages_throttled: start.stages_throttled,
        };
        PerTick { policy, input, baselines: Baselines::default(), restores_fail: false, explain: start.explain }
    }
}

impl ReplaySession for PerTick<'_> {
    fn feed(&mut self, events: &[TraceEvent]) -> Result<ReplayChunk, PolicyError> {
        let mut chunk = ReplayChunk::default();
        for event in events {
            match event {
                TraceEvent::Pin { pin, .. } => self.input.pin = pin.clone(),
                TraceEvent::Throttles { enabled, .. } => self.input.throttles_enabled = *enabled,
                TraceEvent::StageRestores { fail, .. } => self.restores_fail = *fail,
                TraceEvent::Tick { at, signal } => {
                    self.input.now = *at;
                    self.input.signal = match signal {
                        Signal::Reading(reading) => {
                            let (reading, learnt) = self.baselines.observe(self.policy, *at, reading)?;
                            if let Some(baselines) = learnt {
                                let from_tick = u32::try_from(chunk.outcomes.len()).unwrap_or(u32::MAX);
                                chunk.learnt.push(LearntBaselines { from_tick, baselines });
                            }
                            Signal::Reading(reading)
                        }
                        Signal::Failed(why) => Signal::Failed(why.clone()),
                    };
                    let decision = self.policy.decide(&self.input)?;
                    chunk.outcomes.push(Outcome::of(&decision, self.explain));
                    // The stages as the live sentinel leaves them (docs/behaviour.md §11.3):
                    // engaged while the policy wants them; restored once it no longer does,
                    // unless restores fail, when they stay throttled (and the next decisions see it).
                    self.input.stages_throttled = decision.memory.throttles_engaged || (self.input.stages_throttled && self.restores_fail);
                    self.input.memory = Some(decision.memory);
                }
            }
        }
        Ok(chunk)
    }
}
