//! `sentinel tick`: one tick, then exit (for cron or a scheduler).

use super::exit;
use crate::config::Config;
use clap::Args;
use sentinel_core::ports::leadership::LockError;
use sentinel_core::tick::TickError;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct TickArgs {
    /// The config file (default: the embedded default).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Wait this long for another sentinel's lock instead of exiting at once (e.g. 30s).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub wait: Option<Duration>,
    /// Decide for this time (RFC 3339) instead of the current minute; for replays and tests.
    #[arg(long, value_parser = sentinel_core::instants::parse_rfc3339)]
    pub at: Option<i64>,
}

pub fn run(args: TickArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.config.as_deref())?;
    let now = args.at.unwrap_or_else(sentinel_core::clock::current_minute);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let (sentinel, _) = crate::setup::sentinel(&config, now, args.wait).await?;
        match sentinel.tick(now).await {
            Ok(_) => Ok(ExitCode::SUCCESS),
            // Another sentinel decides (exit 3); a lock that cannot be reached is a failed tick.
            Err(e @ TickError::Lock(LockError::Held { .. } | LockError::TimedOut { .. })) => {
                eprintln!("error: {e}");
                Ok(ExitCode::from(exit::LOCK_HELD))
            }
            Err(e) => {
                eprintln!("error: {e}");
                Ok(ExitCode::from(exit::TICK_FAILED))
            }
        }
    })
}
