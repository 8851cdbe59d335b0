//! The names docs/behaviour.md uses for the generated enums (`spacing-wait`, `normal`, ...), for
//! operators, published documents and replay lines. serde's derive on the generated types uses the
//! Rust variant names instead, so anything people read goes through here. The names themselves are
//! the guest model's (one table, in `capacity_guest::model`).

use crate::bindings::{AdmissionOutcome, Cause, Level, ProtectionState, ThrottleIntent};
use crate::policy::convert;

pub const STATES: [ProtectionState; 4] =
    [ProtectionState::Normal, ProtectionState::Constrained, ProtectionState::Critical, ProtectionState::Emergency];

pub fn state(s: ProtectionState) -> &'static str {
    convert::state_in(s).name()
}

pub fn parse_state(name: &str) -> Option<ProtectionState> {
    STATES.into_iter().find(|s| state(*s) == name)
}

/// Rank: normal 0 < constrained 1 < critical 2 < emergency 3.
pub fn rank(s: ProtectionState) -> u8 {
    convert::state_in(s).rank()
}

pub fn level_rank(l: Level) -> u8 {
    convert::level_in(l).rank()
}

pub fn level(l: Level) -> &'static str {
    convert::level_in(l).name()
}

pub fn cause(c: Cause) -> &'static str {
    convert::cause_in(c).name()
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
