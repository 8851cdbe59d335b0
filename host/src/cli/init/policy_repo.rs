//! `sentinel init --policy-repo DIR`: an operator's policy repository, ready for the CI gate
//! (the README's "The policy gate in your CI"), from the binary alone: the built-in versions'
//! `policy.toml`, the gate and a tune space, the scenario traces, the gate script and both CI
//! recipes, and a README saying what each is. The files are the sentinel's own, carried in the
//! binary: what its tests gate and replay.

use anyhow::Context;
use std::path::Path;
use std::process::ExitCode;

/// A built-in version: its folder name, its `policy.toml`, and what it is.
struct Version {
    version: &'static str,
    toml: &'static str,
    what: &'static str,
}

const VERSIONS: &[Version] = &[
    Version {
        version: "1.0.0",
        toml: include_str!("../../../../policies/1.0.0/policy.toml"),
        what: "The starting values, and the version the sentinel carries built in (its embedded default): CPU and \
               connections constrained at 70 % and critical at 85 %, API latency over its hourly baseline constrained at \
               1.5x and critical at 2.5x; three supporting readings to escalate, five calmer ones to recover, five minutes \
               between automatic changes.",
    },
    Version {
        version: "1.1.0",
        toml: include_str!("../../../../policies/1.1.0/policy.toml"),
        what: "Chosen by `sentinel policy tune` from 1.0.0 over `tune-space.toml` on real CPU series: CPU constrained at \
               80 % instead of 70 %; every other number is 1.0.0's.",
    },
    Version {
        version: "1.2.0",
        toml: include_str!("../../../../policies/1.2.0/policy.toml"),
        what: "The same numbers as 1.1.0, chosen again with flap damping in the search space and judged with each \
               server's series held out whole.",
    },
    Version {
        version: "1.3.0",
        toml: include_str!("../../../../policies/1.3.0/policy.toml"),
        what: "1.2.0 with a CPU resolve band of 12.5 points (a level is left only once the reading is that far below its \
               boundary), chosen by `sentinel policy tune` where short bursts made 1.2.0 flap.",
    },
];

/// The scenario traces (`traces/`): hand-designed minutes the gate replays every version over.
const TRACES: &[(&str, &str)] = &[
    ("direct_critical.jsonl", include_str!("../../../../tests/traces/direct_critical.jsonl")),
    ("flapping.jsonl", include_str!("../../../../tests/traces/flapping.jsonl")),
    ("incident.jsonl", include_str!("../../../../tests/traces/incident.jsonl")),
    ("latency_explicit.jsonl", include_str!("../../../../tests/traces/latency_explicit.jsonl")),
    ("latency_learnt.jsonl", include_str!("../../../../tests/traces/latency_learnt.jsonl")),
    ("pins.jsonl", include_str!("../../../../tests/traces/pins.jsonl")),
    ("quiet_day.jsonl", include_str!("../../../../tests/traces/quiet_day.jsonl")),
    ("scaling.jsonl", include_str!("../../../../tests/traces/scaling.jsonl")),
    ("signal_loss.jsonl", include_str!("../../../../tests/traces/signal_loss.jsonl")),
    ("throttles.jsonl", include_str!("../../../../tests/traces/throttles.jsonl")),
    ("ticks.jsonl", include_str!("../../../../tests/traces/ticks.jsonl")),
];

/// Every other file, by its path in the repository.
const FILES: &[(&str, &str)] = &[
    ("policies/gate.toml", include_str!("policy_repo/gate.toml")),
    ("policies/tune-space.toml", include_str!("../../../../policies/tune-space.toml")),
    ("ci/policy-gate.sh", include_str!("../../../../deploy/ci/policy-gate.sh")),
    ("ci/gitlab-ci.yml", include_str!("../../../../deploy/ci/gitlab-ci.yml")),
    ("ci/README.md", include_str!("policy_repo/ci-README.md")),
    (".github/workflows/policy-gate.yml", include_str!("../../../../deploy/ci/github-actions.yml")),
    (".gitlab-ci.yml", "# The policy gate (ci/gitlab-ci.yml): see ci/README.md.\ninclude:\n  - local: ci/gitlab-ci.yml\n"),
    (".gitignore", "# What the gate and `policy build` write.\ngate-report/\ndist/\n"),
    ("README.md", include_str!("policy_repo/README.md")),
    ("traces/README.md", include_str!("policy_repo/traces-README.md")),
];

