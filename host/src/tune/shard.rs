//! Tuning across machines (docs/behaviour.md §10.8, "Shards"): `--shard I/N` sweeps the
//! candidates whose index is `I - 1` modulo `N` and writes their scores to
//! `shard-I-of-N.json`; `--merge DIR` reads every shard's file back, checks that each was swept
//! on the same inputs, and hands the whole run's scores to [`super::conclude`], which writes the
//! same report, figure and policy as a run on one machine, byte for byte: the scores are the
//! sweep's own numbers (JSON keeps every bit of an `f64`), and everything after the sweep is
//! the same code.
//!
//! A shard's file names what it was swept on by a SHA-256 of the inputs ([`fingerprint`]): the
//! base, every candidate's thresholds, the evidence (each trace's name, series, side, source and
//! the source's digest) and the gate's traces. A merge refuses a file whose inputs differ from
//! its own, a shard given twice or missing, and files of different splits.

use super::Swept;
use super::TuneError;
use super::evidence::EvidenceTrace;
use super::gate_check::{GateOutcome, GateTraces};
use super::score::TraceScore;
use super::space::Candidate;
use super::sweep::Sweep;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use vocabulary::PolicyDescription;

/// The shard file's format.
const FORMAT: u32 = 1;

/// One machine's share of the candidates: `I/N`, the candidates whose index is `I - 1` modulo
/// `N` (round robin, so each shard gets every kind of candidate of the space).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// `I`, from 1.
    pub index: usize,
    /// `N`, the number of shards.
    pub of: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let refuse = || format!("expected I/N, a shard I of N with 1 <= I <= N <= 10000 (e.g. 2/4), got {text:?}");
        let (i, n) = text.split_once('/').ok_or_else(refuse)?;
        let (index, of): (usize, usize) = (i.trim().parse().map_err(|_| refuse())?, n.trim().parse().map_err(|_| refuse())?);
        if index == 0 || index > of || of > 10_000 {
            return Err(refuse());
        }
        Ok(Shard { index, of })
    }
}

impl Shard {
    /// Whether candidate `candidate` (its index in the space) is this shard's.
    pub fn takes(&self, candidate: usize) -> bool {
        candidate % self.of == self.index - 1
    }

    /// The file this shard writes in its `--out` folder.
    pub fn file_name(&self) -> String {
        format!("shard-{}-of-{}.json", self.index, self.of)
    }
}

/// What the gate said of one candidate, as a shard file keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct GateRecord {
    findings: u32,
    first: Option<String>,
    kinds: Vec<String>,
}

/// One candidate's scores on every trace, and the gate's outcome for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SweptCandidate {
    index: usize,
    scores: Vec<TraceScore>,
    gate: Option<GateRecord>,
}

/// The file a shard writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ShardFile {
    format: u32,
    shard: usize,
    of: usize,
    /// The SHA-256 of the inputs, [`fingerprint`].
    inputs: String,
    /// Candidates in the whole space.
    candidates: usize,
    /// The base's score on each trace.
    base: Vec<TraceScore>,
    /// This shard's candidates, in index order.
    swept: Vec<SweptCandidate>,
}

/// The SHA-256 of what a sweep's scores depend on: the base, every candidate's index and
/// thresholds, the evidence's traces (name, series, side, source and its digest, ticks) and
/// the gate's traces (name, ticks).
pub fn fingerprint(base: &PolicyDescription, candidates: &[Candidate], evidence: &[EvidenceTrace], gate: Option<&GateTraces>) -> String {
    let mut hash = Sha256::new();
    let mut put = |part: String| {
        hash.update(part.len().to_le_bytes());
        hash.update(part.as_bytes());
    };
    put(serde_json::to_string(base).unwrap_or_default());
    for c in candidates {
        put(format!("candidate {} {}", c.index, serde_json::to_string(&c.thresholds).unwrap_or_default()));
    }
    for e in evidence {
        put(format!(
            "trace {} series {} {} set {:?} forward {} source {} {} ticks {}",
            e.trace.name, e.series, e.series_name, e.set, e.forward, e.source, e.source_sha256, e.ticks
        ));
    }
    if let Some(g) = gate {
        for t in &g.traces {
            put(format!("gate trace {}", t.name));
        }
        put(format!("gate ticks {}", g.ticks()));
    }
    hex::encode(hash.finalize())
}

fn shard_error(path: &Path, message: impl Into<String>) -> TuneError {
    TuneError::Shard { path: path.to_path_buf(), message: message.into() }
}

