//! The policies in lockstep, trace after trace (`sentinel replay --format jsonl`): every trace is
//! read whole, and each tick's lines are written as it is decided, so that the policies' lines
//! interleave tick by tick.

use super::Lease;
use super::lane::{Lane, Options, Run};
use super::{ReplayError, output};
use crate::policy::source::PolicySource;
use crate::policy::stepping as engine;
use crate::trace::Trace;
use std::io::Write;

/// Every trace through every policy, lines to `out`: `result[trace][policy]`.
pub fn replay(traces: &[Trace], sources: &[PolicySource], options: Options, out: &mut dyn Write) -> Result<Vec<Vec<Run>>, ReplayError> {
    let labels: Vec<&str> = sources.iter().map(|s| s.label()).collect();
    let mut all = Vec::new();
    for trace in traces {
        let mut lease = Lease::take(sources, &trace.name)?;
        let mut lanes: Vec<Lane> = sources.iter().map(|s| Lane::new(s, &trace.name, &options)).collect();
        let mut write_error = None;
        engine::run(trace, lease.policies(), options.throttles, &mut |i, tick| {
            lanes[i].add(&tick);
            if write_error.is_none()
                && let Err(e) = writeln!(out, "{}", output::tick_line(labels[i], &tick))
            {
                write_error = Some(e);
            }
        })?;
        if let Some(e) = write_error {
            return Err(ReplayError::Write(e));
        }
        lease.give_back();
        all.push(lanes.into_iter().map(Lane::finish).collect());
    }
    Ok(all)
}
