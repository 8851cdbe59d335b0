//! `sentinel failures`: the dead letters (docs/behaviour.md §11.10), newest first: each failed
//! tick's minute, reason, error and what it had decided, and the tick that ended it.

use crate::config::Config;
use clap::Args;
use sentinel_core::dead_letter::{self, DeadLetter, Recovery};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct FailuresArgs {
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Show at most this many (newest first).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Only the failures no successful tick has ended yet.
    #[arg(long)]
    pub open: bool,
    /// One JSON object per line, as stored, with `ended_by` added.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: FailuresArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.config.as_deref())?;
    let contents = dead_letter::read(&config.dead_letter)?;
    for bad in &contents.unreadable {
        tracing::warn!("{}:{}: not a dead-letter record, skipped: {}", bad.file.display(), bad.line, bad.message);
    }
    let failures = contents.failures();
    let shown: Vec<_> = failures.iter().filter(|(_, ended)| !args.open || ended.is_none()).take(args.limit).collect();
    if !config.dead_letter.exists() && !sentinel_core::dead_letter::rotated(&config.dead_letter).exists() {
        say(
            args.json,
            &format!(
                "no dead-letter file at {} (no tick has failed there yet; the path is the config's `dead_letter`: pass the \
                 --config of the sentinel you mean)",
                config.dead_letter.display()
            ),
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    if shown.is_empty() {
        let what =
            if args.open { "no failed tick is still open (every one was ended by a later success)" } else { "no failed ticks recorded" };
        say(args.json, &format!("{what} in {}", config.dead_letter.display()))?;
    }
    for (letter, ended) in shown {
        if args.json {
            let mut value = serde_json::to_value(letter)?;
            value["ended_by"] = serde_json::to_value(ended)?;
            super::emit(&value.to_string())?;
        } else {
            super::emit(&describe(letter, *ended))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A note for the person: on stdout, or with `--json` on stderr, so that stdout stays valid JSON
/// Lines (no record at all).
fn say(json: bool, message: &str) -> anyhow::Result<()> {
    if json {
        eprintln!("{message}");
        Ok(())
    } else {
        Ok(super::emit(message)?)
    }
}

fn describe(letter: &DeadLetter, ended: Option<&Recovery>) -> String {
    let mut out = format!(
        "#{} minute {} failed ({}) at {}\n  error: {}",
        letter.id,
        letter.minute,
        letter.reason.name(),
        letter.failed_at,
        letter.error
    );
    match &letter.decided {
        Some(d) => out.push_str(&format!(
            "\n  decided: {} (was {}, cause {}) bulk {:.2} heavy {:.2} write {:.2} read {:.2} by policy {} {}\n  why: {}",
            d.state.name(),
            d.previous.name(),
            d.cause.name(),
            d.factors.bulk,
            d.factors.heavy,
            d.factors.write,
            d.factors.read,
            d.policy.name,
            d.policy.version,
            sentinel_core::user_text::escape(&d.explanation)
        )),
        None => out.push_str("\n  decided: nothing (it failed before the policy's decision)"),
    }
    if let Some(sequence) = letter.sequence {
        out.push_str(&format!("\n  stored as sequence {sequence}"));
    }
    for c in &letter.channels {
        out.push_str(&format!(
            "\n  {}: {}",
            c.channel,
            if c.ok { "published".to_string() } else { format!("FAILED: {}", c.error.as_deref().unwrap_or("unknown")) }
        ));
    }
    match ended {
        Some(r) => out.push_str(&format!("\n  ended by sequence {} (minute {}, at {})", r.sequence, r.minute, r.recovered_at)),
        None => out.push_str("\n  not ended yet: no tick has succeeded since"),
    }
    out
}
