//! The shadow's last scorecard, shared by every tab of the console, and the one scoring that may
//! run in the background (`GET /v1/policies/shadow/scorecard`, docs/behaviour.md §11.9).
//!
//! A scorecard is out of date once the shadow log has grown (a tick a minute) and it is more
//! than [`REFRESH_SECONDS`] old, or when another version is in shadow. Then the request that
//! finds it so starts one scoring and is answered with what is there; no request waits for a
//! replay, and no two scorings run at once.

use crate::api::Clock;
use crate::config::policies::PoliciesConfig;
use sentinel_core::policy::Limits;
use sentinel_core::policy::lifecycle::shadow;
use sentinel_core::ports::memory::MemoryStore;
use sentinel_core::replay::shadow_score::{self, Evidence, ShadowPeriod};
use sentinel_core::sync::Lock;
use std::sync::{Arc, MutexGuard};
use vocabulary::Instant;

/// The least age at which a scorecard of a grown log is scored again.
pub const REFRESH_SECONDS: i64 = 300;

/// What a scoring needs.
pub struct ScoreInputs {
    /// `[policies]`: the directory the versions are loaded from and the state directory
    /// holding the shadow's log.
    pub policies: PoliciesConfig,
    /// The bounds every policy call of the replays runs under.
    pub limits: Limits,
    /// The store whose tick records of the shadow period are replayed.
    pub memory: Arc<dyn MemoryStore>,
    /// "Now": how far back the records are read, and when the scoring finished.
    pub clock: Clock,
    /// The shadow version.
    pub version: String,
}

/// One finished scoring.
#[derive(Clone)]
pub struct Scored {
    /// The shadow version it scored.
    pub version: String,
    /// The length of the shadow log it scored.
    log_length: u64,
    /// When it finished (unix seconds).
    pub computed_at: Instant,
    /// The evidence, or why there is none (for a person).
    pub outcome: Result<Arc<Evidence>, String>,
}

/// What a request is answered with.
pub struct Answer {
    /// The shadow version asked about.
    pub version: String,
    /// The last scoring of this version; none before the first has finished.
    pub scored: Option<Scored>,
    /// A scoring runs now.
    pub refreshing: bool,
}

#[derive(Default)]
struct Inner {
    scored: Option<Scored>,
    running: bool,
}

/// The last scoring and whether one runs now, shared by every request.
pub struct ScorecardCache {
    inner: Lock<Inner>,
}

impl Default for ScorecardCache {
    fn default() -> ScorecardCache {
        ScorecardCache { inner: Lock::new("shadow scorecard", Inner::default()) }
    }
}

impl std::fmt::Debug for ScorecardCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScorecardCache").finish_non_exhaustive()
    }
}

impl ScorecardCache {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// The last scorecard of `inputs.version` at once, and one scoring started when it is out
    /// of date and none runs.
    pub fn answer(self: &Arc<Self>, inputs: ScoreInputs) -> Answer {
        let log_length = std::fs::metadata(shadow::log_path(&inputs.policies.state_dir, &inputs.version)).map_or(0, |m| m.len());
        let now = (inputs.clock)();
        let version = inputs.version.clone();
        let mut inner = self.lock();
        let scored = inner.scored.clone().filter(|s| s.version == version);
        let current =
            scored.as_ref().is_some_and(|s| is_current(s.outcome.is_ok(), s.log_length == log_length, now.saturating_sub(s.computed_at)));
        if !current && !inner.running {
            inner.running = true;
            drop(inner);
            self.start(inputs, log_length);
            return Answer { version, scored, refreshing: true };
        }
        Answer { version, scored, refreshing: inner.running }
    }

    fn start(self: &Arc<Self>, inputs: ScoreInputs, log_length: u64) {
        let running = Running(Some(self.clone()));
        tokio::spawn(async move {
            let version = inputs.version.clone();
            let outcome = score(&inputs).await;
            match &outcome {
                Ok(evidence) => tracing::info!(
                    version,
                    active = %evidence.active_version,
                    ticks = evidence.ticks,
                    live_record = evidence.agreement.is_ok(),
                    "the shadow's scorecard is computed again"
                ),
                Err(why) => tracing::warn!(version, "the shadow's scorecard could not be computed: {why}"),
            }
            running.finish(Scored { version, log_length, computed_at: (inputs.clock)(), outcome });
        });
    }
}

