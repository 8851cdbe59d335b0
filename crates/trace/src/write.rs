//! Writing trace lines in the format of docs/behaviour.md §10.1, keys in its order.

use std::fmt::Write as _;

use super::TraceEvent;
use crate::instants::format_rfc3339;
use vocabulary::{ProtectionState, Reading, Signal};

/// One JSON line (no newline) in that format; [`super::parse_trace`] reads it back as the
/// same event.
///
/// Keys come in the documented order (`at` first; `cpu_pct`, `connections_pct`, `scaling`,
/// `latency`; `api`, `p95_ms`, `baseline_ms`). Absent optional fields are left out, and so is an
/// empty `latency` list. A non-finite number, which JSON cannot hold and which contributes
/// nothing to an assessment, is left out like an absent one. Whole numbers are written without a
/// fraction (`40`, not `40.0`).
pub fn write_event(event: &TraceEvent) -> String {
    let mut out = String::from("{\"at\":");
    push_string(&mut out, &format_rfc3339(event.at()));
    match event {
        TraceEvent::Tick { signal: Signal::Reading(reading), .. } => {
            out.push_str(",\"reading\":");
            push_reading(&mut out, reading);
        }
        TraceEvent::Tick { signal: Signal::Failed(reason), .. } => {
            out.push_str(",\"read_error\":");
            push_string(&mut out, reason);
        }
        TraceEvent::Pin { pin: None, .. } => out.push_str(",\"pin\":null"),
        TraceEvent::Pin { pin: Some(pin), .. } => {
            out.push_str(",\"pin\":{\"state\":");
            push_string(&mut out, state_name(pin.state));
            out.push_str(",\"reason\":");
            push_string(&mut out, &pin.reason);
            out.push_str(",\"expires_at\":");
            push_string(&mut out, &format_rfc3339(pin.expires_at));
            out.push_str(",\"actor\":");
            push_string(&mut out, &pin.actor);
            out.push('}');
        }
        TraceEvent::Throttles { enabled, .. } => {
            let _ = write!(out, ",\"throttles_enabled\":{enabled}");
        }
        TraceEvent::StageRestores { fail, .. } => {
            let _ = write!(out, ",\"stage_restores_fail\":{fail}");
        }
    }
    out.push('}');
    out
}

fn push_reading(out: &mut String, reading: &Reading) {
    let mut fields = Fields::new(out);
    fields.number("cpu_pct", reading.cpu_pct);
    fields.number("connections_pct", reading.connections_pct);
    if let Some(scaling) = reading.scaling {
        fields.key("scaling");
        let _ = write!(fields.out, "{scaling}");
    }
    if !reading.latency.is_empty() {
        fields.key("latency");
        fields.out.push('[');
        for (i, api) in reading.latency.iter().enumerate() {
            if i > 0 {
                fields.out.push(',');
            }
            let mut entry = Fields::new(fields.out);
            entry.key("api");
            push_string(entry.out, &api.api);
            entry.number("p95_ms", api.p95_ms);
            entry.number("baseline_ms", api.baseline_ms);
            entry.close();
        }
        fields.out.push(']');
    }
    fields.close();
}

/// Writes the members of one JSON object, commas between them.
struct Fields<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Fields<'a> {
    fn new(out: &'a mut String) -> Self {
        out.push('{');
        Fields { out, first: true }
    }

    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        push_string(self.out, key);
        self.out.push(':');
    }

    fn number(&mut self, key: &str, value: Option<f64>) {
        if let Some(x) = value.filter(|x| x.is_finite()) {
            self.key(key);
            push_number(self.out, x);
        }
    }

    fn close(self) {
        self.out.push('}');
    }
}

fn push_number(out: &mut String, x: f64) {
    // Whole numbers below 2^53 are exact as integers; everything else in Rust's shortest
    // round-trip form (never an exponent, so always valid JSON).
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        let _ = write!(out, "{}", x as i64);
    } else {
        let _ = write!(out, "{x}");
    }
}

