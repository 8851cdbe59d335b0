//! Conversions between the generated WIT types and the guest's pure types, for the native
//! modules only (the component does the same conversions on its side of the boundary).

use crate::bindings as w;
use capacity_guest::admission::{self as adm, Outcome};
use capacity_guest::model::{self as m, Cause, Level, State, ThrottleIntent};
use capacity_guest::pin::{PinError, PinField, PinRequest};
use capacity_guest::planner;
use capacity_guest::thresholds::{Factors, LevelThresholds, PolicyFile};

pub fn state_in(s: w::ProtectionState) -> State {
    match s {
        w::ProtectionState::Normal => State::Normal,
        w::ProtectionState::Constrained => State::Constrained,
        w::ProtectionState::Critical => State::Critical,
        w::ProtectionState::Emergency => State::Emergency,
    }
}

pub fn state_out(s: State) -> w::ProtectionState {
    match s {
        State::Normal => w::ProtectionState::Normal,
        State::Constrained => w::ProtectionState::Constrained,
        State::Critical => w::ProtectionState::Critical,
        State::Emergency => w::ProtectionState::Emergency,
    }
}

pub fn cause_in(c: w::Cause) -> Cause {
    match c {
        w::Cause::Pinned => Cause::Pinned,
        w::Cause::SignalHeld => Cause::SignalHeld,
        w::Cause::SignalLostRelease => Cause::SignalLostRelease,
        w::Cause::Escalate => Cause::Escalate,
        w::Cause::Emergency => Cause::Emergency,
        w::Cause::Recover => Cause::Recover,
        w::Cause::SpacingWait => Cause::SpacingWait,
        w::Cause::RestoreThrottlesFirst => Cause::RestoreThrottlesFirst,
        w::Cause::Fresh => Cause::Fresh,
        w::Cause::Hold => Cause::Hold,
    }
}

pub fn level_in(l: w::Level) -> Level {
    match l {
        w::Level::Normal => Level::Normal,
        w::Level::Constrained => Level::Constrained,
        w::Level::Critical => Level::Critical,
    }
}

fn level_out(l: Level) -> w::Level {
    match l {
        Level::Normal => w::Level::Normal,
        Level::Constrained => w::Level::Constrained,
        Level::Critical => w::Level::Critical,
    }
}

fn factors_out(f: Factors) -> w::Factors {
    w::Factors { bulk: f.bulk, heavy: f.heavy, write: f.write, read: f.read }
}

fn entry_in(e: &w::RecentEntry) -> m::RecentEntry {
    m::RecentEntry { at: e.at, level: level_in(e.level) }
}

fn entry_out(e: m::RecentEntry) -> w::RecentEntry {
    w::RecentEntry { at: e.at, level: level_out(e.level) }
}

fn memory_in(mem: &w::Memory) -> m::Memory {
    m::Memory {
        state: state_in(mem.state),
        state_since: mem.state_since,
        last_auto_change: mem.last_auto_change,
        recent: mem.recent.iter().map(entry_in).collect(),
        failed_reads: mem.failed_reads,
        throttles_engaged: mem.throttles_engaged,
    }
}

fn memory_out(mem: m::Memory) -> w::Memory {
    w::Memory {
        state: state_out(mem.state),
        state_since: mem.state_since,
        last_auto_change: mem.last_auto_change,
        recent: mem.recent.into_iter().map(entry_out).collect(),
        failed_reads: mem.failed_reads,
        throttles_engaged: mem.throttles_engaged,
    }
}

fn reading_in(r: &w::Reading) -> m::Reading {
    m::Reading {
        cpu_pct: r.cpu_pct,
        connections_pct: r.connections_pct,
        scaling: r.scaling,
        latency: r.latency.iter().map(|l| m::ApiLatency { api: l.api.clone(), p95_ms: l.p95_ms, baseline_ms: l.baseline_ms }).collect(),
    }
}

fn pin_in(p: &w::Pin) -> m::Pin {
    m::Pin { state: state_in(p.state), reason: p.reason.clone(), expires_at: p.expires_at, actor: p.actor.clone() }
}

pub fn pin_out(p: &m::Pin) -> w::Pin {
    w::Pin { state: state_out(p.state), reason: p.reason.clone(), expires_at: p.expires_at, actor: p.actor.clone() }
}

pub fn input_in(i: &w::DecisionInput) -> m::DecisionInput {
    m::DecisionInput {
        now: i.now,
        signal: match &i.signal {
            w::Signal::Reading(r) => m::Signal::Reading(reading_in(r)),
            w::Signal::Failed(why) => m::Signal::Failed(why.clone()),
        },
        memory: i.memory.as_ref().map(memory_in),
        pin: i.pin.as_ref().map(pin_in),
        throttles_enabled: i.throttles_enabled,
    }
}

pub fn decision_out(d: m::Decision) -> w::Decision {
    w::Decision {
        state: state_out(d.state),
        factors: factors_out(d.factors),
        changed: d.changed,
        previous: state_out(d.previous),
        cause: match d.cause {
            Cause::Pinned => w::Cause::Pinned,
            Cause::SignalHeld => w::Cause::SignalHeld,
            Cause::SignalLostRelease => w::Cause::SignalLostRelease,
            Cause::Escalate => w::Cause::Escalate,
            Cause::Emergency => w::Cause::Emergency,
            Cause::Recover => w::Cause::Recover,
            Cause::SpacingWait => w::Cause::SpacingWait,
            Cause::RestoreThrottlesFirst => w::Cause::RestoreThrottlesFirst,
            Cause::Fresh => w::Cause::Fresh,
            Cause::Hold => w::Cause::Hold,
        },
        level: d.level.map(level_out),
        pending: d.pending.map(state_out),
        throttles: match d.throttles {
            ThrottleIntent::Engage => w::ThrottleIntent::Engage,
            ThrottleIntent::Release => w::ThrottleIntent::Release,
            ThrottleIntent::None => w::ThrottleIntent::None,
        },
        supporting: d.supporting.into_iter().map(entry_out).collect(),
        memory: memory_out(d.memory),
        explanation: d.explanation,
    }
}

