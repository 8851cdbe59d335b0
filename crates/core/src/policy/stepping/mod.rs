//! The one engine that steps policies through ticks, for every caller: the replay's three modes
//! (lockstep, files streamed, traces across the cores), shadow scoring (through the replay), the
//! trial replay at activation and the tuner. It lives with the policy it steps, below the
//! lifecycle (which runs the trial replay) and the replay (which runs everything else).
//!
//! 1. A lease (`crate::replay::Lease`) checks one instance of each policy out of its source for a
//!    trace and gives them back after it; an instance that could not be made is one error,
//!    [`StepError::Lease`], whoever asked.
//! 2. [`Stepper`] feeds one policy a trace's events a chunk at a time through its [`Stream`]
//!    (the batch session, or tick by tick) and hands every tick, with the baselines it learnt
//!    filled in, to a sink; a failure names the trace and the instant of the chunk it failed in.
//! 3. [`each_tick`] is both for a trace in memory; [`run`] steps several policies tick by tick
//!    side by side (for `--format jsonl`, whose lines interleave).

mod baselines;
mod per_tick;
mod stream;

pub use baselines::Baselines;
pub use per_tick::PerTick;
pub use stream::{CHUNK_EVENTS, Stream};

use crate::policy::invariants::Tick;
use crate::policy::{Policy, PolicyError};
use crate::trace::{Trace, TraceEvent};
use vocabulary::SessionStart;

/// A policy that could not step through a trace, naming the trace and where.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The policy failed (a trap, its deadline, a refused answer) on a chunk of the trace, or
    /// while opening its session.
    #[error("trace {trace}, tick at {at}: {source}")]
    Policy {
        /// The trace's name.
        trace: String,
        /// The first instant of the chunk it failed on, RFC 3339 (`start`: opening its session).
        at: String,
        /// The policy's error.
        source: PolicyError,
    },
    /// A policy's instance could not be made (its lease for a trace).
    #[error("trace {trace}: an instance of policy {policy} could not be made: {source}")]
    Lease {
        /// The policy's label.
        policy: String,
        /// The trace's name.
        trace: String,
        /// Why the instance could not be made.
        source: PolicyError,
    },
}

/// One policy stepping through one trace's events, fed as they come.
pub struct Stepper<'p> {
    trace: String,
    stream: Stream<'p>,
    chunk: usize,
}

impl<'p> Stepper<'p> {
    /// The policy's batch session (or tick by tick when it has none), the switch as given.
    pub fn open(policy: &'p mut dyn Policy, trace: &str, throttles: bool) -> Result<Stepper<'p>, StepError> {
        let stream = Stream::open(policy, throttles).map_err(|e| StepError::at_start(trace, e))?;
        Ok(Stepper { trace: trace.to_string(), stream, chunk: CHUNK_EVENTS })
    }

    /// Tick by tick through `decide` from `start` (the reference path), one event a call, so a
    /// failure names the very tick it failed on: the trial replay at activation.
    pub fn tick_by_tick(policy: &'p mut dyn Policy, trace: &str, start: SessionStart) -> Stepper<'p> {
        Stepper { trace: trace.to_string(), stream: Stream::per_tick_from(policy, start), chunk: 1 }
    }

    /// Replays `events` (the next part of the trace, in order) and hands each tick to `sink`.
    pub fn feed(&mut self, events: &[TraceEvent], sink: &mut dyn FnMut(Tick<'_>)) -> Result<(), StepError> {
        for chunk in events.chunks(self.chunk) {
            self.stream.feed(chunk, sink).map_err(|e| StepError::at(&self.trace, chunk, e))?;
        }
        Ok(())
    }
}

/// Every tick of `trace` through `policy`, the switch starting as given, handed to `sink`.
pub fn each_tick(trace: &Trace, policy: &mut dyn Policy, throttles: bool, sink: &mut dyn FnMut(Tick<'_>)) -> Result<(), StepError> {
    Stepper::open(policy, &trace.name, throttles)?.feed(&trace.events, sink)
}

/// Every event of a trace through each policy in lockstep; `sink` gets each tick with the index
/// of the policy that decided it, tick by tick across the policies.
pub fn run(
    trace: &Trace,
    policies: &mut [Box<dyn Policy>],
    throttles_enabled: bool,
    sink: &mut dyn FnMut(usize, Tick<'_>),
) -> Result<(), StepError> {
    let mut streams: Vec<Stream<'_>> = Vec::with_capacity(policies.len());
    for policy in policies.iter_mut() {
        streams.push(Stream::open(policy.as_mut(), throttles_enabled).map_err(|e| StepError::at_start(&trace.name, e))?);
    }
    for events in trace.events.chunks(CHUNK_EVENTS) {
        let mut answers = Vec::with_capacity(streams.len());
        for stream in &mut streams {
            answers.push(stream.answer(events).map_err(|e| StepError::at(&trace.name, events, e))?);
        }
        let mut cursors: Vec<stream::Cursor> = streams.iter().map(|_| stream::Cursor::default()).collect();
        for event in events {
            for (i, stream) in streams.iter_mut().enumerate() {
                stream.walk(event, &answers[i], &mut cursors[i], &mut |tick| sink(i, tick));
            }
        }
    }
    Ok(())
}

impl StepError {
    /// A policy failed on the chunk `events` of `trace`: named by the chunk's first instant.
    pub fn at(trace: &str, events: &[TraceEvent], source: PolicyError) -> StepError {
        let at = events.first().map_or_else(|| "start".to_string(), |e| crate::instants::format_rfc3339(e.at()));
        StepError::Policy { trace: trace.to_string(), at, source }
    }

    /// A policy failed before its first event (opening its session).
    pub fn at_start(trace: &str, source: PolicyError) -> StepError {
        StepError::Policy { trace: trace.to_string(), at: "start".into(), source }
    }
}
