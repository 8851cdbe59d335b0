//! What a `[policies]` table configures before any version runs: the trust its manifests are
//! checked against, the preparer that verifies, loads and checks a version, and the role of the
//! command (leader or follower); and the lifecycle's error.

use super::activate::Preparer;
use super::state::{self, PolicyState, StateError};
use super::{cache, signing};
use crate::policy::Runtime;
use crate::policy::settings::PoliciesConfig;
use std::path::Path;
use std::sync::Arc;

/// Why the lifecycle could not start, or could not record what it did.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// The configured `public_key` (the message names the file and what is wrong).
    #[error("{0}")]
    PublicKey(String),
    /// The persisted policy state could not be read or written.
    #[error(transparent)]
    State(#[from] StateError),
    /// At startup no version could be activated: every one tried was refused.
    #[error("no policy version in {dir} passed its checks (see the errors above){condemned}")]
    NonePassed {
        /// The policy directory.
        dir: std::path::PathBuf,
        /// The versions an earlier run marked unhealthy and not tried this time, as a clause to
        /// append to the message (empty: none).
        condemned: String,
    },
}

/// The trust a `[policies]` table configures.
pub fn trust(config: &PoliciesConfig) -> Result<signing::Trust, LifecycleError> {
    let key = match &config.public_key {
        Some(p) => Some(signing::read_public(p).map_err(LifecycleError::PublicKey)?),
        None => None,
    };
    if config.allow_unsigned {
        tracing::warn!("policies.allow_unsigned = true: unsigned policy manifests in {} will load", config.dir.display());
    }
    Ok(signing::Trust { key, allow_unsigned: config.allow_unsigned })
}

/// A leader (`run`, `tick`) decides which version is active and persists it; a follower
/// (`serve`, `pin`, `check`) runs the version the persisted state names, verified the same
/// way, and never writes the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Chooses the active version and persists it, runs the shadow and records rollbacks
    /// (`run`, `tick`).
    Leader,
    /// Runs the version the persisted state names, and writes neither the state nor the
    /// artifact cache (`serve`, `pin`, `check`).
    Follower,
}

impl Role {
    /// Changes the saved state in the private `state_dir` under its lock ([`state::update`]):
    /// the leader's alone (a follower never writes).
    pub(super) fn update(self, state_dir: &Path, change: impl FnOnce(&mut PolicyState)) -> Result<(), StateError> {
        match self {
            Role::Leader => state::update(state_dir, change).map(drop),
            Role::Follower => Ok(()),
        }
    }
}

/// The preparer a `[policies]` table configures (a follower uses the leader's authenticated
/// artifacts but never creates or writes the artifact cache).
pub fn preparer(config: &PoliciesConfig, runtime: Arc<Runtime>, role: Role) -> Result<Preparer, LifecycleError> {
    Ok(Preparer {
        dir: config.dir.clone(),
        runtime,
        trust: trust(config)?,
        cache: config.precompiled_cache.then(|| cache::cache_dir(&config.state_dir)),
        cache_read_only: role == Role::Follower,
        minimum_version: config.minimum_version.clone(),
    })
}
