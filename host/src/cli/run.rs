//! `sentinel run`: the minute loop. In real time each tick falls on a minute boundary; with
//! `--speed X` the clock is simulated (a minute every 60/X seconds), starting where the metrics
//! source starts (a trace's first minute, the synthetic incident's beginning). SIGINT/SIGTERM
//! stop the loop after the tick in flight.

use super::exit;
use crate::config::Config;
use clap::Args;
use sentinel_core::policy::lifecycle::watcher::Watcher;
use sentinel_core::ports::leadership::LockError;
use sentinel_core::tick::{TickError, TickReport};
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Debug, Args)]
pub struct RunArgs {
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Stop after this many ticks.
    #[arg(long)]
    pub ticks: Option<u64>,
    /// Run the clock this many times faster than real time (a trace or the synthetic workload).
    #[arg(long)]
    pub speed: Option<f64>,
    /// Serve Prometheus metrics here (e.g. 127.0.0.1:9898).
    #[arg(long)]
    pub metrics_addr: Option<SocketAddr>,
    /// Wait this long each tick for another sentinel's lock instead of exiting.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub wait: Option<Duration>,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if let Some(speed) = args.speed
        && !(speed.is_finite() && (1.0..=100_000.0).contains(&speed))
    {
        anyhow::bail!("--speed must be between 1 and 100000, got {speed}");
    }
    // Simulated minutes run ahead of the wall clock: without a config they go to a store of
    // their own, never into the one a real-time sentinel on the embedded default uses.
    let config = match (&args.config, args.speed) {
        (None, Some(_)) => Config::simulated_default()?,
        _ => Config::load(args.config.as_deref())?,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(run_loop(args, config))
}

async fn run_loop(args: RunArgs, config: Config) -> anyhow::Result<ExitCode> {
    let start_minute = sentinel_core::clock::current_minute();
    let (mut sentinel, _) = crate::setup::sentinel(&config, start_minute, args.wait).await?;
    if args.speed.is_some() {
        continue_after_decided(&mut sentinel, &config).await;
    }
    if let Some(addr) = args.metrics_addr {
        crate::exporter::serve(addr, sentinel.telemetry.clone()).await?;
    }
    let stopping = Arc::new(AtomicBool::new(false));
    let wake = Arc::new(Notify::new());
    listen_for_shutdown(stopping.clone(), wake.clone());
    let watcher = sentinel.policy.lifecycle().cloned().map(Watcher::start);

    let span = sentinel.ports.metrics.span();
    let simulated = args.speed.is_some();
    let mut now = match (simulated, span) {
        (true, Some((first, _))) => first,
        _ => start_minute,
    };
    // A sped-up recording stops after its last minute.
    let last = if simulated && matches!(config.metrics, crate::config::MetricsConfig::Trace { .. }) { span.map(|s| s.1) } else { None };
    let total = match (args.ticks, last) {
        (Some(n), _) => Some(n),
        (None, Some(last)) => Some(((last - now) / 60 + 1) as u64),
        _ => None,
    };
    let terminal = std::io::stdout().is_terminal();
    // The version that decides: with `[policies]` the active one, not the `policy` setting.
    let active = {
        let p = sentinel.policy.lock();
        let id = p.identity();
        let (what, digest) = (format!("{} {}", id.name, id.version), id.digest.get(..12).unwrap_or(&id.digest));
        match sentinel.policy.lifecycle() {
            Some(_) => format!("{what} (sha256 {digest})"),
            None => format!("{} ({what}, sha256 {digest})", config.policy),
        }
    };
    tracing::info!(
        policy = %active,
        metrics = %sentinel.ports.metrics.describe(),
        speed = args.speed.unwrap_or(1.0),
        "sentinel running ({})",
        config.source
    );
    if terminal {
        let _ = writeln!(std::io::stdout().lock(), "{LIVE_HEADER}");
    }
    let mut done = 0u64;
    let mut failures = 0u64;
    loop {
        if stopping.load(Ordering::SeqCst) || total.is_some_and(|t| done >= t) {
            break;
        }
        if !simulated {
            // Real time: wait for the minute boundary.
            let wait = sentinel_core::clock::until_next_minute();
            if sleep_or_stop(wait, &stopping, &wake).await {
                break;
            }
            now = sentinel_core::clock::current_minute();
        }
        let started = std::time::Instant::now();
        match sentinel.tick(now).await {
            Ok(report) => {
                if terminal {
                    live_line(&report, done + 1, total);
                }
            }
            // Another sentinel is deciding: one at a time, so this one stops (or, with
            // --wait, stopped waiting). A lock that cannot be reached at all (the shared
            // store is down) is a failed minute: the loop keeps its schedule and retries.
            Err(e @ TickError::Lock(LockError::Held { .. } | LockError::TimedOut { .. })) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::from(exit::LOCK_HELD));
            }
            Err(e) => {
                failures += 1;
                tracing::error!("tick at {} failed: {e}", sentinel_core::instants::format_rfc3339(now));
            }
        }
        done += 1;
        // The last tick: stop now, not after one more simulated minute's pause.
        if total.is_some_and(|t| done >= t) {
            break;
        }
        if let Some(speed) = args.speed {
            now += 60;
            let pause = Duration::from_secs_f64(60.0 / speed).saturating_sub(started.elapsed());
            if sleep_or_stop(pause, &stopping, &wake).await {
                break;
            }
        }
    }
    if let Some(watcher) = watcher {
        watcher.stop().await;
    }
    if let Some(lifecycle) = sentinel.policy.lifecycle() {
        lifecycle.settle().await;
    }
    tracing::info!(ticks = done, failed = failures, "sentinel stopped");
    Ok(ExitCode::SUCCESS)
}

