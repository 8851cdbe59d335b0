//! The traces a sweep chooses on and validates on (docs/behaviour.md §10.8): trace files
//! (`.jsonl`), CSV series (`[SIGNAL=]PATH.csv`, imported as `sentinel trace import` does, CPU by
//! default), folders of either, and the store's recorded ticks. Long traces may be cut into
//! segments of whole days. Every trace belongs to a series (the file it came from, or the
//! store), and segments of one series stay one series. The evidence is judged one of three
//! ways: by series (every trace is chosen on, and cross-validation holds each series out whole
//! in turn: [`super::cross_validation`]), against named hold-out traces (`--holdout`), or by a
//! fraction of the segments chosen by position, spread evenly over the evidence in the order
//! given (which can put segments of one series on both sides: it measures fit, and the report
//! says so), or forward in time (each series' earlier part chosen on and its later part held out:
//! one server's history, judged as its next weeks would be). The same inputs always split the
//! same way.

use super::TuneError;
use sentinel_core::trace::{ImportSignal, RepeatedTimestamps, Trace, TraceEvent, import_csv};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Which side of the split a trace is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Set {
    /// The candidate is chosen on these.
    Train,
    /// The choice is validated on these.
    Holdout,
}

/// How the evidence is judged when no hold-out is named.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// A share of the segments is held out (`--holdout-fraction`): fit, not generalization,
    /// when segments of one series fall on both sides.
    #[default]
    Fraction,
    /// Every trace is chosen on; leave-one-series-out cross-validation judges the choice.
    Series,
    /// Each series cut in time: its earlier part chosen on, its later part (`--holdout-fraction`
    /// of its span, default a half) held out: one server's own history, judged forward.
    Forward,
}

/// One trace of the evidence.
#[derive(Debug, Clone)]
pub struct EvidenceTrace {
    /// The side of the split it is on (judged by series: every trace is chosen on).
    pub set: Set,
    /// Which series it belongs to: the position of its file (or the store) in the evidence;
    /// the segments of one file share it.
    pub series: usize,
    /// The series' name: the file's stem (`store` for recorded ticks).
    pub series_name: String,
    /// Where it came from: the file as given (`store` for recorded ticks).
    pub source: String,
    /// sha256 of the source file's bytes (of the recorded events for the store).
    pub source_sha256: String,
    /// Cut forward in time (`--split forward`): the series is on both sides by design, earlier
    /// chosen on, later held out, which is not fit.
    pub forward: bool,
    /// Ticks (`reading` and `read_error` lines, one a minute): its length in minutes.
    pub ticks: u64,
    /// The trace itself, named after its file's stem, with `#N` for a segment and `#earlier` or
    /// `#later` for a part cut forward.
    pub trace: Trace,
}

/// A trace argument: `[SIGNAL=]PATH`, the signal for CSV files.
#[derive(Debug, Clone)]
pub struct TraceSpec {
    /// The signal a CSV series is imported as (none: `cpu_pct`); refused for a `.jsonl` trace.
    pub signal: Option<ImportSignal>,
    /// A trace file (`.jsonl`), a CSV series (`.csv`) or a folder of either.
    pub path: PathBuf,
}

impl std::str::FromStr for TraceSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<TraceSpec, String> {
        match s.split_once('=') {
            Some((signal, path)) if !signal.contains('/') => {
                let signal = signal.parse::<ImportSignal>().map_err(|e| e.to_string())?;
                Ok(TraceSpec { signal: Some(signal), path: PathBuf::from(path) })
            }
            _ => Ok(TraceSpec { signal: None, path: PathBuf::from(s) }),
        }
    }
}

/// One loaded source (or one segment of it): its events come from one file.
struct Source {
    name: String,
    source: String,
    sha256: String,
    events: Vec<TraceEvent>,
}

/// Reads every spec (folders expanded: their `.jsonl` traces, not `*.expected.jsonl`, and their
/// `.csv` series, in name order).
fn read_sources(specs: &[TraceSpec], repeated: RepeatedTimestamps) -> Result<Vec<Source>, TuneError> {
    let mut files: Vec<(Option<ImportSignal>, PathBuf)> = Vec::new();
    for spec in specs {
        if spec.path.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(&spec.path)
                .map_err(|e| TuneError::Evidence { path: spec.path.clone(), message: e.to_string() })?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| is_trace(p) || is_csv(p))
                .collect();
            inside.sort();
            files.extend(inside.into_iter().map(|p| (spec.signal.clone(), p)));
        } else {
            files.push((spec.signal.clone(), spec.path.clone()));
        }
    }
    files.iter().map(|(signal, path)| read_source(signal.as_ref(), path, repeated)).collect()
}

fn is_trace(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "jsonl") && !sentinel_core::trace::is_expected_output(p)
}

fn is_csv(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "csv")
}

