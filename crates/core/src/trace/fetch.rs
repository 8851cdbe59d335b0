//! `sentinel trace fetch` (docs/behaviour.md §10.9): a window of history from the live
//! configuration's metrics source, one trace line per step, exactly as the live sentinel would
//! have read each minute: a step without data is a failed read with the live text, a value out
//! of range a failed read as the tick makes it (`check_reading`).
//!
//! The window is asked for in requests the server accepts (at most a day, and never more than
//! its limit of points), in time order; a request that fails for a reason that may pass is
//! asked again after 1 s, 2 s, 4 s... (at most 30 s apart). Into a file, every answered request
//! is on disk before the next is asked (`super::fetch_partial`), so a fetch that stops goes on
//! where it stopped when the same command is run again. The same window from the same data is
//! the same trace, byte for byte, however it was cut or resumed.

use super::fetch_partial::Partial;
pub use super::fetch_partial::PartialError;
pub use super::fetch_window::Window;
use super::write_event;
use crate::instants::format_rfc3339;
use crate::ports::history::{HistoryError, HistoryStep, MetricsHistory, step_times};
use crate::ports::metrics::check_reading;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;
use vocabulary::{Instant, Signal, TraceEvent};

/// The longest wait between two attempts of one request.
const LONGEST_WAIT: Duration = Duration::from_secs(30);
/// The most steps one request covers, whatever the server allows: a day at one a minute.
const STEPS_PER_DAY_AT_ONE_A_MINUTE: u64 = 1440;

/// Where the trace goes.
#[derive(Debug, Clone)]
pub enum Destination {
    /// Standard output, one request's lines at a time; nothing is kept to go on from.
    Stdout,
    /// A file, through `FILE.partial` (resumable).
    File(PathBuf),
}

/// How a fetch asks the source: how often to retry, how long to wait, how large each request is,
/// and whether to draw a progress bar.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// How many times a failed request is asked again before the fetch stops.
    pub retries: u32,
    /// The wait before the first retry; it doubles each time.
    pub first_wait: Duration,
    /// Draw a progress bar (when stderr is a terminal).
    pub progress: bool,
    /// At most this many steps a request (never more than a day's, nor the server's limit).
    pub request_steps: Option<u64>,
}

/// What a finished fetch wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Steps in the finished trace, those kept from an earlier run included.
    pub steps: u64,
    /// Steps fetched by an earlier run of the same command, kept.
    pub kept: u64,
    /// Steps fetched by this run that hold a reading.
    pub readings: u64,
    /// Steps fetched by this run that hold a failed read (no data, or a value out of range).
    pub failed_reads: u64,
    /// Requests that failed and were asked again.
    pub retried: u64,
}

/// Why a fetch stopped. What it wrote to a file stays in `FILE.partial`, for the same command
/// to go on from.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The partial file could not be opened, gone on with, written or renamed to `FILE`.
    #[error(transparent)]
    File(#[from] PartialError),
    /// Writing to standard output failed (e.g. the pipe was closed).
    #[error("writing the trace to stdout: {0}")]
    Stdout(std::io::Error),
    /// A request failed for good, or its retries ran out; `then` says what to do.
    #[error("fetching {from} to {to} from {source_name} failed{attempts}: {why}; {then}")]
    Request {
        /// The request's first step (RFC 3339).
        from: String,
        /// The request's last step, included (RFC 3339).
        to: String,
        /// The source, as `MetricsHistory::describe` names it.
        source_name: String,
        /// ` N times` (with its leading space) when the retries ran out; empty when the request
        /// failed for good at once.
        attempts: String,
        /// The source's error, or what was wrong with its answer.
        why: String,
        /// What to do: what to change, and how to go on from the steps kept.
        then: String,
    },
}

