//! `sentinel policy tune`: a base policy, a search space and recorded traces in; `report.md`,
//! `report.json` and `pareto.svg` out, and with `--write` the chosen candidate as a policy
//! folder (docs/behaviour.md §10.8). Everything is checked before the sweep starts.

use crate::tune::evidence::{self, EvidenceSpec, Split, TraceSpec};
use crate::tune::gate_check::GateTraces;
use crate::tune::space::{SEED_FLOORS, SearchSpace};
use crate::tune::{self, pareto_svg, report, shard, write};
use anyhow::{Context, bail};
use clap::Args;
use sentinel_core::replay::gate::Gate;
use sentinel_core::trace::RepeatedTimestamps;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use vocabulary::PolicyDescription;

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The base policy: a version folder (`policies/1.0.0`) or its `policy.toml`.
    #[arg(long, value_name = "POLICY")]
    pub base: PathBuf,
    /// The search space (TOML: `[thresholds]` values or ranges, `[choose]` limits).
    #[arg(long, value_name = "SPACE.toml")]
    pub space: PathBuf,
    /// Traces to choose on (and, without --holdout, to split): `.jsonl` traces, CSV series as
    /// `[SIGNAL=]PATH.csv` (cpu_pct unless named: connections_pct, latency:<api>), or folders.
    #[arg(value_name = "[SIGNAL=]PATH")]
    pub traces: Vec<TraceSpec>,
    /// Traces to validate on only (then no share of the others is held out).
    #[arg(long = "holdout", value_name = "[SIGNAL=]PATH")]
    pub holdout: Vec<TraceSpec>,
    /// Without --holdout: how the evidence is judged. `series`: every file is a series, each
    /// is held out whole in turn (leave-one-series-out cross-validation) and the choice is the
    /// candidate whose worst series does best. `fraction`: a share of the segments is held out,
    /// which measures fit, not generalization, when segments of one series fall on both sides.
    /// `forward`: each series' earlier part is chosen on and its later part held out (one
    /// server's own history: tuned on its first week, judged on its second).
    #[arg(long, value_enum, default_value_t = Split::Series)]
    pub split: Split,
    /// With --split fraction: the share of the segments (or traces) held out, spread evenly
    /// (default 0.3). With --split forward: the later share of each series' span held out
    /// (default 0.5).
    #[arg(long, value_name = "F")]
    pub holdout_fraction: Option<f64>,
    /// Cut every trace into segments of this many days before splitting (0: whole traces).
    #[arg(long, default_value_t = 0, value_name = "DAYS")]
    pub segment_days: u32,
    /// Also choose on what the live sentinel recorded in the store of this config.
    #[arg(long, value_name = "CONFIG")]
    pub from_store: Option<PathBuf>,
    /// With --from-store: how far back (e.g. 30d).
    #[arg(long, value_parser = humantime::parse_duration, default_value = "24h", requires = "from_store")]
    pub since: std::time::Duration,
    /// A gate file (`policies/gate.toml`): a candidate the gate fails on the --gate-trace
    /// traces against the base is not chosen.
    #[arg(long, value_name = "GATE.toml", requires = "gate_traces")]
    pub gate: Option<PathBuf>,
    /// A trace (or folder) the gate replays, repeated (as in CI: the scenario traces and the
    /// CloudWatch series); they constrain the choice and are not scored.
    #[arg(long = "gate-trace", value_name = "[SIGNAL=]PATH", requires = "gate")]
    pub gate_traces: Vec<TraceSpec>,
    /// Where report.md, report.json and pareto.svg go.
    #[arg(long, default_value = "target/tune", value_name = "DIR")]
    pub out: PathBuf,
    /// Write the chosen candidate as a policy folder here (`policies/<version>/`).
    #[arg(long, value_name = "DIR")]
    pub write: Option<PathBuf>,
    /// The version of the written policy (default: the folder's name).
    #[arg(long, requires = "write")]
    pub version: Option<String>,
    /// Replace the written folder's policy.toml if it exists.
    #[arg(long, requires = "write")]
    pub replace: bool,
    /// Also build the written policy's component and manifest here, as `policy build` does.
    #[arg(long, value_name = "DIR", requires = "write")]
    pub build: Option<PathBuf>,
    /// Write (and build) the choice even when it is the base's numbers. Without it such a tune
    /// writes nothing, says so and exits 5.
    #[arg(long, requires = "write")]
    pub even_if_unchanged: bool,
    /// In CSV series, a timestamp equal to the previous sample's: refused, or the last sample
    /// of it kept (a clock change written in local time), as `sentinel trace import` does.
    #[arg(long, value_name = "refuse|last", default_value = "refuse")]
    pub repeated_timestamps: RepeatedTimestamps,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Sweep only shard I of N of the candidates (those whose index is I-1 modulo N) and write
    /// their scores to `--out`/shard-I-of-N.json, for `--merge`; no report. Give every shard
    /// the same other arguments.
    #[arg(long, value_name = "I/N", conflicts_with_all = ["merge", "write"])]
    pub shard: Option<crate::tune::shard::Shard>,
    /// Sweep nothing: read the shards' files from this folder (repeat for several), check that
    /// together they are one sweep of these arguments, then choose, cross-validate and write as
    /// a run on one machine does, byte for byte.
    #[arg(long, value_name = "DIR")]
    pub merge: Vec<PathBuf>,
}

