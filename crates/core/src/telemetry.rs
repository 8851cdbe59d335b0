//! The sentinel's own metrics (docs/behaviour.md §7.1), in Prometheus text format: what it
//! decided (state, cause, factors, readings against the active policy's thresholds), whether
//! it published (per channel), what failed (reads, ticks, stages), which policy decides, pins
//! and stage throttles. `tick::observe` sets them after each tick.

use crate::sync::Lock;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

/// A gauge of fractional values (factors, readings, timestamps).
pub type FloatGauge = Gauge<f64, AtomicU64>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ChangeLabels {
    pub from: String,
    pub to: String,
    pub cause: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ChannelLabels {
    pub channel: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StateLabels {
    pub state: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CauseLabels {
    pub cause: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WorkloadLabels {
    pub workload: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SignalLabels {
    pub signal: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ThresholdLabels {
    pub signal: String,
    pub level: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    pub reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PolicyLabels {
    pub name: String,
    pub version: String,
    pub digest: String,
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TargetLabels {
    pub target: String,
}

pub struct Telemetry {
    registry: Lock<Registry>,
    /// The state's rank: normal 0, constrained 1, critical 2, emergency 3.
    pub state: Gauge,
    /// 1 for the current state, 0 for the others.
    pub in_state: Family<StateLabels, Gauge>,
    /// Seconds in the current state, by the sentinel's clock.
    pub state_seconds: Gauge,
    /// 1 for the last decision's cause, 0 for the others.
    pub decision_cause: Family<CauseLabels, Gauge>,
    pub changes: Family<ChangeLabels, Counter>,
    pub factor: Family<WorkloadLabels, FloatGauge>,
    /// The last reading of each signal; removed after a failed read.
    pub reading: Family<SignalLabels, FloatGauge>,
    pub policy_threshold: Family<ThresholdLabels, FloatGauge>,
    pub consecutive_failed_reads: Gauge,
    pub failed_reads: Counter,
    /// Wall-clock unix seconds of each channel's last successful publication.
    pub last_publication: Family<ChannelLabels, FloatGauge>,
    /// 1 when the channel's last publication succeeded.
    pub channel_up: Family<ChannelLabels, Gauge>,
    pub publish_failures: Family<ChannelLabels, Counter>,
    /// Ticks that failed, by reason: the alarm.
    pub tick_failures: Family<ReasonLabels, Counter>,
    /// Failed ticks recorded in the dead-letter file.
    pub dead_letters: Counter,
    pub stage_failures: Counter,
    /// 1 for each stage target with a throttle record after the tick, 0 for declared targets without.
    pub stage_throttled: Family<TargetLabels, Gauge>,
    /// Stage targets with a throttle record (engaging, engaged or restoring) after the tick.
    pub stages_throttled: Gauge,
    /// Of those, the ones the policy no longer wants throttled (a restore failing): the alarm.
    pub stages_left_throttled: Gauge,
    pub tick_seconds: Histogram,
    pub decision_seconds: Histogram,
    /// 1 for the policy version that decided the last tick.
    pub policy_info: Family<PolicyLabels, Gauge>,
    /// A policy version failed during a tick and the tick reran with the last good one: the alarm.
    pub policy_rollbacks: Counter,
    pub policy_activations: Counter,
    /// Candidate versions refused at activation (integrity, world, checks, trial replay).
    pub policy_refusals: Counter,
    pub shadow_decisions: Counter,
    /// Ticks where the shadow version decided differently from the active one.
    pub shadow_divergences: Counter,
    pub shadow_failures: Counter,
    pub pin_active: Gauge,
    /// 1 for the pinned state while a pin is active, 0 for the others.
    pub pin_state: Family<StateLabels, Gauge>,
    /// Unix seconds; 0 without an active pin.
    pub pin_expires: Gauge,
    pub pin_set: Gauge,
    /// Wall-clock unix seconds when this process started: counters seen first above 0 (a policy
    /// refused at start, before the first scrape) still alert.
    pub start_time: FloatGauge,
}

impl Default for Telemetry {
    fn default() -> Telemetry {
        let t = Telemetry {
            registry: Lock::new("metrics registry", Registry::with_prefix("sentinel")),
            state: Gauge::default(),
            in_state: Family::default(),
            state_seconds: Gauge::default(),
            decision_cause: Family::default(),
            changes: Family::default(),
            factor: Family::default(),
            reading: Family::default(),
            policy_threshold: Family::default(),
            consecutive_failed_reads: Gauge::default(),
            failed_reads: Counter::default(),
            last_publication: Family::default(),
            channel_up: Family::default(),
            publish_failures: Family::default(),
            tick_failures: Family::default(),
            dead_letters: Counter::default(),
            stage_failures: Counter::default(),
            stage_throttled: Family::default(),
            stages_throttled: Gauge::default(),
            stages_left_throttled: Gauge::default(),
            tick_seconds: Histogram::new(exponential_buckets(0.0005, 2.0, 16)),
            decision_seconds: Histogram::new(exponential_buckets(0.000_001, 2.0, 20)),
            policy_info: Family::default(),
            policy_rollbacks: Counter::default(),
            policy_activations: Counter::default(),
            policy_refusals: Counter::default(),
            shadow_decisions: Counter::default(),
            shadow_divergences: Counter::default(),
            shadow_failures: Counter::default(),
            pin_active: Gauge::default(),
            pin_state: Family::default(),
            pin_expires: Gauge::default(),
            pin_set: Gauge::default(),
            start_time: FloatGauge::default(),
        };
        t.start_time.set(crate::clock::now_fractional());
        // Every failure reason is shown from the start, at 0: `increase()` then sees the first one.
        for reason in crate::dead_letter::FailureReason::ALL {
            let _ = t.tick_failures.get_or_create(&ReasonLabels { reason: reason.name().into() });
        }
        t.register_all();
        t
    }
}

impl Telemetry {
    fn register_all(&self) {
        let mut r = self.registry.lock();
        r.register("state", "Protection state rank (0 normal .. 3 emergency)", self.state.clone());
        r.register("in_state", "1 for the current protection state, 0 for the others", self.in_state.clone());
        r.register("state_seconds", "Seconds in the current state, by the sentinel's clock", self.state_seconds.clone());
        r.register("decision_cause", "1 for the last decision's cause, 0 for the others", self.decision_cause.clone());
        r.register("state_changes", "State changes by from, to and cause", self.changes.clone());
        r.register("factor", "Published workload factor by workload (0 to 1)", self.factor.clone());
        r.register("reading", "Last reading by signal (latency_ratio: the largest p95/baseline)", self.reading.clone());
        r.register("policy_threshold", "The active policy's boundaries by signal and level", self.policy_threshold.clone());
        r.register("consecutive_failed_reads", "Failed metric reads in a row", self.consecutive_failed_reads.clone());
        r.register("failed_reads", "Failed metric reads", self.failed_reads.clone());
        r.register(
            "last_publication_timestamp_seconds",
            "Wall-clock time of the last successful publication by channel",
            self.last_publication.clone(),
        );
        r.register("channel_up", "1 when the channel's last publication succeeded", self.channel_up.clone());
        r.register("publish_failures", "Failed publications by channel", self.publish_failures.clone());
        r.register("tick_failures", "Failed ticks by reason (alarm)", self.tick_failures.clone());
        r.register("dead_letters", "Failed ticks recorded in the dead-letter file", self.dead_letters.clone());
        r.register("stage_failures", "Stage throttle changes that failed (retried next tick)", self.stage_failures.clone());
        r.register("stage_throttled", "1 for each stage target throttled by the sentinel after the tick", self.stage_throttled.clone());
        r.register(
            "stages_throttled",
            "Stage targets throttled by the sentinel (or possibly so) after the tick",
            self.stages_throttled.clone(),
        );
        r.register(
            "stages_left_throttled",
            "Stage targets still throttled although the policy released them: a restore is failing (alarm)",
            self.stages_left_throttled.clone(),
        );
        r.register("tick_seconds", "Duration of a whole tick", self.tick_seconds.clone());
        r.register("decision_seconds", "Duration of the policy call", self.decision_seconds.clone());
        r.register("policy_info", "1 for the policy version that decided the last tick", self.policy_info.clone());
        r.register(
            "policy_rollbacks",
            "Ticks rerun with the last good policy after a trap, timeout or memory cap (alarm)",
            self.policy_rollbacks.clone(),
        );
        r.register("policy_activations", "Policy versions activated", self.policy_activations.clone());
        r.register("policy_refusals", "Policy versions refused at activation", self.policy_refusals.clone());
        r.register("shadow_decisions", "Decisions of the shadow policy", self.shadow_decisions.clone());
        r.register("shadow_divergences", "Ticks where the shadow policy decided differently", self.shadow_divergences.clone());
        r.register("shadow_failures", "Shadow policy calls that failed", self.shadow_failures.clone());
        r.register("pin_active", "1 while a staff pin decides the state", self.pin_active.clone());
        r.register("pin_state", "1 for the pinned state while a pin is active", self.pin_state.clone());
        r.register("pin_expires_timestamp_seconds", "When the active pin expires (0 without a pin)", self.pin_expires.clone());
        r.register("pin_set_timestamp_seconds", "When the active pin was set (0 without a pin)", self.pin_set.clone());
        r.register("start_time_seconds", "Wall-clock time this sentinel process started", self.start_time.clone());
    }

    /// Everything in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let registry = self.registry.lock();
        prometheus_client::encoding::text::encode(&mut out, &registry).expect("writing to a String cannot fail");
        out
    }

    /// Counts a failed tick under its reason.
    pub fn tick_failed(&self, reason: crate::dead_letter::FailureReason) {
        self.tick_failures.get_or_create(&ReasonLabels { reason: reason.name().into() }).inc();
    }
}
