//! What a tick shows on `/metrics` (docs/behaviour.md §7.1): the decision, the reading against
//! the active policy's thresholds, each channel's publication, the pin and the policy version.
//! The thresholds are asked of a version once, when it first decides; a pin's set time is read
//! from the audit once, when the pin first appears. And what it says in the log: one line per
//! tick explaining the decision (decided or published again), each failed publication, and
//! every tick a stage stays throttled the policy no longer wants throttled.

use super::Sentinel;
use crate::policy::PolicyIdentity;
use crate::ports::memory::ChannelOutcome;
use crate::ports::pins::AuditAction;
use crate::sync::Lock;
use crate::telemetry::{
    CauseLabels, ChangeLabels, ChannelLabels, PolicyLabels, SignalLabels, StateLabels, Telemetry, ThresholdLabels, WorkloadLabels,
};
use vocabulary::{Cause, Decision, Instant, Pin, ProtectionState, Reading, Signal};

/// What the last ticks already showed, so that it is not asked for again.
#[derive(Debug, Default)]
pub struct Seen {
    policy_digest: Option<String>,
    /// The active pin and when it was set (unix seconds).
    pin: Option<(Pin, i64)>,
}

pub type SeenCell = Lock<Seen>;

impl Default for Lock<Seen> {
    fn default() -> Lock<Seen> {
        Lock::new("observed minute", Seen::default())
    }
}

/// The decision: state, cause, factors and memory (also for a minute published again).
pub fn decision(t: &Telemetry, d: &Decision, now: Instant) {
    t.state.set(i64::from(d.state.rank()));
    for state in ProtectionState::ALL {
        t.in_state.get_or_create(&StateLabels { state: state.name().into() }).set(i64::from(state == d.state));
    }
    t.state_seconds.set((now - d.memory.state_since).max(0));
    for cause in Cause::ALL {
        t.decision_cause.get_or_create(&CauseLabels { cause: cause.name().into() }).set(i64::from(cause == d.cause));
    }
    for (workload, value) in [("bulk", d.factors.bulk), ("heavy", d.factors.heavy), ("write", d.factors.write), ("read", d.factors.read)] {
        t.factor.get_or_create(&WorkloadLabels { workload: workload.into() }).set(value);
    }
    t.consecutive_failed_reads.set(i64::from(d.memory.failed_reads));
}

/// A decision this sentinel took (not one published again): its change and failed read counted.
pub fn decided(t: &Telemetry, d: &Decision) {
    if d.changed {
        let labels = ChangeLabels { from: d.previous.name().into(), to: d.state.name().into(), cause: d.cause.name().into() };
        t.changes.get_or_create(&labels).inc();
    }
    if d.level.is_none() {
        t.failed_reads.inc();
    }
}

/// The reading of each signal, or none after a failed read (the series disappear rather than
/// show an old value). The latency is the largest p95 over its baseline among the APIs with one.
pub fn reading(t: &Telemetry, reading: Option<&Reading>) {
    let set = |signal: &str, value: Option<f64>| {
        let labels = SignalLabels { signal: signal.into() };
        match value {
            Some(v) => {
                t.reading.get_or_create(&labels).set(v);
            }
            None => {
                t.reading.remove(&labels);
            }
        }
    };
    let latency = reading.and_then(|r| {
        r.latency
            .iter()
            .filter_map(|l| match (l.p95_ms, l.baseline_ms) {
                (Some(p95), Some(base)) if base > 0.0 => Some(p95 / base),
                _ => None,
            })
            .reduce(f64::max)
    });
    set("cpu_pct", reading.and_then(|r| r.cpu_pct));
    set("connections_pct", reading.and_then(|r| r.connections_pct));
    set("latency_ratio", latency);
}

/// Each channel's outcome: up or not, the time of its last success, its failures.
pub fn publication(t: &Telemetry, outcomes: &[ChannelOutcome]) {
    let wall = crate::clock::now_fractional();
    for o in outcomes {
        let labels = ChannelLabels { channel: o.channel.clone() };
        t.channel_up.get_or_create(&labels).set(i64::from(o.ok));
        if o.ok {
            t.last_publication.get_or_create(&labels).set(wall);
        } else {
            t.publish_failures.get_or_create(&labels).inc();
        }
    }
}

impl Sentinel {
    /// Everything a published minute shows, decided now or published again.
    pub(super) async fn observe_tick(&self, signal: &Signal, d: &Decision, pin: Option<&Pin>, outcomes: &[ChannelOutcome], now: Instant) {
        decision(&self.telemetry, d, now);
        reading(
            &self.telemetry,
            match signal {
                Signal::Reading(r) => Some(r),
                Signal::Failed(_) => None,
            },
        );
        publication(&self.telemetry, outcomes);
        self.observe_pin(pin, now).await;
    }

