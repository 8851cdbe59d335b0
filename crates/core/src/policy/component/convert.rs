//! The host's one conversion between the generated WIT types (`w`) and the vocabulary (`v`):
//! what the host sends a component is lowered here, what it answers is lifted here. The guest's
//! `export` layer is the mirror image on the other side of the boundary. The compiler walks a
//! new case or field through both: every `match` is exhaustive and every record is built whole.

use super::bindings as w;
use vocabulary as v;

fn state_to_wit(s: v::ProtectionState) -> w::ProtectionState {
    match s {
        v::ProtectionState::Normal => w::ProtectionState::Normal,
        v::ProtectionState::Constrained => w::ProtectionState::Constrained,
        v::ProtectionState::Critical => w::ProtectionState::Critical,
        v::ProtectionState::Emergency => w::ProtectionState::Emergency,
    }
}

pub(super) fn state_from_wit(s: w::ProtectionState) -> v::ProtectionState {
    match s {
        w::ProtectionState::Normal => v::ProtectionState::Normal,
        w::ProtectionState::Constrained => v::ProtectionState::Constrained,
        w::ProtectionState::Critical => v::ProtectionState::Critical,
        w::ProtectionState::Emergency => v::ProtectionState::Emergency,
    }
}

fn level_to_wit(l: v::Level) -> w::Level {
    match l {
        v::Level::Normal => w::Level::Normal,
        v::Level::Constrained => w::Level::Constrained,
        v::Level::Critical => w::Level::Critical,
    }
}

pub(super) fn level_from_wit(l: w::Level) -> v::Level {
    match l {
        w::Level::Normal => v::Level::Normal,
        w::Level::Constrained => v::Level::Constrained,
        w::Level::Critical => v::Level::Critical,
    }
}

pub(super) fn cause_from_wit(c: w::Cause) -> v::Cause {
    match c {
        w::Cause::Pinned => v::Cause::Pinned,
        w::Cause::SignalHeld => v::Cause::SignalHeld,
        w::Cause::SignalLostRelease => v::Cause::SignalLostRelease,
        w::Cause::Escalate => v::Cause::Escalate,
        w::Cause::Emergency => v::Cause::Emergency,
        w::Cause::Recover => v::Cause::Recover,
        w::Cause::SpacingWait => v::Cause::SpacingWait,
        w::Cause::RestoreThrottlesFirst => v::Cause::RestoreThrottlesFirst,
        w::Cause::Fresh => v::Cause::Fresh,
        w::Cause::Hold => v::Cause::Hold,
    }
}

/// The other way: used to read the batch replay's cause codes (`w::Cause as u8`).
pub(super) fn cause_to_wit(c: v::Cause) -> w::Cause {
    match c {
        v::Cause::Pinned => w::Cause::Pinned,
        v::Cause::SignalHeld => w::Cause::SignalHeld,
        v::Cause::SignalLostRelease => w::Cause::SignalLostRelease,
        v::Cause::Escalate => w::Cause::Escalate,
        v::Cause::Emergency => w::Cause::Emergency,
        v::Cause::Recover => w::Cause::Recover,
        v::Cause::SpacingWait => w::Cause::SpacingWait,
        v::Cause::RestoreThrottlesFirst => w::Cause::RestoreThrottlesFirst,
        v::Cause::Fresh => w::Cause::Fresh,
        v::Cause::Hold => w::Cause::Hold,
    }
}

pub(super) fn throttles_from_wit(t: w::ThrottleIntent) -> v::ThrottleIntent {
    match t {
        w::ThrottleIntent::Engage => v::ThrottleIntent::Engage,
        w::ThrottleIntent::Release => v::ThrottleIntent::Release,
        w::ThrottleIntent::None => v::ThrottleIntent::None,
    }
}

pub(super) fn factors_from_wit(f: w::Factors) -> v::Factors {
    v::Factors { bulk: f.bulk, heavy: f.heavy, write: f.write, read: f.read }
}

fn entry_to_wit(e: &v::RecentEntry) -> w::RecentEntry {
    w::RecentEntry { at: e.at, level: level_to_wit(e.level), resolve_level: e.resolve_level.map(level_to_wit) }
}

