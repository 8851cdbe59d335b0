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
    /// The version, loaded, instantiated and checked.
    pub policy: Box<dyn Policy>,
    /// Its version, as its manifest and its own description both say.
    pub version: String,
    /// The sha256 of its component, lower-case hex, as verified against the manifest.
    pub digest: String,
    /// Whether it was compiled or loaded from the precompiled cache (and why an artifact was
    /// refused).
    pub origin: Origin,
    /// How long each step of preparing it took.
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
    /// Checking the manifest's signature and the component's size and sha256.
    pub verify: Duration,
    /// Compiling (or loading the cached artifact), instantiating and describing the component.
    pub load: Duration,
    /// The conformance self-check.
    pub checks: Duration,
    /// The trial replay of the recorded ticks.
    pub trial: Duration,
    /// How many recorded ticks the trial replay decided.
    pub trial_ticks: usize,
}

impl Timings {
    /// The four steps together: verify, load, checks and trial.
    pub fn total(&self) -> Duration {
        self.verify + self.load + self.checks + self.trial
    }
}

/// Why a version was refused, naming it and the step.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The version is not in the directory, its manifest cannot be read or trusted (signature),
    /// or its component does not match the manifest.
    #[error("policy {version} refused: {source}")]
    Integrity {
        /// The version refused.
        version: String,
        /// What the manifest check found.
        source: manifest::IntegrityError,
    },
    /// The component did not compile, instantiate or describe itself, or describes itself as
    /// another version than its manifest names.
    #[error("policy {version} refused at load: {message}")]
    Load {
        /// The version refused.
        version: String,
        /// What went wrong while loading it.
        message: String,
    },
    /// The version failed the checks every version must pass (a trap, two answers to one
    /// input, an unsound decision, an invariant broken over the fixed scenario).
    #[error("policy {version} refused by the conformance self-check: {message}")]
    Conformance {
        /// The version refused.
        version: String,
        /// The input or scenario tick it failed on, and how.
        message: String,
    },
    /// The trial replay of the recorded ticks found a trap, an unsound outcome or a broken
    /// invariant.
    #[error("policy {version} refused by the trial replay of {ticks} recorded ticks: {message}")]
    Trial {
        /// The version refused.
        version: String,
        /// How many recorded ticks the trial replay was given.
        ticks: usize,
        /// The recorded tick it failed on, and how.
        message: String,
    },
    /// The version is older than `policies.minimum_version`.
    #[error(
        "policy {version} refused: it is older than policies.minimum_version = {minimum} (older versions never run, \
         whatever the persisted state says: activate {minimum} or newer, or lower minimum_version)"
    )]
    BelowMinimum {
        /// The version refused.
        version: String,
        /// The configured `policies.minimum_version`.
        minimum: String,
    },
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
    /// The policy directory the versions are read from.
    pub dir: PathBuf,
    /// The engine candidates are compiled for and run in.
    pub runtime: Arc<Runtime>,
    /// Which manifest signatures are accepted.
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
pub(crate) const TRIAL_WINDOW: Duration = Duration::from_secs(24 * 3600);
