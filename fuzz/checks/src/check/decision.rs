//! What must hold of one decision, from its input alone (docs/behaviour.md §3 to §5), computed here
//! rather than by the guest: the level by the host's own assessment
//! (`invariants::assess`, and `assess_for_recovery` for the level a reading
//! counts as for a recovery), the next `recent` list, which automatic change
//! qualifies, spacing, the cause's precedence, and the throttle intent. Each violation is one
//! line naming the rule.

use super::Findings;
use invariants::{assess, assess_for_recovery};
use vocabulary::{
    Cause, Decision, DecisionInput, Factors, Instant, Level, Memory, ProtectionState as S, RecentEntry, Signal, Thresholds, ThrottleIntent,
};

pub fn violations(input: &DecisionInput, d: &Decision, t: &Thresholds) -> Vec<String> {
    let now = input.now;
    let before = input.memory.clone().unwrap_or(Memory {
        state: S::Normal,
        state_since: now,
        last_auto_change: None,
        recent: Vec::new(),
        failed_reads: 0,
        throttles_engaged: false,
        restore_held_since: None,
        flap: None,
    });
    let (prev, m) = (before.state, &d.memory);
    let pin = input.pin.as_ref().filter(|p| p.expires_at > now);
    let mut f = Findings::default();

    // The outcome's shape; factors (section 6).
    f.ensure(d.previous == prev, || format!("previous {:?} is not the memory's state {prev:?}", d.previous));
    f.ensure(d.changed == (d.state != prev), || "changed disagrees with previous and state".into());
    f.ensure(m.state == d.state, || format!("memory.state {:?} is not the state {:?}", m.state, d.state));
    let expected = factors_of(d.state, t);
    f.ensure(same_factors(&d.factors, &expected), || format!("factors {:?} are not {:?}'s {expected:?}", d.factors, d.state));
    let fs = [d.factors.bulk, d.factors.heavy, d.factors.write, d.factors.read];
    f.ensure(fs.iter().all(|x| (0.0..=1.0).contains(x)), || format!("a factor outside [0, 1]: {:?}", d.factors));
    let keep = t.escalate_readings.max(t.recover_readings) as usize;
    f.ensure(m.recent.len() <= keep, || format!("memory.recent holds {} entries, more than {keep}", m.recent.len()));
    f.ensure(d.pending.is_some() == (d.cause == Cause::SpacingWait), || "pending is set exactly for spacing-wait".into());
    f.ensure(d.pending != Some(d.state), || "pending names the current state".into());
    f.ensure(!d.explanation.is_empty(), || "empty explanation".into());

    // Step 1: the signal folded into memory.
    match &input.signal {
        Signal::Reading(r) => {
            let level = assess(r, t);
            f.ensure(d.level == Some(level), || format!("level {:?}, but the reading is {level:?}", d.level));
            f.ensure(m.failed_reads == 0, || "a reading must reset failed_reads".into());
            let recovery = assess_for_recovery(r, t);
            let entry = RecentEntry { at: now, level, resolve_level: (recovery != level).then_some(recovery) };
            let recent = next_recent(&before.recent, entry, t, keep);
            f.ensure(m.recent == recent, || format!("memory.recent {:?}, expected {recent:?}", m.recent));
        }
        Signal::Failed(_) => {
            f.ensure(d.level.is_none(), || "a failed read has no level".into());
            let n = before.failed_reads.saturating_add(1);
            f.ensure(m.failed_reads == n, || format!("failed_reads {}, expected {n}", m.failed_reads));
            f.ensure(m.recent.is_empty(), || "a failed read must clear recent".into());
        }
    }
    let failed = matches!(input.signal, Signal::Failed(_));

    // Steps 2 to 4: the state and its cause.
    let unchanged_times = |f: &mut Findings| {
        f.ensure(m.state_since == before.state_since, || "state_since moved without a change".into());
        f.ensure(m.last_auto_change == before.last_auto_change, || "last_auto_change moved without an automatic change".into());
    };
    let auto_times = |f: &mut Findings| {
        f.ensure(m.state_since == now && m.last_auto_change == Some(now), || {
            "an automatic change must set state_since and last_auto_change to now".into()
        });
    };
    if let Some(p) = pin {
        f.ensure(d.cause == Cause::Pinned && d.state == p.state, || {
            format!("an active pin to {:?} gave {:?} ({:?})", p.state, d.state, d.cause)
        });
        if d.changed {
            f.ensure(m.state_since == now, || "a pinned change must set state_since".into());
            f.ensure(m.last_auto_change == before.last_auto_change, || "a pinned change is not automatic".into());
        } else {
            unchanged_times(&mut f);
        }
    } else if failed {
        if m.failed_reads < t.release_after_failed_reads {
            f.ensure(d.cause == Cause::SignalHeld && !d.changed, || {
                format!("a first failed read must hold, got {:?} -> {:?}", d.cause, d.state)
            });
            unchanged_times(&mut f);
        } else {
            f.ensure(d.cause == Cause::SignalLostRelease && d.state == S::Normal, || {
                format!("a repeated failed read must release to normal, got {:?} ({:?})", d.state, d.cause)
            });
            if d.changed { auto_times(&mut f) } else { unchanged_times(&mut f) }
        }
    } else {
        automatic(&mut f, input, &before, d, t, &auto_times, &unchanged_times);
    }
    if d.state == S::Emergency && prev != S::Emergency {
        let allowed = pin.is_some_and(|p| p.state == S::Emergency) || (prev == S::Critical && d.cause == Cause::Emergency);
        f.ensure(allowed, || format!("{prev:?} -> emergency without a pin ({:?})", d.cause));
    }

    // Step 5: the emergency stage throttles.
    throttles(&mut f, input, &before, d, t, pin.is_some());
    f.into_vec()
}

