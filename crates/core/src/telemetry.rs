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

/// The labels of a protection state change (`sentinel_state_changes`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ChangeLabels {
    /// The state the tick left (`normal`, `constrained`, `critical` or `emergency`).
    pub from: String,
    /// The state the tick decided.
    pub to: String,
    /// Why it changed, as the decision's cause names it (e.g. `escalate`, `recover`, `pinned`).
    pub cause: String,
}

/// The label of a per-channel series: publication times, up and failures.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ChannelLabels {
    /// The channel published to: `cache` or `parameter`.
    pub channel: String,
}

/// The label of a per-state series (`sentinel_in_state`, `sentinel_pin_state`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StateLabels {
    /// The protection state: `normal`, `constrained`, `critical` or `emergency`.
    pub state: String,
}

/// The label of `sentinel_decision_cause`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CauseLabels {
    /// A decision cause, as the vocabulary names it (e.g. `hold`, `escalate`, `signal-held`).
    pub cause: String,
}

/// The label of `sentinel_factor`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WorkloadLabels {
    /// The workload class the factor applies to: `bulk`, `heavy`, `write` or `read`.
    pub workload: String,
}

/// The label of `sentinel_reading`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SignalLabels {
    /// The database signal read: `cpu_pct`, `connections_pct` or `latency_ratio`.
    pub signal: String,
}

/// The labels of `sentinel_policy_threshold`: one boundary of the active policy.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ThresholdLabels {
    /// The signal the boundary applies to: `cpu_pct`, `connections_pct` or `latency_ratio`.
    pub signal: String,
    /// The level the signal enters at this boundary: `constrained` or `critical`.
    pub level: String,
}

/// The label of `sentinel_tick_failures`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    /// Why the tick failed: `lock`, `deadline`, `policy`, `store` or `channels`.
    pub reason: String,
}

/// The labels of `sentinel_policy_info`: the policy version that decided the last tick.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PolicyLabels {
    /// The policy's name, as its description gives it (e.g. `capacity-policy`).
    pub name: String,
    /// The policy's version (e.g. `2.0.0`).
    pub version: String,
    /// The sha256 of the component file, or of the `policy.toml` for native modules.
    pub digest: String,
    /// `component` or `native`.
    pub kind: String,
}

/// The label of `sentinel_stage_throttled`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TargetLabels {
    /// The stage target, as `REST_API_ID/STAGE`.
    pub target: String,
}

/// The sentinel's own metrics, registered under the `sentinel` prefix and rendered for
/// `/metrics` by [`Telemetry::render`]. Shared by the tick, the policy lifecycle and the API;
/// each field is one series or family.
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
    /// Protection state changes, counted by from, to and cause.
    pub changes: Family<ChangeLabels, Counter>,
    /// The published workload factor (0 to 1) of each workload class.
    pub factor: Family<WorkloadLabels, FloatGauge>,
    /// The last reading of each signal; removed after a failed read.
    pub reading: Family<SignalLabels, FloatGauge>,
    /// The active policy's boundaries, by signal and level; set when a version first decides.
    pub policy_threshold: Family<ThresholdLabels, FloatGauge>,
    /// Failed metric reads in a row, as the decision's memory counts them.
    pub consecutive_failed_reads: Gauge,
    /// Ticks whose metric read failed (the decision has no level), in total.
    pub failed_reads: Counter,
    /// Wall-clock unix seconds of each channel's last successful publication.
    pub last_publication: Family<ChannelLabels, FloatGauge>,
    /// 1 when the channel's last publication succeeded.
    pub channel_up: Family<ChannelLabels, Gauge>,
    /// Failed publications, counted by channel.
    pub publish_failures: Family<ChannelLabels, Counter>,
    /// Ticks that failed, by reason: the alarm.
    pub tick_failures: Family<ReasonLabels, Counter>,
    /// Failed ticks recorded in the dead-letter file.
    pub dead_letters: Counter,
    /// Stage throttle changes that failed, and ticks whose stage records could not be read (retried
    /// next tick).
    pub stage_failures: Counter,
    /// 1 for each stage target with a throttle record after the tick, 0 for declared targets without.
    pub stage_throttled: Family<TargetLabels, Gauge>,
    /// Stage targets with a throttle record (engaging, engaged or restoring) after the tick.
    pub stages_throttled: Gauge,
    /// Of those, the ones the policy no longer wants throttled (a restore failing): the alarm.
    pub stages_left_throttled: Gauge,
    /// Duration of a whole tick in seconds, once the leadership lease is held (waiting for it excluded).
    pub tick_seconds: Histogram,
    /// Duration of the policy decision in seconds (with any fallback to the last good version), when it
    /// decided.
    pub decision_seconds: Histogram,
    /// 1 for the policy version that decided the last tick.
    pub policy_info: Family<PolicyLabels, Gauge>,
    /// A policy version failed during a tick and the tick reran with the last good one: the alarm.
    pub policy_rollbacks: Counter,
    /// Policy versions activated by the lifecycle.
    pub policy_activations: Counter,
    /// Candidate versions refused at activation (integrity, world, checks, trial replay).
    pub policy_refusals: Counter,
    /// Decisions the shadow version took on the background thread.
    pub shadow_decisions: Counter,
    /// Ticks where the shadow version decided differently from the active one.
    pub shadow_divergences: Counter,
    /// Shadow steps that failed or were dropped because the shadow was behind (the tick is unaffected).
    pub shadow_failures: Counter,
    /// 1 while a staff pin decides the state, 0 otherwise.
    pub pin_active: Gauge,
    /// 1 for the pinned state while a pin is active, 0 for the others.
    pub pin_state: Family<StateLabels, Gauge>,
    /// Unix seconds; 0 without an active pin.
    pub pin_expires: Gauge,
    /// Unix seconds when the active pin was set, from the pin audit (the tick's minute when the audit
    /// cannot be read); 0 without an active pin.
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