fn push_string(out: &mut String, s: &str) {
    // Serializing a str cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

fn state_name(state: ProtectionState) -> &'static str {
    match state {
        ProtectionState::Normal => "normal",
        ProtectionState::Constrained => "constrained",
        ProtectionState::Critical => "critical",
        ProtectionState::Emergency => "emergency",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_trace;
    use vocabulary::{ApiLatency, Pin};

    const AT: i64 = 1_792_504_980; // 2026-10-20T14:03:00Z

    fn reading(cpu: Option<f64>) -> Reading {
        Reading { cpu_pct: cpu, connections_pct: None, scaling: None, latency: vec![] }
    }

    fn round_trip(event: &TraceEvent) -> TraceEvent {
        let line = write_event(event);
        assert!(!line.contains('\n'), "{line}");
        let mut events = parse_trace("t", &line).unwrap_or_else(|e| panic!("{line}: {e}")).events;
        assert_eq!(events.len(), 1);
        events.remove(0)
    }

    #[test]
    fn writes_the_readme_lines() {
        let readme = [
            r#"{"at":"2026-10-20T14:03:00Z","reading":{"cpu_pct":72.5,"connections_pct":40,"scaling":false,"latency":[{"api":"crm","p95_ms":180,"baseline_ms":120}]}}"#,
            r#"{"at":"2026-10-20T14:04:00Z","read_error":"timeout"}"#,
            r#"{"at":"2026-10-20T14:04:30Z","pin":{"state":"emergency","reason":"incident 4411","expires_at":"2026-10-20T16:00:00Z","actor":"ops@example.com"}}"#,
            r#"{"at":"2026-10-20T15:00:00Z","pin":null}"#,
            r#"{"at":"2026-10-20T15:00:00Z","throttles_enabled":true}"#,
            r#"{"at":"2026-10-20T15:20:00Z","stage_restores_fail":true}"#,
        ];
        let trace = parse_trace("readme", &readme.join("\n")).unwrap();
        let written: Vec<String> = trace.events.iter().map(write_event).collect();
        assert_eq!(written, readme);
    }

    #[test]
    fn round_trips_every_kind() {
        let events = [
            TraceEvent::Tick { at: AT, signal: Signal::Reading(reading(None)) },
            TraceEvent::Tick { at: AT, signal: Signal::Reading(reading(Some(51.846000000000004))) },
            TraceEvent::Tick {
                at: AT,
                signal: Signal::Reading(Reading {
                    cpu_pct: Some(0.0),
                    connections_pct: Some(100.0),
                    scaling: Some(true),
                    latency: vec![
                        ApiLatency { api: "crm \"eu\"".into(), p95_ms: Some(1e-7), baseline_ms: None },
                        ApiLatency { api: "billing".into(), p95_ms: None, baseline_ms: Some(1e300) },
                        ApiLatency { api: "x".into(), p95_ms: None, baseline_ms: None },
                    ],
                }),
            },
            TraceEvent::Tick { at: AT, signal: Signal::Failed(String::new()) },
            TraceEvent::Tick { at: AT, signal: Signal::Failed("timeout\nsecond line ü".into()) },
            TraceEvent::Pin {
                at: AT,
                pin: Some(Pin {
                    state: ProtectionState::Constrained,
                    reason: String::new(),
                    expires_at: AT - 86_400 * 400,
                    actor: "  ".into(),
                }),
            },
            TraceEvent::Pin { at: AT, pin: None },
            TraceEvent::Throttles { at: AT, enabled: false },
            TraceEvent::StageRestores { at: AT, fail: true },
        ];
        for event in &events {
            assert_eq!(&round_trip(event), event, "{}", write_event(event));
        }
    }

    #[test]
    fn non_finite_numbers_are_left_out() {
        let event = TraceEvent::Tick {
            at: AT,
            signal: Signal::Reading(Reading {
                cpu_pct: Some(f64::NAN),
                connections_pct: Some(f64::INFINITY),
                scaling: None,
                latency: vec![ApiLatency { api: "crm".into(), p95_ms: Some(f64::NAN), baseline_ms: Some(9.5) }],
            }),
        };
        assert_eq!(write_event(&event), r#"{"at":"2026-10-20T14:03:00Z","reading":{"latency":[{"api":"crm","baseline_ms":9.5}]}}"#);
    }

    #[test]
    fn whole_numbers_have_no_fraction() {
        let line = write_event(&TraceEvent::Tick { at: AT, signal: Signal::Reading(reading(Some(-0.0))) });
        assert_eq!(line, r#"{"at":"2026-10-20T14:03:00Z","reading":{"cpu_pct":0}}"#);
    }
}
