//! `sentinel policy tune` (docs/behaviour.md §10.8): thresholds chosen on evidence. A base
//! policy, a search space ([`space`]) and recorded traces, grouped in series and either judged
//! series by series or split into the traces a candidate is chosen on and a hold-out it is
//! validated on ([`evidence`]); every candidate replayed over every trace on the native rules
//! ([`sweep`], scored by [`score`]); the Pareto front and the choice ([`choose`]; by series, the
//! robust choice and leave-one-series-out cross-validation: [`cross_validation`]); a report with
//! its figure ([`report`], [`pareto_svg`]) and, when asked, a policy folder carrying the
//! evidence ([`write`](mod@write)).

pub mod choose;
pub mod cross_validation;
pub mod evidence;
pub mod gate_check;
pub mod pareto_svg;
pub mod report;
pub mod report_cv;
mod report_markdown;
pub mod score;
pub mod shard;
pub mod space;
mod space_keys;
pub mod sweep;
pub mod write;

use choose::SetScore;
use evidence::{EvidenceTrace, Set};
use gate_check::{GateOutcome, GateTraces};
use rayon::prelude::*;
use score::Readiness;
use sentinel_core::policy::invariants::Floors;
use space::{Candidate, SearchSpace};
use std::path::PathBuf;
use vocabulary::PolicyDescription;

/// Why `sentinel policy tune` stopped: a refused input (the space, a candidate, the evidence), a
/// replay that failed, or a policy folder that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// The search space file is refused: an unknown key or section, a bad value or range, no
    /// threshold to vary, or more than 100,000 candidates.
    #[error("search space {file}: {message}")]
    Space {
        /// The space file as named on the command line.
        file: String,
        /// What is wrong with it, naming the key (or the TOML error).
        message: String,
    },
    /// A candidate of the space breaks the `policy.toml` rules or sits below the invariant
    /// floors; found before anything is replayed.
    #[error("candidate {candidate} is refused before the sweep: {message}; change the search space")]
    Candidate {
        /// The candidate's label, `key=value, ...`.
        candidate: String,
        /// The rule or floor it breaks, naming the threshold.
        message: String,
    },
    /// A trace file, CSV series or folder of the evidence (or of the gate) could not be read or
    /// imported, or is neither a trace nor a CSV series.
    #[error("trace {path}: {message}")]
    Evidence {
        /// The file or folder as named.
        path: PathBuf,
        /// Why it could not be read or imported.
        message: String,
    },
    /// The evidence leaves nothing to choose on or nothing to validate on (or names two traces
    /// alike); the text says what to give instead.
    #[error("nothing to tune on: {0}")]
    NoEvidence(String),
    /// A replay of a trace stopped: the policy failed at a tick, or could not be instantiated.
    #[error("replaying {trace}: {message}")]
    Replay {
        /// The name of the trace being replayed.
        trace: String,
        /// What stopped it (with the tick's time when the policy failed there).
        message: String,
    },
    /// A shard's file could not be written, or the shards given to `--merge` do not make one
    /// sweep of these inputs (missing, given twice, of another split or other inputs).
    #[error("shard {path}: {message}")]
    Shard {
        /// The shard file or folder.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// The policy folder of `--write` could not be written: no candidate was chosen, its
    /// `policy.toml` exists without `--replace`, or a file could not be written (or read back).
    #[error("writing {path}: {message}")]
    Write {
        /// The folder or file that could not be written.
        path: PathBuf,
        /// Why not.
        message: String,
    },
}

/// Both sides of the split.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sides {
    /// Summed over the traces chosen on.
    pub train: SetScore,
    /// Summed over the held-out traces (none when the evidence is judged by series:
    /// cross-validation judges it then).
    pub holdout: SetScore,
}

