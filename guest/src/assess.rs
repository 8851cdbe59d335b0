//! docs/behaviour.md §3: the level of one reading is the highest of its signals' levels, and the
//! level it counts as for a recovery is the same against boundaries lowered by their resolve
//! bands.

use vocabulary::{Level, Reading};
use vocabulary::{LevelThresholds, Thresholds};

/// The level of one reading. Absent or non-finite values contribute nothing; scaling alone is
/// never above constrained (INV-02).
pub fn assess(reading: &Reading, t: &Thresholds) -> Level {
    level_of(reading, &t.cpu_pct, &t.connections_pct, &t.latency_ratio)
}

/// The level a reading counts as for a recovery: against each signal's boundaries lowered by its
/// resolve band, so never below [`assess`]'s level; the same level when no signal has a band.
pub fn assess_for_recovery(reading: &Reading, t: &Thresholds, level: Level) -> Level {
    if t.cpu_pct.resolve_band == 0.0 && t.connections_pct.resolve_band == 0.0 && t.latency_ratio.resolve_band == 0.0 {
        return level;
    }
    level_of(reading, &t.cpu_pct.resolving(), &t.connections_pct.resolving(), &t.latency_ratio.resolving())
}

fn level_of(reading: &Reading, cpu_pct: &LevelThresholds, connections_pct: &LevelThresholds, latency_ratio: &LevelThresholds) -> Level {
    let mut level = Level::Normal;
    if let Some(cpu) = reading.cpu_pct {
        level = level.max(against(cpu, cpu_pct));
    }
    if let Some(conn) = reading.connections_pct {
        level = level.max(against(conn, connections_pct));
    }
    if let Some(ratio) = worst_latency_ratio(reading) {
        level = level.max(against(ratio, latency_ratio));
    }
    if reading.scaling == Some(true) {
        level = level.max(Level::Constrained);
    }
    level
}

/// The highest p95 / baseline ratio among APIs with a usable baseline (finite and above 0).
pub fn worst_latency_ratio(reading: &Reading) -> Option<f64> {
    reading
        .latency
        .iter()
        .filter_map(|l| match (l.p95_ms, l.baseline_ms) {
            (Some(p95), Some(base)) if p95.is_finite() && base.is_finite() && base > 0.0 => Some(p95 / base),
            _ => None,
        })
        .filter(|r| r.is_finite())
        .fold(None, |worst: Option<f64>, r| Some(worst.map_or(r, |w| w.max(r))))
}

fn against(value: f64, bounds: &LevelThresholds) -> Level {
    if !value.is_finite() {
        Level::Normal
    } else if value >= bounds.critical {
        Level::Critical
    } else if value >= bounds.constrained {
        Level::Constrained
    } else {
        Level::Normal
    }
}
