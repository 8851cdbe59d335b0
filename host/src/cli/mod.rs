//! The commands of `sentinel` (clap derive) and their dispatch.

mod policy;
mod replay;
mod trace;

use clap::{Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(name = "sentinel", version, about = "Capacity sentinel: protects a shared database from background work under pressure")]
pub struct Cli {
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect policy components.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// Replay recorded traces through one or two policies.
    Replay(replay::ReplayArgs),
    /// Work with trace files.
    #[command(subcommand)]
    Trace(trace::TraceCommand),
}

/// Logs go to stderr; `RUST_LOG` filters them (default `info`).
pub fn init_logging(cli: &Cli) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Policy(cmd) => policy::run(cmd),
        Command::Replay(args) => replay::run(args),
        Command::Trace(cmd) => trace::run(cmd),
    }
}
