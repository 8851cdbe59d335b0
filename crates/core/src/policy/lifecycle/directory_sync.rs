//! The directory watch's step (docs/behaviour.md §11.9): one look at the policy directory, and
//! the activation of what it asks for. With `active = "latest"` the newest arrival that passes
//! its checks is swapped in; a refused one never keeps an older good arrival out, and a refusal
//! that says nothing lasting about the version (a file that does not load or verify) is tried
//! again at the next change of the directory.

use super::state::{PolicyState, StateError};
use super::{Lifecycle, Role, fingerprint, log_activation, manifest, prepare, recent};
use crate::policy::settings::Selection;
use std::time::Instant;

impl Lifecycle {
    /// One look at the directory (`sentinel run` calls it every `poll`): when something
    /// changed, activates what the persisted state (or, with `active = "latest"`, a newly
    /// arrived version) asks for. Returns the version activated, if any.
    pub async fn sync(&self) -> Result<Option<String>, StateError> {
        let _one = self.syncing.lock().await;
        let detected = Instant::now();
        let now = fingerprint(&self.config);
        // Nothing changed since the last look: no manifest is read again.
        if self.seen.lock().0 == now {
            return Ok(None);
        }
        let entries = manifest::policy_entries(&self.config.dir);
        let versions = manifest::announced(&entries);
        let arrived: Vec<String> = {
            let mut seen = self.seen.lock();
            let arrived = versions.difference(&seen.1).cloned().collect();
            *seen = (now, versions);
            arrived
        };
        let state = PolicyState::load(&self.config.state_dir)?;
        let (current, digest) = self.active_version();
        let mut candidates = vec![state.active.clone().unwrap_or_else(|| current.clone())];
        if self.config.active == Selection::Latest && self.role == Role::Leader {
            // The newest arrival that passes its checks: a refused one (a file still being
            // copied, a bad signature) does not keep an older good arrival out.
            let mut newer: Vec<&String> =
                arrived.iter().filter(|v| !state.unhealthy.contains_key(*v) && manifest::compare_versions(v, &current).is_gt()).collect();
            newer.sort_by(|a, b| manifest::compare_versions(b, a));
            if !newer.is_empty() {
                candidates = newer.into_iter().cloned().collect();
            }
        }
        let mut activated = None;
        for desired in candidates {
            if self.try_activate(desired, &current, &digest, &entries, &state, detected).await? {
                activated = Some(self.active_version().0);
                break;
            }
        }
        Ok(activated)
    }

    /// Activates `desired` when it is not what runs and passes its checks: true when swapped in.
    async fn try_activate(
        &self,
        desired: String,
        current: &str,
        digest: &str,
        entries: &[manifest::Entry],
        state: &PolicyState,
        detected: Instant,
    ) -> Result<bool, StateError> {
        let unchanged = entries.iter().any(|e| e.manifest.version == desired && e.manifest.sha256.eq_ignore_ascii_case(digest));
        if desired == current && unchanged {
            return Ok(false);
        }
        // A version that failed during a tick stays out, also while its rollback is still being
        // recorded (the state file names it as active until then).
        let rolled_back = self.unrecorded_rollbacks.lock().contains(&desired);
        if desired != current && (rolled_back || state.unhealthy.contains_key(&desired)) {
            tracing::debug!("policy {desired} failed during a tick (unhealthy); {current} stays active");
            return Ok(false);
        }
        let records = match &self.memory {
            Some(m) => recent(m).await,
            None => Vec::new(),
        };
        match prepare(&self.preparer, &desired, &records).await {
            Ok(candidate) => {
                let version = candidate.version.clone();
                log_activation(&candidate, "directory change");
                self.swap(candidate.policy);
                self.role.update(&self.config.state_dir, |s| s.activated(&version))?;
                tracing::info!(version = %version, file_change_to_active_ms = detected.elapsed().as_secs_f64() * 1e3, "policy swapped in");
                Ok(true)
            }
            Err(e) => {
                tracing::error!("{e}; {current} stays active");
                self.telemetry.policy_refusals.inc();
                let condemned = e.condemns();
                if !condemned {
                    // Tried again at the next change of the directory (a restored file).
                    self.seen.lock().1.remove(&desired);
                }
                self.role.update(&self.config.state_dir, |s| {
                    if condemned {
                        s.mark_unhealthy(&desired, e.to_string());
                    }
                    if s.active.as_deref() == Some(desired.as_str()) {
                        s.active = Some(current.to_string());
                    }
                })?;
                Ok(false)
            }
        }
    }
}