/// The base's `policy.toml`, read and checked.
fn read_base(path: &Path) -> anyhow::Result<PolicyDescription> {
    let file = if path.is_dir() { path.join("policy.toml") } else { path.to_path_buf() };
    Ok(policy_files::description::read(&file).map_err(|e| anyhow::anyhow!("the base policy: {e}"))?.description)
}

/// The command as typed, for the reports (the same inputs give the same text). `--shard` and
/// `--merge` are left out: a merged run's reports are the unsharded run's.
fn command_line() -> String {
    let quote = |a: String| if a.contains([' ', '"', '\'']) { format!("'{a}'") } else { a };
    let mut args = Vec::new();
    let mut given = std::env::args().skip(1);
    while let Some(arg) = given.next() {
        if arg == "--shard" || arg == "--merge" {
            given.next();
        } else if !(arg.starts_with("--shard=") || arg.starts_with("--merge=")) {
            args.push(quote(arg));
        }
    }
    std::iter::once("sentinel".to_string()).chain(args).collect::<Vec<_>>().join(" ")
}

/// `chosen: candidate N, LABEL`, saying so when the choice is the base's numbers.
fn chosen_line(tuning: &tune::Tuning, i: usize) -> String {
    let same = if tuning.is_base(i) { " (the base's numbers: no change)" } else { "" };
    format!("chosen: candidate {i}, {}{same}", tuning.candidates[i].label())
}

pub fn run(args: TuneArgs) -> anyhow::Result<ExitCode> {
    super::with_jobs(args.jobs, "tuning", || tune_in_pool(args))
}

