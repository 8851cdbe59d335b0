//! `sentinel policy info FILE.wasm...`: prints what each component is, as JSON.

use crate::policy::{Limits, Runtime, inspect_component};
use anyhow::Context;
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Name, version, sha256, world, imports (must be []) and thresholds of each component.
    Info {
        /// Component files (.wasm).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

pub fn run(cmd: PolicyCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        PolicyCommand::Info { files } => {
            let runtime = Runtime::new(Limits::default())?;
            let mut infos = Vec::new();
            for file in &files {
                infos.push(inspect_component(&runtime, file).with_context(|| format!("inspecting {}", file.display()))?);
            }
            let json = if infos.len() == 1 {
                serde_json::to_string_pretty(&infos[0])?
            } else {
                serde_json::to_string_pretty(&infos)?
            };
            super::emit(&json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
