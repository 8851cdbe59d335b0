//! `sentinel replay`: traces through one or two policies, printed as SPEC section 10 lines or
//! as summary tables with the comparison.

use crate::policy::{self, Limits, Policy, Runtime};
use crate::replay::compare::{Accumulator, Summary};
use crate::replay::output::{self, TableStyle};
use crate::trace::read_trace;
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A policy: a component (`.wasm`), or a `policy.toml` / policy folder for the native
    /// modules; `LABEL=PATH` names it in the output. Give one or two.
    #[arg(long = "policy", required = true, value_name = "[LABEL=]PATH")]
    pub policies: Vec<String>,
    /// `jsonl`: one line per tick and policy; `table`/`markdown`: a summary per trace.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The emergency stage-throttle switch before the first line.
    #[arg(long, value_enum, default_value_t = Switch::Off)]
    pub throttles: Switch,
    /// Exit non-zero when a policy breaks an invariant.
    #[arg(long)]
    pub fail_on_violation: bool,
    /// Trace files (SPEC section 10 JSON Lines).
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
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
    if args.policies.len() > 2 {
        bail!("give one or two --policy (baseline and candidate), not {}", args.policies.len());
    }
    let runtime = Runtime::new(Limits::default())?;
    let mut policies: Vec<Box<dyn Policy>> = Vec::new();
    for spec in &args.policies {
        policies.push(policy::open(spec, &runtime).with_context(|| format!("loading policy {spec}"))?);
    }
    let mut thresholds = Vec::new();
    for p in &mut policies {
        thresholds.push(p.describe()?.thresholds);
    }
    let labels: Vec<String> = policies.iter().map(|p| p.identity().label.clone()).collect();
    let throttles = args.throttles == Switch::On;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut violations = 0usize;
    for path in &args.traces {
        let trace = read_trace(path)?;
        let mut accumulators: Vec<Accumulator> =
            labels.iter().zip(&thresholds).map(|(l, t)| Accumulator::new(l, &trace.name, t)).collect();
        let mut write_error = None;
        crate::replay::run(&trace, &mut policies, throttles, &mut |i, tick| {
            accumulators[i].add(&tick);
            if args.format == Format::Jsonl
                && write_error.is_none()
                && let Err(e) = writeln!(out, "{}", output::tick_line(&labels[i], &tick))
            {
                write_error = Some(e);
            }
        })?;
        if let Some(e) = write_error {
            return Err(e).context("writing replay lines to stdout");
        }
        let summaries: Vec<Summary> = accumulators.into_iter().map(Accumulator::finish).collect();
        violations += summaries.iter().map(|s| s.violations.len()).sum::<usize>();
        match args.format {
            Format::Jsonl => {}
            Format::Table => writeln!(out, "{}", output::table(&trace.name, &summaries, TableStyle::Plain))?,
            Format::Markdown => writeln!(out, "{}", output::table(&trace.name, &summaries, TableStyle::Markdown))?,
        }
    }
    out.flush()?;
    if violations > 0 {
        tracing::warn!(violations, "policies broke invariants during replay");
        if args.fail_on_violation {
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}
