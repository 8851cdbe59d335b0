//! Trace files replayed as they are read (docs/behaviour.md §10.2): a block of lines at a time is
//! parsed across the cores, then fed to every policy at once (one policy per core), so memory
//! holds one block and each policy's session, not the trace and its outcomes. Only a report's
//! timelines grow with the trace. The summaries are exactly those of [`super::parallel`] and the lockstep replay.

use super::Lease;
use super::ReplayError;
use super::lane::{Lane, Options, Run};
use super::progress::{self, Unit};
use crate::policy::Policy;
use crate::policy::source::PolicySource;
use crate::policy::stepping::Stepper;
use crate::trace::TraceEvent;
use crate::trace::load::Blocks;
use indicatif::ProgressBar;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// One replayed file: its name (the file stem) and one run per policy, in the order given.
pub struct FileRuns {
    pub name: String,
    pub runs: Vec<Run>,
}

/// Every file through every policy, file after file.
pub(crate) fn replay_files(paths: &[PathBuf], sources: &[PolicySource], options: Options) -> Result<Vec<FileRuns>, ReplayError> {
    let total: u64 = paths.iter().map(|p| std::fs::metadata(p).map_or(0, |m| m.len())).sum();
    let bar = progress::bar(options.progress, total, Unit::Bytes);
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        let mut lease = Lease::take(sources, &name_of(path))?;
        let runs = replay_file(path, lease.policies(), sources, options, &bar)?;
        lease.give_back();
        out.push(FileRuns { name: name_of(path), runs });
    }
    bar.finish_and_clear();
    Ok(out)
}

fn name_of(path: &Path) -> String {
    path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned())
}

/// One policy's stepper over the file, and its lane.
struct Streamed<'p> {
    stepper: Stepper<'p>,
    lane: Lane,
}

fn replay_file(
    path: &Path,
    policies: &mut [Box<dyn Policy>],
    sources: &[PolicySource],
    options: Options,
    bar: &ProgressBar,
) -> Result<Vec<Run>, ReplayError> {
    let name = name_of(path);
    let mut lanes = Vec::with_capacity(policies.len());
    for (policy, source) in policies.iter_mut().zip(sources) {
        lanes.push(Streamed {
            stepper: Stepper::open(policy.as_mut(), &name, options.throttles)?,
            lane: Lane::new(source, &name, &options),
        });
    }
    let mut blocks = Blocks::open(path)?;
    let mut ticks = 0usize;
    while let Some((events, bytes)) = blocks.next_block()? {
        ticks += events.iter().filter(|e| matches!(e, TraceEvent::Tick { .. })).count();
        lanes.par_iter_mut().try_for_each(|streamed| {
            let Streamed { stepper, lane } = streamed;
            stepper.feed(&events, &mut |tick| lane.add(&tick))
        })?;
        bar.inc(bytes as u64);
    }
    // An empty trace (or one with only pins) would replay nothing and pass any gate.
    if ticks == 0 {
        return Err(ReplayError::NothingToReplay { file: path.display().to_string() });
    }
    Ok(lanes.into_iter().map(|streamed| streamed.lane.finish()).collect())
}
