//! The tuning report: `report.json` (every candidate's scores on both sides of the split) and
//! `report.md` (the evidence, the space, base against chosen on the training traces and on the
//! hold-out, the Pareto front, the chosen candidate trace by trace, and the emergency switch's
//! readiness). Nothing in either depends on the clock or the machine: the same inputs give the
//! same bytes.

use super::evidence::Set;
use super::score::{Readiness, TraceScore};
use super::space::{ChoiceRule, Dimension};
use super::{Sides, Tuning};
use serde::Serialize;

/// `report.json`: the whole tuning as data, every candidate's scores on both sides of the split.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    /// The command as typed, which reproduces the tuning.
    pub command: &'a str,
    /// The base policy's name and version.
    pub base: BaseRef<'a>,
    /// The thresholds varied and the values each takes.
    pub space: &'a [Dimension],
    /// The limits the choice was held to (`[choose]`).
    pub rule: ChoiceRule,
    /// Every trace of the evidence, in order, with its side and its source's digest.
    pub evidence: Vec<EvidenceRow<'a>>,
    /// The base's scores summed over the training traces and over the hold-out.
    pub base_scores: &'a Sides,
    /// Every candidate, in order: its settings, its scores on both sides and its verdict.
    pub candidates: Vec<CandidateRow<'a>>,
    /// The traces the gate replayed, when the sweep was gated.
    pub gate_traces: Option<&'a [String]>,
    /// The Pareto front on the training traces: candidate indexes, fewest flaps per day first.
    pub pareto_front: &'a [usize],
    /// The index of the chosen candidate; none when no candidate meets the rule (the base stays).
    pub chosen: Option<usize>,
    /// The candidate detailed trace by trace: the chosen one, else the first of the front.
    pub shown: Option<usize>,
    /// The shown candidate beside the base, trace by trace (empty when none is shown).
    pub chosen_per_trace: Vec<TraceRow<'a>>,
    /// The stage throttles with the switch on from the start, over all the evidence.
    pub readiness: ReadinessRow<'a>,
    /// With the evidence judged by series: each series held out in turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_validation: Option<&'a super::cross_validation::CrossValidation>,
    /// Series with segments on both sides of the split (their hold-out measures fit).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub series_on_both_sides: Vec<&'a str>,
}

/// The base policy, as the report names it.
#[derive(Debug, Serialize)]
pub struct BaseRef<'a> {
    /// The policy's name (`policy.toml`'s `name`).
    pub name: &'a str,
    /// The base's version.
    pub version: &'a str,
}

/// One trace of the evidence, as `report.json` lists it.
#[derive(Debug, Serialize)]
pub struct EvidenceRow<'a> {
    /// The trace's name (its file's stem, with `#N` for a segment).
    pub trace: &'a str,
    /// The side of the split it is on.
    pub set: Set,
    /// Its ticks, one a minute: its length in minutes.
    pub ticks: u64,
    /// The file it came from, as given (`store` for recorded ticks).
    pub source: &'a str,
    /// The sha256 of the source file's bytes, in hex (of the recorded events for the store).
    pub source_sha256: &'a str,
}

/// One candidate, as `report.json` lists it.
#[derive(Debug, Serialize)]
pub struct CandidateRow<'a> {
    /// Its number among the candidates, from 0.
    pub index: usize,
    /// Its value of each varied threshold, as `[key, value]` pairs.
    pub settings: Vec<(&'a str, f64)>,
    /// Its scores summed over the training traces.
    pub train: &'a super::choose::SetScore,
    /// Its scores summed over the hold-out (none when the evidence is judged by series).
    pub holdout: &'a super::choose::SetScore,
    /// Why it does not meet the rule on the training traces (or the gate); none when it does.
    pub refused: Option<&'a str>,
    /// What the gate says of it, when the sweep was gated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<&'a super::gate_check::GateOutcome>,
}

/// One trace of the shown candidate's comparison with the base.
#[derive(Debug, Serialize)]
pub struct TraceRow<'a> {
    /// The trace's name.
    pub trace: &'a str,
    /// The side of the split it is on.
    pub set: Set,
    /// The base's score on it.
    pub base: &'a TraceScore,
    /// The shown candidate's score on it (the chosen one, else the first of the front).
    pub chosen: &'a TraceScore,
}

/// The emergency switch's readiness: how the stage throttles would have gone with the switch on
/// from the start, over all the evidence.
#[derive(Debug, Serialize)]
pub struct ReadinessRow<'a> {
    /// Days of evidence covered, training and hold-out together (ticks over 1440).
    pub days: f64,
    /// The base's engagements and what ended them.
    pub base: &'a Readiness,
    /// The shown candidate's; none when no candidate is shown.
    pub chosen: Option<&'a Readiness>,
}

impl<'a> Report<'a> {
    /// The report of tuning `t`; `command` is the command line as typed.
    pub fn new(t: &'a Tuning, command: &'a str) -> Report<'a> {
        let evidence = t
            .evidence
            .iter()
            .map(|e| EvidenceRow { trace: &e.trace.name, set: e.set, ticks: e.ticks, source: &e.source, source_sha256: &e.source_sha256 })
            .collect();
        let candidates = t
            .candidates
            .iter()
            .zip(&t.scores)
            .zip(&t.verdicts)
            .map(|((c, s), v)| CandidateRow {
                index: c.index,
                settings: c.settings.iter().map(|(k, v)| (k.as_str(), *v)).collect(),
                train: &s.train,
                holdout: &s.holdout,
                refused: v.as_ref().err().map(String::as_str),
                gate: t.gate.as_ref().map(|(_, outcomes)| &outcomes[c.index]),
            })
            .collect();
        let chosen_per_trace = t
            .evidence
            .iter()
            .zip(&t.base_per_trace)
            .zip(&t.chosen_per_trace)
            .map(|((e, b), c)| TraceRow { trace: &e.trace.name, set: e.set, base: b, chosen: c })
            .collect();
        let days = t.evidence.iter().map(|e| e.ticks).sum::<u64>() as f64 / 1440.0;
        Report {
            command,
            base: BaseRef { name: &t.base.name, version: &t.base.version },
            space: &t.space.dimensions,
            rule: t.space.choose,
            evidence,
            base_scores: &t.base_scores,
            candidates,
            gate_traces: t.gate.as_ref().map(|(names, _)| names.as_slice()),
            pareto_front: &t.front,
            chosen: t.chosen,
            shown: t.shown,
            chosen_per_trace,
            readiness: ReadinessRow { days, base: &t.readiness.0, chosen: t.readiness.1.as_ref() },
            cross_validation: t.cross_validation.as_ref(),
            series_on_both_sides: t.leaking_series(),
        }
    }

    /// `report.json`'s text: pretty-printed, with a final newline.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serialises") + "\n"
    }
}

pub use super::report_markdown::{markdown, rule_text};
