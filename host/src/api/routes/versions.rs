//! The policy versions the console lists: with a `[policies]` directory, every manifest in it
//! with whether it is active, in shadow, and healthy (the persisted state's verdict), as
//! `sentinel policy list` shows them; without one, the embedded default alone.

use super::overview::{ActiveView, PoliciesView, VersionView};
use crate::config::policies::PoliciesConfig;
use crate::policy::lifecycle::{manifest, state::PolicyState};

/// The versions beside `active`; read off the disk on a blocking thread.
pub async fn policies_view(config: Option<PoliciesConfig>, active: ActiveView) -> PoliciesView {
    let Some(config) = config else {
        let only = VersionView { version: active.version.clone(), active: true, shadow: false, health: "healthy".into() };
        return PoliciesView { active, shadow: None, versions: vec![only] };
    };
    let shadow = config.shadow.clone();
    let listed = {
        let active = active.version.clone();
        tokio::task::spawn_blocking(move || versions(&config, &active)).await
    };
    let versions = match listed {
        Ok(versions) => versions,
        Err(e) => {
            tracing::warn!("listing the policy versions failed: {e}");
            Vec::new()
        }
    };
    PoliciesView { active, shadow, versions }
}

fn versions(config: &PoliciesConfig, active: &str) -> Vec<VersionView> {
    let state = match PolicyState::load(&config.state_dir) {
        Ok(state) => Some(state),
        Err(e) => {
            tracing::warn!("the console cannot read the policy state: {e}");
            None
        }
    };
    let (entries, _errors) = manifest::scan(&config.dir);
    let mut versions: Vec<VersionView> = entries
        .iter()
        .map(|e| {
            let v = &e.manifest.version;
            let health = match &state {
                Some(state) => state.unhealthy.get(v).map_or_else(|| "healthy".to_string(), |why| format!("unhealthy: {why}")),
                None => "unknown: the policy state cannot be read".to_string(),
            };
            VersionView { version: v.clone(), active: v == active, shadow: config.shadow.as_ref() == Some(v), health }
        })
        .collect();
    // Newest first, by number (1.10.0 after 1.9.0).
    versions.sort_by_cached_key(|v| std::cmp::Reverse(numbers(&v.version)));
    versions
}

fn numbers(version: &str) -> Vec<u64> {
    version.split(['.', '-', '+']).map(|part| part.parse().unwrap_or(0)).collect()
}
