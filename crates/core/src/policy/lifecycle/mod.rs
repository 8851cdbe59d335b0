//! The policy lifecycle: a watched directory of verified versions, activated off the tick
//! path and swapped in atomically, rolled back when the active one fails during a tick, and
//! an optional shadow version compared every tick (docs/behaviour.md §11.2 and §11.9).
//!
//! The swap replaces the `Box<dyn Policy>` inside the sentinel's one [`SharedPolicy`]: the
//! tick locks it once per tick, so a tick runs wholly on the old version or wholly on the new
//! one, and no tick is missed or run twice.

pub mod activate;
mod background;
pub mod cache;
pub mod catalog;
pub mod checks;
mod configured;
mod directory_sync;
pub(crate) mod entry;
mod fingerprint;
pub mod manifest;
pub mod private_dir;
pub mod shadow;
pub mod signing;
pub mod state;
pub mod watcher;

use super::SharedPolicy;
use crate::policy::settings::{PoliciesConfig, Selection};
use crate::policy::{Policy, PolicyError, Runtime};
use crate::ports::memory::{MemoryStore, TickRecord};
use crate::sync::Lock;
use crate::telemetry::Telemetry;
use activate::{Candidate, Preparer, Refused};
use fingerprint::{Fingerprint, fingerprint};
use state::PolicyState;
use std::collections::BTreeSet;
use std::sync::Arc;
use vocabulary::{Decision, DecisionInput};

pub use configured::{LifecycleError, Role, preparer, trust};

/// The policy versions of a `[policies]` directory in a running process: the active version
/// (inside the shared box the tick decides with), the last good one to fall back to, the
/// optional shadow, and what the watcher last saw of the directory.
pub struct Lifecycle {
    /// The `[policies]` table it runs.
    pub config: PoliciesConfig,
    /// How a candidate version is verified, loaded and checked before it is activated.
    pub preparer: Preparer,
    /// Whether this process chooses the active version (leader) or follows the persisted state.
    pub role: Role,
    /// Where the trial replay's records come from (none: no trial replay, as for a follower).
    memory: Option<Arc<dyn MemoryStore>>,
    active: SharedPolicy,
    telemetry: Arc<Telemetry>,
    /// The version active before the current one, loaded and checked: the runtime fallback.
    last_good: Lock<Option<Box<dyn Policy>>>,
    /// Set once, when a shadow is configured and loads; checked by the tick without a lock.
    shadow: std::sync::OnceLock<Arc<Lock<shadow::Shadow>>>,
    /// Rollback records and shadow steps, off the tick's thread, in order.
    background: Arc<background::Background>,
    /// Versions rolled back in this process whose record is not written yet: never activated
    /// again from a state file that still names them.
    unrecorded_rollbacks: Arc<Lock<BTreeSet<String>>>,
    seen: Lock<(Fingerprint, BTreeSet<String>)>,
    syncing: tokio::sync::Mutex<()>,
}