/// Whether a scoring still answers: a scorecard until the log has grown and it is
/// [`REFRESH_SECONDS`] old; a failure until it is that old, the log grown or not (what failed
/// may pass by then: the store back, a log begun).
fn is_current(scored: bool, same_log: bool, age_seconds: i64) -> bool {
    let young = age_seconds < REFRESH_SECONDS;
    if scored { same_log || young } else { young }
}

/// The one scoring running: ended with its result, or, however its task ends (a panic
/// included), marked ended when dropped.
struct Running(Option<Arc<ScorecardCache>>);

impl Running {
    fn finish(mut self, scored: Scored) {
        if let Some(cache) = self.0.take() {
            let mut inner = cache.lock();
            inner.scored = Some(scored);
            inner.running = false;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(cache) = self.0.take() {
            cache.lock().running = false;
        }
    }
}

/// The log read and the replays run on blocking threads, the records read from the store.
async fn score(inputs: &ScoreInputs) -> Result<Arc<Evidence>, String> {
    let (state_dir, version) = (inputs.policies.state_dir.clone(), inputs.version.clone());
    let period = tokio::task::spawn_blocking(move || ShadowPeriod::read(&state_dir, &version))
        .await
        .map_err(|e| format!("reading the shadow log failed: {e}"))?
        .map_err(|e| format!("{e:#}"))?;
    let since = period.reach_back((inputs.clock)());
    let records = sentinel_core::trace::recorded::recent(inputs.memory.as_ref(), since)
        .await
        .map_err(|e| format!("reading the store's tick records failed: {e}"))?;
    let (policies, limits) = (inputs.policies.clone(), inputs.limits);
    tokio::task::spawn_blocking(move || shadow_score::score(&policies, limits, &period, records, None))
        .await
        .map_err(|e| format!("scoring the shadow failed: {e}"))?
        .map(Arc::new)
        .map_err(|e| format!("{e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scorecard_is_scored_again_once_the_log_grew_and_it_is_five_minutes_old_and_a_failure_after_five_minutes() {
        // (scored, same log, age) -> still current
        let cases = [
            ((true, true, 10_000), true, "a scorecard of a log that did not grow stays"),
            ((true, false, 299), true, "a grown log waits for the card to be five minutes old"),
            ((true, false, 300), false, "then it is scored again"),
            ((false, true, 299), true, "a failure is not retried at every request"),
            ((false, true, 300), false, "but after five minutes, grown or not"),
            ((false, false, 300), false, "and of course when the log grew"),
        ];
        for ((scored, same_log, age), expected, why) in cases {
            assert_eq!(is_current(scored, same_log, age), expected, "{why}");
        }
    }

    #[tokio::test]
    async fn while_one_scoring_runs_no_other_starts_and_a_failure_is_kept_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let text = "[policies]\ndir = \"policies\"\nallow_unsigned = true\nshadow = \"1.1.0\"\nstate_dir = \"private\"\n";
        std::fs::create_dir_all(dir.path().join("policies")).unwrap();
        let policies = crate::config::Config::parse(text, &dir.path().join("sentinel.toml")).unwrap().policies.unwrap();
        let memory: Arc<dyn MemoryStore> = Arc::new(sentinel_adapters::sqlite::SqliteStore::open(&dir.path().join("sentinel.db")).unwrap());
        let inputs = || ScoreInputs {
            policies: policies.clone(),
            limits: Limits::default(),
            memory: memory.clone(),
            clock: Arc::new(|| 1_000_000),
            version: "1.1.0".into(),
        };
        let cache = Arc::new(ScorecardCache::default());
        // On this single-threaded runtime the scoring cannot run before the second request.
        let (first, second) = (cache.answer(inputs()), cache.answer(inputs()));
        assert!(first.scored.is_none() && first.refreshing && second.refreshing);
        assert!(cache.lock().running, "one scoring started, and the second request started none");
        for _ in 0..200 {
            if !cache.lock().running {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let answer = cache.answer(inputs());
        let why = answer.scored.expect("scored").outcome.err().expect("no shadow log: a failure");
        assert!(why.contains("no shadow log for 1.1.0"), "{why}");
        assert!(!answer.refreshing, "a fresh failure is kept, not retried at once");
    }
}
