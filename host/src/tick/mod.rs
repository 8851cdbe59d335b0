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

pub use gather::check_reading;
pub use publish::recorded_document;
pub use stages::{StageStep, plan_stages};

use crate::dead_letter::DeadLetters;
use crate::instants;
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
use crate::telemetry::{TargetLabels, Telemetry};
use std::sync::Arc;
use std::time::{Duration, Instant as Clock};
use vocabulary::{Decision, DecisionInput, Pin, Reading, Signal};

/// The capabilities a tick uses, one port each.
pub struct Ports {
    pub metrics: Box<dyn MetricsSource>,
    pub memory: Arc<dyn MemoryStore>,
    pub pins: Arc<dyn PinStore>,
    pub baselines: Arc<dyn BaselineStore>,
    pub cache: Box<dyn Publisher>,
    pub parameter: Box<dyn Publisher>,
    pub stages: Box<dyn StageController>,
    pub stage_ledger: Arc<dyn StageLedger>,
    pub leadership: Box<dyn Leadership>,
}

#[derive(Debug, Clone)]
pub struct TickSettings {
    pub deadline: Duration,
    pub read_timeout: Duration,
    pub publish_timeout: Duration,
    pub throttles_enabled: bool,
    pub stage_targets: Vec<StageTarget>,
    /// Wait this long for another sentinel's lock instead of giving up at once.
    pub lock_wait: Option<Duration>,
}

pub struct Sentinel {
    pub ports: Ports,
    pub policy: ActivePolicy,
    pub settings: TickSettings,
    pub telemetry: Arc<Telemetry>,
    /// Where a failed tick leaves what it decided and why it failed.
    pub dead_letters: Arc<DeadLetters>,
    /// What the metrics already show (the policy's thresholds, the pin's set time).
    pub seen: observe::SeenCell,
}

/// What one tick did.
#[derive(Debug, Clone)]
pub struct TickReport {
    pub sequence: u64,
    pub reading: Option<Reading>,
    pub pin: Option<Pin>,
    pub decision: Decision,
    pub document: StateDocument,
    pub outcomes: Vec<ChannelOutcome>,
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

#[derive(Debug, thiserror::Error)]
pub enum TickError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("the tick did not finish within its deadline of {0:?}; nothing more was done this minute")]
    Deadline(Duration),
    #[error("the policy failed, nothing was decided or published this minute: {0}")]
    Policy(#[from] PolicyError),
    #[error("the tick could not be stored, so nothing was published this minute: {0}")]
    Store(#[from] StoreError),
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
        let follows = match republish::newest_tick(self).await {
            Ok(Some((sequence, record))) if record.at >= now => return republish::republish(self, sequence, record, notes).await,
            Ok(newest) => Some(newest.map_or(0, |(sequence, _)| sequence)),
            Err(e) => {
                notes.push(e);
                None
            }
        };
        let gathered = gather::gather(self, now).await;
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
        let outcomes = publish::publish_both(self, &document).await;
        if let Err(e) = self.ports.memory.record_publication(committed.sequence, &outcomes).await {
            notes.push(format!("could not record the publication outcome: {e}"));
        }
        progress.channels = outcomes.clone();
        observe::decided(&self.telemetry, &decision);
        self.observe_tick(&input.signal, &decision, input.pin.as_ref(), &outcomes, now).await;
        let report = TickReport {
            sequence: committed.sequence,
            reading: match &input.signal {
                Signal::Reading(r) => Some(r.clone()),
                Signal::Failed(_) => None,
            },
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
        log_tick(&report);
        if report.outcomes.iter().all(|o| !o.ok) {
            return Err(TickError::BothChannelsFailed(Box::new(report)));
        }
        Ok(report)
    }

    /// The stages left throttled after this tick's changes: a gauge of them, and, when the
    /// policy no longer wants them throttled, an alarm gauge and an error line every tick until
    /// they are restored (docs/behaviour.md §6.2).
    fn watch_stages(&self, decision: &Decision, outcomes: &stages::StageOutcomes) {
        let Some(left) = &outcomes.left else { return };
        self.telemetry.stages_throttled.set(left.len() as i64);
        self.telemetry.stage_throttled.clear();
        for target in &self.settings.stage_targets {
            self.telemetry.stage_throttled.get_or_create(&TargetLabels { target: target.id() }).set(0);
        }
        for id in left.keys() {
            self.telemetry.stage_throttled.get_or_create(&TargetLabels { target: id.clone() }).set(1);
        }
        let unwanted = if decision.memory.throttles_engaged { 0 } else { left.len() };
        self.telemetry.stages_left_throttled.set(unwanted as i64);
        if unwanted == 0 {
            return;
        }
        for record in left.values() {
            tracing::error!(
                target = %record.target.id(),
                phase = record.phase.name(),
                since = %instants::format_rfc3339(record.since),
                original = %record.original,
                state = decision.state.name(),
                "a stage is still throttled although the policy released it; its restore is retried every tick. \
                 Check the stage controller's errors above; to restore by hand, set the stage's stage-wide limits to the \
                 original and delete its row from stage_throttles"
            );
        }
    }
}

pub fn policy_ref(identity: &PolicyIdentity) -> PolicyRef {
    PolicyRef { name: identity.name.clone(), version: identity.version.clone(), digest: identity.digest.clone() }
}

/// One line per tick explaining the decision.
fn log_tick(r: &TickReport) {
    let d = &r.decision;
    let channels: Vec<String> = r.outcomes.iter().map(|o| format!("{}={}", o.channel, if o.ok { "ok" } else { "FAILED" })).collect();
    let readings = r.reading.as_ref().map(gather::summarize).unwrap_or_else(|| "read failed".into());
    // The pin's reason and actor are typed text (older rows were stored before control
    // characters were refused): `pin` is a string field, which the text log writes escaped
    // (as Debug), and the explanation, which names the actor, is escaped before it is the
    // message. Neither can start a log line of its own.
    let pin = r
        .pin
        .as_ref()
        .map(|p| format!("{} by {} until {} ({})", p.state.name(), p.actor, instants::format_rfc3339(p.expires_at), p.reason));
    let explanation = crate::user_text::escape(&d.explanation);
    if r.republished {
        tracing::info!(
            sequence = r.sequence,
            state = d.state.name(),
            cause = d.cause.name(),
            channels = %channels.join(" "),
            "this minute or a later one was already decided (sequence {}, for {}); its document was published again, not decided twice",
            r.sequence,
            r.document.decided_at
        );
    } else {
        tracing::info!(
            sequence = r.sequence,
            state = d.state.name(),
            cause = d.cause.name(),
            changed = d.changed,
            level = d.level.map(|n| n.name()),
            pending = d.pending.map(|n| n.name()),
            throttles = d.throttles.name(),
            pin = pin.as_deref(),
            readings = %readings,
            channels = %channels.join(" "),
            "{}",
            explanation
        );
    }
    for o in r.outcomes.iter().filter(|o| !o.ok) {
        tracing::error!(channel = %o.channel, "publication failed: {}", o.error.as_deref().unwrap_or("unknown"));
    }
    for note in &r.notes {
        // A note may quote a stored row (an unreadable pin).
        tracing::warn!("{}", crate::user_text::escape(note));
    }
    for failure in &r.stage_failures {
        tracing::warn!("stage throttle not applied, will retry next tick: {failure}");
    }
    if let Some(audit) = &r.expiry_audit {
        tracing::info!(audit_id = audit.id, "the pin expired and was removed (audited)");
    }
}
