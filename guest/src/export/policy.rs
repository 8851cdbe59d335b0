//! Policy exports: decision, baseline, pins and info. The generated records are converted to the
//! vocabulary's and back here, the only place the policy world's bindings meet the rules.

use super::Component;
use super::exports::capacity::sentinel::types as wit;
use super::exports::capacity::sentinel::{baseline, decision, info, pins};
use super::numbers::{identity, thresholds};
use crate::{assess, baseline as base, pin};
use vocabulary::{self as core, Cause, Level, ProtectionState, ThrottleIntent};

impl decision::Guest for Component {
    fn decide(input: wit::DecisionInput) -> wit::Decision {
        let input = input_in(input);
        super::faults::before_decide(&input);
        decision_out(rules(&input))
    }

    fn assess(reading: wit::Reading) -> wit::Level {
        level_out(assess::assess(&reading_in(reading), thresholds()))
    }
}

/// The decision rules; the bench-only echo fixture runs none (see `bench.rs`).
#[cfg(not(feature = "bench-echo"))]
pub(super) fn rules(input: &core::DecisionInput) -> core::Decision {
    crate::decide::decide(input, thresholds())
}

#[cfg(feature = "bench-echo")]
pub(super) fn rules(input: &core::DecisionInput) -> core::Decision {
    super::bench::echo(input, thresholds())
}

impl baseline::Guest for Component {
    fn compute(hour: wit::Instant, samples: Vec<wit::ApiSamples>) -> Vec<wit::ApiBaseline> {
        let groups: Vec<core::ApiSamples> = samples
            .into_iter()
            .map(|g| core::ApiSamples {
                api: g.api,
                samples: g.samples.into_iter().map(|s| core::LatencySample { at: s.at, p95_ms: s.p95_ms }).collect(),
            })
            .collect();
        base::compute(hour, &groups, thresholds())
            .into_iter()
            .map(|b| wit::ApiBaseline { api: b.api, baseline_ms: b.baseline_ms, samples: b.samples })
            .collect()
    }
}

impl pins::Guest for Component {
    fn validate(r: pins::PinRequest, now: wit::Instant) -> Result<wit::Pin, pins::PinError> {
        let request = core::PinRequest { state: r.state, reason: r.reason, expires_at: r.expires_at, actor: r.actor };
        pin::validate(&request, now, thresholds()).map(pin_out).map_err(|e| pins::PinError {
            field: match e.field {
                core::PinField::State => pins::PinField::State,
                core::PinField::Reason => pins::PinField::Reason,
                core::PinField::ExpiresAt => pins::PinField::ExpiresAt,
                core::PinField::Actor => pins::PinField::Actor,
            },
            message: e.message,
        })
    }
}

impl info::Guest for Component {
    fn describe() -> info::PolicyDescription {
        let t = *thresholds();
        let (name, version) = identity();
        let bounds = |l: core::LevelThresholds| info::LevelThresholds {
            constrained: l.constrained,
            critical: l.critical,
            resolve_band: l.resolve_band,
        };
        info::PolicyDescription {
            name: name.into(),
            version: version.into(),
            thresholds: info::Thresholds {
                cpu_pct: bounds(t.cpu_pct),
                connections_pct: bounds(t.connections_pct),
                latency_ratio: bounds(t.latency_ratio),
                spacing_s: t.spacing_s,
                escalate_readings: t.escalate_readings,
                recover_readings: t.recover_readings,
                emergency_after_s: t.emergency_after_s,
                throttle_after_s: t.throttle_after_s,
                restore_hold_max_s: t.restore_hold_max_s,
                max_gap_s: t.max_gap_s,
                release_after_failed_reads: t.release_after_failed_reads,
                baseline_min_samples: t.baseline_min_samples,
                pin_max_ahead_s: t.pin_max_ahead_s,
                pin_reason_max_chars: t.pin_reason_max_chars,
                factors: info::StateFactors {
                    normal: factors_out(t.factors.normal),
                    constrained: factors_out(t.factors.constrained),
                    critical: factors_out(t.factors.critical),
                    emergency: factors_out(t.factors.emergency),
                },
            },
        }
    }
}

fn state_in(s: wit::ProtectionState) -> ProtectionState {
    match s {
        wit::ProtectionState::Normal => ProtectionState::Normal,
        wit::ProtectionState::Constrained => ProtectionState::Constrained,
        wit::ProtectionState::Critical => ProtectionState::Critical,
        wit::ProtectionState::Emergency => ProtectionState::Emergency,
    }
}

pub(super) fn state_out(s: ProtectionState) -> wit::ProtectionState {
    match s {
        ProtectionState::Normal => wit::ProtectionState::Normal,
        ProtectionState::Constrained => wit::ProtectionState::Constrained,
        ProtectionState::Critical => wit::ProtectionState::Critical,
        ProtectionState::Emergency => wit::ProtectionState::Emergency,
    }
}