/// A reading without an active pin: escalate, emergency, recover, spacing-wait,
/// restore-throttles-first, or hold (fresh when memory was absent), in that precedence.
fn automatic(
    f: &mut Findings,
    input: &DecisionInput,
    before: &Memory,
    d: &Decision,
    t: &Thresholds,
    auto_times: &dyn Fn(&mut Findings),
    unchanged_times: &dyn Fn(&mut Findings),
) {
    let (now, prev, recent) = (input.now, before.state, &d.memory.recent);
    let esc = newest(recent, t.escalate_readings);
    let rec = newest(recent, t.recover_readings);
    // Which change qualifies (at most one can), and with which readings.
    let escalate = esc.and_then(|w| {
        let lowest = w.iter().map(|e| e.level).min_by_key(|l| l.rank())?;
        let target = state_of(lowest);
        (prev != S::Emergency && prev != S::Critical && target.rank() > prev.rank()).then_some((Cause::Escalate, target, w))
    });
    let emergency = esc.filter(|w| {
        prev == S::Critical
            && w.iter().all(|e| e.level == Level::Critical)
            && elapsed(now, before.state_since) >= i64::from(t.emergency_after_s)
    });
    let emergency = emergency.map(|w| (Cause::Emergency, S::Emergency, w));
    // Calmer by the level each reading counts as for a recovery (its resolve level, §3).
    let recover = rec.filter(|w| prev != S::Normal && w.iter().all(|e| e.resolve_level.unwrap_or(e.level).rank() < prev.rank().min(2)));
    let recover = recover.map(|w| (Cause::Recover, step_down(prev), w));
    let qualified = escalate.or(emergency).or(recover);
    let spacing_ok = before.last_auto_change.is_none_or(|last| elapsed(now, last) >= i64::from(t.spacing_s));

    let Some((cause, target, window)) = qualified else {
        let expected = if input.memory.is_none() { Cause::Fresh } else { Cause::Hold };
        f.ensure(d.cause == expected && !d.changed, || {
            format!("nothing qualifies, expected {expected:?}, got {:?} -> {:?}", d.cause, d.state)
        });
        f.ensure(d.supporting.is_empty(), || "supporting readings without a change".into());
        unchanged_times(f);
        return;
    };
    f.ensure(d.supporting == window, || format!("supporting {:?}, expected the newest readings {window:?}", d.supporting));
    if !spacing_ok {
        f.ensure(d.cause == Cause::SpacingWait && d.pending == Some(target) && !d.changed, || {
            format!("{cause:?} to {target:?} within the spacing must wait, got {:?} -> {:?} pending {:?}", d.cause, d.state, d.pending)
        });
        unchanged_times(f);
    } else if cause == Cause::Recover && prev == S::Emergency && before.throttles_engaged {
        f.ensure(d.cause == Cause::RestoreThrottlesFirst && !d.changed, || {
            format!("recovering from emergency with throttles engaged must release them first, got {:?}", d.cause)
        });
        f.ensure(d.memory.restore_held_since == before.restore_held_since, || {
            "the release tick neither starts nor ends a hold for the restore".into()
        });
        unchanged_times(f);
    } else if cause == Cause::Recover && prev == S::Emergency && input.stages_throttled && held_within(input, before, t) {
        // Released, but a stage is still throttled: emergency holds (section 5.4).
        let since = before.restore_held_since.unwrap_or(now);
        f.ensure(d.cause == Cause::RestoreThrottlesFirst && !d.changed, || {
            format!("a stage still throttled within the hold must keep emergency, got {:?} -> {:?}", d.cause, d.state)
        });
        f.ensure(d.memory.restore_held_since == Some(since), || {
            format!("the hold started at {since}, memory says {:?}", d.memory.restore_held_since)
        });
        unchanged_times(f);
    } else {
        f.ensure(d.cause == cause && d.state == target, || {
            format!("{cause:?} to {target:?} qualifies, got {:?} -> {:?}", d.cause, d.state)
        });
        f.ensure(d.memory.restore_held_since.is_none(), || "a step down ends the hold".into());
        auto_times(f);
    }
}

