//! The SPEC's names for the generated enums (`spacing-wait`, `normal`, ...), for operators,
//! published documents and replay lines. serde's derive on the generated types uses the Rust
//! variant names instead, so anything people read goes through here.

use crate::bindings::{AdmissionOutcome, Cause, Level, ProtectionState, ThrottleIntent};

pub const STATES: [ProtectionState; 4] =
    [ProtectionState::Normal, ProtectionState::Constrained, ProtectionState::Critical, ProtectionState::Emergency];

pub fn state(s: ProtectionState) -> &'static str {
    match s {
        ProtectionState::Normal => "normal",
        ProtectionState::Constrained => "constrained",
        ProtectionState::Critical => "critical",
        ProtectionState::Emergency => "emergency",
    }
}

pub fn parse_state(name: &str) -> Option<ProtectionState> {
    STATES.into_iter().find(|s| state(*s) == name)
}

/// Rank: normal 0 < constrained 1 < critical 2 < emergency 3.
pub fn rank(s: ProtectionState) -> u8 {
    match s {
        ProtectionState::Normal => 0,
        ProtectionState::Constrained => 1,
        ProtectionState::Critical => 2,
        ProtectionState::Emergency => 3,
    }
}

pub fn level_rank(l: Level) -> u8 {
    match l {
        Level::Normal => 0,
        Level::Constrained => 1,
        Level::Critical => 2,
    }
}

pub fn level(l: Level) -> &'static str {
    match l {
        Level::Normal => "normal",
        Level::Constrained => "constrained",
        Level::Critical => "critical",
    }
}

pub fn cause(c: Cause) -> &'static str {
    match c {
        Cause::Pinned => "pinned",
        Cause::SignalHeld => "signal-held",
        Cause::SignalLostRelease => "signal-lost-release",
        Cause::Escalate => "escalate",
        Cause::Emergency => "emergency",
        Cause::Recover => "recover",
        Cause::SpacingWait => "spacing-wait",
        Cause::RestoreThrottlesFirst => "restore-throttles-first",
        Cause::Fresh => "fresh",
        Cause::Hold => "hold",
    }
}

pub fn throttles(t: ThrottleIntent) -> &'static str {
    match t {
        ThrottleIntent::Engage => "engage",
        ThrottleIntent::Release => "release",
        ThrottleIntent::None => "none",
    }
}

pub fn outcome(o: AdmissionOutcome) -> &'static str {
    match o {
        AdmissionOutcome::Admit => "admit",
        AdmissionOutcome::WaitClusterFull => "wait-cluster-full",
        AdmissionOutcome::WaitServiceFull => "wait-service-full",
        AdmissionOutcome::WaitWorkspaceFull => "wait-workspace-full",
        AdmissionOutcome::WaitCapacityZero => "wait-capacity-zero",
    }
}

/// Is this an automatic change (not a pin)?
pub fn is_automatic(c: Cause) -> bool {
    matches!(c, Cause::Escalate | Cause::Emergency | Cause::Recover | Cause::SignalLostRelease)
}
