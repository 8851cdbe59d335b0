//! The sweep: the base and every candidate over every trace, on the native rules with the
//! thresholds as data, each (candidate, trace) pair one job on the rayon pool. Results come back
//! in candidate and trace order whatever the scheduling, so the report does not depend on it.

use super::TuneError;
use super::evidence::EvidenceTrace;
use super::score::{Readiness, ReadinessTracker, Scorer, TraceScore};
use super::space::Candidate;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use sentinel_core::policy::NativePolicy;
use sentinel_core::policy::invariants::Floors;
use sentinel_core::replay::StepError;
use sentinel_core::replay::Tick;
use sentinel_core::trace::Trace;
use vocabulary::{Instant, PolicyDescription, Thresholds};

/// Every replay's score: `base[trace]` and `candidates[candidate][trace]`.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// The base's score on each trace, in evidence order, held to its own entries into critical
    /// (each on time).
    pub base: Vec<TraceScore>,
    /// Each candidate's score on each trace: `candidates[candidate][trace]`, in candidate and
    /// evidence order.
    pub candidates: Vec<Vec<TraceScore>>,
}

/// Replays the base, then every candidate, over the evidence.
pub fn sweep(
    evidence: &[EvidenceTrace],
    base: &PolicyDescription,
    candidates: &[Candidate],
    floors: &Floors,
    bar: &ProgressBar,
) -> Result<Sweep, TuneError> {
    let base_runs: Vec<(TraceScore, Vec<Instant>)> =
        evidence.par_iter().map(|t| replay(t, base, &base.thresholds, floors, &[], bar)).collect::<Result<_, _>>()?;
    let entries: Vec<Vec<Instant>> = base_runs.iter().map(|(_, e)| e.clone()).collect();
    // The base is held to its own entries: each on time.
    let base_scores = base_runs
        .into_iter()
        .map(|(mut score, own)| {
            score.base_entries = own.len() as u32;
            score.max_protection_delay = (!own.is_empty()).then_some(0);
            score
        })
        .collect();
    let jobs = candidates.len() * evidence.len();
    let scores: Vec<TraceScore> = (0..jobs)
        .into_par_iter()
        .map(|job| {
            let (c, t) = (job / evidence.len(), job % evidence.len());
            replay(&evidence[t], base, &candidates[c].thresholds, floors, &entries[t], bar).map(|(score, _)| score)
        })
        .collect::<Result<_, _>>()?;
    let mut rows = scores.into_iter();
    let per_candidate: Vec<Vec<TraceScore>> = candidates.iter().map(|_| rows.by_ref().take(evidence.len()).collect()).collect();
    Ok(Sweep { base: base_scores, candidates: per_candidate })
}

/// The policy a set of thresholds is: the base's name and version, the candidate's numbers.
fn native(base: &PolicyDescription, thresholds: &Thresholds) -> NativePolicy {
    let file = PolicyDescription { name: base.name.clone(), version: base.version.clone(), thresholds: *thresholds };
    NativePolicy::new(file, "", Some("candidate"))
}

/// One trace through one set of thresholds, the switch as the trace says (off at the start).
fn replay(
    t: &EvidenceTrace,
    base: &PolicyDescription,
    thresholds: &Thresholds,
    floors: &Floors,
    base_entries: &[Instant],
    bar: &ProgressBar,
) -> Result<(TraceScore, Vec<Instant>), TuneError> {
    let mut scorer = Scorer::new("candidate", &t.trace.name, thresholds, floors, base_entries);
    let mut ticks = 0u64;
    replay_ticks(&t.trace, base, thresholds, false, &mut |tick| {
        scorer.add(&tick);
        ticks += 1;
        if ticks == 8192 {
            bar.inc(ticks);
            ticks = 0;
        }
    })?;
    bar.inc(ticks);
    Ok(scorer.finish())
}

/// Every tick of `trace` under `thresholds` (the base's name and version), the switch starting
/// as given, handed to `sink`.
pub fn replay_ticks(
    trace: &Trace,
    base: &PolicyDescription,
    thresholds: &Thresholds,
    throttles: bool,
    sink: &mut dyn FnMut(Tick<'_>),
) -> Result<(), TuneError> {
    let mut policy = native(base, thresholds);
    sentinel_core::replay::each_tick(trace, &mut policy, throttles, sink).map_err(|e| {
        let message = match e {
            StepError::Policy { at, source, .. } => format!("tick at {at}: {source}"),
            StepError::Lease { source, .. } => source.to_string(),
        };
        TuneError::Replay { trace: trace.name.clone(), message }
    })
}

/// The stage throttles with the switch on from the start, over every trace: what a product
/// owner deciding to turn the switch on would have seen.
pub fn readiness(evidence: &[EvidenceTrace], base: &PolicyDescription, thresholds: &Thresholds) -> Result<Vec<Readiness>, TuneError> {
    evidence
        .par_iter()
        .map(|t| {
            let mut tracker = ReadinessTracker::default();
            let mut last_at = None;
            replay_ticks(&t.trace, base, thresholds, true, &mut |tick| {
                last_at = Some(tick.at);
                tracker.add(&tick);
            })?;
            Ok(tracker.finish(last_at))
        })
        .collect()
}

/// A bar over a sweep's candidate-ticks (its length set by [`super::tune`], which draws it only
/// for a long sweep), drawn only when `wanted` and stderr is a terminal.
pub fn progress_bar(wanted: bool) -> ProgressBar {
    if !wanted || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("tune [{bar:30}] {human_pos}/{human_len} candidate-ticks, {elapsed} (eta {eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
