//! docs/behaviour.md §8 during replay: every reading's p95 samples are kept for 24 hours, and at
//! the first reading of each clock hour the policy recomputes the baselines from them. A reading
//! whose API has no `baseline_ms` gets the learnt one (or none, and is not assessed on latency).

use crate::policy::{Policy, PolicyError};
use std::collections::{BTreeMap, VecDeque};
use vocabulary::{ApiBaseline, ApiSamples, Instant, LatencySample, Reading};

const HOUR: Instant = 3600;
const WINDOW: Instant = 24 * HOUR;

/// The latency a replay keeps, as the live sentinel keeps it: each API's p95 samples of the last 24
/// hours, and the baselines the policy learnt from them at the start of the current clock hour.
#[derive(Debug, Default)]
pub struct Baselines {
    samples: BTreeMap<String, VecDeque<LatencySample>>,
    hour: Option<Instant>,
    learnt: BTreeMap<String, f64>,
}

impl Baselines {
    /// Records the reading's samples and returns it with learnt baselines filled in; at the
    /// first reading of a new hour, also the baselines learnt again.
    pub fn observe(
        &mut self,
        policy: &mut dyn Policy,
        at: Instant,
        reading: &Reading,
    ) -> Result<(Reading, Option<Vec<ApiBaseline>>), PolicyError> {
        let hour = at.div_euclid(HOUR) * HOUR;
        let mut learnt = None;
        if self.hour != Some(hour) {
            self.hour = Some(hour);
            learnt = Some(self.recompute(policy, hour)?);
        }
        let mut reading = reading.clone();
        for latency in &mut reading.latency {
            if latency.baseline_ms.is_none() {
                latency.baseline_ms = self.learnt.get(&latency.api).copied();
            }
            if let Some(p95) = latency.p95_ms.filter(|v| v.is_finite()) {
                let sample = LatencySample { at, p95_ms: p95 };
                // Only a new API's name is copied (once a minute per API, this was a visible cost).
                match self.samples.get_mut(&latency.api) {
                    Some(series) => series.push_back(sample),
                    None => {
                        self.samples.insert(latency.api.clone(), VecDeque::from([sample]));
                    }
                }
            }
        }
        Ok((reading, learnt))
    }

    fn recompute(&mut self, policy: &mut dyn Policy, hour: Instant) -> Result<Vec<ApiBaseline>, PolicyError> {
        for series in self.samples.values_mut() {
            while series.front().is_some_and(|s| s.at < hour - WINDOW) {
                series.pop_front();
            }
        }
        self.samples.retain(|_, s| !s.is_empty());
        if self.samples.is_empty() {
            self.learnt.clear();
            return Ok(Vec::new());
        }
        let groups: Vec<ApiSamples> =
            self.samples.iter().map(|(api, s)| ApiSamples { api: api.clone(), samples: s.iter().copied().collect() }).collect();
        let baselines = policy.compute_baselines(hour, &groups)?;
        self.learnt = baselines.iter().filter_map(|b| b.baseline_ms.map(|ms| (b.api.clone(), ms))).collect();
        Ok(baselines)
    }
}
