//! `DecisionInput`s: memories with streaks of readings a minute apart (so escalation,
//! emergency and recovery are reached), same-minute repeats, gaps, time going backwards,
//! overlong `recent` lists, `failed_reads` at `u32::MAX`, pins expired, expiring now or in the
//! future, readings at the thresholds or odd (NaN, infinities, negatives, huge), long and empty
//! strings.

use super::{Gen, NOW, vectors};
use arbitrary::Result;
use vocabulary::{ApiLatency, DecisionInput, Instant, Level, Memory, Pin, Reading, RecentEntry, Signal};

/// First byte: one time in four a conformance vector (chosen by the next byte) edited a few
/// times, otherwise an input built from scratch.
pub fn decision_input(g: &mut Gen) -> Result<DecisionInput> {
    if g.byte()? % 4 == 0 {
        let mut input = vectors::nth(vectors::decisions(), g.byte()?);
        for _ in 0..g.byte()? % 4 {
            edit(g, &mut input)?;
        }
        return Ok(input);
    }
    let now = g.instant_near(NOW)?;
    let memory = if g.chance(32)? { None } else { Some(memory(g, now)?) };
    Ok(DecisionInput { now, signal: signal(g)?, memory, pin: pin(g, now)?, throttles_enabled: g.bool()?, stages_throttled: g.bool()? })
}

fn edit(g: &mut Gen, input: &mut DecisionInput) -> Result<()> {
    let now = input.now;
    match g.byte()? % 8 {
        0 => input.now = g.instant_near(now)?,
        1 => input.signal = signal(g)?,
        2 => input.memory = if g.chance(64)? { None } else { Some(memory(g, now)?) },
        3 => input.pin = pin(g, now)?,
        4 => input.throttles_enabled = !input.throttles_enabled,
        5 => {
            if let Some(m) = &mut input.memory {
                m.recent = recent(g, now)?;
            }
        }
        6 => {
            if let Some(m) = &mut input.memory {
                m.state = g.state()?;
                m.throttles_engaged = g.bool()?;
                m.failed_reads = g.count()?;
            }
        }
        _ => {
            // The same minute, a minute or a gap later: a next tick of the same memory.
            input.now = now.saturating_add(g.pick(&[0, 30, 60, 60, 60, 90, 91, 300])?);
        }
    }
    Ok(())
}

fn memory(g: &mut Gen, now: Instant) -> Result<Memory> {
    Ok(Memory {
        state: g.state()?,
        state_since: g.instant_before(now)?,
        last_auto_change: if g.chance(64)? { None } else { Some(g.instant_before(now)?) },
        recent: recent(g, now)?,
        failed_reads: g.count()?,
        throttles_engaged: g.bool()?,
        restore_held_since: None,
        flap: None,
    })
}

/// Oldest first, mostly a minute apart and mostly at one level, the newest a step before `now`.
fn recent(g: &mut Gen, now: Instant) -> Result<Vec<RecentEntry>> {
    let n = g.len(8, 5000)?;
    let regime = level(g)?;
    let mut entries = Vec::with_capacity(n);
    let mut at = now.saturating_sub(step(g)?);
    for _ in 0..n {
        let entry_level = if g.chance(56)? { level(g)? } else { regime };
        // A resolve band lifts a reading's recovery level above its level now and then.
        let resolve_level = if g.chance(20)? { Some(level(g)?) } else { None };
        entries.push(RecentEntry { at, level: entry_level, resolve_level });
        at = at.saturating_sub(step(g)?);
    }
    entries.reverse();
    Ok(entries)
}

/// Seconds between two readings: mostly a minute.
fn step(g: &mut Gen) -> Result<i64> {
    Ok(match g.byte()? % 16 {
        15 => g.within(0, 59)?,
        14 => g.within(61, 90)?,
        13 => g.within(91, 1000)?,
        12 => g.within(-600, -1)?,
        11 => g.absurd_instant()?,
        _ => 60,
    })
}

fn level(g: &mut Gen) -> Result<Level> {
    g.pick(&[Level::Normal, Level::Constrained, Level::Critical])
}

fn signal(g: &mut Gen) -> Result<Signal> {
    if g.chance(48)? { Ok(Signal::Failed(g.text()?)) } else { Ok(Signal::Reading(reading(g)?)) }
}

/// Percentages around both policies' boundaries; latency mostly against a 100 ms baseline.
fn reading(g: &mut Gen) -> Result<Reading> {
    const PCT: [f64; 6] = [70.0, 75.0, 85.0, 90.0, 0.0, 100.0];
    let cpu_pct = g.maybe_number(0.0, 100.0, &PCT)?;
    let connections_pct = g.maybe_number(0.0, 100.0, &PCT)?;
    let scaling = if g.chance(64)? { None } else { Some(g.chance(64)?) };
    let n = g.len(3, 2000)?;
    let mut latency = Vec::with_capacity(n);
    for _ in 0..n {
        let api = if g.chance(56)? { g.text()? } else { g.pick(&["crm", "search"])?.to_string() };
        let p95_ms = g.maybe_number(0.0, 500.0, &[150.0, 175.0, 250.0, 300.0])?;
        let baseline_ms = match g.byte()? % 8 {
            7 => None,
            6 => g.maybe_number(0.0, 1000.0, &[0.0])?,
            _ => Some(100.0),
        };
        latency.push(ApiLatency { api, p95_ms, baseline_ms });
    }
    Ok(Reading { cpu_pct, connections_pct, scaling, latency })
}

/// No pin half the time; otherwise one expired, expiring now, or in the future.
fn pin(g: &mut Gen, now: Instant) -> Result<Option<Pin>> {
    if !g.bool()? {
        return Ok(None);
    }
    let expires_at = match g.byte()? % 8 {
        7 => now,
        6 => now.saturating_add(1),
        5 => g.absurd_instant()?,
        4 => now.saturating_sub(g.within(1, 3600)?),
        _ => now.saturating_add(g.within(-120, 86_400)?),
    };
    Ok(Some(Pin { state: g.state()?, reason: g.text()?, expires_at, actor: g.text()? }))
}
