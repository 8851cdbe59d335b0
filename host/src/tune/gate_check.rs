//! The A/B gate as a constraint of the sweep (`--gate FILE --gate-traces ...`): the traces CI
//! gates every version on are regression scenarios, not evidence, so they are not scored; each
//! candidate is replayed over them against the base exactly as `sentinel replay --gate` does
//! (the gate file's limits and invariant floors, waivers for the version being written), and
//! one that the gate would fail is not chosen.

use super::TuneError;
use super::sweep::replay_ticks;
use rayon::prelude::*;
use sentinel_core::replay::compare::{Accumulator, Summary};
use sentinel_core::replay::gate::Gate;
use sentinel_core::replay::metrics;
use sentinel_core::trace::Trace;
use serde::Serialize;
use vocabulary::{PolicyDescription, Thresholds};

/// The gate, its traces and the base's summaries of them.
#[derive(Debug)]
pub struct GateTraces {
    gate: Gate,
    /// The version the waivers are looked up for.
    version: String,
    /// The traces the gate replays (`--gate-trace`), whole: a constraint, never scored.
    pub traces: Vec<Trace>,
    base: Vec<Summary>,
}

/// What the gate says of one candidate.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GateOutcome {
    /// Findings the gate would fail on (waived ones not counted).
    pub findings: u32,
    /// The first of them, as `trace: metric message`; none when the gate would pass it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Each finding the gate would fail on, as `trace: metric [limit key]`, in the order found.
    #[serde(skip)]
    pub kinds: Vec<String>,
}

/// The finding that fails the most candidates (each candidate counted once per finding), and
/// how many it fails; none when the gate fails none.
pub fn most_refusing(outcomes: &[GateOutcome]) -> Option<(String, usize)> {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for o in outcomes {
        let mut seen: Vec<&str> = o.kinds.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for kind in seen {
            *counts.entry(kind).or_default() += 1;
        }
    }
    // The most candidates; among equals the first by name, so the same inputs give the same text.
    counts.into_iter().fold(None, |best: Option<(String, usize)>, (kind, n)| match best {
        Some((_, m)) if m >= n => best,
        _ => Some((kind.to_string(), n)),
    })
}

impl GateTraces {
    /// Replays the base over `traces` once.
    pub fn prepare(gate: Gate, version: &str, traces: Vec<Trace>, base: &PolicyDescription) -> Result<GateTraces, TuneError> {
        let summaries = traces.par_iter().map(|t| summarise(&gate, t, base, &base.thresholds)).collect::<Result<_, _>>()?;
        Ok(GateTraces { gate, version: version.to_string(), traces, base: summaries })
    }

    /// Ticks one replay of every gate trace runs.
    pub fn ticks(&self) -> u64 {
        self.traces
            .iter()
            .map(|t| t.events.iter().filter(|e| matches!(e, sentinel_core::trace::TraceEvent::Tick { .. })).count() as u64)
            .sum()
    }

    /// The gate's findings for `thresholds`, every trace.
    pub fn check(&self, base: &PolicyDescription, thresholds: &Thresholds) -> Result<GateOutcome, TuneError> {
        let mut outcome = GateOutcome::default();
        for (trace, base_summary) in self.traces.iter().zip(&self.base) {
            let candidate = summarise(&self.gate, trace, base, thresholds)?;
            let mut rows = metrics::compare(base_summary, &candidate);
            for finding in self.gate.check(&self.version, base_summary, &candidate, &mut rows) {
                if finding.waived.is_none() {
                    outcome.findings += 1;
                    outcome.kinds.push(format!("{}: {} [{}]", finding.trace, finding.metric, finding.limit_key));
                    outcome.first.get_or_insert_with(|| format!("{}: {} {}", finding.trace, finding.metric, finding.message));
                }
            }
        }
        Ok(outcome)
    }
}

fn summarise(gate: &Gate, trace: &Trace, base: &PolicyDescription, thresholds: &Thresholds) -> Result<Summary, TuneError> {
    let mut acc = Accumulator::with_floors("candidate", &trace.name, thresholds, &gate.invariants);
    replay_ticks(trace, base, thresholds, false, &mut |tick| acc.add(&tick))?;
    Ok(acc.finish())
}
