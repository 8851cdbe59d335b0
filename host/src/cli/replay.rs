//! `sentinel replay`: traces through one or two policies, printed as the lines of
//! docs/behaviour.md §10.3 or as summary tables with the comparison; `--report DIR` writes the
//! A/B report, `--gate FILE` makes it a CI gate (exit 1 naming each regressed metric).
//!
//! Tables, reports and gates stream each file through the policies a block at a time (parsed
//! across the cores, then every policy on its own core), and print only once every file has
//! replayed, so a broken trace fails before any output. `--format jsonl` parses every trace up
//! front and steps the policies in lockstep so that their lines interleave tick by tick.

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use sentinel_core::policy::source::PolicySource;
use sentinel_core::policy::{Limits, Runtime};
use sentinel_core::replay::compare::Summary;
use sentinel_core::replay::gate::Gate;
use sentinel_core::replay::job::{self, Job};
use sentinel_core::replay::lane::{Options, Run};
use sentinel_core::replay::output::{self, TableStyle};
use sentinel_core::replay::report::Report;
use sentinel_core::replay::timeline::Timeline;
use sentinel_core::trace::Trace;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A policy: a component (`.wasm`), or a `policy.toml` / policy folder for the native
    /// modules; `LABEL=PATH` names it in the output. Give one or two (baseline, candidate).
    #[arg(long = "policy", value_name = "[LABEL=]PATH", required_unless_present = "baseline", conflicts_with_all = ["baseline", "candidate"])]
    pub policies: Vec<String>,
    /// The policy in production, for an A/B comparison (with --candidate).
    #[arg(long, value_name = "[LABEL=]PATH", requires = "candidate")]
    pub baseline: Option<String>,
    /// The policy proposed to replace it (with --baseline).
    #[arg(long, value_name = "[LABEL=]PATH", requires = "baseline")]
    pub candidate: Option<String>,
    /// A gate file (TOML, docs/behaviour.md §10.5; `policies/gate.toml` is an example): exit 1 when the candidate breaks an invariant or
    /// regresses beyond its limits. Needs two policies.
    #[arg(long, value_name = "GATE.toml")]
    pub gate: Option<PathBuf>,
    /// Write report.md, report.json and one SVG timeline per trace into this folder.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// `jsonl`: one line per tick and policy; `table`/`markdown`: a summary per trace.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The emergency stage-throttle switch before the first line.
    #[arg(long, value_enum, default_value_t = Switch::Off)]
    pub throttles: Switch,
    /// Exit non-zero when a policy breaks an invariant.
    #[arg(long)]
    pub fail_on_violation: bool,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Replay what the live sentinel recorded in the store of this config (its tick records:
    /// readings as seen, pins, the switch), as one more trace named `store`.
    #[arg(long, value_name = "CONFIG")]
    pub from_store: Option<PathBuf>,
    /// With --from-store: how far back (e.g. 24h).
    #[arg(long, value_parser = humantime::parse_duration, default_value = "24h", requires = "from_store")]
    pub since: std::time::Duration,
    /// Trace files (JSON Lines, docs/behaviour.md §10.1).
    #[arg(required_unless_present = "from_store")]
    pub traces: Vec<PathBuf>,
}

/// The store of `config` (its `source`, as messages name it) and its recorded ticks of the last
/// `since`, oldest first.
pub(super) fn recorded_ticks(
    config: &std::path::Path,
    since: std::time::Duration,
) -> anyhow::Result<(String, Vec<sentinel_core::ports::memory::TickRecord>)> {
    let config = crate::config::Config::load(Some(config))?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let records = runtime.block_on(crate::setup::recorded_ticks(&config, since))?;
    Ok((config.source, records))
}

/// The store's recorded ticks of the last `since`, as a trace: refused when there are none.
pub(super) fn recorded_trace(config: &std::path::Path, since: std::time::Duration) -> anyhow::Result<Trace> {
    let (source, records) = recorded_ticks(config, since)?;
    if records.is_empty() {
        bail!("the store of {source} holds no tick records from the last {}", sentinel_core::shown_duration::duration(since));
    }
    Ok(Trace { name: "store".into(), events: sentinel_core::trace::recorded::events(&records) })
}

