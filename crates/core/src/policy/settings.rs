//! The `[policies]` table: the policy directory the sentinel watches, which version is active
//! and which runs in shadow, and whose signatures it trusts. Without the table the sentinel
//! runs the single `policy` file, as before.
//!
//! ```toml
//! [policies]
//! dir = "policies"                 # built components with their manifests (and signatures)
//! active = "latest"                # or a version; `sentinel policy activate` overrides it
//! shadow = "2.0.0"                 # optional: evaluated every tick, never published
//! public_key = "keys/policy.pub"   # manifests must be signed by this key
//! allow_unsigned = false           # true loads unsigned manifests, with a warning
//! poll = "2s"                      # how often `sentinel run` looks for changes
//! precompiled_cache = true         # cache compiled artifacts in state_dir
//! state_dir = "sentinel-state"     # private (0700): the policy state and compiled artifacts
//! minimum_version = "1.0.0"        # optional: older versions never run, whatever the state says
//! ```

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The `[policies]` table as written in the configuration, before [`from_raw`] checks it, fills
/// in its defaults and resolves its paths.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicies {
    /// The policy directory, relative to the configuration file's folder unless absolute.
    pub dir: PathBuf,
    /// `latest` or a version (none: `latest`).
    pub active: Option<String>,
    /// The version to run in shadow (none: no shadow).
    pub shadow: Option<String>,
    /// The hex ed25519 public key file manifests must be signed by.
    pub public_key: Option<PathBuf>,
    /// Load unsigned manifests too (none: false).
    pub allow_unsigned: Option<bool>,
    /// How often `sentinel run` looks for changes, as text such as `"2s"` (none: 2 s).
    #[serde(default, with = "humantime_serde::option")]
    pub poll: Option<Duration>,
    /// Cache compiled artifacts in `state_dir` (none: true).
    pub precompiled_cache: Option<bool>,
    /// The private state directory (none: `sentinel-state`).
    pub state_dir: Option<PathBuf>,
    /// The oldest version that may run (none: any).
    pub minimum_version: Option<String>,
}

/// Which version the configuration asks for (the persisted choice of `policy activate` wins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The newest version that passes its checks; a newer one dropped in is activated.
    Latest,
    /// This version (`active = "1.2.0"`), as its manifest names it.
    Version(String),
}

/// The `[policies]` table, checked: defaults filled in and paths resolved against the
/// configuration file's folder.
#[derive(Debug, Clone, PartialEq)]
pub struct PoliciesConfig {
    /// The policy directory the sentinel watches: where new versions, their manifests and
    /// signatures are dropped.
    pub dir: PathBuf,
    /// Which version the configuration asks for.
    pub active: Selection,
    /// The version that decides every tick beside the active one and is never published (none:
    /// no shadow).
    pub shadow: Option<String>,
    /// The public key file manifests must be signed by (none only with `allow_unsigned`).
    pub public_key: Option<PathBuf>,
    /// Unsigned manifests load too, with a warning (the embedded default alone).
    pub allow_unsigned: bool,
    /// How often the watcher looks at `dir` for changes (100 ms to 1 h; 2 s by default).
    pub poll: Duration,
    /// Whether compiled artifacts are cached in `state_dir` (true by default).
    pub precompiled_cache: bool,
    /// The sentinel's private directory: the persisted policy state and the compiled
    /// artifacts. Outside `dir`.
    pub state_dir: PathBuf,
    /// Versions older than this are refused, whatever the persisted state says.
    pub minimum_version: Option<String>,
}

/// Checks the table; errors are (key, message).
pub fn from_raw(raw: Option<RawPolicies>, base: Option<&Path>) -> Result<Option<PoliciesConfig>, (String, String)> {
    let Some(raw) = raw else { return Ok(None) };
    let resolve = |p: PathBuf| match base {
        Some(base) if p.is_relative() => base.join(p),
        _ => p,
    };
    let allow_unsigned = raw.allow_unsigned.unwrap_or(false);
    if raw.public_key.is_none() && !allow_unsigned {
        return Err(("policies.public_key".into(), "is required unless allow_unsigned = true".into()));
    }
    let version = |key: &str, v: Option<String>| -> Result<Option<String>, (String, String)> {
        match v {
            Some(v) if v.trim().is_empty() => Err((key.into(), "must not be blank".into())),
            other => Ok(other),
        }
    };
    let active = match version("policies.active", raw.active)?.as_deref() {
        None | Some("latest") => Selection::Latest,
        Some(v) => Selection::Version(v.into()),
    };
    let poll = raw.poll.unwrap_or(Duration::from_secs(2));
    if !(Duration::from_millis(100)..=Duration::from_secs(3600)).contains(&poll) {
        return Err(("policies.poll".into(), "must be between 100ms and 1h".into()));
    }
    let dir = resolve(raw.dir);
    let state_dir = resolve(raw.state_dir.unwrap_or_else(|| PathBuf::from("sentinel-state")));
    if state_dir.starts_with(&dir) {
        return Err((
            "policies.state_dir".into(),
            format!(
                "{} is inside policies.dir {}: the sentinel's private state must live where only it writes, \
                 outside the directory new versions are dropped into",
                state_dir.display(),
                dir.display()
            ),
        ));
    }
    Ok(Some(PoliciesConfig {
        dir,
        state_dir,
        minimum_version: version("policies.minimum_version", raw.minimum_version)?,
        active,
        shadow: version("policies.shadow", raw.shadow)?,
        public_key: raw.public_key.map(resolve),
        allow_unsigned,
        poll,
        precompiled_cache: raw.precompiled_cache.unwrap_or(true),
    }))
}

/// Signature checks cannot be skipped outside the embedded default: a configuration that
/// reaches servers (`reaches` says which keys) runs only policies whose manifests are signed
/// by a configured key, through `[policies]`. A single `policy` file carries no signature, and
/// `allow_unsigned` is for the embedded default alone.
pub fn require_signatures(reaches: Option<&str>, policies: Option<&PoliciesConfig>) -> Result<(), (String, String)> {
    let Some(reaches) = reaches else { return Ok(()) };
    match policies {
        None => Err((
            "policies".into(),
            format!(
                "is required with {reaches}: outside the embedded default the sentinel runs only signed policies; \
                 put the components and their signed manifests in a directory (`sentinel policy sign`) and set \
                 [policies] dir and public_key (a single `policy` file carries no signature); \
                 `sentinel init --signed DIR` writes a key pair, the signed 1.0.0 policy and a config that uses them"
            ),
        )),
        Some(p) if p.allow_unsigned => Err((
            "policies.allow_unsigned".into(),
            format!(
                "is allowed only with the embedded default (SQLite store, file or stdout channels, logging stage \
                 controller), not with {reaches}: sign the manifests with `sentinel policy sign` and remove it"
            ),
        )),
        Some(_) => Ok(()),
    }
}