/// Whether a hold for a stage restore (section 5.4) that began at the memory's
/// `restore_held_since` (or now) is still within `restore_hold_max_s`.
fn held_within(input: &DecisionInput, before: &Memory, t: &Thresholds) -> bool {
    let since = before.restore_held_since.unwrap_or(input.now);
    elapsed(input.now, since) < i64::from(t.restore_hold_max_s)
}

fn throttles(f: &mut Findings, input: &DecisionInput, before: &Memory, d: &Decision, t: &Thresholds, pinned: bool) {
    let (was, is) = (before.throttles_engaged, d.memory.throttles_engaged);
    let consistent = match d.throttles {
        ThrottleIntent::Engage => !was && is,
        ThrottleIntent::Release => was && !is,
        ThrottleIntent::None => was == is,
    };
    f.ensure(consistent, || format!("intent {:?} with throttles_engaged {was} -> {is}", d.throttles));
    f.ensure(!is || (d.state == S::Emergency && input.throttles_enabled), || {
        "throttles engaged outside emergency or with the switch off".into()
    });
    let releasing_cause = matches!(d.cause, Cause::SignalLostRelease | Cause::RestoreThrottlesFirst);
    let expected = if was {
        let release = releasing_cause || !input.throttles_enabled || d.state != S::Emergency;
        if release { ThrottleIntent::Release } else { ThrottleIntent::None }
    } else {
        let critical = newest(&d.memory.recent, t.escalate_readings).is_some_and(|w| w.iter().all(|e| e.level == Level::Critical));
        let engage = input.throttles_enabled
            && d.state == S::Emergency
            && elapsed(input.now, d.memory.state_since) >= i64::from(t.throttle_after_s)
            && (pinned || critical)
            && !releasing_cause;
        if engage { ThrottleIntent::Engage } else { ThrottleIntent::None }
    };
    f.ensure(d.throttles == expected, || format!("throttle intent {:?}, expected {expected:?}", d.throttles));
}

/// Step 1 for a reading: the same minute replaces the newest entry; a gap above `max_gap_s`
/// (or time going backwards, which the guest documents as a break too) clears the list; only
/// the newest `keep` entries stay.
fn next_recent(recent: &[RecentEntry], entry: RecentEntry, t: &Thresholds, keep: usize) -> Vec<RecentEntry> {
    let mut out = recent.to_vec();
    if let Some(newest) = out.last().copied() {
        let gap = i128::from(entry.at) - i128::from(newest.at);
        if newest.at.div_euclid(60) == entry.at.div_euclid(60) {
            out.pop();
        } else if gap < 0 || gap > i128::from(t.max_gap_s) {
            out.clear();
        }
    }
    out.push(entry);
    let drop = out.len().saturating_sub(keep);
    out.drain(..drop);
    out
}

fn newest(recent: &[RecentEntry], n: u32) -> Option<&[RecentEntry]> {
    let n = n as usize;
    (n > 0 && recent.len() >= n).then(|| &recent[recent.len() - n..])
}

/// `now - since` in seconds, saturating at the ends of the range.
fn elapsed(now: Instant, since: Instant) -> i64 {
    now.saturating_sub(since)
}

fn state_of(level: Level) -> S {
    match level {
        Level::Normal => S::Normal,
        Level::Constrained => S::Constrained,
        Level::Critical => S::Critical,
    }
}

fn step_down(s: S) -> S {
    match s {
        S::Normal | S::Constrained => S::Normal,
        S::Critical => S::Constrained,
        S::Emergency => S::Critical,
    }
}

fn factors_of(s: S, t: &Thresholds) -> Factors {
    match s {
        S::Normal => t.factors.normal,
        S::Constrained => t.factors.constrained,
        S::Critical => t.factors.critical,
        S::Emergency => t.factors.emergency,
    }
}

fn same_factors(a: &Factors, b: &Factors) -> bool {
    [(a.bulk, b.bulk), (a.heavy, b.heavy), (a.write, b.write), (a.read, b.read)].iter().all(|(x, y)| x.to_bits() == y.to_bits())
}
