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
    pub summary: Summary,
    pub timeline: Option<Timeline>,
}

/// A run in progress: every tick goes to the summary and, when kept, the timeline.
pub struct Lane {
    accumulator: Accumulator,
    timeline: Option<Timeline>,
}

impl Lane {
    pub fn new(source: &PolicySource, trace: &str, options: &Options) -> Lane {
        Lane {
            accumulator: Accumulator::with_floors(source.label(), trace, source.thresholds(), &options.floors),
            timeline: options.timelines.then(Timeline::default),
        }
    }

    pub fn add(&mut self, tick: &Tick<'_>) {
        self.accumulator.add(tick);
        if let Some(t) = &mut self.timeline {
            t.add(tick);
        }
    }

    pub fn finish(self) -> Run {
        Run { summary: self.accumulator.finish(), timeline: self.timeline }
    }
}