fn entry_from_wit(e: w::RecentEntry) -> v::RecentEntry {
    v::RecentEntry { at: e.at, level: level_from_wit(e.level), resolve_level: e.resolve_level.map(level_from_wit) }
}

pub(super) fn memory_to_wit(m: &v::Memory) -> w::Memory {
    w::Memory {
        state: state_to_wit(m.state),
        state_since: m.state_since,
        last_auto_change: m.last_auto_change,
        recent: m.recent.iter().map(entry_to_wit).collect(),
        failed_reads: m.failed_reads,
        throttles_engaged: m.throttles_engaged,
        restore_held_since: m.restore_held_since,
    }
}

fn memory_from_wit(m: w::Memory) -> v::Memory {
    v::Memory {
        state: state_from_wit(m.state),
        state_since: m.state_since,
        last_auto_change: m.last_auto_change,
        recent: m.recent.into_iter().map(entry_from_wit).collect(),
        failed_reads: m.failed_reads,
        throttles_engaged: m.throttles_engaged,
        restore_held_since: m.restore_held_since,
        // Carried beside the memory record, in the `damping` interface (damping_convert.rs).
        flap: None,
    }
}

fn reading_to_wit(r: &v::Reading) -> w::Reading {
    w::Reading {
        cpu_pct: r.cpu_pct,
        connections_pct: r.connections_pct,
        scaling: r.scaling,
        latency: r.latency.iter().map(|l| w::ApiLatency { api: l.api.clone(), p95_ms: l.p95_ms, baseline_ms: l.baseline_ms }).collect(),
    }
}

pub(super) fn pin_to_wit(p: &v::Pin) -> w::Pin {
    w::Pin { state: state_to_wit(p.state), reason: p.reason.clone(), expires_at: p.expires_at, actor: p.actor.clone() }
}

pub(crate) fn pin_from_wit(p: w::Pin) -> v::Pin {
    v::Pin { state: state_from_wit(p.state), reason: p.reason, expires_at: p.expires_at, actor: p.actor }
}

pub(crate) fn input_to_wit(i: &v::DecisionInput) -> w::DecisionInput {
    w::DecisionInput {
        now: i.now,
        signal: match &i.signal {
            v::Signal::Reading(r) => w::Signal::Reading(reading_to_wit(r)),
            v::Signal::Failed(why) => w::Signal::Failed(why.clone()),
        },
        memory: i.memory.as_ref().map(memory_to_wit),
        pin: i.pin.as_ref().map(pin_to_wit),
        throttles_enabled: i.throttles_enabled,
        stages_throttled: i.stages_throttled,
    }
}

pub(crate) fn decision_from_wit(d: w::Decision) -> v::Decision {
    v::Decision {
        state: state_from_wit(d.state),
        factors: factors_from_wit(d.factors),
        changed: d.changed,
        previous: state_from_wit(d.previous),
        cause: cause_from_wit(d.cause),
        level: d.level.map(level_from_wit),
        pending: d.pending.map(state_from_wit),
        throttles: throttles_from_wit(d.throttles),
        supporting: d.supporting.into_iter().map(entry_from_wit).collect(),
        memory: memory_from_wit(d.memory),
        explanation: d.explanation,
        // From the `damping` interface's answer (damping_convert.rs), when the component has it.
        damping_hold: None,
    }
}

pub(crate) fn samples_to_wit(g: &v::ApiSamples) -> w::ApiSamples {
    w::ApiSamples { api: g.api.clone(), samples: g.samples.iter().map(|s| w::LatencySample { at: s.at, p95_ms: s.p95_ms }).collect() }
}

pub(crate) fn baseline_from_wit(b: w::ApiBaseline) -> v::ApiBaseline {
    v::ApiBaseline { api: b.api, baseline_ms: b.baseline_ms, samples: b.samples }
}

pub(crate) fn pin_request_to_wit(r: &v::PinRequest) -> w::PinRequest {
    w::PinRequest { state: r.state.clone(), reason: r.reason.clone(), expires_at: r.expires_at, actor: r.actor.clone() }
}

