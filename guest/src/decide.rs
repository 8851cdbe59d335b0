//! docs/behaviour.md §5: one tick of the protection state machine, with hysteresis.
//!
//! The order is that of docs/behaviour.md §5.1 to §5.6: fold the signal into memory, then an active
//! pin, then a failed read, then the automatic rules (escalate, emergency, recover) under spacing,
//! then the stage throttles, then the factors. Arithmetic on times saturates, so no memory the host
//! hands in, however odd, can make the decision trap.

use crate::assess::{assess, assess_for_recovery};
use crate::damping::{record_change, recovery_hold};
use vocabulary::Thresholds;
use vocabulary::{
    Cause, ChangeDirection, DampingHold, Decision, DecisionInput, Instant, Level, Memory, Pin, ProtectionState, RecentEntry, Signal,
    ThrottleIntent,
};

/// One tick. Pure: the same input gives the same decision.
pub fn decide(input: &DecisionInput, t: &Thresholds) -> Decision {
    decide_with(input, input.memory.clone(), t, true)
}

/// [`decide`] with the memory handed over apart from the input (whose own memory is ignored),
/// and the explanation written only when `explain` (empty otherwise): a replay carries the
/// memory from tick to tick without copying it and asks for the line only when it shows it.
pub fn decide_with(input: &DecisionInput, memory: Option<Memory>, t: &Thresholds, explain: bool) -> Decision {
    let now = input.now;
    let fresh = memory.is_none();
    let mut memory = memory.unwrap_or_else(|| Memory::fresh(now));
    if t.damping.is_none() {
        // A version without damping keeps no penalty (one left by another version is dropped).
        memory.flap = None;
    }
    let previous = memory.state;

    // 1. Readings.
    let level = match &input.signal {
        Signal::Reading(reading) => {
            let level = assess(reading, t);
            let recovery_level = assess_for_recovery(reading, t, level);
            memory.failed_reads = 0;
            remember(&mut memory.recent, RecentEntry::resolving(now, level, recovery_level), t);
            Some(level)
        }
        Signal::Failed(_) => {
            memory.failed_reads = memory.failed_reads.saturating_add(1);
            memory.recent.clear();
            None
        }
    };

    let pin = input.pin.as_ref().filter(|p| p.expires_at > now);
    let mut step = match pin {
        // 2. An active pin decides at once.
        Some(pin) => pinned(&mut memory, pin, now),
        // 3. A failed read without a pin: hold once, then release.
        None if level.is_none() => signal_lost(&mut memory, now, t),
        // 4. The automatic rules.
        None => automatic(&mut memory, now, input.stages_throttled, t),
    };
    if step.cause != Cause::RestoreThrottlesFirst {
        memory.restore_held_since = None;
    }
    if fresh && step.cause == Cause::Hold {
        step.cause = Cause::Fresh;
    }

    // 5. Emergency stage throttles.
    let throttles = throttle_intent(&mut memory, &step, pin.is_some(), input.throttles_enabled, now, t);

    // 6. Factors of the resulting state.
    let state = memory.state;
    let changed = state != previous;
    let explanation = if explain { explanation(&step, previous, state, level, throttles, pin, &memory) } else { String::new() };
    let damping_hold = step.damping_hold;
    Decision {
        state,
        factors: t.factors.of(state),
        changed,
        previous,
        cause: step.cause,
        level,
        pending: step.pending,
        throttles,
        supporting: step.supporting,
        memory,
        explanation,
        damping_hold,
    }
}

/// What the rules of this tick concluded, before the throttles.
struct Step {
    cause: Cause,
    pending: Option<ProtectionState>,
    supporting: Vec<RecentEntry>,
    /// This tick asks for the throttles to be released whatever the state.
    release_throttles: bool,
    /// Emergency stepped down although stages are still throttled: the hold ran out.
    stepped_down_throttled: bool,
    /// A recovery qualified but flap damping held it (§5.4).
    damping_hold: Option<DampingHold>,
}

impl Step {
    fn new(cause: Cause) -> Step {
        Step { cause, pending: None, supporting: Vec::new(), release_throttles: false, stepped_down_throttled: false, damping_hold: None }
    }
}

/// Appends a reading: the same minute replaces the newest entry, a gap (or time going
/// backwards) breaks the streak, and only the newest entries the rules need are kept.
fn remember(recent: &mut Vec<RecentEntry>, entry: RecentEntry, t: &Thresholds) {
    if let Some(newest) = recent.last().copied() {
        if newest.at.div_euclid(60) == entry.at.div_euclid(60) {
            recent.pop();
        } else if entry.at < newest.at || entry.at.saturating_sub(newest.at) > i64::from(t.max_gap_s) {
            recent.clear();
        }
    }
    recent.push(entry);
    let longer_calm = t.damping.and_then(|d| d.suppressed_recover_readings).unwrap_or(0);
    let keep = t.escalate_readings.max(t.recover_readings).max(longer_calm) as usize;
    if recent.len() > keep {
        recent.drain(..recent.len() - keep);
    }
}