impl Lifecycle {
    /// Activates the persisted (or configured) version, falling back to earlier healthy ones
    /// when it is refused, and loads the shadow; the leader persists what it chose.
    pub async fn start(
        config: PoliciesConfig,
        runtime: Arc<Runtime>,
        memory: Option<Arc<dyn MemoryStore>>,
        telemetry: Arc<Telemetry>,
        role: Role,
    ) -> Result<Arc<Lifecycle>, LifecycleError> {
        let preparer = preparer(&config, runtime, role)?;
        let records = match &memory {
            Some(m) => recent(m).await,
            None => Vec::new(),
        };
        let former = config.dir.join(state::FORMER_STATE_FILE);
        if former.exists() {
            tracing::warn!(
                "{} is ignored: the policy state lives in the private {} (a file in the policy directory could bring back \
                 an older version); remove it",
                former.display(),
                state::path(&config.state_dir).display()
            );
        }
        let mut state = PolicyState::load(&config.state_dir)?;
        let entries = manifest::policy_entries(&config.dir);
        let announced = manifest::announced(&entries);
        let mut order: Vec<String> = Vec::new();
        order.extend(state.active.clone());
        if let Selection::Version(v) = &config.active {
            order.push(v.clone());
        }
        order.extend(state.history.iter().rev().cloned());
        order.extend(entries.iter().rev().map(|e| &e.manifest.version).filter(|v| announced.contains(*v)).cloned());
        let mut tried = BTreeSet::new();
        let mut refused: Vec<(String, String)> = Vec::new();
        let mut chosen: Option<Candidate> = None;
        for version in order {
            if !tried.insert(version.clone()) || (state.unhealthy.contains_key(&version) && state.active.as_ref() != Some(&version)) {
                continue;
            }
            match prepare(&preparer, &version, &records).await {
                Ok(c) => {
                    chosen = Some(c);
                    break;
                }
                Err(e) => {
                    tracing::error!("{e}");
                    telemetry.policy_refusals.inc();
                    if e.condemns() {
                        refused.push((version, e.to_string()));
                    }
                }
            }
        }
        let record = |s: &mut PolicyState, active: Option<&str>| {
            for (version, why) in &refused {
                s.mark_unhealthy(version, why.clone());
            }
            if let Some(active) = active {
                s.activated(active);
            }
        };
        let Some(candidate) = chosen else {
            role.update(&config.state_dir, |s| record(s, None))?;
            // Versions an earlier run condemned are skipped (but the one the state names active).
            let condemned: Vec<&str> = state.unhealthy.keys().filter(|v| state.active.as_ref() != Some(*v)).map(String::as_str).collect();
            return Err(LifecycleError::NonePassed {
                dir: config.dir.clone(),
                condemned: if condemned.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; not tried, marked unhealthy by an earlier run after failing its health checks: {} (once fixed, \
                         `sentinel policy activate VERSION --config FILE` clears the mark)",
                        condemned.join(", ")
                    )
                },
            });
        };
        log_activation(&candidate, if role == Role::Leader { "startup" } else { "startup, following the persisted state" });
        record(&mut state, Some(&candidate.version));
        role.update(&config.state_dir, |s| record(s, Some(&candidate.version)))?;
        let last_good = match state.previous().map(str::to_string) {
            Some(v) => prepare(&preparer, &v, &records).await.map(|c| c.policy).ok(),
            None => None,
        };
        let lifecycle = Arc::new(Lifecycle {
            active: SharedPolicy::new(candidate.policy),
            last_good: Lock::new("last good policy", last_good),
            shadow: std::sync::OnceLock::new(),
            unrecorded_rollbacks: Arc::new(Lock::new("unrecorded rollbacks", BTreeSet::new())),
            background: Arc::new(background::Background::start()),
            seen: Lock::new("policy directory seen", (fingerprint(&config), announced)),
            syncing: tokio::sync::Mutex::new(()),
            config,
            preparer,
            role,
            memory,
            telemetry,
        });
        if role == Role::Leader {
            lifecycle.load_shadow(&records).await;
        }
        Ok(lifecycle)
    }

    /// The policy the sentinel decides with.
    pub fn active(&self) -> SharedPolicy {
        self.active.clone()
    }

    /// The active version and its digest (the sha256 of its component), as `(version, digest)`.
    pub fn active_version(&self) -> (String, String) {
        let p = self.active.lock();
        (p.identity().version.clone(), p.identity().digest.clone())
    }

    async fn load_shadow(&self, records: &[TickRecord]) {
        let Some(version) = self.config.shadow.clone() else { return };
        match prepare(&self.preparer, &version, records).await {
            Ok(c) => {
                let files = shadow::shadow_dir(&self.config.state_dir);
                tracing::info!(version = %version, files = %files.display(), "shadow policy loaded: decides every tick, never published");
                let former = shadow::shadow_dir(&self.config.dir);
                if std::fs::symlink_metadata(&former).is_ok() {
                    tracing::warn!(
                        "{} is no longer read or written: shadows keep their memory and log in {} (the private state directory); \
                         move a log you still want there, then remove {}",
                        former.display(),
                        files.display(),
                        former.display()
                    );
                }
                let _ =
                    self.shadow.set(Arc::new(Lock::new("shadow policy", shadow::Shadow::open(&self.config.state_dir, &version, c.policy))));
            }
            Err(e) => tracing::error!("shadow not loaded: {e}"),
        }
    }

    /// Swaps `policy` in; the one it replaces becomes the fallback.
    fn swap(&self, policy: Box<dyn Policy>) {
        let old = std::mem::replace(&mut *self.active.lock(), policy);
        *self.last_good.lock() = Some(old);
        self.telemetry.policy_activations.inc();
    }

    /// Called by the tick holding the active policy's lock when the active version failed on
    /// `input`: the last good version decides the same input. When it can, it takes the failing
    /// version's place, the alarm is raised, and the failing one is recorded as unhealthy in the
    /// persisted state off the tick's thread (an unreadable state file is left as it is, and
    /// said so); its decision is returned. When it fails too, the input is at fault, not the
    /// version: nothing is condemned or swapped, and the tick fails with both errors (an input
    /// that made the active version hit its memory cap condemned it for good before). None when
    /// there is no good version to fall back to.
    pub fn fall_back(
        &self,
        active: &mut Box<dyn Policy>,
        error: &PolicyError,
        input: &DecisionInput,
    ) -> Option<Result<Decision, PolicyError>> {
        let mut good = self.last_good.lock().take()?;
        let decided = match good.decide(input) {
            Ok(decided) => decided,
            Err(second) => {
                let (bad, other) = (active.identity().version.clone(), good.identity().version.clone());
                tracing::error!(
                    active = %bad, fallback = %other,
                    "policy {bad} failed on this tick's input ({error}), and so did {other} ({second}): the input is at fault, \
                     not the version; no version is marked unhealthy and the tick fails"
                );
                *self.last_good.lock() = Some(good);
                let detail = format!("{bad}: {error}; {other}: {second}");
                return Some(Err(PolicyError::InputFault { active: bad, detail }));
            }
        };
        let failing = std::mem::replace(active, good);
        let (bad, good) = (failing.identity().version.clone(), active.identity().version.clone());
        self.telemetry.policy_rollbacks.inc();
        tracing::error!(failing = %bad, now_active = %good, "policy {bad} failed during a tick ({error}); marked unhealthy, the tick reruns with {good}");
        let (role, state_dir, why) = (self.role, self.config.state_dir.clone(), format!("failed during a tick: {error}"));
        let unrecorded = self.unrecorded_rollbacks.clone();
        unrecorded.lock().insert(bad.clone());
        self.background.run(move || {
            let recorded = role.update(&state_dir, |s| {
                s.mark_unhealthy(&bad, why);
                // An operator's `policy activate` since then is theirs to keep.
                if s.active.is_none() || s.active.as_deref() == Some(bad.as_str()) {
                    s.history.retain(|v| v != &good);
                    s.active = Some(good.clone());
                }
            });
            match recorded {
                Ok(()) => {
                    unrecorded.lock().remove(&bad);
                }
                Err(e) => tracing::error!("the rollback from {bad} to {good} is in effect but not recorded: {e:#}"),
            }
        });
        Some(Ok(decided))
    }

    /// Gives the shadow this tick's input and the active decision; it decides on the
    /// background thread, never affecting the tick.
    pub fn shadow_step(&self, input: &DecisionInput, active: &Decision, active_version: &str) {
        let Some(shadow) = self.shadow.get().cloned() else { return };
        let telemetry = self.telemetry.clone();
        let (input, active, active_version) = (input.clone(), active.clone(), active_version.to_string());
        let queued = self.background.try_run(move || {
            let mut shadow = shadow.lock();
            match shadow.step(&input, &active, &active_version) {
                Ok(line) => {
                    telemetry.shadow_decisions.inc();
                    if !line.diverged.is_empty() {
                        telemetry.shadow_divergences.inc();
                        tracing::info!(shadow = %line.shadow_version, active = %line.active_state, shadow_state = %line.shadow_state,
                            fields = %line.diverged.join(","), "shadow policy diverged");
                    }
                }
                Err(e) => {
                    telemetry.shadow_failures.inc();
                    tracing::warn!("shadow policy {} failed (not published, the tick is unaffected): {e}", shadow.version);
                }
            }
        });
        if !queued {
            self.telemetry.shadow_failures.inc();
            tracing::warn!("the shadow's step of this tick was dropped: the shadow is behind (the tick is unaffected)");
        }
    }

    /// Runs `job` on the background thread after the rollback records and shadow steps given so
    /// far, one at a time in order: a job that waits holds every record given after it.
    pub fn after_background_work(&self, job: impl FnOnce() + Send + 'static) {
        self.background.run(job);
    }

    /// Waits until the rollback records and shadow steps given so far are done.
    pub async fn settle(&self) {
        let background = self.background.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || background.settle()).await {
            tracing::error!("waiting for the policy background work failed: {e}");
        }
    }
}