pub(crate) fn pin_error_from_wit(e: w::PinError) -> v::PinError {
    let field = match e.field {
        w::PinField::State => v::PinField::State,
        w::PinField::Reason => v::PinField::Reason,
        w::PinField::ExpiresAt => v::PinField::ExpiresAt,
        w::PinField::Actor => v::PinField::Actor,
    };
    v::PinError { field, message: e.message }
}

pub(crate) fn description_from_wit(d: w::PolicyDescription) -> v::PolicyDescription {
    let bounds =
        |l: w::LevelThresholds| v::LevelThresholds { constrained: l.constrained, critical: l.critical, resolve_band: l.resolve_band };
    let t = d.thresholds;
    v::PolicyDescription {
        name: d.name,
        version: d.version,
        thresholds: v::Thresholds {
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
            factors: v::StateFactors {
                normal: factors_from_wit(t.factors.normal),
                constrained: factors_from_wit(t.factors.constrained),
                critical: factors_from_wit(t.factors.critical),
                emergency: factors_from_wit(t.factors.emergency),
            },
            // From the `damping` interface (damping_convert.rs), when the component has it.
            damping: None,
        },
    }
}

fn outcome_from_wit(o: w::AdmissionOutcome) -> v::AdmissionOutcome {
    match o {
        w::AdmissionOutcome::Admit => v::AdmissionOutcome::Admit,
        w::AdmissionOutcome::WaitClusterFull => v::AdmissionOutcome::WaitClusterFull,
        w::AdmissionOutcome::WaitServiceFull => v::AdmissionOutcome::WaitServiceFull,
        w::AdmissionOutcome::WaitWorkspaceFull => v::AdmissionOutcome::WaitWorkspaceFull,
        w::AdmissionOutcome::WaitCapacityZero => v::AdmissionOutcome::WaitCapacityZero,
    }
}

pub(crate) fn admission_request_to_wit(r: &v::AdmissionRequest) -> w::AdmissionRequest {
    w::AdmissionRequest {
        factor: r.factor,
        cluster_batches: r.cluster_batches,
        service_batches: r.service_batches,
        share: r.share,
        cluster_in_flight: r.cluster_in_flight,
        service_in_flight: r.service_in_flight,
        workspace_in_flight: r.workspace_in_flight,
    }
}

pub(crate) fn admission_result_from_wit(r: w::AdmissionResult) -> v::AdmissionResult {
    v::AdmissionResult {
        admit: r.admit,
        outcome: outcome_from_wit(r.outcome),
        factor_used: r.factor_used,
        factor_read_failed: r.factor_read_failed,
        cluster_budget: r.cluster_budget,
        service_budget: r.service_budget,
        workspace_ceiling: r.workspace_ceiling,
    }
}

pub(crate) fn plan_request_to_wit(r: &v::PlanRequest) -> w::PlanRequest {
    w::PlanRequest {
        factor: r.factor,
        cluster_batches: r.cluster_batches,
        service_batches: r.service_batches,
        cluster_in_flight: r.cluster_in_flight,
        service_in_flight: r.service_in_flight,
        workspaces: r
            .workspaces
            .iter()
            .map(|l| w::WorkspaceLoad { workspace: l.workspace.clone(), share: l.share, in_flight: l.in_flight })
            .collect(),
        queue: r
            .queue
            .iter()
            .map(|b| w::QueuedBatch { id: b.id.clone(), workspace: b.workspace.clone(), enqueued_at: b.enqueued_at })
            .collect(),
    }
}

pub(crate) fn plan_from_wit(p: w::AdmissionPlan) -> v::AdmissionPlan {
    v::AdmissionPlan {
        admitted: p.admitted,
        waiting: p.waiting.into_iter().map(|b| v::WaitingBatch { id: b.id, outcome: outcome_from_wit(b.outcome) }).collect(),
        factor_used: p.factor_used,
        factor_read_failed: p.factor_read_failed,
        cluster_budget: p.cluster_budget,
        service_budget: p.service_budget,
    }
}
