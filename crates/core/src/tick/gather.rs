//! Hop 1: memory, stage records, pin, metrics and baselines, read concurrently, each under its
//! own timeout. Nothing here fails the tick: unreadable memory starts fresh, an unreadable pin
//! is no pin, a failed or malformed metric read is a failed read passed to the decision.

use super::Ports;
use crate::policy::active::ActivePolicy;
use crate::ports::baselines::BaselineStore;
use crate::ports::metrics::check_reading;
use crate::ports::stage_ledger::StageRecord;
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;
use vocabulary::{ApiBaseline, Instant, LatencySample, Memory, Pin, Reading, Signal};

const HOUR: Instant = 3600;

pub struct Gathered {
    pub memory: Option<Memory>,
    /// The stage records, or why they could not be read (then no stage is changed this tick,
    /// and the decision counts the stages as throttled).
    pub stage_records: Result<BTreeMap<String, StageRecord>, String>,
    pub pin: Option<Pin>,
    pub signal: Signal,
    pub samples: Vec<(String, LatencySample)>,
    pub notes: Vec<String>,
}

/// A read through a port, given up after `limit` (the tick's read timeout); its error as text,
/// naming `what` was read when it timed out.
async fn read_within<T, E: std::fmt::Display>(limit: Duration, what: &str, f: impl Future<Output = Result<T, E>>) -> Result<T, String> {
    match tokio::time::timeout(limit, f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("{what} timed out after {limit:?}")),
    }
}

/// Reads through `p`'s stores and metrics, each call under `limit`; the policy computes a new
/// hour's baselines.
pub async fn gather(p: &Ports, policy: &ActivePolicy, limit: Duration, now: Instant) -> Gathered {
    let (memory, stages, pin, reading, baselines) = tokio::join!(
        read_within(limit, "reading memory", p.memory.load_memory()),
        read_within(limit, "reading the stage records", p.stage_ledger.stage_records()),
        read_within(limit, "reading the pin", p.pins.current_pin()),
        read_within(limit, "reading metrics", p.metrics.read(now)),
        read_within(limit, "reading baselines", p.baselines.latest_baselines()),
    );
    let mut notes = Vec::new();
    let memory = memory.unwrap_or_else(|e| {
        notes.push(format!("memory unreadable, starting fresh: {e}"));
        None
    });
    let stage_records = stages.inspect_err(|e| {
        notes.push(format!("stage records unreadable: no stage is changed this tick, and the stages count as throttled: {e}"));
    });
    let pin = pin.unwrap_or_else(|e| {
        notes.push(format!("pin unreadable, deciding without one: {e}"));
        None
    });
    let (signal, samples) = match reading.and_then(|r| check_reading(&r).map(|()| r)) {
        Err(why) => (Signal::Failed(why), Vec::new()),
        Ok(mut reading) => {
            let samples = samples_of(&reading, now);
            if !reading.latency.is_empty() {
                let learnt = baselines_for(p.baselines.as_ref(), policy, limit, now, baselines, &mut notes).await;
                for l in reading.latency.iter_mut().filter(|l| l.baseline_ms.is_none()) {
                    l.baseline_ms = learnt.iter().find(|b| b.api == l.api).and_then(|b| b.baseline_ms);
                }
            }
            (Signal::Reading(reading), samples)
        }
    };
    Gathered { memory, stage_records, pin, signal, samples, notes }
}

fn samples_of(r: &Reading, now: Instant) -> Vec<(String, LatencySample)> {
    r.latency.iter().filter_map(|l| l.p95_ms.map(|p95| (l.api.clone(), LatencySample { at: now, p95_ms: p95 }))).collect()
}

/// The baselines for this hour: the stored ones, or recomputed at the first reading of a new
/// hour from the stored samples (docs/behaviour.md §8). Any failure means no baseline, logged.
async fn baselines_for(
    store: &dyn BaselineStore,
    policy: &ActivePolicy,
    limit: Duration,
    now: Instant,
    latest: Result<Option<(Instant, Vec<ApiBaseline>)>, String>,
    notes: &mut Vec<String>,
) -> Vec<ApiBaseline> {
    let hour = now.div_euclid(HOUR) * HOUR;
    match latest {
        Ok(Some((h, baselines))) if h == hour => return baselines,
        Ok(_) => {}
        Err(e) => {
            notes.push(format!("baselines unreadable, latency not assessed: {e}"));
            return Vec::new();
        }
    }
    let samples = match read_within(limit, "reading latency samples", store.samples_since(hour - 24 * HOUR)).await {
        Ok(samples) => samples,
        Err(e) => {
            notes.push(format!("latency samples unreadable, latency not assessed: {e}"));
            return Vec::new();
        }
    };
    let computed = {
        let mut policy = policy.lock();
        policy.compute_baselines(hour, &samples)
    };
    match computed {
        Ok(baselines) => {
            if let Err(e) = read_within(limit, "saving baselines", store.save_baselines(hour, &baselines, hour - 24 * HOUR)).await {
                notes.push(format!("could not save this hour's baselines (recomputed next tick): {e}"));
            }
            baselines
        }
        Err(e) => {
            notes.push(format!("baseline computation failed, latency not assessed: {e}"));
            Vec::new()
        }
    }
}

/// The supporting readings in one short phrase for the tick's log line.
pub(crate) fn summarize(r: &Reading) -> String {
    let mut parts = Vec::new();
    if let Some(v) = r.cpu_pct {
        parts.push(format!("cpu {v:.1}%"));
    }
    if let Some(v) = r.connections_pct {
        parts.push(format!("connections {v:.1}%"));
    }
    if r.scaling == Some(true) {
        parts.push("scaling".into());
    }
    for l in &r.latency {
        match (l.p95_ms, l.baseline_ms) {
            (Some(p), Some(b)) if b > 0.0 => parts.push(format!("{} p95 {p:.0}ms ({:.2}x baseline)", l.api, p / b)),
            (Some(p), _) => parts.push(format!("{} p95 {p:.0}ms (no baseline)", l.api)),
            _ => {}
        }
    }
    if parts.is_empty() { "empty reading".into() } else { parts.join(", ") }
}