fn tune_in_pool(args: TuneArgs) -> anyhow::Result<ExitCode> {
    let base = read_base(&args.base)?;
    let text = std::fs::read_to_string(&args.space).with_context(|| format!("reading the search space {}", args.space.display()))?;
    let space = SearchSpace::parse(&args.space.display().to_string(), &text)?;
    // Every candidate is checked before anything is replayed.
    let candidates = space.candidates(&base.thresholds, &SEED_FLOORS)?;
    let version = match (&args.write, &args.version) {
        (Some(_), Some(v)) => Some(v.clone()),
        (Some(dir), None) => Some(dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()),
        _ => None,
    };
    if let Some(v) = &version {
        let probe = PolicyDescription { name: base.name.clone(), version: v.clone(), thresholds: base.thresholds };
        probe.check().map_err(|e| anyhow::anyhow!("--write: the policy's {e} (name the folder by the version, or give --version)"))?;
    }
    if args.traces.is_empty() && args.from_store.is_none() {
        bail!("no traces: name trace files, CSV series or folders (or --from-store CONFIG)");
    }
    let recorded = match &args.from_store {
        Some(config) => Some(super::replay::recorded_trace(config, args.since)?),
        None => None,
    };
    if args.holdout_fraction.is_some() && (args.split == Split::Series || !args.holdout.is_empty()) {
        bail!(
            "--holdout-fraction applies to --split fraction or --split forward without --holdout traces; drop it, or add --split forward"
        );
    }
    let default_fraction = if args.split == Split::Forward { 0.5 } else { 0.3 };
    let evidence = evidence::load(EvidenceSpec {
        traces: args.traces.clone(),
        holdout: args.holdout.clone(),
        holdout_fraction: args.holdout_fraction.unwrap_or(default_fraction),
        segment_days: args.segment_days,
        recorded,
        split: args.split,
        repeated_timestamps: args.repeated_timestamps,
    })?;
    let gate = match &args.gate {
        Some(path) => {
            let gate = Gate::load(path)?;
            let traces = evidence::load_whole(&args.gate_traces, args.repeated_timestamps)?;
            Some(GateTraces::prepare(gate, version.as_deref().unwrap_or("candidate"), traces, &base)?)
        }
        None => None,
    };
    let command = command_line();
    let started = Instant::now();
    let inputs = shard::fingerprint(&base, &candidates, &evidence, gate.as_ref());
    if let Some(part) = args.shard {
        let mine: Vec<_> = candidates.iter().filter(|c| part.takes(c.index)).cloned().collect();
        let swept = tune::sweep_candidates(&base, &mine, &evidence, &SEED_FLOORS, gate.as_ref(), &tune::sweep::progress_bar(true))?;
        let path = shard::write(&args.out, part, &inputs, &candidates, swept)?;
        println!(
            "shard {} of {}: {} of {} candidates over {} traces in {:.1} s, written to {}; merge every shard with --merge",
            part.index,
            part.of,
            mine.len(),
            candidates.len(),
            evidence.len(),
            started.elapsed().as_secs_f64(),
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let swept = if args.merge.is_empty() {
        tune::sweep_candidates(&base, &candidates, &evidence, &SEED_FLOORS, gate.as_ref(), &tune::sweep::progress_bar(true))?
    } else {
        shard::merge(&args.merge, &inputs, candidates.len(), evidence.len(), gate.is_some())?
    };
    let tuning = tune::conclude(base, space, candidates, evidence, gate, swept)?;
    let seconds = started.elapsed().as_secs_f64();
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let write_file = |name: &str, text: &str| -> anyhow::Result<()> {
        let path = args.out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    write_file("report.md", &report::markdown(&tuning, &command))?;
    write_file("report.json", &report::Report::new(&tuning, &command).json())?;
    let figure = pareto_svg::pareto_svg(&tuning).map_err(anyhow::Error::msg)?;
    write_file("pareto.svg", &figure)?;
    if !args.merge.is_empty() {
        eprintln!(
            "tune: the shards' scores of {} candidates over {} traces ({} candidate-ticks swept by the shards) merged in {seconds:.1} s",
            tuning.candidates.len(),
            tuning.evidence.len(),
            tuning.candidate_ticks
        );
    } else {
        eprintln!(
            "tune: {} candidates over {} traces: {} candidate-ticks in {seconds:.1} s ({:.2} M candidate-ticks/s)",
            tuning.candidates.len(),
            tuning.evidence.len(),
            tuning.candidate_ticks,
            tuning.candidate_ticks as f64 / seconds.max(1e-9) / 1e6
        );
    }
    println!("report: {}", args.out.join("report.md").display());
    if let Some((_, outcomes)) = &tuning.gate {
        let failing = outcomes.iter().filter(|o| o.findings > 0).count();
        let most = crate::tune::gate_check::most_refusing(outcomes).map_or(String::new(), |(kind, n)| format!("; most often {kind} ({n})"));
        println!("gate: fails {failing} of {} candidates{most}", outcomes.len());
    }
    let leaking = tuning.leaking_series();
    if !leaking.is_empty() {
        eprintln!(
            "warning: segments of {} are both chosen on and held out: the hold-out measures fit, not generalization (use --split series)",
            leaking.join(", ")
        );
    }
    match (tuning.chosen, &tuning.cross_validation) {
        (Some(i), Some(cv)) => {
            println!("{}", chosen_line(&tuning, i));
            println!(
                "cross-validated (each of {} series judged by a choice made without it): flaps per day {:.2} -> {:.2}; bulk capacity lost {:.3} %; most minutes later into critical {}; invariant violations {}; series worse than the base {}",
                cv.folds.len(),
                cv.base.flaps_per_day,
                cv.held_out.flaps_per_day,
                cv.held_out.bulk_capacity_loss_vs_base_pct,
                cv.held_out.max_protection_delay.map_or("-".into(), |d| d.to_string()),
                cv.held_out.violations,
                cv.series_worse
            );
        }
        (Some(i), None) => {
            let (b, c) = (&tuning.base_scores.holdout, &tuning.scores[i].holdout);
            println!("{}", chosen_line(&tuning, i));
            println!(
                "hold-out: flaps per day {:.2} -> {:.2}; bulk capacity lost {:.3} %; most minutes later into critical {}; invariant violations {}",
                b.flaps_per_day,
                c.flaps_per_day,
                c.bulk_capacity_loss_vs_base_pct,
                c.max_protection_delay.map_or("-".into(), |d| d.to_string()),
                c.violations
            );
        }
        (None, _) => println!("chosen: none: no candidate meets the rule on the training traces (report.md says why)"),
    }
    if let (Some(dir), Some(v)) = (&args.write, &version) {
        if let Some(i) = tuning.chosen
            && tuning.is_base(i)
            && !args.even_if_unchanged
        {
            println!(
                "nothing written: the choice is the base's numbers ({} {}), so {} would change nothing; give --even-if-unchanged to write it anyway",
                tuning.base.name,
                tuning.base.version,
                dir.display()
            );
            return Ok(ExitCode::from(super::exit::UNCHANGED));
        }
        let written = write::write_policy(dir, v, &tuning, &command, &figure, args.replace)?;
        println!("wrote {}", dir.join("policy.toml").display());
        if let Some(out) = &args.build {
            let component = sentinel_core::policy::template::build_into(&written, out)?;
            println!("{}", sentinel_core::policy::template::built_message(&component, out));
        }
    }
    Ok(ExitCode::SUCCESS)
}
