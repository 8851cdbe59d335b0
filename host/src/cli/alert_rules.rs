//! `sentinel alert-rules`: the Prometheus alert rules (docs/behaviour.md §7.1), at real time or
//! with every duration divided by `--time-scale` (for a sentinel run with `--speed`).

use crate::alerts::render::{TimeScale, rules_file};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct AlertRulesArgs {
    /// Divide every duration of the rules by this (the `--speed` of the sentinel they watch).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Write the rules here instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

pub fn run(args: AlertRulesArgs) -> anyhow::Result<ExitCode> {
    let scale = TimeScale::new(args.time_scale)?;
    let text = rules_file(scale);
    match args.output {
        Some(path) => std::fs::write(&path, &text).map_err(|e| {
            anyhow::anyhow!("cannot write the alert rules to {}: {e}; check the folder exists and is writable", path.display())
        })?,
        None => super::emit(text.trim_end())?,
    }
    Ok(ExitCode::SUCCESS)
}
