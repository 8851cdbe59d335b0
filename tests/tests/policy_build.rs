//! `sentinel policy build` and `policy new` (docs/behaviour.md §11.11): a version built from its
//! `policy.toml` by the installed binary (the built-in template with the file's numbers) decides
//! exactly as the component `cargo policies` builds from the same file: every decision, pin and
//! baseline vector, and every trace of the repository replayed (every tick's outcome with its
//! explanation, every baseline learnt), for every shipped version. `policy info` shows the
//! file's numbers; a file with an invalid number is refused naming the key, in the words `cargo
//! policies` uses. And from an empty folder, the installed binary alone takes a threshold change
//! from idea to a running sentinel.

use capacity_tests::paths::{crate_dir, files_ending, workspace};
use capacity_tests::policies::{ReplayPath, runtime};
use capacity_tests::repository_traces::repository_traces;
use capacity_tests::sentinel_bin::{ok, run_in as sentinel_in, text};
use capacity_tests::servers::redis::Redis;
use capacity_tests::{component, replay_outcomes};
use vocabulary::{ApiSamples, DecisionInput, Instant, PinRequest, PolicyDescription};

/// Every shipped version: each folder of policies/ with a policy.toml.
fn shipped_versions() -> Vec<String> {
    let mut versions: Vec<String> = std::fs::read_dir(workspace().join("policies"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("policy.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    versions.sort();
    assert!(versions.len() >= 4, "{versions:?}");
    versions
}

/// The `input`s of every case of the vectors of one kind.
fn inputs<T: serde::de::DeserializeOwned>(kind: &str) -> Vec<(String, T)> {
    let mut out = Vec::new();
    for file in files_ending(&crate_dir().join("vectors").join(kind), ".json") {
        let cases: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for case in cases {
            let name = format!("{}: {}", file.display(), case["name"]);
            out.push((name, serde_json::from_value(case["input"].clone()).unwrap()));
        }
    }
    assert!(!out.is_empty(), "no {kind} vectors");
    out
}

#[derive(serde::Deserialize)]
struct PinCase {
    request: PinRequest,
    now: Instant,
}

#[derive(serde::Deserialize)]
struct BaselineCase {
    hour: Instant,
    samples: Vec<ApiSamples>,
}

#[test]
fn every_shipped_version_built_from_its_file_decides_exactly_as_cargo_policies_builds_it() {
    let out = tempfile::tempdir().unwrap();
    let (decisions, pins, baselines) = (inputs::<DecisionInput>("decision"), inputs::<PinCase>("pins"), inputs::<BaselineCase>("baseline"));
    let traces = repository_traces();
    for version in shipped_versions() {
        let folder = format!("policies/{version}");
        let said = ok(sentinel_in(&workspace(), &["policy", "build", &folder, "-o", out.path().to_str().unwrap()]));
        let built_path = out.path().join(format!("capacity-policy-{version}.wasm"));
        assert!(said.contains(&format!("built {}", built_path.display())), "{said}");
        // `policy info` shows the file's numbers; the manifest carries them too.
        let file: PolicyDescription =
            toml::from_str(&std::fs::read_to_string(workspace().join(&folder).join("policy.toml")).unwrap()).unwrap();
        let info: serde_json::Value =
            serde_json::from_str(&ok(sentinel_in(&workspace(), &["policy", "info", built_path.to_str().unwrap()]))).unwrap();
        let info = if info.is_array() { info[0].clone() } else { info };
        assert_eq!(info["version"], version.as_str());
        assert_eq!(serde_json::from_value::<vocabulary::Thresholds>(info["thresholds"].clone()).unwrap(), file.thresholds, "{info}");
        let manifest: vocabulary::PolicyManifest =
            serde_json::from_str(&std::fs::read_to_string(built_path.with_extension("manifest.json")).unwrap()).unwrap();
        assert_eq!((manifest.thresholds, manifest.imports.len()), (Some(file.thresholds), 0));

        let mut built = sentinel_core::policy::open(built_path.to_str().unwrap(), &runtime()).unwrap();
        let mut compiled = component(&version);
        for (case, input) in &decisions {
            assert_eq!(built.decide(input).unwrap(), compiled.decide(input).unwrap(), "{version}, {case}");
        }
        for (case, p) in &pins {
            assert_eq!(
                built.validate_pin(&p.request, p.now).unwrap(),
                compiled.validate_pin(&p.request, p.now).unwrap(),
                "{version}, {case}"
            );
        }
        for (case, b) in &baselines {
            assert_eq!(
                built.compute_baselines(b.hour, &b.samples).unwrap(),
                compiled.compute_baselines(b.hour, &b.samples).unwrap(),
                "{version}, {case}"
            );
        }
        for trace in &traces {
            for throttles in [false, true] {
                let chunk = sentinel_core::replay::CHUNK_EVENTS;
                let a = replay_outcomes(trace, built.as_mut(), throttles, ReplayPath::Batch, chunk);
                let b = replay_outcomes(trace, compiled.as_mut(), throttles, ReplayPath::Batch, chunk);
                let first = (0..a.0.len().max(b.0.len())).find(|&i| a.0.get(i) != b.0.get(i));
                assert!(first.is_none(), "{version}, {} (throttles {throttles}): tick {first:?} differs", trace.name);
                assert_eq!(a.1, b.1, "{version}, {}: the baselines learnt differ", trace.name);
            }
        }
    }
}

#[test]
fn a_policy_file_with_an_invalid_number_is_refused_naming_the_key_and_nothing_is_written() {
    let work = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(workspace().join("policies/1.1.0/policy.toml")).unwrap();
    std::fs::create_dir_all(work.path().join("policies/1.1.0")).unwrap();
    let cases = [
        (original.replace("critical = 85.0 }", "critical = 60.0 }"), "thresholds.cpu_pct: constrained must not exceed critical"),
        (original.replace("escalate_readings = 3", "escalate_readings = 0"), "thresholds.escalate_readings"),
        (original.replace("spacing_s = 300", "spacing_s = 300\nspeed = 2"), "unknown field `speed`"),
        (original.replace("version = \"1.1.0\"", "version = \"1.1\""), "version"),
        // The name becomes the file name: it may not lead out of `-o` (security review, 3).
        (original.replace("name = \"capacity-policy\"", "name = \"../escape/evil\""), "name: \"../escape/evil\" is not a policy name"),
        (original.replace("name = \"capacity-policy\"", "name = \"/tmp/evil\""), "is not a policy name"),
        // Every factor 1.0: a version that protects nothing (security review, 1).
        (
            original
                .replace("bulk = 0.5, heavy = 0.5,", "bulk = 1.0, heavy = 1.0,")
                .replace("bulk = 0.0, heavy = 0.25, write = 1.0", "bulk = 1.0, heavy = 1.0, write = 1.0")
                .replace("bulk = 0.0, heavy = 0.25, write = 0.5, read = 0.5", "bulk = 1.0, heavy = 1.0, write = 1.0, read = 1.0"),
            "thresholds.factors.critical.bulk: is 1.0, must be 0.0",
        ),
    ];
    for (policy_text, said) in cases {
        std::fs::write(work.path().join("policies/1.1.0/policy.toml"), &policy_text).unwrap();
        let refused = sentinel_in(work.path(), &["policy", "build", "policies/1.1.0", "-o", "dist"]);
        let err = text(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{said}: {err}");
        assert!(err.contains("policies/1.1.0/policy.toml") && err.contains(said), "{said}: {err}");
        assert!(!work.path().join("dist").exists(), "nothing is written for a refused file");
        assert!(!work.path().join("escape").exists(), "nothing is written outside -o");
    }
    // `cargo policies` refuses the first with the same check and words: `<file>: <key>: <why>`
    // (policies/src/main.rs).
    let file: PolicyDescription = toml::from_str(&original.replace("critical = 85.0 }", "critical = 60.0 }")).unwrap();
    assert_eq!(file.check().unwrap_err(), "thresholds.cpu_pct: constrained must not exceed critical");
    // A folder that is not named by its version.
    std::fs::write(work.path().join("policies/1.1.0/policy.toml"), original.replace("version = \"1.1.0\"", "version = \"1.4.0\"")).unwrap();
    let refused = sentinel_in(work.path(), &["policy", "build", "policies/1.1.0", "-o", "dist"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused.stderr).contains("version 1.4.0 does not match its folder 1.1.0"), "{}", text(&refused.stderr));
    assert!(!work.path().join("dist").exists(), "nothing is written for a misplaced file");
}

#[test]
fn from_an_empty_folder_a_threshold_change_reaches_a_running_sentinel_with_the_installed_binary_alone() {
    let redis = Redis::start();
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    let run = |args: &[&str]| ok(sentinel_in(dir, args));
    // A signed site running the built-in 1.0.0, publishing to a real Redis.
    run(&["init", "--signed", "site", "--redis", &redis.url()]);
    // The idea: constrain at 80 % CPU, not 70 %.
    let said = run(&["policy", "new", "1.1.0", "--from", "1.0.0", "--purpose", "Constrain at 80 % CPU: 70 % constrained quiet days."]);
    assert!(said.contains("policies/1.1.0/policy.toml"), "{said}");
    let readme = std::fs::read_to_string(dir.join("policies/1.1.0/README.md")).unwrap();
    assert!(readme.contains("Constrain at 80 % CPU") && readme.contains("sentinel policy build policies/1.1.0"), "{readme}");
    let toml_path = dir.join("policies/1.1.0/policy.toml");
    let scaffolded = std::fs::read_to_string(&toml_path).unwrap();
    let base: PolicyDescription = toml::from_str(&scaffolded).unwrap();
    let embedded = sentinel_core::policy::embedded::open(&runtime()).unwrap().describe().unwrap();
    assert_eq!((base.version.as_str(), base.thresholds), ("1.1.0", embedded.thresholds), "the base's numbers");
    std::fs::write(&toml_path, scaffolded.replace("cpu_pct = { constrained = 70.0", "cpu_pct = { constrained = 80.0")).unwrap();
    // Built, signed, judged by the gate against what runs now, activated, decided with.
    run(&["policy", "build", "policies/1.1.0", "-o", "dist"]);
    run(&["policy", "sign", "--key", "site/keys/policy.key", "dist/"]);
    let gate = workspace().join("policies/gate.toml");
    let mut replay =
        vec!["replay", "--baseline", "site/policies/capacity-policy-1.0.0.wasm", "--candidate", "dist/capacity-policy-1.1.0.wasm"];
    let traces: Vec<String> = files_ending(&crate_dir().join("traces"), ".jsonl")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".expected.jsonl"))
        .map(|p| p.display().to_string())
        .collect();
    replay.extend(["--gate", gate.to_str().unwrap(), "--report", "ab"]);
    replay.extend(traces.iter().map(String::as_str));
    let judged = sentinel_in(dir, &replay);
    assert_eq!(judged.status.code(), Some(0), "the gate passes 1.1.0's change:\n{}", text(&judged.stderr));
    assert!(dir.join("ab/report.md").is_file());
    for ext in ["wasm", "manifest.json", "manifest.sig"] {
        std::fs::copy(
            dir.join(format!("dist/capacity-policy-1.1.0.{ext}")),
            dir.join(format!("site/policies/capacity-policy-1.1.0.{ext}")),
        )
        .unwrap();
    }
    run(&["policy", "activate", "1.1.0", "--config", "site/sentinel.toml"]);
    run(&["tick", "--config", "site/sentinel.toml"]);
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_connection().unwrap();
    let stored: String = redis::cmd("GET").arg("capacity:state").query(&mut conn).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(doc["policy"]["version"], "1.1.0", "{doc}");
    // The component that decided is the one built from the file, as the signed manifest says.
    let built = std::fs::read(dir.join("dist/capacity-policy-1.1.0.wasm")).unwrap();
    assert_eq!(doc["policy"]["digest"].as_str(), Some(hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&built)).as_str()), "{doc}");
}
