//! Replay: recorded traces through one or more policies, tick by tick, exactly as the live
//! sentinel would run them (memory threaded from tick to tick, pins and the throttle switch
//! applied from their lines on, baselines learnt from the trace's own history).

mod baselines;
pub mod compare;
pub mod invariants;
pub mod output;

pub use baselines::Baselines;

use crate::bindings::{Decision, DecisionInput, Instant, Memory, Pin, Reading, Signal};
use crate::policy::{Policy, PolicyError};
use crate::trace::{Trace, TraceEvent};

/// One replayed tick of one policy.
#[derive(Debug, Clone)]
pub struct Tick<'a> {
    pub at: Instant,
    /// The reading as the policy saw it (baselines filled in); none for a failed read.
    pub reading: Option<&'a Reading>,
    /// The pin in force (active or not) at this tick.
    pub pin: Option<&'a Pin>,
    pub throttles_enabled: bool,
    pub decision: &'a Decision,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("trace {trace}, tick at {at}: {source}")]
    Policy { trace: String, at: String, source: PolicyError },
}

/// The state of one policy's replay over one trace.
pub struct Replayer {
    memory: Option<Memory>,
    pin: Option<Pin>,
    throttles_enabled: bool,
    baselines: Baselines,
}

impl Replayer {
    /// A replay that starts with fresh memory, no pin and the switch as given.
    pub fn new(throttles_enabled: bool) -> Replayer {
        Replayer { memory: None, pin: None, throttles_enabled, baselines: Baselines::default() }
    }

    /// Applies one trace event; for a tick, calls the policy once and hands the tick to `sink`.
    pub fn step(
        &mut self,
        policy: &mut dyn Policy,
        event: &TraceEvent,
        sink: &mut dyn FnMut(Tick<'_>),
    ) -> Result<(), PolicyError> {
        match event {
            TraceEvent::Pin { pin, .. } => self.pin = pin.clone(),
            TraceEvent::Throttles { enabled, .. } => self.throttles_enabled = *enabled,
            TraceEvent::Tick { at, signal } => {
                let signal = match signal {
                    Signal::Reading(reading) => Signal::Reading(self.baselines.observe(policy, *at, reading)?),
                    Signal::Failed(why) => Signal::Failed(why.clone()),
                };
                let input = DecisionInput {
                    now: *at,
                    signal,
                    memory: self.memory.take(),
                    pin: self.pin.clone(),
                    throttles_enabled: self.throttles_enabled,
                };
                let decision = policy.decide(&input)?;
                sink(Tick {
                    at: *at,
                    reading: match &input.signal {
                        Signal::Reading(r) => Some(r),
                        Signal::Failed(_) => None,
                    },
                    pin: self.pin.as_ref(),
                    throttles_enabled: self.throttles_enabled,
                    decision: &decision,
                });
                self.memory = Some(decision.memory);
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
            replayer.step(policy.as_mut(), event, &mut |tick| sink(i, tick)).map_err(|source| {
                ReplayError::Policy { trace: trace.name.clone(), at: crate::instants::format_rfc3339(event.at()), source }
            })?;
        }
    }
    Ok(())
}