/// Fetches `window` from `history` into `destination`.
pub async fn fetch(
    history: &dyn MetricsHistory,
    window: &Window,
    destination: &Destination,
    options: &FetchOptions,
) -> Result<Fetched, FetchError> {
    let mut partial = match destination {
        Destination::File(out) => Some(Partial::open(out, window, &history.fingerprint())?),
        Destination::Stdout => None,
    };
    let first = partial.as_ref().map_or(window.from, |p| p.next);
    let kept = partial.as_ref().map_or(0, |p| p.kept);
    let per_request = history
        .max_steps()
        .min(STEPS_PER_DAY_AT_ONE_A_MINUTE * 60 / u64::from(window.step))
        .min(options.request_steps.unwrap_or(u64::MAX))
        .max(1);
    let requests = window.requests(first, per_request);
    tracing::info!(
        source = %history.describe(),
        window = %window.describe(),
        requests = requests.len(),
        "fetching {} steps ({kept} kept from an earlier run) in {} requests of at most {per_request} steps",
        window.steps() - kept,
        requests.len()
    );
    let bar = progress(options.progress, window.steps(), kept);
    let mut fetched = Fetched { steps: kept, kept, readings: 0, failed_reads: 0, retried: 0 };
    for (start, end) in requests {
        let steps = ask(history, window, start, end, options, &mut fetched, partial.as_ref().map(Partial::path)).await?;
        let mut lines = String::new();
        for (at, read) in steps {
            let signal = match read.map_err(|e| e.to_string()).and_then(|r| check_reading(&r).map(|()| r)) {
                Ok(reading) => {
                    fetched.readings += 1;
                    Signal::Reading(reading)
                }
                Err(why) => {
                    fetched.failed_reads += 1;
                    Signal::Failed(why)
                }
            };
            lines.push_str(&write_event(&TraceEvent::Tick { at, signal }));
            lines.push('\n');
            fetched.steps += 1;
        }
        let next = end + Instant::from(window.step);
        match &mut partial {
            Some(partial) => partial.append(&lines, next)?,
            None => {
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(lines.as_bytes()).and_then(|()| stdout.flush()).map_err(FetchError::Stdout)?;
            }
        }
        bar.set_position(fetched.steps);
        tracing::debug!(from = %format_rfc3339(start), to = %format_rfc3339(end), "fetched and written");
    }
    if let Some(partial) = partial {
        partial.finish()?;
    }
    bar.finish_and_clear();
    Ok(fetched)
}

/// One request, asked again while it fails for a reason that may pass.
async fn ask(
    history: &dyn MetricsHistory,
    window: &Window,
    start: Instant,
    end: Instant,
    options: &FetchOptions,
    fetched: &mut Fetched,
    kept_in: Option<&std::path::Path>,
) -> Result<Vec<HistoryStep>, FetchError> {
    let mut wait = options.first_wait;
    let mut attempt = 1;
    let failed = |attempts: String, why: String, then: String| FetchError::Request {
        from: format_rfc3339(start),
        to: format_rfc3339(end),
        source_name: history.describe(),
        attempts,
        why,
        then,
    };
    // A window given as a duration moves with the clock: the command that goes on names it.
    let again = format!("--since {} --until {}", format_rfc3339(window.from), format_rfc3339(window.until));
    let resume = || match kept_in {
        Some(path) if start > window.from => format!(
            "the steps before {} are kept in {}: run the command again with {again} to go on from there",
            format_rfc3339(start),
            path.display()
        ),
        Some(_) => format!("nothing was fetched yet: run the command again with {again} once the server answers"),
        None => "nothing was kept: write to a file (-o FILE) to be able to go on where a fetch stops".to_string(),
    };
    let steps_in = |a: Instant, b: Instant| (b - a) / Instant::from(window.step) + 1;
    loop {
        match history.steps(start, end, window.step).await {
            Ok(steps) => {
                let asked = step_times(start, end, window.step);
                if !steps.iter().map(|(at, _)| *at).eq(asked) {
                    let why = format!(
                        "the source gave {} steps, not the {} asked for at every {} s from {}",
                        steps.len(),
                        steps_in(start, end),
                        window.step,
                        format_rfc3339(start)
                    );
                    return Err(failed(String::new(), why, "this is a defect of the sentinel: please report it".into()));
                }
                return Ok(steps);
            }
            // A request the server finds too large is the one refusal a smaller one mends.
            Err(HistoryError::TooLarge(why)) => {
                let then = format!(
                    "ask for fewer steps per request with --request-steps N (this one asked for {}); {}",
                    steps_in(start, end),
                    resume()
                );
                return Err(failed(String::new(), why, then));
            }
            Err(HistoryError::Refused(why)) => {
                let then = format!("asking again will not help: check [metrics] in the configuration; {}", resume());
                return Err(failed(String::new(), why, then));
            }
            Err(HistoryError::Transient(why)) if attempt <= options.retries => {
                tracing::warn!(
                    attempt,
                    of = options.retries + 1,
                    from = %format_rfc3339(start),
                    "a request failed, asking again in {}: {why}",
                    crate::shown_duration::duration(wait)
                );
                fetched.retried += 1;
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(LONGEST_WAIT);
                attempt += 1;
            }
            Err(HistoryError::Transient(why)) => {
                let attempts = format!(" {attempt} times");
                return Err(failed(attempts, why, format!("check that the server is up; {}", resume())));
            }
        }
    }
}

/// The bar on stderr, drawn when asked and stderr is a terminal.
fn progress(wanted: bool, total: u64, done: u64) -> ProgressBar {
    if !wanted || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("fetch [{bar:30}] {human_pos}/{human_len} steps, {elapsed} (eta {eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_position(done);
    bar
}
