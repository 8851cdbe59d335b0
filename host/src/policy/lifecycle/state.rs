//! What survives a restart: the active version, the versions active before it (for
//! `policy rollback`), and the versions found unhealthy. One small JSON file in the policy
//! directory, replaced atomically.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const STATE_FILE: &str = "sentinel-policy-state.json";

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

pub fn path(dir: &Path) -> PathBuf {
    dir.join(STATE_FILE)
}

impl PolicyState {
    /// The saved state; none saved yet is the default. An unreadable file is an error (it
    /// names the file) rather than silently forgetting the active version.
    pub fn load(dir: &Path) -> anyhow::Result<PolicyState> {
        let p = path(dir);
        match std::fs::read_to_string(&p) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("policy state {} is unreadable: {e}", p.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(PolicyState::default()),
            Err(e) => Err(anyhow::anyhow!("cannot read policy state {}: {e}", p.display())),
        }
    }

    pub fn save(&self, dir: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut tmp, (serde_json::to_string_pretty(self)? + "\n").as_bytes())?;
        tmp.persist(path(dir)).map_err(|e| anyhow::anyhow!("cannot write policy state in {}: {e}", dir.display()))?;
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
