//! One replay, whatever asks for it (`sentinel replay`, tests, benches): trace files and, when
//! given, the store's recorded trace, through one or more policies, in the mode the output
//! needs. With lines (`--format jsonl`) every trace is read whole and the policies step in
//! lockstep (`super::lockstep`); otherwise each file streams through the policies a block at
//! a time (`super::files`) and the recorded trace, already in memory, runs across the cores
//! ([`super::parallel`]). Either way a trace with nothing to replay is refused before anything
//! is printed, and the runs come back in the order given.

use super::lane::{Options, Run};
use super::{ReplayError, files, lockstep, parallel};
use crate::policy::source::PolicySource;
use crate::trace::load;
use crate::trace::{Trace, TraceEvent};
use std::io::Write;
use std::path::PathBuf;

/// What to replay.
pub struct Job<'a> {
    /// Trace files (JSON lines), replayed in the order given.
    pub files: &'a [PathBuf],
    /// The store's recorded ticks, replayed after the files.
    pub recorded: Option<Trace>,
    /// The policies each trace runs through, one run each, in this order (baseline first for
    /// an A/B comparison).
    pub sources: &'a [PolicySource],
    /// How every run goes: the throttle switch at the start, invariant floors, timelines kept,
    /// progress shown.
    pub options: Options,
}

/// Each trace's name and its runs (one per policy, in the order given). With `lines`, every
/// tick's lines are written there as they are decided.
pub fn replay(job: Job<'_>, lines: Option<&mut dyn Write>) -> Result<Vec<(String, Vec<Run>)>, ReplayError> {
    let mut replayed = Vec::new();
    match lines {
        Some(out) => {
            let mut traces = load::read_traces(job.files)?;
            for (path, trace) in job.files.iter().zip(&traces) {
                if !trace.events.iter().any(|e| matches!(e, TraceEvent::Tick { .. })) {
                    return Err(ReplayError::NothingToReplay { file: path.display().to_string() });
                }
            }
            traces.extend(job.recorded);
            let runs = lockstep::replay(&traces, job.sources, job.options, out)?;
            replayed.extend(traces.into_iter().map(|t| t.name).zip(runs));
        }
        None => {
            replayed.extend(files::replay_files(job.files, job.sources, job.options)?.into_iter().map(|f| (f.name, f.runs)));
            if let Some(trace) = job.recorded {
                let runs = parallel::run_all(std::slice::from_ref(&trace), job.sources, job.options)?;
                replayed.extend(runs.into_iter().map(|runs| (trace.name.clone(), runs)));
            }
        }
    }
    Ok(replayed)
}