/// Prepares a version on a blocking thread (compiling and replaying take milliseconds to
/// seconds: never on the tick's thread).
async fn prepare(preparer: &Preparer, version: &str, records: &[TickRecord]) -> Result<Candidate, Refused> {
    let (p, v, r) = (preparer.clone(), version.to_string(), records.to_vec());
    match tokio::task::spawn_blocking(move || p.version(&v, &r)).await {
        Ok(result) => result,
        Err(e) => Err(Refused::Load { version: version.into(), message: format!("the preparing thread failed: {e}") }),
    }
}

/// The last day of recorded ticks, oldest first (none when the store cannot say).
pub async fn recent(memory: &Arc<dyn MemoryStore>) -> Vec<TickRecord> {
    match crate::trace::recorded::recent(memory.as_ref(), activate::TRIAL_WINDOW).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("no recorded ticks for the trial replay: {e}");
            Vec::new()
        }
    }
}

fn log_activation(c: &Candidate, why: &str) {
    let t = &c.timings;
    tracing::info!(
        version = %c.version, digest = %c.digest, origin = %c.origin.describe(),
        verify_ms = t.verify.as_secs_f64() * 1e3, load_ms = t.load.as_secs_f64() * 1e3,
        checks_ms = t.checks.as_secs_f64() * 1e3, trial_ms = t.trial.as_secs_f64() * 1e3, trial_ticks = t.trial_ticks,
        "policy {} activated ({why})", c.version
    );
}

#[cfg(test)]
mod tests;