fn read_source(signal: Option<&ImportSignal>, path: &Path, repeated: RepeatedTimestamps) -> Result<Source, TuneError> {
    let bad = |message: String| TuneError::Evidence { path: path.to_path_buf(), message };
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let sha256 = hex::encode(Sha256::digest(&bytes));
    let name = path.file_stem().map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned());
    let events = if is_csv(path) {
        import_csv(&path.display().to_string(), bytes.as_slice(), signal.unwrap_or(&ImportSignal::CpuPct), repeated)
            .map_err(|e| bad(e.to_string()))?
    } else if is_trace(path) {
        if signal.is_some() {
            return Err(bad("a signal applies to CSV series only".into()));
        }
        sentinel_core::trace::load::read_chunked(path).map_err(|e| bad(e.to_string()))?.events
    } else {
        return Err(bad("not a trace (.jsonl) or a CSV series (.csv)".into()));
    };
    Ok(Source { name, source: path.display().to_string(), sha256, events })
}

/// Whole traces (no segments, no split): the gate's scenarios.
pub fn load_whole(specs: &[TraceSpec], repeated: RepeatedTimestamps) -> Result<Vec<Trace>, TuneError> {
    Ok(read_sources(specs, repeated)?.into_iter().map(|s| Trace { name: s.name, events: s.events }).collect())
}

/// How to build the evidence.
#[derive(Debug, Default)]
pub struct EvidenceSpec {
    /// The traces to choose on and, without `holdout`, to split, in the order given.
    pub traces: Vec<TraceSpec>,
    /// Traces to validate on only (`--holdout`); when any is named, nothing else is held out.
    pub holdout: Vec<TraceSpec>,
    /// Without `holdout`: this share of the segments is held out.
    pub holdout_fraction: f64,
    /// Cut each trace into segments of this many days (0: whole traces).
    pub segment_days: u32,
    /// The store's recorded ticks (`--from-store`): one more series, `store`, after the files.
    pub recorded: Option<Trace>,
    /// Without `holdout`: by series, or a fraction of the segments.
    pub split: Split,
    /// What a repeated timestamp in a CSV series means.
    pub repeated_timestamps: RepeatedTimestamps,
}

/// Loads, segments and splits; refused when either side would be empty.
pub fn load(spec: EvidenceSpec) -> Result<Vec<EvidenceTrace>, TuneError> {
    let mut train_sources = read_sources(&spec.traces, spec.repeated_timestamps)?;
    if let Some(trace) = spec.recorded {
        let digest = Sha256::digest(trace.events.iter().map(sentinel_core::trace::write_event).collect::<Vec<_>>().join("\n").as_bytes());
        train_sources.push(Source { name: trace.name, source: "store".into(), sha256: hex::encode(digest), events: trace.events });
    }
    let named_holdout = read_sources(&spec.holdout, spec.repeated_timestamps)?;
    let mut out = Vec::new();
    let mut series = 0;
    let mut add = |out: &mut Vec<EvidenceTrace>, source: Source, set: &dyn Fn(usize) -> Set| {
        let name = source.name.clone();
        for piece in segment(source, spec.segment_days) {
            let position = out.len();
            out.push(piece.into_set(set(position), series, &name));
        }
        series += 1;
    };
    if !named_holdout.is_empty() {
        for source in train_sources {
            add(&mut out, source, &|_| Set::Train);
        }
        for source in named_holdout {
            add(&mut out, source, &|_| Set::Holdout);
        }
    } else if spec.split == Split::Series {
        for source in train_sources {
            add(&mut out, source, &|_| Set::Train);
        }
        out.retain(|t| t.ticks > 0);
        let kept: std::collections::BTreeSet<usize> = out.iter().map(|t| t.series).collect();
        if kept.len() < 2 {
            return Err(TuneError::NoEvidence(
                "holding out one series at a time needs at least two series with ticks: for one server's own history use --split forward (chosen on its earlier part, judged on its later part); or give more series, or --holdout traces".into(),
            ));
        }
    } else if !(spec.holdout_fraction > 0.0 && spec.holdout_fraction < 1.0) {
        return Err(TuneError::NoEvidence("--holdout-fraction must be above 0 and below 1 (or name --holdout traces)".into()));
    } else if spec.split == Split::Forward {
        for source in train_sources {
            let name = source.name.clone();
            let (earlier, later) = cut_forward(source, spec.holdout_fraction);
            for (set, part) in [(Set::Train, earlier), (Set::Holdout, later)] {
                out.extend(
                    segment(part, spec.segment_days)
                        .into_iter()
                        .map(|piece| EvidenceTrace { forward: true, ..piece.into_set(set, series, &name) }),
                );
            }
            series += 1;
        }
    } else {
        // Every segment of every source in the order given, held out by position: the
        // hold-out is spread evenly over the whole evidence.
        let fraction = spec.holdout_fraction;
        for source in train_sources {
            add(&mut out, source, &|position| held_out(position, fraction));
        }
        let pieces = out.iter().filter(|t| t.ticks > 0).count();
        if pieces > 0 && !out.iter().any(|t| t.ticks > 0 && t.set == Set::Holdout) {
            let hint = if pieces == 1 {
                "one trace cannot be split by fraction: cut it with --segment-days N, or use --split forward".to_string()
            } else {
                let least = ((100.0 / pieces as f64).ceil() / 100.0).min(0.99);
                format!("--holdout-fraction {least} would hold out one of them, or use --split forward")
            };
            return Err(TuneError::NoEvidence(format!(
                "no trace with ticks to validate on: --holdout-fraction {fraction} holds out none of the {pieces} traces (or segments); {hint}"
            )));
        }
    }
    out.retain(|t| t.ticks > 0);
    // Judged by series, nothing is held out: cross-validation holds out each series in turn.
    let judged_by_series = spec.split == Split::Series && spec.holdout.is_empty();
    let needed: &[Set] = if judged_by_series { &[Set::Train] } else { &[Set::Train, Set::Holdout] };
    for &set in needed {
        if !out.iter().any(|t| t.set == set) {
            let side = if set == Set::Train { "to choose on" } else { "to validate on" };
            return Err(TuneError::NoEvidence(format!("no trace with ticks {side}: give more traces, or --holdout traces")));
        }
    }
    let mut names = std::collections::BTreeSet::new();
    for t in &out {
        if !names.insert(t.trace.name.clone()) {
            return Err(TuneError::NoEvidence(format!("two traces are named {:?}: rename one file", t.trace.name)));
        }
    }
    Ok(out)
}