/// A sped-up synthetic run whose cycle the store has already decided to its end starts at the
/// next cycle: a minute is decided once, so a cycle already played would only be published
/// again (the README's first command, run twice, shows the incident twice).
async fn continue_after_decided(sentinel: &mut sentinel_core::tick::Sentinel, config: &Config) {
    if !matches!(config.metrics, crate::config::MetricsConfig::Synthetic) {
        return;
    }
    let newest = match sentinel.ports.memory.recent_ticks(1).await {
        Ok(newest) => newest.into_iter().next(),
        Err(e) => {
            tracing::warn!("cannot read the newest decided minute, starting the synthetic cycle as usual: {e}");
            None
        }
    };
    let Some((_, record)) = newest else { return };
    // Only a cycle decided to its end is skipped: sentinels started together on one store
    // (replicas, the race tests) still share the minutes of the cycle they start in.
    let last = sentinel.ports.metrics.span().map(|s| s.1);
    if last.is_some_and(|last| last <= record.at) {
        sentinel.ports.metrics = Box::new(sentinel_adapters::synthetic::Synthetic::after(record.at));
        tracing::info!(
            newest = %sentinel_core::instants::format_rfc3339(record.at),
            "the store has decided this cycle already; the simulated clock continues with the next one"
        );
    }
}

/// Sleeps; true when a shutdown signal came first.
async fn sleep_or_stop(pause: Duration, stopping: &AtomicBool, wake: &Notify) -> bool {
    if stopping.load(Ordering::SeqCst) {
        return true;
    }
    tokio::select! {
        _ = tokio::time::sleep(pause) => stopping.load(Ordering::SeqCst),
        _ = wake.notified() => true,
    }
}

fn listen_for_shutdown(stopping: Arc<AtomicBool>, wake: Arc<Notify>) {
    tokio::spawn(async move {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("cannot listen for SIGTERM: {e}");
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        tracing::info!("shutdown requested: finishing the tick in flight");
        stopping.store(true, Ordering::SeqCst);
        wake.notify_waiters();
        wake.notify_one();
    });
}

/// Printed once before the first live line: what its columns and marks mean.
const LIVE_HEADER: &str = "times in UTC (the Z); each line: the minute, state, level of the reading, the four factors, \
the cause, the sequence, then each channel as configured: + published, ! failed (a log line on stderr says why)";

fn live_line(r: &TickReport, n: u64, total: Option<u64>) {
    let d = &r.decision;
    let time = r.document.decided_at.get(11..16).map(|hm| format!("{hm}Z")).unwrap_or_default();
    let progress = total.map(|t| format!("[{n}/{t}] ")).unwrap_or_default();
    let level = d.level.map(|n| n.name()).unwrap_or("read-failed");
    let mut channels: String =
        r.outcomes.iter().map(|o| format!("{}{}", o.channel, if o.ok { '+' } else { '!' })).collect::<Vec<_>>().join(" ");
    if r.republished {
        channels.push_str(" (already decided: republished)");
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{progress}{time} {:<11} level {:<11} bulk {:.2} heavy {:.2} write {:.2} read {:.2}  {:<23} seq {} {channels}",
        d.state.name(),
        level,
        d.factors.bulk,
        d.factors.heavy,
        d.factors.write,
        d.factors.read,
        d.cause.name(),
        r.sequence,
    );
}
