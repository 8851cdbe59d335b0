//! A synthetic year of minute ticks for the replay benchmark, generated rather than committed
//! (525,600 lines are 50 MB): a daily CPU and connections cycle with noise, one API's latency
//! without baselines (so baselines are learnt every hour, docs/behaviour.md §8), an incident every
//! few days (CPU to 88-97 % for one to three hours), a failed read now and then, and a pin a
//! month. Deterministic: the same `minutes` give the same trace.

use sentinel_core::trace::{TraceEvent, write_event};
use vocabulary::{ApiLatency, Instant, Pin, ProtectionState, Reading, Signal};

/// A year of minutes.
pub const YEAR: usize = 525_600;

/// 2026-01-01T00:00:00Z.
pub const START: Instant = 1_767_225_600;

/// A small xorshift generator (no dependency, same numbers everywhere).
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The events of `minutes` minutes from [`START`]; `latency`: with the API's p95 (baselines
/// learnt every hour), or CPU and connections only.
pub fn synthetic(minutes: usize, latency: bool) -> Vec<TraceEvent> {
    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    let mut events = Vec::with_capacity(minutes + minutes / 40_000 * 2);
    let mut incident_until = 0usize;
    let mut incident_level = 0.0;
    for m in 0..minutes {
        let at = START + m as Instant * 60;
        if m % 43_200 == 7_000 {
            let pin = Pin {
                state: ProtectionState::Constrained,
                reason: "monthly maintenance".into(),
                expires_at: at + 3_600,
                actor: "ops@example.com".into(),
            };
            events.push(TraceEvent::Pin { at, pin: Some(pin) });
        }
        if m % 4_000 == 1_000 && incident_until <= m {
            incident_until = m + 60 + (noise.next() * 120.0) as usize;
            incident_level = 88.0 + noise.next() * 9.0;
        }
        if noise.next() < 0.0005 {
            events.push(TraceEvent::Tick { at, signal: Signal::Failed("timeout".into()) });
            continue;
        }
        let day = (m % 1_440) as f64 / 1_440.0;
        let cycle = (day * std::f64::consts::TAU - 2.0).sin();
        let mut cpu = 45.0 + 15.0 * cycle + noise.next() * 8.0;
        if m < incident_until {
            cpu = incident_level + noise.next() * 3.0;
        }
        let round = |v: f64| (v.clamp(0.0, 100.0) * 10.0).round() / 10.0;
        let reading = Reading {
            cpu_pct: Some(round(cpu)),
            connections_pct: Some(round(35.0 + 10.0 * cycle + noise.next() * 5.0)),
            scaling: None,
            latency: if latency {
                vec![ApiLatency {
                    api: "crm".into(),
                    p95_ms: Some((120.0 + 20.0 * cycle + noise.next() * 30.0).round()),
                    baseline_ms: None,
                }]
            } else {
                Vec::new()
            },
        };
        events.push(TraceEvent::Tick { at, signal: Signal::Reading(reading) });
    }
    events
}

/// The events as trace text, one line each.
pub fn text(events: &[TraceEvent]) -> String {
    let mut out = String::with_capacity(events.len() * 120);
    for e in events {
        out.push_str(&write_event(e));
        out.push('\n');
    }
    out
}
