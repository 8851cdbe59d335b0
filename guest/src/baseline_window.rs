//! docs/behaviour.md §8 over a replay: every reading's p95 samples are kept for 24 hours, and
//! at the first reading of each clock hour the baselines are learnt again from them. A
//! reading's API without a `baseline_ms` gets the learnt one (or none, and is not assessed on
//! latency). The live sentinel keeps its samples in its store; this is the replay's window.
//!
//! Each API's samples are two columns (times, values) in arrival order. A trace's times never
//! go back, so the hour's window is one contiguous run of them, found by binary search and
//! copied whole (checking each sample's time, every hour, was a tenth of a component's replay
//! of a year); only samples that arrived out of order (which a trace file cannot hold, but a
//! session's caller could send) take the filtering path, with the same result. The median is
//! then selected. Keeping the window sorted from hour to hour instead (an hour's values merged
//! in and out) was measured slower in the component: 0.62 s against 0.59 s for the year.

use crate::baseline::{baseline_of, counts, hour_of};
use std::collections::BTreeMap;
use vocabulary::{ApiBaseline, Instant, Reading, Thresholds};

const WINDOW: Instant = 24 * 3600;
const HOUR: Instant = 3600;

#[derive(Debug, Default)]
pub struct BaselineWindow {
    apis: BTreeMap<String, ApiWindow>,
    hour: Option<Instant>,
    /// Reused for each API's values at each hour.
    scratch: Vec<f64>,
}

/// One API's kept samples (from `start` on; finite values only) and its learnt baseline.
#[derive(Debug, Default)]
struct ApiWindow {
    at: Vec<Instant>,
    p95_ms: Vec<f64>,
    start: usize,
    /// Whether the kept samples' times never go back.
    in_order: bool,
    learnt: Option<f64>,
}

impl ApiWindow {
    fn push(&mut self, at: Instant, p95_ms: f64) {
        if self.start == self.at.len() {
            self.at.clear();
            self.p95_ms.clear();
            self.start = 0;
            self.in_order = true;
        }
        self.in_order &= self.at.last().is_none_or(|last| *last <= at);
        self.at.push(at);
        self.p95_ms.push(p95_ms);
    }

    /// Forgets the samples before `cutoff` at the front (all of them, when in order).
    fn drop_before(&mut self, cutoff: Instant) {
        self.start += self.at[self.start..].iter().take_while(|at| **at < cutoff).count();
    }

    /// Frees the columns' dropped front once it is most of them.
    fn compact(&mut self) {
        if self.start > 4096 && self.start * 2 > self.at.len() {
            self.at.drain(..self.start);
            self.p95_ms.drain(..self.start);
            self.start = 0;
        }
    }

    fn is_empty(&self) -> bool {
        self.start == self.at.len()
    }

    /// The baseline for the hour starting at `hour` from the values in [hour - 24 h, hour - 1 h)
    /// (after [`Self::drop_before`] that hour's start); `scratch` is for samples out of order.
    fn baseline(&self, api: &str, hour: Instant, scratch: &mut Vec<f64>, t: &Thresholds) -> ApiBaseline {
        let at = &self.at[self.start..];
        if !self.in_order {
            let values = &self.p95_ms[self.start..];
            scratch.clear();
            scratch.extend(at.iter().zip(values).filter(|&(&at, &p95_ms)| counts(hour, at, p95_ms)).map(|(_, &p95_ms)| p95_ms));
            return baseline_of(api, scratch, t);
        }
        let from = self.start + at.partition_point(|t| *t < hour.saturating_sub(WINDOW));
        let until = self.start + at.partition_point(|t| *t < hour.saturating_sub(HOUR));
        scratch.clear();
        scratch.extend_from_slice(&self.p95_ms[from..until]);
        baseline_of(api, scratch, t)
    }
}

impl BaselineWindow {
    /// Fills the reading's missing baselines with the learnt ones and records its samples; at
    /// the first reading of a new hour, first learns the baselines again and returns them.
    pub fn observe(&mut self, at: Instant, reading: &mut Reading, t: &Thresholds) -> Option<Vec<ApiBaseline>> {
        let hour = hour_of(at);
        let learnt = (self.hour != Some(hour)).then(|| {
            self.hour = Some(hour);
            self.learn(hour, t)
        });
        for latency in &mut reading.latency {
            let sample = latency.p95_ms.filter(|v| v.is_finite());
            let window = match self.apis.get_mut(&latency.api) {
                Some(window) => window,
                None if sample.is_some() => self.apis.entry(latency.api.clone()).or_default(),
                None => continue,
            };
            if latency.baseline_ms.is_none() {
                latency.baseline_ms = window.learnt;
            }
            if let Some(p95) = sample {
                window.push(at, p95);
            }
        }
        learnt
    }

    /// Drops samples older than the window and learns each API's baseline for `hour`.
    fn learn(&mut self, hour: Instant, t: &Thresholds) -> Vec<ApiBaseline> {
        for window in self.apis.values_mut() {
            window.drop_before(hour.saturating_sub(WINDOW));
        }
        self.apis.retain(|_, w| !w.is_empty());
        let mut baselines = Vec::with_capacity(self.apis.len());
        for (api, window) in &mut self.apis {
            let baseline = window.baseline(api, hour, &mut self.scratch, t);
            window.compact();
            window.learnt = baseline.baseline_ms;
            baselines.push(baseline);
        }
        baselines
    }
}
