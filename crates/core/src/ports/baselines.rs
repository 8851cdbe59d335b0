//! Latency samples and the hourly baselines computed from them (docs/behaviour.md §8). Samples are
//! added by each tick's commit; the baselines of an hour are saved once computed.

use super::StoreError;
use vocabulary::{ApiBaseline, ApiSamples, Instant, LatencySample};

/// The store's side of the latency baselines: the samples each tick's commit adds, and the
/// baselines of each hour once computed. A tick computes an hour's baselines from the stored
/// samples at that hour's first reading with latency, and saves them.
#[async_trait::async_trait]
pub trait BaselineStore: Send + Sync {
    /// The newest saved baselines and the hour they are for.
    async fn latest_baselines(&self) -> Result<Option<(Instant, Vec<ApiBaseline>)>, StoreError>;
    /// Every sample taken at or after `from`, grouped by API.
    async fn samples_since(&self, from: Instant) -> Result<Vec<ApiSamples>, StoreError>;
    /// Saves the baselines of `hour` and drops samples older than `prune_before`.
    async fn save_baselines(&self, hour: Instant, baselines: &[ApiBaseline], prune_before: Instant) -> Result<(), StoreError>;
}

/// Groups samples sorted by API into one `ApiSamples` per API (what `samples_since` returns).
pub fn group_by_api(sorted: impl IntoIterator<Item = (String, LatencySample)>) -> Vec<ApiSamples> {
    let mut grouped: Vec<ApiSamples> = Vec::new();
    for (api, sample) in sorted {
        match grouped.last_mut() {
            Some(last) if last.api == api => last.samples.push(sample),
            _ => grouped.push(ApiSamples { api, samples: vec![sample] }),
        }
    }
    grouped
}