/// Everything a sweep found: what the reports and the policy folder are written from.
#[derive(Debug)]
pub struct Tuning {
    /// The base policy: its name and version, and the numbers every candidate starts from.
    pub base: PolicyDescription,
    /// The search space: the thresholds varied and the rule that chooses.
    pub space: SearchSpace,
    /// Every trace of the evidence, both sides of the split, in the order loaded.
    pub evidence: Vec<EvidenceTrace>,
    /// Every candidate of the space, in order (a candidate's index is its position here).
    pub candidates: Vec<Candidate>,
    /// The base's scores summed over each side of the split.
    pub base_scores: Sides,
    /// The base's score on each trace, in the order of `evidence`.
    pub base_per_trace: Vec<score::TraceScore>,
    /// Each candidate's scores summed over each side of the split, in the order of `candidates`.
    pub scores: Vec<Sides>,
    /// Why each candidate does or does not meet the rule on the training traces (and the gate).
    pub verdicts: Vec<Result<(), String>>,
    /// The gate's traces and what it says of each candidate, when the sweep was gated.
    pub gate: Option<(Vec<String>, Vec<GateOutcome>)>,
    /// The Pareto front on the training traces (flaps per day against bulk capacity lost, among
    /// candidates without invariant violations): candidate indexes, fewest flaps per day first.
    pub front: Vec<usize>,
    /// The index of the chosen candidate; none when no candidate meets the rule (the base stays).
    pub chosen: Option<usize>,
    /// The candidate the report details: the chosen one, or without one the first of the front
    /// (the closest to meeting the rule on flaps), so a refused space still shows its numbers.
    pub shown: Option<usize>,
    /// The shown candidate's per-trace scores.
    pub chosen_per_trace: Vec<score::TraceScore>,
    /// The stage throttles with the switch on, summed over all traces: base, shown.
    pub readiness: (Readiness, Option<Readiness>),
    /// Ticks the sweep replayed: the base and every candidate over the evidence and the gate's
    /// traces.
    pub candidate_ticks: u64,
    /// With the evidence judged by series: each series held out in turn.
    pub cross_validation: Option<cross_validation::CrossValidation>,
}

impl Tuning {
    /// The series that have traces on both sides of the split: their hold-out measures fit (a
    /// forward split's are on both sides by design: later in time is not fit).
    pub fn leaking_series(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for e in self.evidence.iter().filter(|e| !e.forward) {
            let both = [Set::Train, Set::Holdout].iter().all(|set| self.evidence.iter().any(|o| o.series == e.series && o.set == *set));
            if both && !names.contains(&e.series_name.as_str()) {
                names.push(&e.series_name);
            }
        }
        names
    }

    /// Candidate `i` has the base's own numbers: writing it would change nothing.
    pub fn is_base(&self, i: usize) -> bool {
        self.candidates[i].thresholds == self.base.thresholds
    }
}

/// What replaying some of the candidates found: every score (the base's, and each of those
/// candidates' on each trace) and, when the sweep is gated, what the gate says of each of them.
/// A whole run sweeps every candidate; a shard (`--shard I/N`, [`shard`]) sweeps its share, and
/// the shards' sweeps put together are the whole run's.
#[derive(Debug, Clone)]
pub struct Swept {
    /// The scores, `candidates` in the order of the candidates swept.
    pub found: sweep::Sweep,
    /// The gate's outcome for each candidate swept, in the same order; none without a gate.
    pub gated: Option<Vec<GateOutcome>>,
}

/// The candidate-ticks a whole run replays: the base and every candidate over the evidence and
/// over the gate's traces.
fn candidate_ticks(evidence: &[EvidenceTrace], candidates: usize, gate: Option<&GateTraces>) -> u64 {
    let evidence_ticks: u64 = evidence.iter().map(|t| t.ticks).sum();
    let gate_ticks = gate.map_or(0, |g| g.ticks() * (candidates as u64 + 1));
    evidence_ticks * (candidates as u64 + 1) + gate_ticks
}