fn pinned(memory: &mut Memory, pin: &Pin, now: Instant) -> Step {
    if memory.state != pin.state {
        memory.state = pin.state;
        memory.state_since = now;
    }
    Step::new(Cause::Pinned)
}

fn signal_lost(memory: &mut Memory, now: Instant, t: &Thresholds) -> Step {
    if memory.failed_reads < t.release_after_failed_reads {
        return Step::new(Cause::SignalHeld);
    }
    if memory.state != ProtectionState::Normal {
        memory.state = ProtectionState::Normal;
        memory.state_since = now;
        memory.last_auto_change = Some(now);
    }
    Step { release_throttles: true, ..Step::new(Cause::SignalLostRelease) }
}

/// The newest `n` entries, when there are at least `n`.
fn newest(recent: &[RecentEntry], n: u32) -> Option<&[RecentEntry]> {
    let n = n as usize;
    (n > 0 && recent.len() >= n).then(|| &recent[recent.len() - n..])
}

fn elapsed(now: Instant, since: Instant) -> i64 {
    now.saturating_sub(since)
}

fn automatic(memory: &mut Memory, now: Instant, stages_throttled: bool, t: &Thresholds) -> Step {
    let state = memory.state;
    let qualified = escalation(memory, now, t).or_else(|| recovery(memory, t.recover_readings));
    let Some((cause, target, supporting)) = qualified else {
        return Step::new(Cause::Hold);
    };
    // Flap damping (§5.4): while suppressed, a recovery from constrained or critical needs the
    // longer calm, or is held; never one from emergency.
    if let Some(d) = &t.damping
        && cause == Cause::Recover
        && state != ProtectionState::Emergency
        && let Some(hold) = recovery_hold(&mut memory.flap, now, d)
        && d.suppressed_recover_readings.is_none_or(|n| recovery(memory, n).is_none())
    {
        return Step { supporting, damping_hold: Some(hold), ..Step::new(Cause::Hold) };
    }
    let spacing_ok = memory.last_auto_change.is_none_or(|last| elapsed(now, last) >= i64::from(t.spacing_s));
    if !spacing_ok {
        return Step { pending: Some(target), supporting, ..Step::new(Cause::SpacingWait) };
    }
    let leaving_emergency = cause == Cause::Recover && state == ProtectionState::Emergency;
    if leaving_emergency && memory.throttles_engaged {
        // The release is asked for in a tick of its own, before the step down.
        return Step { supporting, release_throttles: true, ..Step::new(Cause::RestoreThrottlesFirst) };
    }
    let mut stepped_down_throttled = false;
    if leaving_emergency && stages_throttled {
        // Released, but a stage is still throttled: hold emergency while the host restores it,
        // for at most `restore_hold_max_s`, then step down anyway (the host alarms).
        let since = *memory.restore_held_since.get_or_insert(now);
        if elapsed(now, since) < i64::from(t.restore_hold_max_s) {
            return Step { supporting, release_throttles: true, ..Step::new(Cause::RestoreThrottlesFirst) };
        }
        stepped_down_throttled = true;
    }
    memory.state = target;
    memory.state_since = now;
    memory.last_auto_change = Some(now);
    if let Some(d) = &t.damping {
        let direction = if cause == Cause::Recover { ChangeDirection::Lowered } else { ChangeDirection::Raised };
        record_change(&mut memory.flap, direction, now, d);
    }
    Step { supporting, stepped_down_throttled, ..Step::new(cause) }
}

/// Escalation (straight to the lowest level of the newest readings) or emergency (critical
/// held long enough, with critical readings). Never from emergency; never to emergency except
/// from critical (INV-02).
fn escalation(memory: &Memory, now: Instant, t: &Thresholds) -> Option<(Cause, ProtectionState, Vec<RecentEntry>)> {
    let window = newest(&memory.recent, t.escalate_readings)?;
    let lowest = window.iter().map(|e| e.level).min()?;
    match memory.state {
        ProtectionState::Emergency => None,
        ProtectionState::Critical => (lowest == Level::Critical && elapsed(now, memory.state_since) >= i64::from(t.emergency_after_s))
            .then(|| (Cause::Emergency, ProtectionState::Emergency, window.to_vec())),
        state => (lowest.as_state() > state).then(|| (Cause::Escalate, lowest.as_state(), window.to_vec())),
    }
}