pub fn run(dir: &Path) -> anyhow::Result<ExitCode> {
    super::new_folder(dir, write)?;
    let shown = dir.display();
    super::super::emit(&format!(
        "wrote {shown}/: policies/ ({}, gate.toml, tune-space.toml), traces/ ({} scenario traces), ci/policy-gate.sh and the \
         GitHub and GitLab recipes, README.md",
        VERSIONS.iter().map(|v| v.version).collect::<Vec<_>>().join(", "),
        TRACES.len()
    ))?;
    super::super::emit(&format!(
        "next: make it a git repository and push it (`cd {shown} && git init -b main && git add -A && git commit -m \"policies\"`), \
         set SENTINEL_URL for the CI (ci/README.md), then propose a version on a branch:\n  \
         sentinel policy new 1.4.0 --from 1.3.0 --purpose \"why\"\n  \
         (edit policies/1.4.0/policy.toml)\n  sentinel policy build policies/1.4.0 -o dist/\n  \
         ci/policy-gate.sh --base main        # once committed: the verdict the CI will give"
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes every file into `root`; the gate script is executable.
fn write(root: &Path) -> anyhow::Result<()> {
    let put = |relative: &str, text: &str| -> anyhow::Result<()> {
        let path = root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    for v in VERSIONS {
        put(&format!("policies/{}/policy.toml", v.version), v.toml)?;
        put(&format!("policies/{}/README.md", v.version), &version_readme(v))?;
    }
    for (name, text) in TRACES {
        put(&format!("traces/{name}"), text)?;
    }
    for (relative, text) in FILES {
        put(relative, text)?;
    }
    executable(&root.join("ci/policy-gate.sh"))
}

fn version_readme(v: &Version) -> String {
    format!(
        "# Policy {}\n\n{}\n\nWritten by `sentinel init --policy-repo` (sentinel {}) from the sentinel's own `policies/{}/`, where \
         the evidence it was chosen on is. Its numbers are `policy.toml`; a new version starts from them with \
         `sentinel policy new VERSION --from {}`.\n",
        v.version,
        v.what,
        env!("CARGO_PKG_VERSION"),
        v.version,
        v.version
    )
}

#[cfg(unix)]
fn executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).with_context(|| format!("making {} executable", path.display()))
}

#[cfg(not(unix))]
fn executable(_: &Path) -> anyhow::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_written_has_the_limits_the_sentinels_own_versions_pass() {
        let own: toml::Table = include_str!("../../../../policies/gate.toml").parse().unwrap();
        let written: toml::Table = include_str!("policy_repo/gate.toml").parse().unwrap();
        // What is the sentinel's own: its retired and waived versions, its generated bursts.
        let own: toml::Table = own.into_iter().filter(|(k, _)| !matches!(k.as_str(), "retire" | "waive" | "flap_safety_traces")).collect();
        assert_eq!(written, own, "policy_repo/gate.toml and policies/gate.toml differ in a limit");
        sentinel_core::replay::gate::Gate::parse("gate.toml", include_str!("policy_repo/gate.toml")).unwrap();
    }

    #[test]
    fn every_built_in_version_and_every_scenario_trace_is_written() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut versions: Vec<String> = std::fs::read_dir(root.join("policies"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| root.join("policies").join(name).join("policy.toml").is_file())
            .collect();
        versions.sort();
        // 2.0.0 is retired (the sentinel's example of a regression), not a version to build on.
        versions.retain(|v| v != "2.0.0");
        assert_eq!(versions, VERSIONS.iter().map(|v| v.version).collect::<Vec<_>>());
        let mut traces: Vec<String> = std::fs::read_dir(root.join("tests/traces"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".jsonl") && !name.ends_with(".expected.jsonl"))
            .collect();
        traces.sort();
        assert_eq!(traces, TRACES.iter().map(|(name, _)| *name).collect::<Vec<_>>());
    }
}