/// The files that are traces: an expected output kept beside its trace (`*.expected.jsonl`, as
/// in tests/traces/) is skipped with a log line, so `tests/traces/*.jsonl` replays the traces.
fn traces_only(files: &[PathBuf]) -> Vec<PathBuf> {
    let (expected, traces): (Vec<&PathBuf>, Vec<&PathBuf>) = files.iter().partition(|f| sentinel_core::trace::is_expected_output(f));
    for file in expected {
        tracing::info!("skipped {}: an expected output (*.expected.jsonl), not a trace", file.display());
    }
    traces.into_iter().cloned().collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Jsonl,
    Table,
    Markdown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    super::with_jobs(args.jobs, "replay", || replay(args))
}

fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let specs: Vec<String> = match (&args.baseline, &args.candidate) {
        (Some(b), Some(c)) => vec![b.clone(), c.clone()],
        _ => args.policies.clone(),
    };
    if specs.is_empty() || specs.len() > 2 {
        bail!("give one or two --policy (baseline and candidate), not {}", specs.len());
    }
    let gate = match &args.gate {
        Some(path) if specs.len() != 2 => bail!("--gate {} needs two policies (--baseline and --candidate)", path.display()),
        Some(path) => Some(Gate::load(path)?),
        None => None,
    };
    let runtime = Runtime::new(Limits::default())?;
    // The components compiled (or loaded from the cache) at once, across the cores.
    let opened: Vec<_> = specs.par_iter().map(|s| PolicySource::open(s, &runtime).with_context(|| format!("loading policy {s}"))).collect();
    let sources = opened.into_iter().collect::<anyhow::Result<Vec<PolicySource>>>()?;
    let options = Options {
        throttles: args.throttles == Switch::On,
        floors: gate.as_ref().map(|g| g.invariants).unwrap_or_default(),
        timelines: args.report.is_some(),
        progress: args.format != Format::Jsonl,
    };
    let recorded = match &args.from_store {
        Some(config) => Some(recorded_trace(config, args.since)?),
        None => None,
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let traces = traces_only(&args.traces);
    if traces.is_empty() && recorded.is_none() {
        bail!("no trace to replay: every file named is an expected output (*.expected.jsonl); name the traces beside them");
    }
    let job = Job { files: &traces, recorded, sources: &sources, options };
    let lines: Option<&mut dyn Write> = if args.format == Format::Jsonl { Some(&mut out) } else { None };
    let replayed = job::replay(job, lines)?;
    let (names, runs): (Vec<String>, Vec<Vec<Run>>) = replayed.into_iter().unzip();
    let violations: usize = runs.iter().flatten().map(|r| r.summary.violations.len()).sum();
    for (name, runs) in names.iter().zip(&runs) {
        let summaries: Vec<Summary> = runs.iter().map(|r| r.summary.clone()).collect();
        match args.format {
            Format::Jsonl => {}
            Format::Table => writeln!(out, "{}", output::table(name, &summaries, TableStyle::Plain))?,
            Format::Markdown => writeln!(out, "{}", output::table(name, &summaries, TableStyle::Markdown))?,
        }
    }
    out.flush()?;
    let mut failed = false;
    if args.report.is_some() || gate.is_some() {
        let identities: Vec<_> = sources.iter().map(|s| s.identity().clone()).collect();
        let summaries: Vec<Vec<Summary>> = runs.iter().map(|r| r.iter().map(|r| r.summary.clone()).collect()).collect();
        let gate_name = args.gate.as_ref().map(|p| p.display().to_string());
        let report = Report::build(&identities, summaries, gate_name.as_deref().zip(gate.as_ref()));
        if let Some(dir) = &args.report {
            let timelines: Vec<Vec<&Timeline>> = runs.iter().map(|r| r.iter().filter_map(|r| r.timeline.as_ref()).collect()).collect();
            let thresholds: Vec<_> = sources.iter().map(PolicySource::thresholds).collect();
            report.write(dir, &timelines, &thresholds)?;
            tracing::info!("report written to {}", dir.display());
        }
        if let (Some(message), Some(result)) = (report.gate_message(), &report.gate) {
            eprint!("{message}{}", if message.ends_with('\n') { "" } else { "\n" });
            failed = !result.passed;
        }
    }
    if violations > 0 {
        tracing::warn!(violations, "policies broke invariants during replay");
        failed |= args.fail_on_violation;
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
