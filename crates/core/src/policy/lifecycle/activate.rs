//! Preparing a candidate version, off the tick path: verify (digest, signature), compile or
//! load the cached artifact, `instantiate_pre` against the `policy` world, the checks every
//! version must pass, and a trial replay of the recorded ticks. Only a candidate that passed
//! all of it is ever swapped in.

use super::cache::{self, Origin};
use super::checks;
use super::manifest::{self, Entry};
use super::signing::Trust;
use crate::policy::{ComponentPolicy, Policy, Runtime};
use crate::ports::memory::TickRecord;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A version that passed every check, ready to swap in.
pub struct Candidate {
    pub policy: Box<dyn Policy>,
    pub version: String,
    pub digest: String,
    pub origin: Origin,
    pub timings: Timings,
}

impl std::fmt::Debug for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Candidate").field("version", &self.version).field("origin", &self.origin).finish_non_exhaustive()
    }
}

/// How long each step took.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    pub verify: Duration,
    pub load: Duration,
    pub checks: Duration,
    pub trial: Duration,
    pub trial_ticks: usize,
}

impl Timings {
    pub fn total(&self) -> Duration {
        self.verify + self.load + self.checks + self.trial
    }
}

/// Why a version was refused, naming it and the step.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error("policy {version} refused: {source}")]
    Integrity { version: String, source: manifest::IntegrityError },
    #[error("policy {version} refused at load: {message}")]
    Load { version: String, message: String },
    #[error("policy {version} refused by the conformance self-check: {message}")]
    Conformance { version: String, message: String },
    #[error("policy {version} refused by the trial replay of {ticks} recorded ticks: {message}")]
    Trial { version: String, ticks: usize, message: String },
    #[error(
        "policy {version} refused: it is older than policies.minimum_version = {minimum} (older versions never run, \
         whatever the persisted state says: activate {minimum} or newer, or lower minimum_version)"
    )]
    BelowMinimum { version: String, minimum: String },
}

impl Refused {
    /// Whether the refusal condemns the version: it ran and failed its health checks (the
    /// conformance self-check or the trial replay). A file that cannot be read or verified, a
    /// component that does not load, or a version below the minimum says nothing lasting about
    /// the version's code (a restored file, more memory or a changed config fixes it): such a
    /// refusal is retried, never recorded as unhealthy.
    pub fn condemns(&self) -> bool {
        matches!(self, Refused::Conformance { .. } | Refused::Trial { .. })
    }
}

/// What preparing needs.
#[derive(Clone)]
pub struct Preparer {
    pub dir: PathBuf,
    pub runtime: Arc<Runtime>,
    pub trust: Trust,
    /// The precompiled cache in the private state directory (none: always compile).
    pub cache: Option<PathBuf>,
    /// Use the cache's authenticated artifacts but never create or write it (a follower).
    pub cache_read_only: bool,
    /// `policies.minimum_version`: older versions are refused.
    pub minimum_version: Option<String>,
}

impl std::fmt::Debug for Preparer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Preparer").field("dir", &self.dir).field("cache", &self.cache).finish_non_exhaustive()
    }
}

impl Preparer {
    /// Prepares `version` of the directory.
    pub fn version(&self, version: &str, records: &[TickRecord]) -> Result<Candidate, Refused> {
        self.at_least_minimum(version)?;
        let entry = manifest::find(&self.dir, version).map_err(|source| Refused::Integrity { version: version.into(), source })?;
        self.entry(&entry, records)
    }

    /// Prepares one manifest's component; `records` (oldest first) are replayed.
    pub fn entry(&self, entry: &Entry, records: &[TickRecord]) -> Result<Candidate, Refused> {
        let version = entry.manifest.version.clone();
        self.at_least_minimum(&version)?;
        let mut timings = Timings::default();
        let started = Instant::now();
        let verified = manifest::verify(entry, &self.trust).map_err(|source| Refused::Integrity { version: version.clone(), source })?;
        timings.verify = started.elapsed();

        let started = Instant::now();
        let load = |message: String| Refused::Load { version: version.clone(), message };
        let loaded = if self.cache_read_only {
            cache::load_read_only(self.cache.as_deref(), &self.runtime, &verified)
        } else {
            cache::load(self.cache.as_deref(), &self.runtime, &verified)
        };
        let (component, origin) = loaded.map_err(|e| load(format!("{e:#}")))?;
        let digest = verified.entry.manifest.sha256.to_ascii_lowercase();
        let mut policy: Box<dyn Policy> = Box::new(
            ComponentPolicy::from_component(&self.runtime, &entry.component_path, &component, digest.clone(), None)
                .map_err(|e| load(e.to_string()))?,
        );
        let described = policy.identity().version.clone();
        if described != version {
            return Err(load(format!(
                "the component describes itself as version {described}, its manifest {} says {version}",
                entry.manifest_path.display()
            )));
        }
        timings.load = started.elapsed();

        let started = Instant::now();
        checks::self_check(policy.as_mut()).map_err(|message| Refused::Conformance { version: version.clone(), message })?;
        timings.checks = started.elapsed();

        let started = Instant::now();
        timings.trial_ticks = checks::trial_replay(policy.as_mut(), records).map_err(|message| Refused::Trial {
            version: version.clone(),
            ticks: records.len(),
            message,
        })?;
        timings.trial = started.elapsed();
        Ok(Candidate { policy, version, digest, origin, timings })
    }

    /// Refuses a version older than `minimum_version`.
    pub fn at_least_minimum(&self, version: &str) -> Result<(), Refused> {
        match &self.minimum_version {
            Some(minimum) if manifest::compare_versions(version, minimum).is_lt() => {
                Err(Refused::BelowMinimum { version: version.into(), minimum: minimum.clone() })
            }
            _ => Ok(()),
        }
    }
}

/// Where the trial replay's records come from in a running sentinel: up to a day of minutes.
pub const TRIAL_WINDOW: Duration = Duration::from_secs(24 * 3600);
