//! Replay: recorded traces through one or more policies, tick by tick, exactly as the live
//! sentinel would run them (memory threaded from tick to tick, pins and the throttle switch
//! applied from their lines on, baselines learnt from the trace's own history).
//!
//! One entry point, [`job::replay`], chooses how: `lockstep` (the `--format jsonl` lines
//! interleave tick by tick, on top of [`run`]), `files` (trace files streamed a block at a
//! time) or [`parallel`] (traces in memory, every (trace, policy) pair its own job across
//! cores). Every mode, and the trial replay at activation and the tuner, steps through the one
//! engine (`crate::policy::stepping`): a [`Lease`] of instances from their sources, and a [`Stepper`] per policy feeding
//! its [`Stream`] (chunks of events into its batch session, docs/behaviour.md §10.2, or tick by
//! tick for a component that has none), into its [`lane::Lane`]; [`report`] and [`gate`] turn
//! the summaries into the A/B report and the CI verdict. The policies come from
//! [`crate::policy::source`].

pub mod compare;
pub(crate) mod files;
pub mod gate;
pub mod job;
pub mod lane;
mod lease;
pub(crate) mod lockstep;
pub mod metrics;
pub mod output;
pub mod parallel;
mod progress;
pub mod report;
pub mod shadow_score;
pub mod svg;
pub mod timeline;
mod waivers;

pub use crate::policy::stepping::{Baselines, CHUNK_EVENTS, PerTick, StepError, Stepper, Stream, each_tick, run};
pub use lease::Lease;

pub use crate::policy::invariants::Tick;

/// Why a replay stopped: a policy failing, a trace that cannot be read or holds nothing to
/// replay, or the tick lines that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A policy failed on a tick, or could not be instantiated.
    #[error(transparent)]
    Step(Box<StepError>),
    /// A trace file could not be read, or one of its lines is not a valid event.
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    /// A trace holds no tick (no reading or read_error line); refused before anything is
    /// printed.
    #[error("{file}: holds no reading or read_error line, so there is nothing to replay: is this the right file?")]
    NothingToReplay {
        /// The trace file, as it was named.
        file: String,
    },
    /// A tick line (`--format jsonl`) could not be written to the output.
    #[error("writing replay lines to stdout")]
    Write(#[source] std::io::Error),
}

impl From<StepError> for ReplayError {
    fn from(e: StepError) -> ReplayError {
        ReplayError::Step(Box::new(e))
    }
}