/// Recovery by one rank when every one of the newest readings is below min(state, critical),
/// each by the level it counts as for a recovery (its resolve level, §3).
fn recovery(memory: &Memory, readings: u32) -> Option<(Cause, ProtectionState, Vec<RecentEntry>)> {
    let window = newest(&memory.recent, readings)?;
    let bar = memory.state.min(ProtectionState::Critical).rank();
    window.iter().all(|e| e.recovery_level().rank() < bar).then(|| (Cause::Recover, memory.state.step_down(), window.to_vec()))
}

fn throttle_intent(memory: &mut Memory, step: &Step, pinned: bool, enabled: bool, now: Instant, t: &Thresholds) -> ThrottleIntent {
    if memory.throttles_engaged {
        let release = step.release_throttles || !enabled || memory.state != ProtectionState::Emergency;
        if release {
            memory.throttles_engaged = false;
            return ThrottleIntent::Release;
        }
        return ThrottleIntent::None;
    }
    let sustained = memory.state == ProtectionState::Emergency && elapsed(now, memory.state_since) >= i64::from(t.throttle_after_s);
    let pressured = pinned || newest(&memory.recent, t.escalate_readings).is_some_and(|w| w.iter().all(|e| e.level == Level::Critical));
    if enabled && sustained && pressured && !step.release_throttles {
        memory.throttles_engaged = true;
        return ThrottleIntent::Engage;
    }
    ThrottleIntent::None
}

/// The one-line explanation. Built by appending, not `format!`: it is made on every tick, and
/// on a replay of a year of minutes its formatting machinery was a visible share of the guest.
fn explanation(
    step: &Step,
    previous: ProtectionState,
    state: ProtectionState,
    level: Option<Level>,
    throttles: ThrottleIntent,
    pin: Option<&Pin>,
    memory: &Memory,
) -> String {
    use core::fmt::Write;
    let mut line = String::with_capacity(96);
    if previous == state {
        line.push_str(state.name());
        line.push_str(" held (");
    } else {
        line.push_str(previous.name());
        line.push_str(" -> ");
        line.push_str(state.name());
        line.push_str(" (");
    }
    line.push_str(step.cause.name());
    line.push(')');
    match level {
        Some(level) => {
            line.push_str("; reading ");
            line.push_str(level.name());
        }
        None => {
            let _ = write!(line, "; read failed ({} in a row)", memory.failed_reads);
        }
    }
    for (i, entry) in step.supporting.iter().enumerate() {
        line.push_str(if i == 0 { "; newest readings " } else { "," });
        line.push_str(entry.level.name());
    }
    if let Some(target) = step.pending {
        line.push_str("; ");
        line.push_str(target.name());
        line.push_str(" pending until spacing allows");
    }
    if let Some(pin) = pin {
        let _ = write!(line, "; pinned by {} until ", pin.actor);
        push_instant(&mut line, pin.expires_at);
    }
    match throttles {
        ThrottleIntent::Engage => line.push_str("; engage stage throttles"),
        ThrottleIntent::Release => line.push_str("; release stage throttles"),
        ThrottleIntent::None => {}
    }
    if let Some(since) = memory.restore_held_since {
        let _ = write!(line, "; stages still throttled, emergency held for their restore since {since}");
    }
    if let Some(hold) = &step.damping_hold {
        line.push_str("; recovery held by flap damping: penalty ");
        push_tenths(&mut line, hold.penalty);
        line.push_str(" (suppressed at ");
        push_tenths(&mut line, hold.suppress_limit);
        line.push_str("), decays to the reuse limit ");
        push_tenths(&mut line, hold.reuse_limit);
        let _ = write!(line, " in {} min", hold.reuse_in_s.div_ceil(60));
        if let Some(n) = hold.calm_readings_needed {
            let _ = write!(line, ", or {n} calm readings in a row before then");
        }
    }
    if step.stepped_down_throttled {
        line.push_str("; stages still throttled, the hold for their restore ran out: stepped down anyway");
    }
    line
}

/// An instant as people read it, RFC 3339 in UTC (`2026-10-20T14:30:00Z`); one outside the years
/// 0000 to 9999, which RFC 3339 cannot write, as `unix time N`.
fn push_instant(line: &mut String, at: Instant) {
    use core::fmt::Write;
    let text =
        time::OffsetDateTime::from_unix_timestamp(at).ok().and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok());
    match text {
        Some(text) => line.push_str(&text),
        None => {
            let _ = write!(line, "unix time {at}");
        }
    }
}

/// A non-negative number to one decimal, as `{:.1}` writes it but with integer formatting only:
/// float formatting added 24.7 KB to the component (179,148 against 154,470 bytes) for this line.
fn push_tenths(line: &mut String, v: f64) {
    use core::fmt::Write;
    let tenths = libm::round(v.max(0.0) * 10.0).min(1e15) as u64;
    let _ = write!(line, "{}.{}", tenths / 10, tenths % 10);
}