pub fn samples_in(g: &w::ApiSamples) -> m::ApiSamples {
    m::ApiSamples { api: g.api.clone(), samples: g.samples.iter().map(|s| m::LatencySample { at: s.at, p95_ms: s.p95_ms }).collect() }
}

pub fn baseline_out(b: m::ApiBaseline) -> w::ApiBaseline {
    w::ApiBaseline { api: b.api, baseline_ms: b.baseline_ms, samples: b.samples }
}

pub fn pin_request_in(r: &w::PinRequest) -> PinRequest {
    PinRequest { state: r.state.clone(), reason: r.reason.clone(), expires_at: r.expires_at, actor: r.actor.clone() }
}

pub fn pin_error_out(e: PinError) -> w::PinError {
    let field = match e.field {
        PinField::State => w::PinField::State,
        PinField::Reason => w::PinField::Reason,
        PinField::ExpiresAt => w::PinField::ExpiresAt,
        PinField::Actor => w::PinField::Actor,
    };
    w::PinError { field, message: e.message }
}

pub fn description_out(file: &PolicyFile) -> w::PolicyDescription {
    let t = &file.thresholds;
    let bounds = |l: LevelThresholds| w::LevelThresholds { constrained: l.constrained, critical: l.critical };
    w::PolicyDescription {
        name: file.name.clone(),
        version: file.version.clone(),
        thresholds: w::Thresholds {
            cpu_pct: bounds(t.cpu_pct),
            connections_pct: bounds(t.connections_pct),
            latency_ratio: bounds(t.latency_ratio),
            spacing_s: t.spacing_s,
            escalate_readings: t.escalate_readings,
            recover_readings: t.recover_readings,
            emergency_after_s: t.emergency_after_s,
            throttle_after_s: t.throttle_after_s,
            max_gap_s: t.max_gap_s,
            release_after_failed_reads: t.release_after_failed_reads,
            baseline_min_samples: t.baseline_min_samples,
            pin_max_ahead_s: t.pin_max_ahead_s,
            pin_reason_max_chars: t.pin_reason_max_chars,
            factors: w::StateFactors {
                normal: factors_out(t.factors.normal),
                constrained: factors_out(t.factors.constrained),
                critical: factors_out(t.factors.critical),
                emergency: factors_out(t.factors.emergency),
            },
        },
    }
}

fn outcome_out(o: Outcome) -> w::AdmissionOutcome {
    match o {
        Outcome::Admit => w::AdmissionOutcome::Admit,
        Outcome::WaitClusterFull => w::AdmissionOutcome::WaitClusterFull,
        Outcome::WaitServiceFull => w::AdmissionOutcome::WaitServiceFull,
        Outcome::WaitWorkspaceFull => w::AdmissionOutcome::WaitWorkspaceFull,
        Outcome::WaitCapacityZero => w::AdmissionOutcome::WaitCapacityZero,
    }
}

pub fn admission_request_in(r: &w::AdmissionRequest) -> adm::AdmissionRequest {
    adm::AdmissionRequest {
        factor: r.factor,
        cluster_batches: r.cluster_batches,
        service_batches: r.service_batches,
        share: r.share,
        cluster_in_flight: r.cluster_in_flight,
        service_in_flight: r.service_in_flight,
        workspace_in_flight: r.workspace_in_flight,
    }
}

pub fn admission_result_out(r: adm::AdmissionResult) -> w::AdmissionResult {
    w::AdmissionResult {
        admit: r.admit,
        outcome: outcome_out(r.outcome),
        factor_used: r.factor_used,
        factor_read_failed: r.factor_read_failed,
        cluster_budget: r.cluster_budget,
        service_budget: r.service_budget,
        workspace_ceiling: r.workspace_ceiling,
    }
}

pub fn plan_request_in(r: &w::PlanRequest) -> planner::PlanRequest {
    planner::PlanRequest {
        factor: r.factor,
        cluster_batches: r.cluster_batches,
        service_batches: r.service_batches,
        cluster_in_flight: r.cluster_in_flight,
        service_in_flight: r.service_in_flight,
        workspaces: r
            .workspaces
            .iter()
            .map(|l| planner::WorkspaceLoad { workspace: l.workspace.clone(), share: l.share, in_flight: l.in_flight })
            .collect(),
        queue: r
            .queue
            .iter()
            .map(|b| planner::QueuedBatch { id: b.id.clone(), workspace: b.workspace.clone(), enqueued_at: b.enqueued_at })
            .collect(),
    }
}

pub fn plan_out(p: planner::Plan) -> w::AdmissionPlan {
    w::AdmissionPlan {
        admitted: p.admitted,
        waiting: p.waiting.into_iter().map(|b| w::WaitingBatch { id: b.id, outcome: outcome_out(b.outcome) }).collect(),
        factor_used: p.factor_used,
        factor_read_failed: p.factor_read_failed,
        cluster_budget: p.cluster_budget,
        service_budget: p.service_budget,
    }
}