/// Position `i` is held out when the running share crosses a whole number there: a fraction of
/// 0.25 holds out positions 3, 7, 11, ... (spread evenly, the first ones kept for choosing).
fn held_out(i: usize, fraction: f64) -> Set {
    let crossed = ((i + 1) as f64 * fraction + 1e-9).floor() > (i as f64 * fraction + 1e-9).floor();
    if crossed { Set::Holdout } else { Set::Train }
}

impl Source {
    fn into_set(self, set: Set, series: usize, series_name: &str) -> EvidenceTrace {
        let ticks = self.events.iter().filter(|e| matches!(e, TraceEvent::Tick { .. })).count() as u64;
        EvidenceTrace {
            set,
            series,
            series_name: series_name.to_string(),
            source: self.source,
            source_sha256: self.sha256,
            forward: false,
            ticks,
            trace: Trace { name: self.name, events: self.events },
        }
    }
}

/// Cuts a source in time at the point `later_share` of its span before its last event: events
/// before it are the earlier part (`name#earlier`), the rest the later part (`name#later`).
fn cut_forward(source: Source, later_share: f64) -> (Source, Source) {
    let (first, last) = match (source.events.first(), source.events.last()) {
        (Some(a), Some(b)) => (a.at(), b.at()),
        _ => (0, 0),
    };
    let cut = first + ((last - first) as f64 * (1.0 - later_share)).round() as i64;
    let part = |suffix: &str| Source {
        name: format!("{}#{suffix}", source.name),
        source: source.source.clone(),
        sha256: source.sha256.clone(),
        events: Vec::new(),
    };
    let (mut earlier, mut later) = (part("earlier"), part("later"));
    for event in source.events {
        if event.at() < cut { earlier.events.push(event) } else { later.events.push(event) }
    }
    (earlier, later)
}

/// Cuts a source into `days`-long segments from its first event (`name#1`, `name#2`, ...);
/// the whole source when `days` is 0 or it is not longer. A last piece shorter than a day joins
/// the segment before it. Pins and switch lines stay in the segment they fall in.
fn segment(source: Source, days: u32) -> Vec<Source> {
    let whole = |s: Source| vec![s];
    let (Some(first), Some(last)) = (source.events.first().map(TraceEvent::at), source.events.last().map(TraceEvent::at)) else {
        return whole(source);
    };
    let span = i64::from(days) * 86_400;
    if days == 0 || last - first < span {
        return whole(source);
    }
    let mut segments: Vec<Source> = Vec::new();
    for event in source.events {
        let n = ((event.at() - first) / span) as usize;
        while segments.len() <= n {
            segments.push(Source {
                name: format!("{}#{}", source.name, segments.len() + 1),
                source: source.source.clone(),
                sha256: source.sha256.clone(),
                events: Vec::new(),
            });
        }
        segments[n].events.push(event);
    }
    let short = |s: &Source| match (s.events.first(), s.events.last()) {
        (Some(a), Some(b)) => b.at() - a.at() < 86_400,
        _ => true,
    };
    if segments.len() > 1 && segments.last().is_some_and(short) {
        let tail = segments.pop().expect("at least two");
        segments.last_mut().expect("at least one").events.extend(tail.events);
    }
    if let [only] = segments.as_mut_slice() {
        only.name = source.name;
    }
    segments
}

#[cfg(test)]
mod tests;
