//! What survives a restart: the active version, the versions active before it (for
//! `policy rollback`), and the versions found unhealthy. One small JSON file in the
//! sentinel's private state directory (never in the policy directory, which others write: a
//! state file there could bring an older version back), replaced atomically, mode 0600.

use super::private_dir;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const STATE_FILE: &str = "policy-state.json";
/// Where earlier releases kept the state, in the policy directory: ignored (and said so).
pub const FORMER_STATE_FILE: &str = "sentinel-policy-state.json";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyState {
    pub active: Option<String>,
    /// Previously active versions, oldest first.
    #[serde(default)]
    pub history: Vec<String>,
    /// Version -> why it was marked unhealthy (a trap at runtime, a refused activation).
    #[serde(default)]
    pub unhealthy: BTreeMap<String, String>,
}

pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(STATE_FILE)
}

impl PolicyState {
    /// The saved state in the private `state_dir`; none saved yet is the default. An
    /// unreadable file, or a directory or file that others could have written, is an error
    /// (it names the path and the fix) rather than silently trusting or forgetting it.
    pub fn load(state_dir: &Path) -> anyhow::Result<PolicyState> {
        let p = path(state_dir);
        if std::fs::symlink_metadata(state_dir).is_err() {
            return Ok(PolicyState::default());
        }
        private_dir::check(state_dir, true).map_err(|e| anyhow::anyhow!("the policy state directory (policies.state_dir) is not private: {e}"))?;
        if std::fs::symlink_metadata(&p).is_err() {
            return Ok(PolicyState::default());
        }
        private_dir::check(&p, false).map_err(|e| anyhow::anyhow!("the policy state file is not trusted: {e}"))?;
        match std::fs::read_to_string(&p) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("policy state {} is unreadable: {e}", p.display())),
            Err(e) => Err(anyhow::anyhow!("cannot read policy state {}: {e}", p.display())),
        }
    }

    /// Saves into the private `state_dir` (created 0700 when missing).
    pub fn save(&self, state_dir: &Path) -> anyhow::Result<()> {
        let dir = private_dir::ensure(state_dir).map_err(|e| anyhow::anyhow!("the policy state directory (policies.state_dir): {e}"))?;
        private_dir::write_atomically(&path(&dir), (serde_json::to_string_pretty(self)? + "\n").as_bytes())
            .map_err(|e| anyhow::anyhow!("cannot write policy state in {}: {e}", dir.display()))?;
        Ok(())
    }

    /// Records `version` as active; the one before goes onto the history.
    pub fn activated(&mut self, version: &str) {
        if let Some(previous) = self.active.take()
            && previous != version
        {
            self.history.retain(|v| v != &previous);
            self.history.push(previous);
        }
        self.history.retain(|v| v != version);
        self.unhealthy.remove(version);
        self.active = Some(version.to_string());
        let keep = self.history.len().saturating_sub(20);
        self.history.drain(..keep);
    }

    /// The newest previous version that is not unhealthy.
    pub fn previous(&self) -> Option<&str> {
        self.history.iter().rev().map(String::as_str).find(|v| !self.unhealthy.contains_key(*v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activation_pushes_the_previous_version_onto_the_history() {
        let mut s = PolicyState::default();
        s.activated("1.0.0");
        s.activated("2.0.0");
        s.activated("3.0.0");
        assert_eq!(s.active.as_deref(), Some("3.0.0"));
        assert_eq!(s.history, ["1.0.0", "2.0.0"]);
        s.unhealthy.insert("2.0.0".into(), "trapped".into());
        assert_eq!(s.previous(), Some("1.0.0"));
    }

    #[test]
    fn the_state_survives_a_save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(PolicyState::load(dir.path()).unwrap(), PolicyState::default());
        let mut s = PolicyState::default();
        s.activated("1.0.0");
        s.save(dir.path()).unwrap();
        assert_eq!(PolicyState::load(dir.path()).unwrap(), s);
    }
}
