//! The sentinel's own metrics (docs/behaviour.md §7), in Prometheus text format: state gauge,
//! changes by from/to, publish failures by channel, failed reads, tick and decision latency.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::Mutex;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ChangeLabels {
    pub from: String,
    pub to: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ChannelLabels {
    pub channel: String,
}

pub struct Telemetry {
    registry: Mutex<Registry>,
    /// The state's rank: normal 0, constrained 1, critical 2, emergency 3.
    pub state: Gauge,
    pub changes: Family<ChangeLabels, Counter>,
    pub publish_failures: Family<ChannelLabels, Counter>,
    pub failed_reads: Counter,
    /// Ticks that failed (both channels down, store or policy failure): the alarm.
    pub tick_failures: Counter,
    pub stage_failures: Counter,
    /// Stage targets with a throttle record (engaging, engaged or restoring) after the tick.
    pub stages_throttled: Gauge,
    /// Of those, the ones the policy no longer wants throttled (a restore failing): the alarm.
    pub stages_left_throttled: Gauge,
    pub tick_seconds: Histogram,
    pub decision_seconds: Histogram,
    /// A policy version failed during a tick and the tick reran with the last good one: the alarm.
    pub policy_rollbacks: Counter,
    pub policy_activations: Counter,
    /// Candidate versions refused at activation (integrity, world, checks, trial replay).
    pub policy_refusals: Counter,
    pub shadow_decisions: Counter,
    /// Ticks where the shadow version decided differently from the active one.
    pub shadow_divergences: Counter,
    pub shadow_failures: Counter,
}

impl Default for Telemetry {
    fn default() -> Telemetry {
        let t = Telemetry {
            registry: Mutex::new(Registry::with_prefix("sentinel")),
            state: Gauge::default(),
            changes: Family::default(),
            publish_failures: Family::default(),
            failed_reads: Counter::default(),
            tick_failures: Counter::default(),
            stage_failures: Counter::default(),
            stages_throttled: Gauge::default(),
            stages_left_throttled: Gauge::default(),
            tick_seconds: Histogram::new(exponential_buckets(0.0005, 2.0, 16)),
            decision_seconds: Histogram::new(exponential_buckets(0.000_001, 2.0, 20)),
            policy_rollbacks: Counter::default(),
            policy_activations: Counter::default(),
            policy_refusals: Counter::default(),
            shadow_decisions: Counter::default(),
            shadow_divergences: Counter::default(),
            shadow_failures: Counter::default(),
        };
        {
            let mut r = t.registry.lock().expect("registry lock");
            r.register("state", "Protection state rank (0 normal .. 3 emergency)", t.state.clone());
            r.register("state_changes", "State changes by from/to", t.changes.clone());
            r.register("publish_failures", "Failed publications by channel", t.publish_failures.clone());
            r.register("failed_reads", "Failed metric reads", t.failed_reads.clone());
            r.register("tick_failures", "Failed ticks (alarm)", t.tick_failures.clone());
            r.register("stage_failures", "Stage throttle changes that failed (retried next tick)", t.stage_failures.clone());
            r.register(
                "stages_throttled",
                "Stage targets throttled by the sentinel (or possibly so) after the tick",
                t.stages_throttled.clone(),
            );
            r.register(
                "stages_left_throttled",
                "Stage targets still throttled although the policy released them: a restore is failing (alarm)",
                t.stages_left_throttled.clone(),
            );
            r.register("tick_seconds", "Duration of a whole tick", t.tick_seconds.clone());
            r.register("decision_seconds", "Duration of the policy call", t.decision_seconds.clone());
            r.register(
                "policy_rollbacks",
                "Ticks rerun with the last good policy after a trap, timeout or memory cap (alarm)",
                t.policy_rollbacks.clone(),
            );
            r.register("policy_activations", "Policy versions activated", t.policy_activations.clone());
            r.register("policy_refusals", "Policy versions refused at activation", t.policy_refusals.clone());
            r.register("shadow_decisions", "Decisions of the shadow policy", t.shadow_decisions.clone());
            r.register("shadow_divergences", "Ticks where the shadow policy decided differently", t.shadow_divergences.clone());
            r.register("shadow_failures", "Shadow policy calls that failed", t.shadow_failures.clone());
        }
        t
    }
}

impl Telemetry {
    /// Everything in the Prometheus text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let registry = self.registry.lock().expect("registry lock");
        prometheus_client::encoding::text::encode(&mut out, &registry).expect("writing to a String cannot fail");
        out
    }
}
