//! Replay: recorded traces through one or more policies, tick by tick, exactly as the live
//! sentinel would run them (memory threaded from tick to tick, pins and the throttle switch
//! applied from their lines on, baselines learnt from the trace's own history).
//!
//! One entry point, [`job::replay`], chooses how: [`lockstep`] (the `--format jsonl` lines
//! interleave tick by tick, on top of [`run`]), [`files`] (trace files streamed a block at a
//! time) or [`parallel`] (traces in memory, every (trace, policy) pair its own job across
//! cores). In every mode each policy replays through a [`Stream`] (chunks of events into its
//! batch session, docs/behaviour.md §10.2, or tick by tick for a component that has none) into
//! its [`lane::Lane`], and [`report`] and [`gate`] turn the summaries into the A/B report and the
//! CI verdict. The policies come from [`crate::policy::source`].

mod baselines;
pub mod compare;
pub mod files;
pub mod gate;
pub mod job;
pub mod lane;
pub mod lockstep;
pub mod metrics;
pub mod output;
pub mod parallel;
mod per_tick;
mod progress;
pub mod report;
pub mod shadow_score;
mod stream;
pub mod svg;
pub mod timeline;

pub use baselines::Baselines;
pub use per_tick::PerTick;
pub use stream::{CHUNK_EVENTS, Stream};

pub use crate::policy::invariants::Tick;
use crate::policy::{Policy, PolicyError};
use crate::trace::Trace;

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("trace {trace}, tick at {at}: {source}")]
    Policy { trace: String, at: String, source: PolicyError },
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    #[error("{file}: holds no reading or read_error line, so there is nothing to replay: is this the right file?")]
    NothingToReplay { file: String },
    /// A policy's instance could not be made.
    #[error(transparent)]
    Instance(PolicyError),
    #[error("writing replay lines to stdout")]
    Write(#[source] std::io::Error),
}

/// Runs every event of a trace through each policy in lockstep; `sink` gets each tick with the
/// index of the policy that decided it, tick by tick across the policies.
pub fn run(
    trace: &Trace,
    policies: &mut [Box<dyn Policy>],
    throttles_enabled: bool,
    sink: &mut dyn FnMut(usize, Tick<'_>),
) -> Result<(), ReplayError> {
    let failed = |events: &[crate::trace::TraceEvent], source| ReplayError::Policy {
        trace: trace.name.clone(),
        at: events.first().map(|e| crate::instants::format_rfc3339(e.at())).unwrap_or_default(),
        source,
    };
    let mut streams: Vec<Stream<'_>> = Vec::with_capacity(policies.len());
    for policy in policies.iter_mut() {
        let events = &trace.events[..trace.events.len().min(1)];
        streams.push(Stream::open(policy.as_mut(), throttles_enabled).map_err(|e| failed(events, e))?);
    }
    for events in trace.events.chunks(CHUNK_EVENTS) {
        let mut answers = Vec::with_capacity(streams.len());
        for stream in &mut streams {
            answers.push(stream.answer(events).map_err(|e| failed(events, e))?);
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
