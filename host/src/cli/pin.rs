//! `sentinel pin set|clear|show|audit`: staff pins against the configured store, validated by
//! the policy's exported function.

use crate::config::Config;
use clap::{Args, Subcommand};
use sentinel_core::pin_service::{PinService, PinServiceError};
use sentinel_core::policy::active::SharedPolicy;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use vocabulary::PinRequest;

#[derive(Debug, Args)]
pub struct PinArgs {
    /// The config file (default: the embedded default).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: PinCommand,
}

#[derive(Debug, Subcommand)]
pub enum PinCommand {
    /// Pin the state until the pin expires (replaces any pin).
    Set {
        #[arg(long)]
        state: String,
        #[arg(long)]
        reason: String,
        /// How long from now, e.g. 2h or 30m (at most 24 h). A value that is not a duration is
        /// a refused pin (exit 4), like any other invalid field.
        #[arg(long, allow_hyphen_values = true)]
        expires_in: String,
        /// Who pins (recorded in the audit).
        #[arg(long)]
        actor: String,
    },
    /// Remove the pin.
    Clear {
        #[arg(long)]
        actor: String,
    },
    /// Print the stored pin as JSON (null when none).
    Show,
    /// Print audit records as JSON lines, newest first.
    Audit {
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// Only records with ids below this (the next page).
        #[arg(long)]
        before: Option<i64>,
    },
}

/// `--expires-in` as seconds; a value that is not a duration is refused as the pin's
/// `expires_at`.
fn expires_in_seconds(text: &str) -> Result<i64, PinServiceError> {
    let refuse = |why: String| PinServiceError::Invalid {
        field: "expires_at",
        message: format!("--expires-in `{text}` is not a duration from now such as 30m or 2h ({why})"),
    };
    let duration: Duration = humantime::parse_duration(text.trim()).map_err(|e| refuse(e.to_string()))?;
    i64::try_from(duration.as_secs()).map_err(|e| refuse(e.to_string()))
}

pub fn run(args: PinArgs) -> anyhow::Result<ExitCode> {
    let config = Config::load(args.config.as_deref())?;
    let now = sentinel_core::clock::now_seconds();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let policy: SharedPolicy = runtime.block_on(crate::setup::active_policy(&config))?.shared();
    let stores = runtime.block_on(crate::setup::open_store(&config))?;
    let service = PinService::new(stores.pins, policy);
    let result = runtime.block_on(async {
        let mut lines = Vec::new();
        match args.command {
            PinCommand::Set { state, reason, expires_in, actor } => {
                let expires_in = expires_in_seconds(&expires_in)?;
                let expires_at = now.saturating_add(expires_in);
                let record = service.set(PinRequest { state, reason, expires_at, actor }, now).await?;
                lines.push(audit_line(&record));
            }
            PinCommand::Clear { actor } => match service.clear(&actor, now).await? {
                Some(record) => lines.push(audit_line(&record)),
                None => eprintln!("no pin was set; nothing changed"),
            },
            PinCommand::Show => {
                let pin = service.show().await?;
                let view = pin.map(|p| {
                    serde_json::json!({
                        "state": p.state.name(),
                        "reason": p.reason,
                        "expires_at": sentinel_core::instants::format_rfc3339(p.expires_at),
                        "actor": p.actor,
                        "active": p.expires_at > now,
                    })
                });
                lines.push(serde_json::to_string_pretty(&view).expect("json"));
            }
            PinCommand::Audit { limit, before } => {
                for record in service.audit(limit, before).await? {
                    lines.push(audit_line(&record));
                }
            }
        }
        Ok::<_, PinServiceError>(lines)
    });
    match result {
        Ok(lines) => {
            for line in lines {
                super::emit(&line)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ PinServiceError::Invalid { .. }) => {
            eprintln!("error: pin refused, nothing changed: {e}");
            Ok(ExitCode::from(super::exit::INVALID_INPUT))
        }
        Err(e) => Err(e.into()),
    }
}

/// An audit record as people and the API read it: times in RFC 3339, as `GET /v1/pin/audit`
/// gives them (`api::model::AuditEntry`, the one conversion).
fn audit_line(record: &sentinel_core::ports::pins::AuditRecord) -> String {
    serde_json::to_string(&crate::api::model::AuditEntry::from(record)).expect("audit records serialize")
}
