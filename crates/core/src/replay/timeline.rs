//! What a report draws of one policy's replay: per tick, the state and the reading as the
//! policy saw it, in a compact record (a year of minutes is half a million of them).

use super::Tick;
use crate::policy::invariants::worst_latency_ratio;
use vocabulary::{Instant, ThrottleIntent};

/// One replayed tick, reduced to what the timeline shows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// When the tick happened (unix seconds).
    pub at: Instant,
    /// The state's rank (0 normal .. 3 emergency).
    pub state: u8,
    /// The reading's level rank as the policy assessed it; none for a failed read.
    pub level: Option<u8>,
    /// The state of the active pin (its rank), none without one.
    pub pin: Option<u8>,
    /// What the decision asked of the emergency stage throttles (engage, release or none).
    pub throttles: ThrottleIntent,
    /// Flap damping held a recovery at this tick (docs/behaviour.md §5.4).
    pub damping_held: bool,
    /// The reading's values (NaN when absent): CPU %, connections %, worst latency ratio.
    pub cpu_pct: f32,
    /// The reading's connections, in percent; NaN when it has none.
    pub connections_pct: f32,
    /// The highest API latency p95 over its baseline (1.0: as usual); NaN when no API has both.
    pub latency_ratio: f32,
}

impl Point {
    /// The read failed at this tick (no level was assessed).
    pub fn failed(&self) -> bool {
        self.level.is_none()
    }
}

/// One policy's replay of one trace, tick by tick.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// Every tick of the run, in trace order, one a minute.
    pub points: Vec<Point>,
}

impl Timeline {
    /// Appends one tick: its state, the reading's level, the active pin, the throttle intent,
    /// whether flap damping held, and the reading's values (NaN when absent or not finite).
    pub fn add(&mut self, tick: &Tick<'_>) {
        let d = tick.outcome;
        let value = |v: Option<f64>| v.filter(|v| v.is_finite()).map_or(f32::NAN, |v| v as f32);
        self.points.push(Point {
            at: tick.at,
            state: d.state.rank(),
            level: d.level.map(|n| n.rank()),
            pin: tick.pin.filter(|p| p.expires_at > tick.at).map(|p| p.state.rank()),
            throttles: d.throttles,
            damping_held: d.damping_held,
            cpu_pct: value(tick.reading.and_then(|r| r.cpu_pct)),
            connections_pct: value(tick.reading.and_then(|r| r.connections_pct)),
            latency_ratio: value(tick.reading.and_then(worst_latency_ratio)),
        });
    }
}