fn level_in(l: wit::Level) -> Level {
    match l {
        wit::Level::Normal => Level::Normal,
        wit::Level::Constrained => Level::Constrained,
        wit::Level::Critical => Level::Critical,
    }
}

pub(super) fn level_out(l: Level) -> wit::Level {
    match l {
        Level::Normal => wit::Level::Normal,
        Level::Constrained => wit::Level::Constrained,
        Level::Critical => wit::Level::Critical,
    }
}

pub(super) fn factors_out(f: core::Factors) -> wit::Factors {
    wit::Factors { bulk: f.bulk, heavy: f.heavy, write: f.write, read: f.read }
}

pub(super) fn reading_in(r: wit::Reading) -> core::Reading {
    core::Reading {
        cpu_pct: r.cpu_pct,
        connections_pct: r.connections_pct,
        scaling: r.scaling,
        latency: r.latency.into_iter().map(|l| core::ApiLatency { api: l.api, p95_ms: l.p95_ms, baseline_ms: l.baseline_ms }).collect(),
    }
}

fn entry_in(e: wit::RecentEntry) -> core::RecentEntry {
    core::RecentEntry { at: e.at, level: level_in(e.level), resolve_level: e.resolve_level.map(level_in) }
}

fn entry_out(e: core::RecentEntry) -> wit::RecentEntry {
    wit::RecentEntry { at: e.at, level: level_out(e.level), resolve_level: e.resolve_level.map(level_out) }
}

pub(super) fn memory_in(m: wit::Memory) -> core::Memory {
    core::Memory {
        state: state_in(m.state),
        state_since: m.state_since,
        last_auto_change: m.last_auto_change,
        recent: m.recent.into_iter().map(entry_in).collect(),
        failed_reads: m.failed_reads,
        throttles_engaged: m.throttles_engaged,
        restore_held_since: m.restore_held_since,
        // Carried beside the memory record, in the `damping` interface (damping.rs).
        flap: None,
    }
}

fn memory_out(m: core::Memory) -> wit::Memory {
    wit::Memory {
        state: state_out(m.state),
        state_since: m.state_since,
        last_auto_change: m.last_auto_change,
        recent: m.recent.into_iter().map(entry_out).collect(),
        failed_reads: m.failed_reads,
        throttles_engaged: m.throttles_engaged,
        restore_held_since: m.restore_held_since,
    }
}

pub(super) fn pin_in(p: wit::Pin) -> core::Pin {
    core::Pin { state: state_in(p.state), reason: p.reason, expires_at: p.expires_at, actor: p.actor }
}

fn pin_out(p: core::Pin) -> wit::Pin {
    wit::Pin { state: state_out(p.state), reason: p.reason, expires_at: p.expires_at, actor: p.actor }
}

pub(super) fn input_in(i: wit::DecisionInput) -> core::DecisionInput {
    core::DecisionInput {
        now: i.now,
        signal: match i.signal {
            wit::Signal::Reading(r) => core::Signal::Reading(reading_in(r)),
            wit::Signal::Failed(why) => core::Signal::Failed(why),
        },
        memory: i.memory.map(memory_in),
        pin: i.pin.map(pin_in),
        throttles_enabled: i.throttles_enabled,
        stages_throttled: i.stages_throttled,
    }
}

pub(super) fn decision_out(d: core::Decision) -> wit::Decision {
    wit::Decision {
        state: state_out(d.state),
        factors: factors_out(d.factors),
        changed: d.changed,
        previous: state_out(d.previous),
        cause: cause_out(d.cause),
        level: d.level.map(level_out),
        pending: d.pending.map(state_out),
        throttles: throttles_out(d.throttles),
        supporting: d.supporting.into_iter().map(entry_out).collect(),
        memory: memory_out(d.memory),
        explanation: d.explanation,
    }
}

pub(super) fn cause_out(c: Cause) -> wit::Cause {
    match c {
        Cause::Pinned => wit::Cause::Pinned,
        Cause::SignalHeld => wit::Cause::SignalHeld,
        Cause::SignalLostRelease => wit::Cause::SignalLostRelease,
        Cause::Escalate => wit::Cause::Escalate,
        Cause::Emergency => wit::Cause::Emergency,
        Cause::Recover => wit::Cause::Recover,
        Cause::SpacingWait => wit::Cause::SpacingWait,
        Cause::RestoreThrottlesFirst => wit::Cause::RestoreThrottlesFirst,
        Cause::Fresh => wit::Cause::Fresh,
        Cause::Hold => wit::Cause::Hold,
    }
}

pub(super) fn throttles_out(t: ThrottleIntent) -> wit::ThrottleIntent {
    match t {
        ThrottleIntent::Engage => wit::ThrottleIntent::Engage,
        ThrottleIntent::Release => wit::ThrottleIntent::Release,
        ThrottleIntent::None => wit::ThrottleIntent::None,
    }
}
