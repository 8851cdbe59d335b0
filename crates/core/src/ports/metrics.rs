//! Where readings come from. A source returns one minute's reading or says why it could not.

use vocabulary::{Instant, Reading};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricsError {
    #[error("metrics source unavailable: {0}")]
    Unavailable(String),
    #[error("metrics read timed out after {0:?}")]
    Timeout(std::time::Duration),
    #[error("malformed metric {field}: {message}")]
    Malformed { field: String, message: String },
    #[error("no reading for this minute: {0}")]
    NoData(String),
}

#[async_trait::async_trait]
pub trait MetricsSource: Send + Sync {
    /// What this source reads, for logs and `sentinel check`.
    fn describe(&self) -> String;
    /// The reading for the minute ending at `now`.
    async fn read(&self, now: Instant) -> Result<Reading, MetricsError>;
    /// For recorded or simulated sources, the first and last minute worth running (a
    /// sped-up run starts at the first and, for a recording, stops after the last).
    fn span(&self) -> Option<(Instant, Instant)> {
        None
    }
}

/// A reading with a non-finite or out-of-range value is a failed read, never a crash: the
/// tick's rule, and `trace fetch`'s for every step of history.
pub fn check_reading(r: &Reading) -> Result<(), String> {
    let pct = |name: &str, v: Option<f64>| match v {
        Some(v) if !(v.is_finite() && (0.0..=100.0).contains(&v)) => {
            Err(format!("malformed metric {name}: {} is not a percentage within 0..100", shown(v)))
        }
        _ => Ok(()),
    };
    pct("cpu_pct", r.cpu_pct)?;
    pct("connections_pct", r.connections_pct)?;
    for l in &r.latency {
        if l.api.trim().is_empty() {
            return Err("malformed metric latency: an API without a name".into());
        }
        for (name, v) in [("p95_ms", l.p95_ms), ("baseline_ms", l.baseline_ms)] {
            if let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(format!("malformed metric latency[{}].{name}: {} is not a non-negative number", l.api, shown(v)));
            }
        }
    }
    Ok(())
}

/// A reading in one line, for a person: each signal, or `absent`.
pub fn summary(r: &Reading) -> String {
    let pct = |v: Option<f64>| v.map_or("absent".to_string(), |v| format!("{v:.1} %"));
    let scaling = match r.scaling {
        None => "absent",
        Some(true) => "yes",
        Some(false) => "no",
    };
    let latency = if r.latency.is_empty() {
        "no API".to_string()
    } else {
        let shown = |v: Option<f64>| v.map_or("absent".to_string(), |v| format!("{v:.0} ms"));
        r.latency
            .iter()
            .map(|l| format!("{} p95 {} (baseline {})", l.api, shown(l.p95_ms), shown(l.baseline_ms)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!("cpu {}, connections {}, scaling {scaling}, latency: {latency}", pct(r.cpu_pct), pct(r.connections_pct))
}

/// A value for a message: huge ones in exponent form (1e300, not 301 digits).
fn shown(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e15 { format!("{v:e}") } else { v.to_string() }
}