    /// The policy version that decided: its info series, and its thresholds when it is new.
    pub(super) fn observe_policy(&self, identity: &PolicyIdentity) {
        let mut seen = self.seen.lock();
        if seen.policy_digest.as_deref() == Some(identity.digest.as_str()) {
            return;
        }
        let t = &self.telemetry;
        t.policy_info.clear();
        let labels = PolicyLabels {
            name: identity.name.clone(),
            version: identity.version.clone(),
            digest: identity.digest.clone(),
            kind: identity.kind.into(),
        };
        t.policy_info.get_or_create(&labels).set(1);
        match self.policy.lock().describe() {
            Ok(description) => {
                let th = description.thresholds;
                for (signal, levels) in
                    [("cpu_pct", th.cpu_pct), ("connections_pct", th.connections_pct), ("latency_ratio", th.latency_ratio)]
                {
                    for (level, value) in [("constrained", levels.constrained), ("critical", levels.critical)] {
                        t.policy_threshold.get_or_create(&ThresholdLabels { signal: signal.into(), level: level.into() }).set(value);
                    }
                }
            }
            Err(e) => tracing::warn!(version = %identity.version, "cannot read the policy's thresholds for the metrics: {e}"),
        }
        seen.policy_digest = Some(identity.digest.clone());
    }

    /// The active pin: its state, expiry and set time (from the newest audit record that set
    /// it, read once per pin; the expiry stands in when the audit cannot be read).
    pub(super) async fn observe_pin(&self, pin: Option<&Pin>, now: Instant) {
        let t = &self.telemetry;
        let active = pin.filter(|p| p.expires_at > now);
        t.pin_active.set(i64::from(active.is_some()));
        for state in ProtectionState::ALL {
            t.pin_state.get_or_create(&StateLabels { state: state.name().into() }).set(i64::from(active.is_some_and(|p| p.state == state)));
        }
        let Some(pin) = active else {
            t.pin_expires.set(0);
            t.pin_set.set(0);
            self.seen.lock().pin = None;
            return;
        };
        t.pin_expires.set(pin.expires_at);
        let known = self.seen.lock().pin.as_ref().filter(|(p, _)| p == pin).map(|(_, at)| *at);
        let set_at = match known {
            Some(at) => at,
            None => {
                let audit = tokio::time::timeout(self.settings.read_timeout, self.ports.pins.audit(1, None)).await;
                let newest = match audit {
                    Ok(Ok(records)) => records.into_iter().next(),
                    _ => None,
                };
                let found = newest
                    .filter(|r| matches!(r.action, AuditAction::Set | AuditAction::Replace) && r.after.as_ref() == Some(pin))
                    .map(|r| r.at);
                // Without the audit the tick's own minute stands in, and the audit is asked again
                // next tick: a guess is never kept.
                if let Some(at) = found {
                    self.seen.lock().pin = Some((pin.clone(), at));
                }
                found.unwrap_or(now)
            }
        };
        t.pin_set.set(set_at);
    }
}

impl Sentinel {
    /// The stages left throttled after this tick's changes: a gauge of them, and, when the
    /// policy no longer wants them throttled, an alarm gauge and an error line every tick until
    /// they are restored (docs/behaviour.md §6.2).
    pub(super) fn watch_stages(&self, decision: &Decision, outcomes: &super::stages::StageOutcomes) {
        let Some(left) = &outcomes.left else { return };
        self.telemetry.stages_throttled.set(left.len() as i64);
        self.telemetry.stage_throttled.clear();
        for target in &self.settings.stage_targets {
            self.telemetry.stage_throttled.get_or_create(&crate::telemetry::TargetLabels { target: target.id() }).set(0);
        }
        for id in left.keys() {
            self.telemetry.stage_throttled.get_or_create(&crate::telemetry::TargetLabels { target: id.clone() }).set(1);
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
                since = %crate::instants::format_rfc3339(record.since),
                original = %record.original,
                state = decision.state.name(),
                "a stage is still throttled although the policy released it; its restore is retried every tick. \
                 Check the stage controller's errors above; to restore by hand, set the stage's stage-wide limits to the \
                 original and delete its row from stage_throttles"
            );
        }
    }
}

/// One line per tick explaining the decision.
pub(super) fn log_tick(r: &super::TickReport) {
    let d = &r.decision;
    let channels: Vec<String> = r.outcomes.iter().map(|o| format!("{}={}", o.channel, if o.ok { "ok" } else { "FAILED" })).collect();
    let readings = r.reading.as_ref().map(super::gather::summarize).unwrap_or_else(|| "read failed".into());
    // The pin's reason and actor are typed text (older rows were stored before control
    // characters were refused): `pin` is a string field, which the text log writes escaped
    // (as Debug), and the explanation, which names the actor, is escaped before it is the
    // message. Neither can start a log line of its own.
    let pin = r
        .pin
        .as_ref()
        .map(|p| format!("{} by {} until {} ({})", p.state.name(), p.actor, crate::instants::format_rfc3339(p.expires_at), p.reason));
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
