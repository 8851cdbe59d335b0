//! Readings from a trace file (docs/behaviour.md §10.7), looked up by minute: a `read_error` line
//! is a failed read with its reason, a minute the trace does not hold is a failed read too.

use sentinel_core::ports::metrics::{MetricsError, MetricsSource};
use sentinel_core::trace::{TraceError, TraceEvent, read_trace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use vocabulary::{Instant, Reading, Signal};

/// A metrics source that replays a trace file's readings by minute: the live tick run against
/// recorded history.
pub struct TraceMetrics {
    path: PathBuf,
    by_minute: BTreeMap<Instant, Signal>,
}

impl TraceMetrics {
    /// Reads the trace at `path` and indexes its tick lines by minute; fails when the file cannot be
    /// read or is not a trace.
    pub fn open(path: &Path) -> Result<TraceMetrics, TraceError> {
        let trace = read_trace(path)?;
        let by_minute = trace
            .events
            .into_iter()
            .filter_map(|e| match e {
                TraceEvent::Tick { at, signal } => Some((at.div_euclid(60), signal)),
                _ => None,
            })
            .collect();
        Ok(TraceMetrics { path: path.to_path_buf(), by_minute })
    }

    /// The first and last minute (as instants) the trace holds.
    pub fn span(&self) -> Option<(Instant, Instant)> {
        let first = self.by_minute.keys().next()?;
        let last = self.by_minute.keys().next_back()?;
        Some((first * 60, last * 60))
    }
}

#[async_trait::async_trait]
impl MetricsSource for TraceMetrics {
    fn describe(&self) -> String {
        format!("trace {} ({} minutes)", self.path.display(), self.by_minute.len())
    }

    async fn read(&self, now: Instant) -> Result<Reading, MetricsError> {
        match self.by_minute.get(&now.div_euclid(60)) {
            Some(Signal::Reading(r)) => Ok(r.clone()),
            Some(Signal::Failed(why)) => Err(MetricsError::Unavailable(why.clone())),
            None => Err(MetricsError::NoData(format!("the trace has no line for {}", sentinel_core::instants::format_rfc3339(now)))),
        }
    }

    fn span(&self) -> Option<(Instant, Instant)> {
        TraceMetrics::span(self)
    }
}
