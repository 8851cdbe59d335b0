//! The common trace line, parsed straight into typed values: no JSON tree, no field paths.
//!
//! A line this parser accepts is exactly the event the checking parser (`parse.rs`) makes of
//! it: every key is known and appears once, every object is an object, every value passes the
//! same check. Anything else (a bad or out-of-range value, an unknown or repeated key, an array
//! where an object belongs, `null` where a value is required) makes it give up with `None`,
//! and the line is parsed again by the checking parser, which names the field. Replaying a
//! year of minutes spends most of its parsing time here, so this path builds nothing it does
//! not return.

use super::TraceEvent;
use crate::instants::parse_rfc3339;
use serde::de::{Deserialize, Deserializer, Visitor};
use std::borrow::Cow;
use vocabulary::{ApiLatency, Instant, Pin, ProtectionState, Reading, Signal};

/// The event of `line`, or `None` when only the checking parser can say what it is (or what is
/// wrong with it).
pub(super) fn parse_line(line: &str, previous: Option<Instant>) -> Option<TraceEvent> {
    let Obj(raw) = serde_json::from_str::<Obj<RawLine<'_>>>(line).ok()?;
    let at = parse_rfc3339(&raw.at).ok()?;
    if previous.is_some_and(|p| at < p) {
        return None;
    }
    Some(match (raw.reading, raw.read_error, raw.pin, raw.throttles_enabled, raw.stage_restores_fail) {
        (Some(Obj(r)), None, None, None, None) => TraceEvent::Tick { at, signal: Signal::Reading(r.checked()?) },
        (None, Some(why), None, None, None) => TraceEvent::Tick { at, signal: Signal::Failed(why) },
        (None, None, Some(pin), None, None) => TraceEvent::Pin {
            at,
            pin: match pin {
                None => None,
                Some(Obj(p)) => Some(p.checked()?),
            },
        },
        (None, None, None, Some(enabled), None) => TraceEvent::Throttles { at, enabled },
        (None, None, None, None, Some(fail)) => TraceEvent::StageRestores { at, fail },
        _ => return None,
    })
}

/// A line; an event key is `Some` when present, even as `null` (which only `pin` accepts).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLine<'a> {
    #[serde(borrow)]
    at: Cow<'a, str>,
    #[serde(default, deserialize_with = "present")]
    reading: Option<Obj<RawReading>>,
    #[serde(default, deserialize_with = "present")]
    read_error: Option<String>,
    #[serde(default, deserialize_with = "present")]
    pin: Option<Option<Obj<RawPin>>>,
    #[serde(default, deserialize_with = "present")]
    throttles_enabled: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    stage_restores_fail: Option<bool>,
}

/// Optional fields: absent and `null` are the same, as in the checking parser.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReading {
    cpu_pct: Option<f64>,
    connections_pct: Option<f64>,
    scaling: Option<bool>,
    latency: Option<Vec<Obj<RawLatency>>>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLatency {
    api: String,
    p95_ms: Option<f64>,
    baseline_ms: Option<f64>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPin {
    state: String,
    reason: String,
    expires_at: String,
    actor: String,
}

impl RawReading {
    fn checked(self) -> Option<Reading> {
        let percent = |x: f64| (0.0..=100.0).contains(&x);
        let latency = self.latency.unwrap_or_default().into_iter().map(|Obj(l)| l.checked()).collect::<Option<_>>()?;
        Some(Reading {
            cpu_pct: within(self.cpu_pct, percent)?,
            connections_pct: within(self.connections_pct, percent)?,
            scaling: self.scaling,
            latency,
        })
    }
}

impl RawLatency {
    fn checked(self) -> Option<ApiLatency> {
        let millis = |x: f64| x.is_finite() && x >= 0.0;
        if self.api.trim().is_empty() {
            return None;
        }
        Some(ApiLatency { p95_ms: within(self.p95_ms, millis)?, baseline_ms: within(self.baseline_ms, millis)?, api: self.api })
    }
}

impl RawPin {
    fn checked(self) -> Option<Pin> {
        let state = match self.state.as_str() {
            "normal" => ProtectionState::Normal,
            "constrained" => ProtectionState::Constrained,
            "critical" => ProtectionState::Critical,
            "emergency" => ProtectionState::Emergency,
            _ => return None,
        };
        Some(Pin { state, reason: self.reason, expires_at: parse_rfc3339(&self.expires_at).ok()?, actor: self.actor })
    }
}

/// An optional number: `Some(None)` when absent, `Some(Some(x))` when `ok(x)`, `None` (give up)
/// otherwise.
fn within(v: Option<f64>, ok: impl Fn(f64) -> bool) -> Option<Option<f64>> {
    match v {
        None => Some(None),
        Some(x) if ok(x) => Some(Some(x)),
        Some(_) => None,
    }
}

/// A present key's value (so that `null` is told apart from absence where it matters).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A struct read from a JSON object only: serde's derived structs also accept an array of
/// their fields in order, which the checking parser refuses.
struct Obj<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(MapOnly(d)).map(Obj)
    }
}

/// Hands every request to the inner deserializer as a request for a map.
struct MapOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for MapOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests;
