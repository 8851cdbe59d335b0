//! One tick, as docs/behaviour.md §11 lays it out: gather (memory, pin, metrics and baselines read
//! concurrently, each with its own timeout) -> decide (one policy call) -> stage throttles
//! (reconcile each declared target) -> one transaction -> both channels published concurrently.
//! The tick fails only when both channels fail, or when nothing could be decided or stored.

mod backstop;
mod decide;
mod failure;
mod gather;
mod observe;
mod publish;
mod republish;
mod stages;

pub use publish::recorded_document;
pub use stages::StageStep;

use crate::dead_letter::DeadLetters;
use crate::policy::active::ActivePolicy;
use crate::policy::{PolicyError, PolicyIdentity};
use crate::ports::StoreError;
use crate::ports::baselines::BaselineStore;
use crate::ports::leadership::{Leadership, LockError};
use crate::ports::memory::{ChannelOutcome, MemoryStore, PolicyRef, TickCommit, TickRecord};
use crate::ports::metrics::MetricsSource;
use crate::ports::pins::{AuditRecord, PinStore};
use crate::ports::publisher::{Publisher, StateDocument};
use crate::ports::stage_ledger::StageLedger;
use crate::ports::stages::{StageController, StageTarget};
use crate::telemetry::Telemetry;
use std::sync::Arc;
use std::time::{Duration, Instant as Clock};
use vocabulary::{Decision, DecisionInput, Pin, Reading, Signal};

/// The capabilities a tick uses, one port each.
pub struct Ports {
    /// Where the minute's database reading comes from (CloudWatch, Prometheus, a trace, synthetic).
    pub metrics: Box<dyn MetricsSource>,
    /// The store of the sentinel's memory between ticks, where each tick's one transaction is committed.
    pub memory: Arc<dyn MemoryStore>,
    /// The store of the staff pin and its audit trail.
    pub pins: Arc<dyn PinStore>,
    /// The store of latency samples and the hourly baselines computed from them.
    pub baselines: Arc<dyn BaselineStore>,
    /// The cache channel's publisher (`[publish.cache]`, e.g. Redis).
    pub cache: Box<dyn Publisher>,
    /// The parameter channel's publisher (`[publish.parameter]`, e.g. AWS SSM).
    pub parameter: Box<dyn Publisher>,
    /// Reads and sets the stage-wide limits of the API stages that emergency throttles change.
    pub stages: Box<dyn StageController>,
    /// The store's write-ahead records of stage throttles and the audit of every stage change.
    pub stage_ledger: Arc<dyn StageLedger>,
    /// The lease that lets only one sentinel decide at a time, held for the whole tick.
    pub leadership: Box<dyn Leadership>,
}

/// How a tick runs: its timeouts, the stage-throttle switch and the declared stage targets, from the
/// configuration.
#[derive(Debug, Clone)]
pub struct TickSettings {
    /// The most a whole tick may take once the lease is held (`tick_deadline`); past it the tick fails.
    pub deadline: Duration,
    /// The most each read at the start of a tick (memory, pin, stage records, metrics, baselines) may
    /// take (`metrics.timeout`).
    pub read_timeout: Duration,
    /// The most each channel's publication may take (`publish.timeout`).
    pub publish_timeout: Duration,
    /// The emergency stage-throttle switch (`throttles_enabled`): without it the policy never engages
    /// stage throttles.
    pub throttles_enabled: bool,
    /// The API stages to throttle in an emergency, as declared in the configuration.
    pub stage_targets: Vec<StageTarget>,
    /// Wait this long for another sentinel's lock instead of giving up at once.
    pub lock_wait: Option<Duration>,
}

/// The sentinel that runs ticks: the ports it reads and writes through, the policy it decides with,
/// its settings and its metrics. [`Sentinel::tick`] runs one minute.
pub struct Sentinel {
    /// The capabilities the tick reads and writes through.
    pub ports: Ports,
    /// The policy the tick decides through, with its fallback to the last good version and its shadow.
    pub policy: ActivePolicy,
    /// How the tick runs: timeouts, the stage-throttle switch and the stage targets.
    pub settings: TickSettings,
    /// The sentinel's metrics, which each tick updates.
    pub telemetry: Arc<Telemetry>,
    /// Where a failed tick leaves what it decided and why it failed.
    pub dead_letters: Arc<DeadLetters>,
    /// What the metrics already show (the policy's thresholds, the pin's set time).
    pub seen: observe::SeenCell,
}