/// Writes this shard's scores (`swept` holds the shard's candidates, in index order) to
/// `out/shard-I-of-N.json`, whole or not at all; returns the file.
pub fn write(out: &Path, shard: Shard, inputs: &str, candidates: &[Candidate], swept: Swept) -> Result<PathBuf, TuneError> {
    let mine: Vec<usize> = candidates.iter().map(|c| c.index).filter(|i| shard.takes(*i)).collect();
    let Swept { found, gated } = swept;
    let file = ShardFile {
        format: FORMAT,
        shard: shard.index,
        of: shard.of,
        inputs: inputs.to_string(),
        candidates: candidates.len(),
        base: found.base,
        swept: mine
            .iter()
            .zip(found.candidates)
            .enumerate()
            .map(|(k, (&index, scores))| SweptCandidate {
                index,
                scores,
                gate: gated.as_ref().map(|g| GateRecord { findings: g[k].findings, first: g[k].first.clone(), kinds: g[k].kinds.clone() }),
            })
            .collect(),
    };
    let path = out.join(shard.file_name());
    std::fs::create_dir_all(out).map_err(|e| shard_error(out, format!("cannot create the folder: {e}")))?;
    let text = serde_json::to_string(&file).map_err(|e| shard_error(&path, format!("cannot serialise the scores: {e}")))?;
    let partial = out.join(format!(".{}.partial", shard.file_name()));
    std::fs::write(&partial, text).map_err(|e| shard_error(&partial, format!("cannot write: {e}")))?;
    std::fs::rename(&partial, &path).map_err(|e| shard_error(&path, format!("cannot move the written file into place: {e}")))?;
    Ok(path)
}

/// Every `shard-*-of-*.json` in `dirs`, read and checked against this run's `inputs`, put
/// together as one sweep of all `candidates` over `traces` traces.
pub fn merge(dirs: &[PathBuf], inputs: &str, candidates: usize, traces: usize, gated: bool) -> Result<Swept, TuneError> {
    let mut files: Vec<(PathBuf, ShardFile)> = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir).map_err(|e| shard_error(dir, format!("cannot read the folder: {e}")))?;
        let mut names: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("shard-") && n.ends_with(".json")))
            .collect();
        names.sort();
        for path in names {
            let text = std::fs::read_to_string(&path).map_err(|e| shard_error(&path, format!("cannot read: {e}")))?;
            let file: ShardFile = serde_json::from_str(&text)
                .map_err(|e| shard_error(&path, format!("not a shard file of this sentinel ({e}); write it again with --shard")))?;
            files.push((path, file));
        }
    }
    let Some((first_path, first)) = files.first() else {
        let named: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(shard_error(Path::new(&named.join(", ")), "no shard-I-of-N.json file: run `sentinel policy tune --shard I/N` first"));
    };
    let of = first.of;
    let mut seen = vec![false; of];
    for (path, file) in &files {
        if file.format != FORMAT {
            return Err(shard_error(path, format!("format {} (this sentinel reads {FORMAT}); write it again with --shard", file.format)));
        }
        if file.of != of {
            return Err(shard_error(
                path,
                format!("shard {} of {}, but {} is of {of}: merge the shards of one split", file.shard, file.of, first_path.display()),
            ));
        }
        if file.inputs != inputs || file.candidates != candidates || file.base.len() != traces {
            return Err(shard_error(
                path,
                "swept on other inputs than this merge's (the base, the search space, the evidence or the gate differ): give the merge the arguments every shard was given",
            ));
        }
        if file.base != first.base {
            return Err(shard_error(
                path,
                format!(
                    "its base scores differ from {}'s on the same inputs: sweep the shards with the same sentinel",
                    first_path.display()
                ),
            ));
        }
        if std::mem::replace(&mut seen[file.shard - 1], true) {
            return Err(shard_error(path, format!("shard {} of {of} is given twice", file.shard)));
        }
    }
    let missing: Vec<String> = seen.iter().enumerate().filter(|(_, s)| !**s).map(|(i, _)| format!("{}/{of}", i + 1)).collect();
    if !missing.is_empty() {
        return Err(shard_error(
            first_path.parent().unwrap_or(first_path),
            format!("missing shard(s) {}: run them, or merge the folder that holds them", missing.join(", ")),
        ));
    }
    let base = first.base.clone();
    let mut scores: Vec<Option<Vec<TraceScore>>> = vec![None; candidates];
    let mut outcomes: Vec<Option<GateOutcome>> = vec![None; candidates];
    for (path, file) in files {
        for c in file.swept {
            if c.index >= candidates || c.scores.len() != traces || scores[c.index].is_some() || c.gate.is_some() != gated {
                return Err(shard_error(
                    &path,
                    format!("candidate {} does not fit this space and evidence: write the shard again", c.index),
                ));
            }
            outcomes[c.index] = c.gate.map(|g| GateOutcome { findings: g.findings, first: g.first, kinds: g.kinds });
            scores[c.index] = Some(c.scores);
        }
    }
    let candidates_scores: Vec<Vec<TraceScore>> =
        scores.into_iter().enumerate().map(|(i, s)| s.ok_or(i)).collect::<Result<_, _>>().map_err(|i| {
            shard_error(
                dirs.first().map_or(Path::new("."), PathBuf::as_path),
                format!("no shard holds candidate {i}: write the shards again"),
            )
        })?;
    let gated = if gated { Some(outcomes.into_iter().map(Option::unwrap_or_default).collect()) } else { None };
    Ok(Swept { found: Sweep { base, candidates: candidates_scores }, gated })
}
