//! `sentinel policy info FILE.wasm...`: prints what each component is, as JSON; the other
//! commands manage the policy directory of a `[policies]` config (see `lifecycle`).

mod build;
mod lifecycle;
mod new_version;
mod promote;
mod shadow_evidence;

use crate::config::Config;
use crate::config::policies::PoliciesConfig;
use anyhow::Context;
use clap::Subcommand;
use sentinel_core::policy::{Limits, Runtime, inspect_component};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Name, version, sha256, world, imports (must be []) and thresholds of each component.
    Info {
        /// Component files (.wasm).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// The policy directory: versions, digests, signature status, active, shadow, health.
    List {
        #[arg(long)]
        config: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Writes a new ed25519 key pair: PREFIX.key (secret, mode 0600) and PREFIX.pub.
    Keygen {
        #[arg(long)]
        out: PathBuf,
    },
    /// Signs manifests (files, or every manifest of a directory) whose component matches.
    Sign {
        /// The signing key (`policy keygen`).
        #[arg(long)]
        key: PathBuf,
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Checks each manifest's digest and signature; exits 4 when any is refused.
    Verify {
        /// Trust and directory from this config's [policies] table.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Or trust this public key for the manifests or directories named.
        #[arg(long)]
        public_key: Option<PathBuf>,
        paths: Vec<PathBuf>,
    },
    /// Verifies, loads, self-checks and trial-replays VERSION, then makes it the active one
    /// (a running sentinel swaps it in at its next look at the directory).
    Activate {
        version: String,
        #[arg(long)]
        config: PathBuf,
    },
    /// Returns to the previous healthy version (same checks as activate).
    Rollback {
        #[arg(long)]
        config: PathBuf,
    },
    /// Summarizes how the shadow version's decisions diverged from the active one's, and
    /// scores its shadow period against the active version (flaps, capacity, protection delay,
    /// invariants), judged by --gate.
    ShadowReport {
        #[arg(long)]
        config: PathBuf,
        /// Default: the configured shadow.
        #[arg(long)]
        version: Option<String>,
        /// A gate file (policies/gate.toml is an example) that judges the scorecard.
        #[arg(long)]
        gate: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Activates the shadow VERSION when its shadow evidence passes the gate (exit 1 when it
    /// does not); recorded in promotions.jsonl in the policy state directory.
    Promote {
        version: String,
        #[arg(long)]
        config: PathBuf,
        /// The gate file that judges the shadow's scorecard.
        #[arg(long)]
        gate: PathBuf,
        /// The shortest shadow period (one tick a minute) that counts as evidence.
        #[arg(long, default_value = "7d", value_parser = humantime::parse_duration)]
        min_period: Duration,
        /// Promote even when the evidence fails the gate or is too short (needs --reason).
        #[arg(long)]
        force: bool,
        /// Why a promotion past the gate is made: recorded with it.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Builds a version's component and manifest from its folder's policy.toml, without a
    /// compiler: the built-in template with the file's numbers. Sign the result with `policy sign`.
    Build {
        /// The version's folder (policies/<version>/, holding policy.toml).
        dir: PathBuf,
        /// Where <name>-<version>.wasm and its manifest are written.
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
    },
    /// Scaffolds a version folder (policy.toml with the base's numbers, a README) to tune by hand.
    New {
        /// The new version (semver, the folder's name).
        version: String,
        /// The version whose numbers it starts from: a folder of --dir, or the built-in 1.0.0.
        #[arg(long)]
        from: String,
        /// The folder holding the version folders.
        #[arg(long, default_value = "policies")]
        dir: PathBuf,
        /// What the version is for, written into its README.
        #[arg(long)]
        purpose: Option<String>,
    },
    /// Chooses thresholds on recorded evidence: replays every candidate of a search space over
    /// the traces, validates on a hold-out, writes report.md, report.json and pareto.svg, and
    /// with --write the chosen candidate as a policy folder.
    Tune(Box<super::tune::TuneArgs>),
    /// Writes the store's recorded ticks as a trace file, for `sentinel replay`.
    ExportTrace {
        #[arg(long)]
        config: PathBuf,
        #[arg(long, default_value = "24h", value_parser = humantime::parse_duration)]
        since: Duration,
        /// Default: stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

pub fn run(cmd: PolicyCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        PolicyCommand::List { config, json } => lifecycle::list(&config, json),
        PolicyCommand::Build { dir, out } => {
            let component = build::build(&dir, &out)?;
            super::emit(&sentinel_core::policy::template::built_message(&component, &out))?;
            Ok(ExitCode::SUCCESS)
        }
        PolicyCommand::New { version, from, dir, purpose } => {
            let args = new_version::NewArgs { version: &version, from: &from, dir: &dir, purpose: purpose.as_deref() };
            let folder = new_version::new_version(args)?;
            super::emit(&format!(
                "wrote {0}/policy.toml ({from}'s numbers) and {0}/README.md: edit the numbers, say why in the README, then `sentinel policy build {0} -o dist/`",
                folder.display()
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        PolicyCommand::Keygen { out } => lifecycle::keygen(&out),
        PolicyCommand::Sign { key, paths } => lifecycle::sign(&key, &paths),
        PolicyCommand::Verify { config, public_key, paths } => lifecycle::verify(config.as_deref(), public_key.as_deref(), &paths),
        PolicyCommand::Activate { version, config } => lifecycle::activate(&config, &version),
        PolicyCommand::Rollback { config } => lifecycle::rollback(&config),
        PolicyCommand::ShadowReport { config, version, gate, json } => {
            lifecycle::shadow_report(&config, version.as_deref(), gate.as_deref(), json)
        }
        PolicyCommand::Promote { version, config, gate, min_period, force, reason } => {
            let args = promote::PromoteArgs { version: &version, gate: &gate, min_period, force, reason: reason.as_deref() };
            promote::promote(&config, args)
        }
        PolicyCommand::ExportTrace { config, since, out } => lifecycle::export_trace(&config, since, out.as_deref()),
        PolicyCommand::Tune(args) => super::tune::run(*args),
        PolicyCommand::Info { files } => {
            let runtime = Runtime::new(Limits::default())?;
            let mut infos = Vec::new();
            for file in &files {
                infos.push(inspect_component(&runtime, file).with_context(|| format!("inspecting {}", file.display()))?);
            }
            let json = if infos.len() == 1 { serde_json::to_string_pretty(&infos[0])? } else { serde_json::to_string_pretty(&infos)? };
            super::emit(&json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The `[policies]` table every directory command needs, or an error naming the config.
fn policies(config: &Config) -> anyhow::Result<PoliciesConfig> {
    config.policies.clone().with_context(|| format!("{} has no [policies] table (the policy directory)", config.source))
}

/// Runs a store call of a directory command to its end.
fn block_on<T, E: Into<anyhow::Error>>(f: impl std::future::Future<Output = Result<T, E>>) -> anyhow::Result<T> {
    tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(f).map_err(Into::into)
}
