//! Traces in memory through several policies at once: every (trace, policy) pair is one job on
//! the rayon pool. Each worker checks out its own long-lived instance from the policy's pool
//! ([`PolicySource`]; calls need `&mut`) and gives it back after the job.

use super::Lease;
use super::lane::{Lane, Options, Run};
use super::progress::{self, Unit};
use super::{CHUNK_EVENTS, ReplayError};
use crate::policy::Policy;
use crate::policy::source::PolicySource;
use crate::policy::stepping as engine;
use crate::trace::{Trace, TraceEvent};
use indicatif::ProgressBar;
use rayon::prelude::*;

/// Runs every trace through every policy in parallel: `result[trace][policy]`, in the order
/// given. The first failing job's error is returned.
pub fn run_all(traces: &[Trace], sources: &[PolicySource], options: Options) -> Result<Vec<Vec<Run>>, ReplayError> {
    let ticks_per_policy: u64 =
        traces.iter().map(|t| t.events.iter().filter(|e| matches!(e, TraceEvent::Tick { .. })).count() as u64).sum();
    let bar = progress::bar(options.progress, ticks_per_policy * sources.len() as u64, Unit::Ticks);
    let mut jobs: Vec<(usize, usize)> = (0..traces.len()).flat_map(|t| (0..sources.len()).map(move |p| (t, p))).collect();
    // The longest first, so that one long trace does not start last on an idle pool.
    jobs.sort_by_key(|&(t, _)| std::cmp::Reverse(traces[t].events.len()));
    let done: Vec<((usize, usize), Run)> = jobs
        .into_par_iter()
        .map(|(t, p)| {
            let source = std::slice::from_ref(&sources[p]);
            let mut lease = Lease::take(source, &traces[t].name)?;
            let run = replay_one(&traces[t], lease.policies()[0].as_mut(), &source[0], options, &bar)?;
            lease.give_back();
            Ok(((t, p), run))
        })
        .collect::<Result<_, ReplayError>>()?;
    bar.finish_and_clear();
    let mut out: Vec<Vec<Option<Run>>> = traces.iter().map(|_| sources.iter().map(|_| None).collect()).collect();
    for ((t, p), run) in done {
        out[t][p] = Some(run);
    }
    Ok(out.into_iter().map(|runs| runs.into_iter().map(|r| r.expect("every job ran")).collect()).collect())
}

/// One trace through one policy instance: its summary and, when asked, its timeline.
pub fn replay_one(
    trace: &Trace,
    policy: &mut dyn Policy,
    source: &PolicySource,
    options: Options,
    bar: &ProgressBar,
) -> Result<Run, ReplayError> {
    let mut lane = Lane::new(source, &trace.name, &options);
    let mut pending = 0u64;
    engine::each_tick(trace, policy, options.throttles, &mut |tick| {
        lane.add(&tick);
        pending += 1;
        if pending == CHUNK_EVENTS as u64 {
            bar.inc(pending);
            pending = 0;
        }
    })?;
    bar.inc(pending);
    Ok(lane.finish())
}
