//! The policy versions the console lists, and the views of them the API answers with: with a
//! `[policies]` directory, the policy catalog ([`sentinel_core::policy::lifecycle::catalog`], which
//! `sentinel policy list` shows too) with the running version as the active one; without one,
//! the embedded default alone.

use crate::config::policies::PoliciesConfig;
use sentinel_core::policy::lifecycle::{catalog, manifest, state::PolicyState};
use serde::Serialize;
use utoipa::ToSchema;

/// One version the sentinel knows.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VersionView {
    /// The version's number (`1.0.0`).
    pub version: String,
    /// Whether it is the active version, the one this API validates pins with.
    pub active: bool,
    /// Whether it is the version configured to run in shadow.
    pub shadow: bool,
    /// `healthy`, or `unhealthy: <why>`.
    pub health: String,
}

/// The active policy and the versions beside it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PoliciesView {
    /// The active version: the one this API validates pins with.
    pub active: ActiveView,
    /// The version evaluated in shadow, if configured.
    #[schema(required)]
    pub shadow: Option<String>,
    /// Every version in the policy directory, newest first; without a policy directory, the active
    /// version alone.
    pub versions: Vec<VersionView>,
}

/// The version this API validates pins with.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ActiveView {
    /// The policy's name (`capacity-policy`).
    pub name: String,
    /// The policy's semantic version (`1.0.0`).
    pub version: String,
    /// sha256 of the policy module.
    pub digest: String,
    /// `component` or `native`.
    pub kind: String,
}

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
    let (listed, _errors) = catalog::list(&config.dir, Some(active), config.shadow.as_deref(), state.as_ref());
    let mut versions: Vec<VersionView> = listed
        .into_iter()
        .map(|l| VersionView { version: l.version().to_string(), active: l.active, shadow: l.shadow, health: l.health })
        .collect();
    // Newest first, by number (1.10.0 after 1.9.0), as the lifecycle orders them.
    versions.sort_by(|a, b| manifest::compare_versions(&b.version, &a.version));
    versions
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn active(version: &str) -> ActiveView {
        ActiveView { name: "capacity-policy".into(), version: version.into(), digest: "d".into(), kind: "component".into() }
    }

    #[tokio::test]
    async fn a_policy_directory_lists_every_version_newest_first_with_its_health() {
        let dir = tempfile::tempdir().unwrap();
        let policies = dir.path().join("policies");
        std::fs::create_dir_all(&policies).unwrap();
        let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/policies");
        for version in ["1.0.0", "1.1.0", "2.0.0"] {
            for ext in ["wasm", "manifest.json"] {
                let name = format!("capacity-policy-{version}.{ext}");
                std::fs::copy(built.join(&name), policies.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}; run `cargo policies`"));
            }
        }
        let text = "[policies]\ndir = \"policies\"\nallow_unsigned = true\nshadow = \"2.0.0\"\nstate_dir = \"private\"\n";
        let config = crate::config::Config::parse(text, &dir.path().join("sentinel.toml")).unwrap().policies.unwrap();
        sentinel_core::policy::lifecycle::state::update(&config.state_dir, |s| {
            s.unhealthy.insert("1.1.0".into(), "trapped at runtime".into());
        })
        .unwrap();
        let view = policies_view(Some(config.clone()), active("1.0.0")).await;
        assert_eq!(view.shadow.as_deref(), Some("2.0.0"));
        let rows: Vec<(&str, bool, bool, &str)> =
            view.versions.iter().map(|v| (v.version.as_str(), v.active, v.shadow, v.health.as_str())).collect();
        assert_eq!(
            rows,
            [
                ("2.0.0", false, true, "healthy"),
                ("1.1.0", false, false, "unhealthy: trapped at runtime"),
                ("1.0.0", true, false, "healthy")
            ]
        );
        // Without a policy directory: the embedded default alone.
        let only = policies_view(None, active("1.0.0")).await;
        assert_eq!((only.versions.len(), only.versions[0].active, only.shadow), (1, true, None));
    }
}
