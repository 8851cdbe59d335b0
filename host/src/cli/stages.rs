//! `sentinel stages show|changes`: which stages the sentinel has throttled now (since when, and
//! the original limits a restore puts back), and every stage change it made, from the store
//! (docs/behaviour.md §11.3).

use crate::config::Config;
use clap::{Args, Subcommand};
use sentinel_core::instants::format_rfc3339;
use sentinel_core::ports::stage_ledger::{StageChange, StageRecord};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct StagesArgs {
    /// The config file (default: the embedded default).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: StagesCommand,
}

#[derive(Debug, Subcommand)]
pub enum StagesCommand {
    /// The stages throttled now (engaging, engaged or restoring), as a JSON array: since when,
    /// the original limits, and whether the target is still declared.
    Show,
    /// Stage changes as JSON lines, newest first: when, engage or restore, the limits before and
    /// after, the outcome (pending, applied, failed, interrupted) and why it failed.
    Changes {
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
}

pub fn run(args: StagesArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.config.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let stores = runtime.block_on(crate::setup::open_store(&config))?;
    let lines = runtime.block_on(async {
        Ok::<_, sentinel_core::ports::StoreError>(match args.command {
            StagesCommand::Show => {
                let records = stores.stages.stage_records().await?;
                let view: Vec<Value> = records.values().map(|r| record_view(r, &config)).collect();
                vec![serde_json::to_string_pretty(&view).expect("json")]
            }
            StagesCommand::Changes { limit } => {
                stores.stages.stage_changes(limit).await?.iter().map(|c| change_view(c).to_string()).collect()
            }
        })
    })?;
    for line in lines {
        super::emit(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn record_view(r: &StageRecord, config: &Config) -> Value {
    json!({
        "target": r.target.id(),
        "rest_api_id": r.target.rest_api_id,
        "stage": r.target.stage,
        "phase": r.phase.name(),
        "since": format_rfc3339(r.since),
        "updated_at": format_rfc3339(r.updated_at),
        "original": r.original,
        "declared": config.stage_targets.iter().any(|t| t.id() == r.target.id()),
    })
}

fn change_view(c: &StageChange) -> Value {
    json!({
        "id": c.id,
        "at": format_rfc3339(c.at),
        "target": c.target.id(),
        "kind": c.kind.name(),
        "before": c.before,
        "after": c.after,
        "outcome": c.outcome.name(),
        "detail": c.detail,
    })
}
