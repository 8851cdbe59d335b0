//! `sentinel trace import`: a `timestamp,value` CSV into a trace with one reading a minute.

use crate::trace::{ImportSignal, RepeatedTimestamps, import_csv, write_event};
use anyhow::Context;
use clap::Subcommand;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Turn a CSV export (CloudWatch, Prometheus) into a trace, each value held until the next.
    Import {
        /// What the values are: cpu_pct, connections_pct or latency:<api> (p95 ms).
        #[arg(long)]
        signal: ImportSignal,
        /// A timestamp equal to the previous sample's: refused, or the last sample of it kept
        /// (a clock change written in local time).
        #[arg(long, value_enum, default_value_t = RepeatedTimestamps::Refuse)]
        repeated_timestamps: RepeatedTimestamps,
        /// Write here instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// The CSV file (header `timestamp,value`).
        file: PathBuf,
    },
}

pub fn run(cmd: TraceCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        TraceCommand::Import { signal, repeated_timestamps, output, file } => {
            let reader = std::fs::File::open(&file).with_context(|| format!("opening {}", file.display()))?;
            let events = import_csv(&file.display().to_string(), reader, &signal, repeated_timestamps)?;
            let sink: Box<dyn Write> = match &output {
                Some(path) => Box::new(std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?),
                None => Box::new(std::io::stdout().lock()),
            };
            let mut sink = BufWriter::new(sink);
            for event in &events {
                writeln!(sink, "{}", write_event(event))?;
            }
            sink.flush()?;
            tracing::info!(readings = events.len(), "imported {}", file.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}
