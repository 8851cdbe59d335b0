//! Replay: recorded traces through one or more policies, tick by tick, exactly as the live
//! sentinel would run them (memory threaded from tick to tick, pins and the throttle switch
//! applied from their lines on, baselines learnt from the trace's own history).
//!
//! [`run`] steps policies in lockstep (the `--format jsonl` lines interleave tick by tick);
//! [`parallel::run_all`] runs every (trace, policy) pair as its own job across cores, and
//! [`report`] and [`gate`] turn the summaries into the A/B report and the CI verdict.

mod baselines;
pub mod compare;
pub mod gate;
pub mod load;
pub mod metrics;
pub mod output;
pub mod parallel;
pub mod report;
pub mod svg;
pub mod timeline;

pub use baselines::Baselines;

pub use crate::policy::invariants::Tick;
use crate::policy::{Policy, PolicyError};
use crate::trace::{Trace, TraceEvent};
use vocabulary::{DecisionInput, Signal};

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("trace {trace}, tick at {at}: {source}")]
    Policy { trace: String, at: String, source: PolicyError },
}

/// The state of one policy's replay over one trace: the next decision's input (memory, pin
/// and switch carried from event to event, the signal replaced each tick) and the baselines.
pub struct Replayer {
    input: DecisionInput,
    baselines: Baselines,
    /// Stage restores fail from a `stage_restores_fail` line on (API Gateway unreachable).
    restores_fail: bool,
}

impl Replayer {
    /// A replay that starts with fresh memory, no pin and the switch as given.
    pub fn new(throttles_enabled: bool) -> Replayer {
        let input = DecisionInput {
            now: 0,
            signal: Signal::Failed(String::new()),
            memory: None,
            pin: None,
            throttles_enabled,
            stages_throttled: false,
        };
        Replayer { input, baselines: Baselines::default(), restores_fail: false }
    }

    /// Applies one trace event; for a tick, calls the policy once and hands the tick to `sink`.
    pub fn step(&mut self, policy: &mut dyn Policy, event: &TraceEvent, sink: &mut dyn FnMut(Tick<'_>)) -> Result<(), PolicyError> {
        match event {
            TraceEvent::Pin { pin, .. } => self.input.pin = pin.clone(),
            TraceEvent::Throttles { enabled, .. } => self.input.throttles_enabled = *enabled,
            TraceEvent::StageRestores { fail, .. } => self.restores_fail = *fail,
            TraceEvent::Tick { at, signal } => {
                self.input.now = *at;
                self.input.signal = match signal {
                    Signal::Reading(reading) => Signal::Reading(self.baselines.observe(policy, *at, reading)?),
                    Signal::Failed(why) => Signal::Failed(why.clone()),
                };
                let decision = policy.decide(&self.input)?;
                sink(Tick {
                    at: *at,
                    reading: match &self.input.signal {
                        Signal::Reading(r) => Some(r),
                        Signal::Failed(_) => None,
                    },
                    pin: self.input.pin.as_ref(),
                    throttles_enabled: self.input.throttles_enabled,
                    decision: &decision,
                });
                // The stages as the live sentinel leaves them (docs/behaviour.md §11.3): engaged
                // while the policy wants them; restored once it no longer does, unless restores
                // fail, when they stay throttled (and the next decisions see it).
                self.input.stages_throttled = decision.memory.throttles_engaged || (self.input.stages_throttled && self.restores_fail);
                self.input.memory = Some(decision.memory);
            }
        }
        Ok(())
    }
}

/// Runs every event of a trace through each policy in lockstep; `sink` gets each tick with the
/// index of the policy that decided it.
pub fn run(
    trace: &Trace,
    policies: &mut [Box<dyn Policy>],
    throttles_enabled: bool,
    sink: &mut dyn FnMut(usize, Tick<'_>),
) -> Result<(), ReplayError> {
    let mut replayers: Vec<Replayer> = policies.iter().map(|_| Replayer::new(throttles_enabled)).collect();
    for event in &trace.events {
        for (i, (policy, replayer)) in policies.iter_mut().zip(replayers.iter_mut()).enumerate() {
            replayer.step(policy.as_mut(), event, &mut |tick| sink(i, tick)).map_err(|source| ReplayError::Policy {
                trace: trace.name.clone(),
                at: crate::instants::format_rfc3339(event.at()),
                source,
            })?;
        }
    }
    Ok(())
}