/// Replays the base and `candidates` (all of the space's, or a shard's share) over the
/// evidence, and the gate over each candidate.
pub fn sweep_candidates(
    base: &PolicyDescription,
    candidates: &[Candidate],
    evidence: &[EvidenceTrace],
    floors: &Floors,
    gate: Option<&GateTraces>,
    progress: &indicatif::ProgressBar,
) -> Result<Swept, TuneError> {
    // One bar over all the replaying: the base and every candidate over the evidence, then every
    // candidate over the gate's traces (the base's gate replay was done when the gate was
    // prepared). Its end is the candidate-ticks the command prints.
    let all_ticks = candidate_ticks(evidence, candidates.len(), gate);
    if all_ticks < 1_000_000 {
        progress.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    progress.set_length(all_ticks);
    progress.set_position(gate.map_or(0, GateTraces::ticks));
    let found = sweep::sweep(evidence, base, candidates, floors, progress)?;
    let gated = match gate {
        Some(g) => Some(
            candidates
                .par_iter()
                .map(|c| g.check(base, &c.thresholds).inspect(|_| progress.inc(g.ticks())))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    progress.finish_and_clear();
    Ok(Swept { found, gated })
}

/// Runs the whole sweep of `candidates` (`space.candidates`, checked against `floors` before
/// anything was loaded).
pub fn tune(
    base: PolicyDescription,
    space: SearchSpace,
    candidates: Vec<Candidate>,
    evidence: Vec<EvidenceTrace>,
    floors: &Floors,
    gate: Option<GateTraces>,
    progress: &indicatif::ProgressBar,
) -> Result<Tuning, TuneError> {
    let swept = sweep_candidates(&base, &candidates, &evidence, floors, gate.as_ref(), progress)?;
    conclude(base, space, candidates, evidence, gate, swept)
}

/// From every candidate's scores (one sweep, or the shards' put together) to the choice, the
/// cross-validation and everything the reports show. Replays only the stage throttles' readiness
/// of the base and of the candidate shown.
pub fn conclude(
    base: PolicyDescription,
    space: SearchSpace,
    candidates: Vec<Candidate>,
    evidence: Vec<EvidenceTrace>,
    gate: Option<GateTraces>,
    swept: Swept,
) -> Result<Tuning, TuneError> {
    let all_ticks = candidate_ticks(&evidence, candidates.len(), gate.as_ref());
    let Swept { found, gated } = swept;
    let sides = |per_trace: &[score::TraceScore]| Sides {
        train: choose::aggregate(per_trace, &found.base, &evidence, Set::Train),
        holdout: choose::aggregate(per_trace, &found.base, &evidence, Set::Holdout),
    };
    let base_scores = sides(&found.base);
    let scores: Vec<Sides> = found.candidates.iter().map(|c| sides(c)).collect();
    let train: Vec<SetScore> = scores.iter().map(|s| s.train.clone()).collect();
    let gate_verdicts: Vec<Result<(), String>> = (0..candidates.len())
        .map(|i| match gated.as_ref().map(|g| &g[i]) {
            Some(o) if o.findings > 0 => {
                Err(format!("the gate fails it ({} finding(s), first {})", o.findings, o.first.as_deref().unwrap_or("-")))
            }
            _ => Ok(()),
        })
        .collect();
    let by_series = evidence.iter().all(|e| e.set == Set::Train);
    let (verdicts, chosen, cross_validation) = if by_series {
        let scores = cross_validation::Scores {
            evidence: &evidence,
            base: &found.base,
            candidates: &found.candidates,
            rule: &space.choose,
            gate: &gate_verdicts,
        };
        let ((verdicts, chosen), cv) = scores.choose_and_cross_validate();
        (verdicts, chosen, Some(cv))
    } else {
        let verdicts: Vec<Result<(), String>> =
            train.iter().zip(&gate_verdicts).map(|(s, gate)| choose::meets(s, &space.choose).and(gate.clone())).collect();
        let chosen = choose::choose(&train, &verdicts);
        (verdicts, chosen, None)
    };
    let front = choose::pareto_front(&train);
    let base_readiness = sum(sweep::readiness(&evidence, &base, &base.thresholds)?);
    let shown = chosen.or(front.first().copied());
    let chosen_readiness = match shown {
        Some(i) => Some(sum(sweep::readiness(&evidence, &base, &candidates[i].thresholds)?)),
        None => None,
    };
    let chosen_per_trace = shown.map(|i| found.candidates[i].clone()).unwrap_or_default();
    Ok(Tuning {
        base,
        space,
        evidence,
        candidates,
        base_scores,
        base_per_trace: found.base,
        scores,
        verdicts,
        gate: gate.map(|g| g.traces.iter().map(|t| t.name.clone()).collect()).zip(gated),
        front,
        chosen,
        shown,
        chosen_per_trace,
        readiness: (base_readiness, chosen_readiness),
        candidate_ticks: all_ticks,
        cross_validation,
    })
}

fn sum(per_trace: Vec<Readiness>) -> Readiness {
    let mut total = Readiness::default();
    for r in &per_trace {
        total.merge(r);
    }
    total
}
