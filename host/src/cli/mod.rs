//! The commands of `sentinel` (clap derive) and their dispatch.

mod alert_rules;
mod check;
mod connect_report;
mod failures;
mod init;
mod pin;
mod policy;
mod replay;
mod run;
mod serve;
mod shell_help;
mod stages;
mod tick;
mod trace;
mod tune;

use clap::{Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

/// The `sentinel` command line: the global flags and the command to run.
#[derive(Debug, Parser)]
#[command(name = "sentinel", version, about = "Capacity sentinel: protects a shared database from background work under pressure")]
pub struct Cli {
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// How logs are written on stderr (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines, coloured on a terminal.
    Text,
    /// One JSON object per line, for a log collector.
    Json,
}

/// The commands of `sentinel`, one per subcommand.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the minute loop.
    Run(run::RunArgs),
    /// Run one tick, then exit (for cron or a scheduler).
    Tick(tick::TickArgs),
    /// Staff pins: set, clear, show, audit.
    Pin(pin::PinArgs),
    /// Emergency stage throttles: what is throttled now, and every change made.
    Stages(stages::StagesArgs),
    /// Validate the config and the policy and print what would run.
    Check(check::CheckArgs),
    /// Policy versions: scaffold, build, tune, sign, verify, list, activate, shadow, promote, roll back.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// Replay recorded traces through one or two policies.
    Replay(replay::ReplayArgs),
    /// Work with trace files.
    #[command(subcommand)]
    Trace(trace::TraceCommand),
    /// Serve the HTTP API: state, staff pins, audit, metrics, probes, OpenAPI.
    Serve(serve::ServeArgs),
    /// Print the Prometheus alert rules (deploy/prometheus/sentinel-alerts.yml).
    AlertRules(alert_rules::AlertRulesArgs),
    /// List the ticks that failed (the dead letters), newest first.
    Failures(failures::FailuresArgs),
    /// Write a folder with a signing key, signed policies and a config that publishes to Redis.
    Init(init::InitArgs),
    /// Print shell completions (README: "Shell completions and the man page").
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write a page per command into a folder.
    Man {
        /// Write `sentinel.1` and one `sentinel-<command>.1` per command here (a `man1`
        /// folder of the MANPATH) instead of printing the first.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<std::path::PathBuf>,
    },
}

/// Logs go to stderr; `RUST_LOG` filters them (default `info`), in the `target=level` form
/// (`warn`, `capacity_sentinel=debug,info`, `off`). A `RUST_LOG` that is not such a filter is named on
/// stderr and the default is used.
pub fn init_logging(cli: &Cli) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    // `sentinel run` in a terminal shows a live line per tick; logs then default to warnings.
    let live = matches!(cli.command, Command::Run(_)) && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let default = if live { "warn" } else { "info" };
    let filter = log_filter(std::env::var("RUST_LOG").ok().as_deref(), default);
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt().with_max_level(tracing::Level::TRACE).with_ansi(ansi).with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => builder.finish().with(filter).init(),
        LogFormat::Json => builder.json().finish().with(filter).init(),
    }
}

/// The log filter from `RUST_LOG` (`target=level` directives; tracing-subscriber's `Targets`,
/// which needs no regular-expression engine in the build), or `default` when it is unset,
/// empty or not a filter.
fn log_filter(rust_log: Option<&str>, default: &str) -> tracing_subscriber::filter::Targets {
    let fallback = || default.parse().expect("the default log filter parses");
    match rust_log.map(str::trim) {
        None | Some("") => fallback(),
        Some(text) => match text.parse() {
            Ok(filter) => with_moved_targets(filter),
            Err(e) => {
                eprintln!(
                    "RUST_LOG={text:?} is not a log filter ({e}); logging at {default:?}. Use `target=level` directives, for example RUST_LOG=capacity_sentinel=debug,info"
                );
                fallback()
            }
        },
    }
}

/// The sentinel's logs come from three crates: `capacity_sentinel` (the binary's commands, API
/// and setup), `sentinel_core` (the tick, the policy lifecycle, replay) and `sentinel_adapters`.
/// Before they were split, every log's target began `capacity_sentinel`, and operators' filters
/// say so: a directive for `capacity_sentinel` also applies to the two others, and one for
/// `capacity_sentinel::tick` (`::adapters::redis_publisher`) to `sentinel_core::tick`
/// (`sentinel_adapters::redis_publisher`), unless the filter names those itself.
fn with_moved_targets(filter: tracing_subscriber::filter::Targets) -> tracing_subscriber::filter::Targets {
    let named: Vec<(String, tracing::level_filters::LevelFilter)> = filter.iter().map(|(t, l)| (t.to_string(), l)).collect();
    let mut moved = Vec::new();
    for (target, level) in &named {
        let Some(rest) = target.strip_prefix("capacity_sentinel") else { continue };
        let now = match rest.strip_prefix("::") {
            None if rest.is_empty() => vec!["sentinel_core".to_string(), "sentinel_adapters".to_string()],
            Some("adapters") => vec!["sentinel_adapters".to_string()],
            Some(inner) => match inner.strip_prefix("adapters::") {
                Some(adapter) => vec![format!("sentinel_adapters::{adapter}")],
                None => vec![format!("sentinel_core::{inner}")],
            },
            None => continue, // another crate whose name begins the same way
        };
        moved.extend(now.into_iter().filter(|t| !named.iter().any(|(n, _)| n == t)).map(|t| (t, *level)));
    }
    filter.with_targets(moved)
}

