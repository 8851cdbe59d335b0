//! The invariants no crash and no race may break, checked on what the store recorded and what
//! the channels hold. Each assertion names what broke.

use sentinel_core::policy::{NativePolicy, Policy};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::memory::TickRecord;
use sentinel_core::ports::pins::{AuditAction, AuditRecord};
use sentinel_core::ports::publisher::StateDocument;
use vocabulary::{Decision, DecisionInput, Memory};

/// Tick sequences are 1, 2, 3, ... with no gap and no repeat.
pub fn check_sequences(label: &str, ticks: &[(u64, TickRecord)]) {
    for (index, (sequence, _)) in ticks.iter().enumerate() {
        assert_eq!(
            *sequence,
            index as u64 + 1,
            "{label}: tick sequences have a gap or a repeat at position {index}: {:?}",
            ticks.iter().map(|(s, _)| *s).collect::<Vec<_>>()
        );
    }
}

/// The audit chain: ids 1, 2, 3, ... and each record's `before` is the previous change's
/// `after`; a `refused` record changes nothing (the pin it shows stayed).
pub fn check_audit_chain(label: &str, audit: &[AuditRecord]) {
    let mut previous_after = None;
    for (index, record) in audit.iter().enumerate() {
        assert_eq!(record.id, index as i64 + 1, "{label}: the audit ids have a gap: {:?}", audit.iter().map(|r| r.id).collect::<Vec<_>>());
        assert_eq!(
            record.before, previous_after,
            "{label}: audit record {} ({:?}) does not start where record {} left the pin",
            record.id, record.action, index
        );
        if record.action != AuditAction::Refused {
            previous_after = record.after.clone();
        }
    }
}

/// The stored memory is readable and is the newest record's decided memory (they are written in
/// one transaction).
pub fn check_memory(label: &str, memory: Result<Option<Memory>, StoreError>, newest: Option<&(u64, TickRecord)>) {
    let memory = memory.unwrap_or_else(|e| panic!("{label}: the memory is unreadable after the crash: {e}"));
    assert_eq!(
        memory.as_ref(),
        newest.map(|(_, r)| &r.decision.memory),
        "{label}: the stored memory is not the memory decided by the newest tick (sequence {:?})",
        newest.map(|(s, _)| s)
    );
}

/// A published document is exactly what the store recorded for its sequence.
pub fn check_document(label: &str, channel: &str, doc: &StateDocument, ticks: &[(u64, TickRecord)]) {
    let (sequence, record) = ticks
        .iter()
        .find(|(s, _)| *s == doc.sequence)
        .unwrap_or_else(|| panic!("{label}: the {channel} channel holds sequence {}, which the store never recorded", doc.sequence));
    assert_eq!(
        doc,
        &sentinel_core::tick::recorded_document(*sequence, record),
        "{label}: the {channel} channel's document differs from the stored record of sequence {sequence}"
    );
}

/// What `policy` decides for a recorded tick, given the memory it started from.
pub fn redecide(policy: &mut dyn Policy, record: &TickRecord, memory: Option<Memory>) -> Decision {
    let input = DecisionInput {
        now: record.at,
        signal: record.signal.clone(),
        memory,
        pin: record.pin.clone(),
        throttles_enabled: record.throttles_enabled,
        stages_throttled: record.stages_throttled,
    };
    policy.decide(&input).unwrap_or_else(|e| panic!("the native policy failed on tick at {}: {e}", record.at))
}

/// Every recorded decision is the native policy's decision on the memory the previous record
/// left (the first one on fresh memory): no tick decided on lost, stale or torn memory.
pub fn check_decisions_follow(label: &str, policy: &mut dyn Policy, ticks: &[(u64, TickRecord)]) {
    let mut memory = None;
    for (sequence, record) in ticks {
        let expected = redecide(policy, record, memory.clone());
        assert_eq!(
            record.decision,
            expected,
            "{label}: tick {sequence} did not decide what the native policy decides on the memory of tick {}",
            sequence - 1
        );
        memory = Some(record.decision.memory.clone());
    }
}

/// The native modules of policy 1.0.0 (`policies/1.0.0/policy.toml`).
pub fn native_policy() -> NativePolicy {
    let path = crate::paths::policy_folder("1.0.0").join("policy.toml");
    NativePolicy::load(&path, None).unwrap_or_else(|e| panic!("loading {}: {e}", path.display()))
}
