//! `sentinel trace import`: a `timestamp,value` CSV into a trace with one reading a minute.
//! `sentinel trace fetch`: a window of history from the configured metrics source.

use crate::config::Config;
use anyhow::Context;
use clap::Subcommand;
use sentinel_core::trace::fetch::{Destination, FetchOptions, Window, fetch};
use sentinel_core::trace::{ImportSignal, RepeatedTimestamps, import_csv, write_event};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Turn a CSV export (CloudWatch, Prometheus) into a trace, each value held until the next.
    Import {
        /// What the values are: cpu_pct, connections_pct or latency:<api> (p95 ms).
        #[arg(long)]
        signal: ImportSignal,
        /// A timestamp equal to the previous sample's: refused, or the last sample of it kept
        /// (a clock change written in local time).
        #[arg(long, value_name = "refuse|last", default_value = "refuse")]
        repeated_timestamps: RepeatedTimestamps,
        /// Write here instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// The CSV file (header `timestamp,value`).
        file: PathBuf,
    },
    /// Fetch a window of history from the configured metrics source (Prometheus, CloudWatch) into one
    /// trace, a step a line, as the live sentinel would have read each minute.
    Fetch {
        /// The live configuration: its [metrics] source and queries are asked.
        #[arg(long)]
        config: PathBuf,
        /// The start: a duration before --until (30d, 12h) or an RFC 3339 time.
        #[arg(long)]
        since: String,
        /// The end, not included: an RFC 3339 time (default: the current minute).
        #[arg(long)]
        until: Option<String>,
        /// One reading every STEP (the live sentinel reads once a minute).
        #[arg(long, default_value = "1m", value_parser = humantime::parse_duration)]
        step: Duration,
        /// Write here (through FILE.partial: a fetch that stops goes on when run again)
        /// instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// How many times a request that fails (timeout, server down) is asked again.
        #[arg(long, default_value_t = 5)]
        retries: u32,
        /// At most N steps a request (default: a day's, within the server's limit); fewer when
        /// the server refuses a day as too many samples.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        request_steps: Option<u64>,
        /// Each request's timeout (a day of history takes longer than a live read).
        #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
        timeout: Duration,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
}

pub fn run(cmd: TraceCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        TraceCommand::Fetch { config, since, until, step, output, retries, request_steps, timeout, quiet } => {
            let config = Config::load(Some(&config))?;
            let window = Window::new(&since, until.as_deref(), step, sentinel_core::clock::now_seconds()).map_err(anyhow::Error::msg)?;
            let history = crate::setup::metrics_history(&config, timeout)?;
            let destination = output.clone().map_or(Destination::Stdout, Destination::File);
            let options = FetchOptions { retries, first_wait: Duration::from_secs(1), progress: !quiet, request_steps };
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let fetched = runtime.block_on(fetch(history.as_ref(), &window, &destination, &options))?;
            let into = output.map_or_else(|| "stdout".to_string(), |p| p.display().to_string());
            tracing::info!(
                steps = fetched.steps,
                readings = fetched.readings,
                failed_reads = fetched.failed_reads,
                retried = fetched.retried,
                "fetched {} into {into}: {} steps ({} kept from an earlier run), {} failed reads among the newly fetched",
                window.describe(),
                fetched.steps,
                fetched.kept,
                fetched.failed_reads
            );
            Ok(ExitCode::SUCCESS)
        }
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
