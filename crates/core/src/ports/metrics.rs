//! Where readings come from. A source returns one minute's reading or says why it could not.

use vocabulary::{Instant, Reading};

/// Why a metrics source gave no reading for a minute. It never fails the tick: the tick passes
/// it to the decision as a failed read, with this text as the reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricsError {
    /// The source could not be asked or answered with an error (a refused connection, a server
    /// error, an outage); the text says what failed.
    #[error("metrics source unavailable: {0}")]
    Unavailable(String),
    /// The source did not answer within its timeout, the duration given.
    #[error("metrics read timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// A value the source gave cannot be part of a reading: not a finite number, a latency
    /// series without its API label, more connections than the configured maximum.
    #[error("malformed metric {field}: {message}")]
    Malformed {
        /// The reading's field the value was for, e.g. `cpu_pct` or `latency[crm].p95_ms`.
        field: String,
        /// What is wrong with the value, naming the query or metric that gave it.
        message: String,
    },
    /// The source answered, but with nothing for this minute (no datapoint for any metric);
    /// the text says where it looked and what to check.
    #[error("no reading for this minute: {0}")]
    NoData(String),
}

/// Where the tick's readings come from: Prometheus, CloudWatch, a recorded trace, or the
/// built-in synthetic workload. The tick reads it once a minute under its read
/// timeout, and checks the reading with `check_reading`.
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
pub(crate) fn check_reading(r: &Reading) -> Result<(), String> {
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
