//! The built-in workload: a quiet day with an incident, repeating every 80 minutes. CPU and
//! connections rise (constrained), then run hot with an API latency spike (critical, long
//! enough for emergency), calm down (recovery step by step), and the metrics go dark for three
//! minutes. Deterministic: the reading depends only on the minute, so separate `sentinel
//! tick` processes see one consistent incident.

use sentinel_core::ports::metrics::{MetricsError, MetricsSource};
use vocabulary::{ApiLatency, Instant, Reading};

/// Minutes in one cycle.
pub const CYCLE_MINUTES: i64 = 80;

/// The built-in metrics source: a deterministic 80-minute incident cycle, the reading depending only
/// on the minute.
pub struct Synthetic {
    /// The start of the cycle (aligned to a multiple of the cycle length since the epoch).
    epoch: Instant,
}

impl Synthetic {
    /// The workload whose current cycle contains `now`.
    pub fn around(now: Instant) -> Synthetic {
        let length = CYCLE_MINUTES * 60;
        Synthetic { epoch: now.div_euclid(length) * length }
    }

    /// The first whole cycle that starts after `at`: where a sped-up run continues when the
    /// store has already decided up to `at` (a minute is never decided twice).
    pub fn after(at: Instant) -> Synthetic {
        let length = CYCLE_MINUTES * 60;
        Synthetic { epoch: (at.div_euclid(length) + 1) * length }
    }

    /// The minute of the cycle `now` falls in.
    pub fn phase(&self, now: Instant) -> i64 {
        (now - self.epoch).div_euclid(60).rem_euclid(CYCLE_MINUTES)
    }

    /// The reading at a minute of the cycle, or `None` during the outage.
    pub fn reading_at(phase: i64) -> Option<Reading> {
        let wobble = ((phase * 7) % 5) as f64 * 0.6;
        let (cpu, connections, p95) = match phase {
            0..=9 => (35.0 + wobble, 30.0 + wobble, 120.0),
            10..=16 => (74.0 + wobble, 62.0 + wobble, 140.0),
            17..=21 => (88.0 + wobble, 86.0 + wobble, 180.0),
            22..=32 => (91.0 + wobble, 89.0 + wobble, 420.0),
            33..=36 => (88.0 + wobble, 87.0 + wobble, 200.0),
            37..=44 => (58.0 + wobble, 50.0 + wobble, 130.0),
            45..=69 => (40.0 + wobble, 33.0 + wobble, 120.0),
            70..=72 => return None,
            _ => (35.0 + wobble, 30.0 + wobble, 118.0),
        };
        Some(Reading {
            cpu_pct: Some(cpu),
            connections_pct: Some(connections),
            scaling: Some(false),
            latency: vec![ApiLatency { api: "crm".into(), p95_ms: Some(p95), baseline_ms: None }],
        })
    }
}

#[async_trait::async_trait]
impl MetricsSource for Synthetic {
    fn describe(&self) -> String {
        format!("synthetic workload (a {CYCLE_MINUTES}-minute incident cycle)")
    }

    async fn read(&self, now: Instant) -> Result<Reading, MetricsError> {
        Synthetic::reading_at(self.phase(now))
            .ok_or_else(|| MetricsError::Unavailable("synthetic metric outage (minutes 70-72 of the cycle)".into()))
    }

    fn span(&self) -> Option<(Instant, Instant)> {
        Some((self.epoch, self.epoch + (CYCLE_MINUTES - 1) * 60))
    }
}
