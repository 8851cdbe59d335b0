//! docs/behaviour.md §8 over a replay: every reading's p95 samples are kept for 24 hours, and
//! at the first reading of each clock hour the baselines are learnt again from them. A
//! reading's API without a `baseline_ms` gets the learnt one (or none, and is not assessed on
//! latency). The live sentinel keeps its samples in its store; this is the replay's window.

use crate::baseline::{baseline_of, hour_of, in_window};
use std::collections::{BTreeMap, VecDeque};
use vocabulary::{ApiBaseline, Instant, LatencySample, Reading, Thresholds};

const WINDOW: Instant = 24 * 3600;

#[derive(Debug, Default)]
pub struct BaselineWindow {
    samples: BTreeMap<String, VecDeque<LatencySample>>,
    hour: Option<Instant>,
    learnt: BTreeMap<String, f64>,
    /// Reused for each API's values at each hour.
    scratch: Vec<f64>,
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
            if latency.baseline_ms.is_none() {
                latency.baseline_ms = self.learnt.get(&latency.api).copied();
            }
            if let Some(p95) = latency.p95_ms.filter(|v| v.is_finite()) {
                let sample = LatencySample { at, p95_ms: p95 };
                match self.samples.get_mut(&latency.api) {
                    Some(series) => series.push_back(sample),
                    None => {
                        self.samples.insert(latency.api.clone(), VecDeque::from([sample]));
                    }
                }
            }
        }
        learnt
    }

    /// Drops samples older than the window and learns each API's baseline for `hour`.
    fn learn(&mut self, hour: Instant, t: &Thresholds) -> Vec<ApiBaseline> {
        for series in self.samples.values_mut() {
            while series.front().is_some_and(|s| s.at < hour.saturating_sub(WINDOW)) {
                series.pop_front();
            }
        }
        self.samples.retain(|_, s| !s.is_empty());
        let mut baselines = Vec::with_capacity(self.samples.len());
        for (api, series) in &self.samples {
            self.scratch.clear();
            self.scratch.extend(in_window(hour, series));
            baselines.push(baseline_of(api, &mut self.scratch, t));
        }
        self.learnt = baselines.iter().filter_map(|b| b.baseline_ms.map(|ms| (b.api.clone(), ms))).collect();
        baselines
    }
}