/// Runs the command `cli` names and returns the exit code it ends with (0, or one of `exit`); an
/// error is left to `main`, which prints it and exits with 2.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Tick(args) => tick::run(args),
        Command::Pin(args) => pin::run(args),
        Command::Stages(args) => stages::run(args),
        Command::Check(args) => check::run(args),
        Command::Policy(cmd) => policy::run(cmd),
        Command::Replay(args) => replay::run(args),
        Command::Trace(cmd) => trace::run(cmd),
        Command::Serve(args) => serve::run(args),
        Command::AlertRules(args) => alert_rules::run(args),
        Command::Failures(args) => failures::run(args),
        Command::Init(args) => init::run(args),
        Command::Completions { shell } => shell_help::completions(shell),
        Command::Man { out_dir } => shell_help::man(out_dir.as_deref()),
    }
}

/// Exit codes beyond 0 (success) and 2 (an error with its message).
pub mod exit {
    /// The tick failed: both channels, the store or the policy.
    pub const TICK_FAILED: u8 = 1;
    /// Input was refused (a pin, a flag); nothing changed.
    pub const INVALID_INPUT: u8 = 4;
    /// Another sentinel holds the lock; this one did not decide or publish.
    pub const LOCK_HELD: u8 = 3;
    /// `policy tune --write`: the choice is the base's numbers, so nothing was written.
    pub const UNCHANGED: u8 = 5;
    /// `check --connect`: a configured server could not be reached as a tick reaches it.
    pub const UNREACHABLE: u8 = 6;
}

/// Runs `work` on a rayon pool of `--jobs N` workers (default: one per core); `what` names the
/// work in the error when the pool cannot start.
fn with_jobs<T>(jobs: Option<usize>, what: &str, work: impl FnOnce() -> anyhow::Result<T> + Send) -> anyhow::Result<T>
where
    T: Send,
{
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = jobs {
        if n == 0 {
            anyhow::bail!("--jobs: must be at least 1");
        }
        builder = builder.num_threads(n);
    }
    let pool = builder.build().map_err(|e| anyhow::anyhow!("starting the {what} worker threads: {e}"))?;
    pool.install(work)
}

/// Writes one line to stdout; a closed pipe (`sentinel ... | head`) ends output quietly.
pub fn emit(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod log_filter_tests {
    use super::log_filter;
    use tracing::Level;

    #[test]
    fn rust_log_directives_filter_by_target_and_level() {
        let filter = log_filter(Some("capacity_sentinel=debug,wasmtime=off,warn"), "info");
        assert!(filter.would_enable("capacity_sentinel::tick", &Level::DEBUG));
        assert!(!filter.would_enable("capacity_sentinel::tick", &Level::TRACE));
        assert!(!filter.would_enable("wasmtime::runtime", &Level::ERROR));
        assert!(filter.would_enable("hyper", &Level::WARN));
        assert!(!filter.would_enable("hyper", &Level::INFO));
        assert!(!log_filter(Some("off"), "info").would_enable("capacity_sentinel", &Level::ERROR));
    }

    /// The tick, the lifecycle and the adapters log from `sentinel_core` and `sentinel_adapters`
    /// since the crates were split; a filter written for `capacity_sentinel` still reaches them.
    #[test]
    fn a_filter_for_capacity_sentinel_reaches_the_core_and_the_adapters() {
        let filter = log_filter(Some("capacity_sentinel=debug,info"), "info");
        for target in ["capacity_sentinel::cli", "sentinel_core::tick::publish", "sentinel_adapters::redis_publisher"] {
            assert!(filter.would_enable(target, &Level::DEBUG), "{target}");
            assert!(!filter.would_enable(target, &Level::TRACE), "{target}");
        }
        let narrow = log_filter(Some("capacity_sentinel::tick=trace,capacity_sentinel::adapters::postgres=debug,warn"), "info");
        assert!(narrow.would_enable("sentinel_core::tick::gather", &Level::TRACE));
        assert!(narrow.would_enable("sentinel_adapters::postgres::lock", &Level::DEBUG));
        assert!(!narrow.would_enable("sentinel_core::policy", &Level::INFO));
        assert!(!narrow.would_enable("sentinel_adapters::sqlite", &Level::INFO));
        // A filter that names the new targets itself is taken as written.
        let own = log_filter(Some("capacity_sentinel=debug,sentinel_core=warn"), "info");
        assert!(!own.would_enable("sentinel_core::tick", &Level::INFO));
        assert!(own.would_enable("sentinel_adapters::sqlite", &Level::DEBUG));
        assert!(!log_filter(Some("capacity_sentinel_other=debug,warn"), "info").would_enable("sentinel_core", &Level::INFO));
    }

    #[test]
    fn unset_empty_or_unparsable_rust_log_means_the_default() {
        for value in [None, Some(""), Some("  "), Some("capacity_sentinel=loud")] {
            let filter = log_filter(value, "warn");
            assert!(filter.would_enable("capacity_sentinel", &Level::WARN), "{value:?}");
            assert!(!filter.would_enable("capacity_sentinel", &Level::INFO), "{value:?}");
        }
    }
}
