//! One policy's lane through one trace, whatever the mode of the replay (lockstep, a file
//! streamed, a trace in memory across the cores): the options every mode shares, the summary and
//! timeline each tick is added to, and the run it ends as.

use super::Tick;
use super::compare::{Accumulator, Summary};
use super::timeline::Timeline;
use crate::policy::invariants::Floors;
use crate::policy::source::PolicySource;

/// How a replay runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// The emergency stage-throttle switch before the first line.
    pub throttles: bool,
    /// The least INV-01 accepts.
    pub floors: Floors,
    /// Keep each run's [`Timeline`] (for reports).
    pub timelines: bool,
    /// Show a progress bar on stderr (only drawn when stderr is a terminal).
    pub progress: bool,
}

/// One policy's replay of one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The comparison's counts over the trace (transitions, flaps, minutes per state, bulk
    /// capacity-minutes, invariant violations...).
    pub summary: Summary,
    /// The run tick by tick, for a report's drawing; none unless [`Options::timelines`] asked
    /// for it.
    pub timeline: Option<Timeline>,
}

/// A run in progress: every tick goes to the summary and, when kept, the timeline.
pub struct Lane {
    accumulator: Accumulator,
    timeline: Option<Timeline>,
}

impl Lane {
    /// A lane for `source` over the trace named `trace`, its invariants checked against the
    /// policy's declared numbers raised to `options.floors`, keeping a timeline when
    /// `options.timelines` says so.
    pub fn new(source: &PolicySource, trace: &str, options: &Options) -> Lane {
        Lane {
            accumulator: Accumulator::with_floors(source.label(), trace, source.thresholds(), &options.floors),
            timeline: options.timelines.then(Timeline::default),
        }
    }

    /// Counts one tick of this policy into the summary and, when kept, the timeline.
    pub fn add(&mut self, tick: &Tick<'_>) {
        self.accumulator.add(tick);
        if let Some(t) = &mut self.timeline {
            t.add(tick);
        }
    }

    /// Ends the lane after the trace's last tick: the finished summary and the timeline, if
    /// kept.
    pub fn finish(self) -> Run {
        Run { summary: self.accumulator.finish(), timeline: self.timeline }
    }
}