/// What one tick did.
#[derive(Debug, Clone)]
pub struct TickReport {
    /// The stored tick's sequence: grows by one each tick, never goes backwards.
    pub sequence: u64,
    /// The minute's reading; `None` when the metric read failed.
    pub reading: Option<Reading>,
    /// The pin read at the start of the tick (an expired one included, which this tick removed).
    pub pin: Option<Pin>,
    /// What the policy decided: state, factors, cause and the memory to keep.
    pub decision: Decision,
    /// The document published to both channels.
    pub document: StateDocument,
    /// How each channel's publication went.
    pub outcomes: Vec<ChannelOutcome>,
    /// The audit record of a pin that expired and was removed by this tick's commit; `None` otherwise.
    pub expiry_audit: Option<AuditRecord>,
    /// Stage targets that failed this tick (retried next tick).
    pub stage_failures: Vec<String>,
    /// Things that went wrong but did not stop the tick (fresh memory, unreadable pin, ...).
    pub notes: Vec<String>,
    /// This minute (or a later one) was already decided, by another sentinel or by a run killed
    /// before it published: the newest recorded document was published again instead.
    pub republished: bool,
    /// The dead letters of the failed ticks before this one, which it ends (`sentinel failures`).
    pub recovers: Vec<u64>,
}

/// Why a tick failed. Every failure leaves a dead letter, and the next successful tick ends it.
#[derive(Debug, thiserror::Error)]
pub enum TickError {
    /// The leadership lease could not be taken: its store is unreachable, or another sentinel held it.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The tick ran past its deadline (the duration held); what it had not done by then was not done.
    #[error("the tick did not finish within its deadline of {0:?}; nothing more was done this minute")]
    Deadline(Duration),
    /// The policy failed to decide, even after any fallback to the last good version.
    #[error("the policy failed, nothing was decided or published this minute: {0}")]
    Policy(#[from] PolicyError),
    /// The tick's transaction could not be committed (an unreachable store, or another tick committed
    /// since this one read its memory), so nothing was published.
    #[error("the tick could not be stored, so nothing was published this minute: {0}")]
    Store(#[from] StoreError),
    /// Both channels refused the document. The tick was stored: its report holds the sequence and each
    /// channel's error.
    #[error("both channels failed (sequence {}): {}", .0.sequence, failures(&.0.outcomes))]
    BothChannelsFailed(Box<TickReport>),
}

fn failures(outcomes: &[ChannelOutcome]) -> String {
    outcomes.iter().filter_map(|o| o.error.clone()).collect::<Vec<_>>().join("; ")
}

impl Sentinel {
    /// Runs one tick at `now` under the tick deadline, holding the leadership lease. A tick
    /// that fails leaves a dead letter; the next one that succeeds ends them.
    pub async fn tick(&self, now: vocabulary::Instant) -> Result<TickReport, TickError> {
        // Waiting for another sentinel's lock (`lock_wait`) comes first: the deadline bounds
        // this sentinel's own work, not how long another one keeps the lock.
        let lease = self.ports.leadership.acquire(self.settings.lock_wait).await;
        let started = Clock::now();
        let mut progress = failure::Progress::default();
        let result = match lease {
            Err(e) => Err(TickError::Lock(e)),
            Ok(lease) => {
                let result = match tokio::time::timeout(self.settings.deadline, self.tick_inner(now, &mut progress)).await {
                    Ok(result) => result,
                    Err(_) => Err(TickError::Deadline(self.settings.deadline)),
                };
                lease.release().await;
                result
            }
        };
        self.telemetry.tick_seconds.observe(started.elapsed().as_secs_f64());
        match result {
            Ok(mut report) => {
                report.recovers = failure::recovered(self, &report).await;
                Ok(report)
            }
            Err(e) => {
                failure::record(self, now, &e, progress).await;
                Err(e)
            }
        }
    }

    async fn tick_inner(&self, now: vocabulary::Instant, progress: &mut failure::Progress) -> Result<TickReport, TickError> {
        let mut notes = Vec::new();
        let follows = match republish::newest_tick(self.ports.memory.as_ref(), self.settings.read_timeout).await {
            Ok(Some((sequence, record))) if record.at >= now => return republish::republish(self, sequence, record, notes).await,
            Ok(newest) => Some(newest.map_or(0, |(sequence, _)| sequence)),
            Err(e) => {
                notes.push(e);
                None
            }
        };
        let gathered = gather::gather(&self.ports, &self.policy, self.settings.read_timeout, now).await;
        notes.extend(gathered.notes);

        let input = DecisionInput {
            now,
            signal: gathered.signal,
            memory: gathered.memory,
            pin: gathered.pin.clone(),
            throttles_enabled: self.settings.throttles_enabled,
            stages_throttled: gathered.stage_records.as_ref().map_or(true, |r| !r.is_empty()),
        };
        let (decision, identity) = self.decide(&input, &mut notes)?;
        progress.decided = Some((decision.clone(), policy_ref(&identity)));
        self.observe_policy(&identity);

        let stage_outcomes =
            stages::reconcile(self, gathered.stage_records.as_ref().map_err(String::as_str), decision.memory.throttles_engaged, now).await;
        self.watch_stages(&decision, &stage_outcomes);

        let expired_pin = gathered.pin.clone().filter(|p| p.expires_at <= now);
        let record = TickRecord {
            at: now,
            signal: input.signal.clone(),
            pin: gathered.pin.clone(),
            throttles_enabled: self.settings.throttles_enabled,
            stages_throttled: input.stages_throttled,
            decision: decision.clone(),
            policy: policy_ref(&identity),
        };
        let committed = self
            .ports
            .memory
            .commit_tick(&TickCommit {
                memory: decision.memory.clone(),
                expired_pin,
                expired_by: "sentinel (expiry)".into(),
                samples: gathered.samples,
                record,
                follows,
            })
            .await?;
        progress.sequence = Some(committed.sequence);

        let document = publish::document(&decision, now, &identity, input.pin.as_ref(), committed.sequence);
        let outcomes =
            publish::publish_both(self.ports.cache.as_ref(), self.ports.parameter.as_ref(), self.settings.publish_timeout, &document).await;
        if let Err(e) = self.ports.memory.record_publication(committed.sequence, &outcomes).await {
            notes.push(format!("could not record the publication outcome: {e}"));
        }
        progress.channels = outcomes.clone();
        observe::decided(&self.telemetry, &decision);
        self.observe_tick(&input.signal, &decision, input.pin.as_ref(), &outcomes, now).await;
        let report = TickReport {
            sequence: committed.sequence,
            reading: reading_of(&input.signal),
            pin: input.pin,
            decision,
            document,
            outcomes,
            expiry_audit: committed.expiry_audit,
            stage_failures: stage_outcomes.failures,
            notes,
            republished: false,
            recovers: Vec::new(),
        };
        conclude(report)
    }
}

/// The name, version and digest of a policy, as a tick record and the published document name it.
pub(crate) fn policy_ref(identity: &PolicyIdentity) -> PolicyRef {
    PolicyRef { name: identity.name.clone(), version: identity.version.clone(), digest: identity.digest.clone() }
}

/// The end of every tick that published: its log line, and the failure when both channels failed.
fn conclude(report: TickReport) -> Result<TickReport, TickError> {
    observe::log_tick(&report);
    if report.outcomes.iter().all(|o| !o.ok) {
        return Err(TickError::BothChannelsFailed(Box::new(report)));
    }
    Ok(report)
}

/// The reading a tick's signal carries, if it was read.
fn reading_of(signal: &Signal) -> Option<Reading> {
    match signal {
        Signal::Reading(r) => Some(r.clone()),
        Signal::Failed(_) => None,
    }
}
