//! The lifecycle against real components: the shipped versions from `target/policies/` and
//! the fault fixtures from `target/test-policies/` (both built by `cargo policies`).

use super::activate::{Preparer, Refused};
use super::cache::Origin;
use super::manifest::{self, IntegrityError};
use super::signing::{self, Trust};
use super::state::PolicyState;
use crate::config::Config;
use crate::policy::{Limits, Runtime};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(crate) fn built(name: &str) -> PathBuf {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    let shipped = target.join("policies").join(format!("{name}.wasm"));
    if shipped.is_file() { shipped } else { target.join("test-policies").join(format!("{name}.wasm")) }
}

/// Copies built components (with their manifests) into `dir`.
pub(crate) fn install(dir: &Path, names: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    for name in names {
        let wasm = built(name);
        assert!(wasm.is_file(), "{} missing: run `cargo policies`", wasm.display());
        std::fs::copy(&wasm, dir.join(wasm.file_name().unwrap())).unwrap();
        let m = vocabulary::PolicyManifest::path_for(&wasm);
        std::fs::copy(&m, dir.join(m.file_name().unwrap())).unwrap();
    }
}

pub(crate) const V1: &str = "capacity-policy-1.0.0";
pub(crate) const V2: &str = "capacity-policy-2.0.0";
const LOOP: &str = "capacity-policy-fault-loop-9.1.0";
const OOM: &str = "capacity-policy-fault-oom-9.2.0";
pub(crate) const TRAP: &str = "capacity-policy-fault-trap-on-api-trap-9.3.0";

/// A preparer of `dir`; with `use_cache`, its artifacts in `<dir>/private-state/policy-cache`
/// (a subfolder: manifests are only looked for at the top of `dir`).
fn preparer(dir: &Path, trust: Trust, use_cache: bool) -> Preparer {
    let runtime = Runtime::new(Limits { deadline: Duration::from_millis(100), memory_bytes: 16 << 20 }).unwrap();
    let cache = use_cache.then(|| super::cache::cache_dir(&dir.join("private-state")));
    Preparer { dir: dir.into(), runtime, trust, cache, cache_read_only: false, minimum_version: None }
}

fn unsigned_ok() -> Trust {
    Trust { key: None, allow_unsigned: true }
}

fn keypair(dir: &Path) -> (ed25519_dalek::SigningKey, Trust) {
    let (secret, public) = signing::keygen(&dir.join("test")).unwrap();
    let key = signing::read_secret(&secret).unwrap();
    (key, Trust { key: Some(signing::read_public(&public).unwrap()), allow_unsigned: false })
}

#[test]
fn a_tampered_component_is_refused_naming_the_file_and_the_digest() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[V1]);
    let file = dir.path().join(format!("{V1}.wasm"));
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len() - 10;
    bytes[n] ^= 0xff;
    std::fs::write(&file, bytes).unwrap();
    let err = preparer(dir.path(), unsigned_ok(), false).version("1.0.0", &[]).unwrap_err();
    let Refused::Integrity { source: IntegrityError::Digest { .. }, .. } = &err else { panic!("{err}") };
    let text = err.to_string();
    assert!(text.contains(&file.display().to_string()) && text.contains("sha256 is"), "{text}");
}

#[test]
fn a_signed_manifest_loads_and_a_changed_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[V1]);
    let (key, trust) = keypair(dir.path());
    let entry = manifest::find(dir.path(), "1.0.0").unwrap();
    signing::sign(&entry, &key).unwrap();
    let ok = manifest::verify(&manifest::find(dir.path(), "1.0.0").unwrap(), &trust).unwrap();
    assert_eq!(ok.signature, signing::SignatureStatus::Valid);
    // Changing any byte of the signed manifest (here its name) breaks the signature.
    let text =
        std::fs::read_to_string(&entry.manifest_path).unwrap().replace("\"name\": \"capacity-policy\"", "\"name\": \"capacity-policx\"");
    std::fs::write(&entry.manifest_path, text).unwrap();
    let err = manifest::verify(&manifest::find(dir.path(), "1.0.0").unwrap(), &trust).unwrap_err();
    assert!(matches!(err, IntegrityError::Signature { .. }), "{err}");
    assert!(err.to_string().contains("does not match the manifest's bytes"), "{err}");
}

#[test]
fn unsigned_or_foreign_signed_manifests_are_refused_unless_unsigned_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[V1]);
    let (_, trust) = keypair(dir.path());
    let entry = manifest::find(dir.path(), "1.0.0").unwrap();
    let err = manifest::verify(&entry, &trust).unwrap_err();
    assert!(err.to_string().contains("is not signed"), "{err}");
    let other = tempfile::tempdir().unwrap();
    let (foreign, _) = keypair(other.path());
    signing::sign(&entry, &foreign).unwrap();
    let err = manifest::verify(&entry, &trust).unwrap_err();
    assert!(err.to_string().contains("not by the trusted key"), "{err}");
    assert!(manifest::verify(&entry, &unsigned_ok()).is_ok());
}

#[test]
fn the_admission_component_is_refused_as_the_wrong_world() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &["capacity-admission-3.2.0"]);
    let entry = manifest::read_entry(&dir.path().join("capacity-admission-3.2.0.manifest.json")).unwrap();
    let err = preparer(dir.path(), unsigned_ok(), false).entry(&entry, &[]).unwrap_err();
    assert!(matches!(err, Refused::Load { .. }) && err.to_string().contains("does not export the `policy` world"), "{err}");
}

#[test]
fn a_module_that_loops_forever_is_refused_at_activation() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[LOOP]);
    let err = preparer(dir.path(), unsigned_ok(), false).version("9.1.0", &[]).unwrap_err();
    assert!(matches!(err, Refused::Conformance { .. }) && err.to_string().contains("deadline"), "{err}");
}

#[test]
fn a_module_that_exhausts_memory_is_refused_at_activation() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[OOM]);
    let err = preparer(dir.path(), unsigned_ok(), false).version("9.2.0", &[]).unwrap_err();
    assert!(matches!(err, Refused::Conformance { .. }) && err.to_string().contains("trapped"), "{err}");
}

#[test]
fn a_module_that_traps_on_a_recorded_input_is_refused_by_the_trial_replay() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[TRAP]);
    let p = preparer(dir.path(), unsigned_ok(), false);
    if let Err(e) = p.version("9.3.0", &[]) {
        panic!("no recorded reading for the API `trap`: it passes, but: {e}");
    }
    let record = |at: i64, api: &str| crate::ports::memory::TickRecord {
        at,
        signal: vocabulary::Signal::Reading(vocabulary::Reading {
            cpu_pct: Some(40.0),
            connections_pct: None,
            scaling: None,
            latency: vec![vocabulary::ApiLatency { api: api.into(), p95_ms: Some(100.0), baseline_ms: Some(100.0) }],
        }),
        pin: None,
        throttles_enabled: false,
        stages_throttled: false,
        decision: sample_decision(),
        policy: crate::ports::memory::PolicyRef { name: "x".into(), version: "1.0.0".into(), digest: "d".into() },
    };
    let records = vec![record(1_792_500_000, "crm"), record(1_792_500_060, "trap")];
    let err = p.version("9.3.0", &records).unwrap_err();
    assert!(matches!(err, Refused::Trial { .. }) && err.to_string().contains("trapped"), "{err}");
}

fn sample_decision() -> vocabulary::Decision {
    let runtime = Runtime::new(Limits::default()).unwrap();
    let mut p = crate::policy::open(&built(V1).display().to_string(), &runtime).unwrap();
    p.decide(&super::checks::fixed_inputs().unwrap()[0].input).unwrap()
}

#[test]
fn the_precompiled_cache_is_used_the_second_time_and_is_faster() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[V1]);
    let p = preparer(dir.path(), unsigned_ok(), true);
    let first = p.version("1.0.0", &[]).unwrap();
    let second = p.version("1.0.0", &[]).unwrap();
    assert_eq!((first.origin, second.origin), (Origin::Compiled, Origin::Cached));
    eprintln!(
        "load: compiled {:.2} ms, from the precompiled cache {:.2} ms (whole preparation {:.2} ms vs {:.2} ms)",
        first.timings.load.as_secs_f64() * 1e3,
        second.timings.load.as_secs_f64() * 1e3,
        first.timings.total().as_secs_f64() * 1e3,
        second.timings.total().as_secs_f64() * 1e3
    );
    assert!(second.timings.load < first.timings.load);
    // A corrupt artifact is not trusted: its sha256 no longer matches the record, it is
    // refused before wasmtime sees it, and the verified component is compiled instead.
    let cache = super::cache::cache_dir(&dir.path().join("private-state"));
    let artifact = super::cache::artifact_path(&cache, &p.runtime, &first.digest);
    plant(&artifact, b"not an artifact");
    let again = p.version("1.0.0", &[]).unwrap();
    let Origin::ArtifactRefused(why) = &again.origin else { panic!("{:?}", again.origin) };
    assert!(why.contains("sha256") && why.contains("recorded"), "{why}");
    assert_eq!(p.version("1.0.0", &[]).unwrap().origin, Origin::Cached, "the recompiled artifact replaced it");
}

/// Replaces `path` by a rename, as an attacker (or the cache itself) would: truncating a
/// mapped file in place would fault a process that maps it.
pub(crate) fn plant(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("planting");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The attack of a security review: whoever can write the policy directory plants a valid
/// precompiled artifact of another version (here 2.0.0's machine code under 1.0.0's signed
/// digest), or a corrupt one, where an earlier release looked for artifacts
/// (`<dir>/.cache/`) and where this one keeps them (the private state directory). Every
/// planted artifact is refused and the signed 1.0.0 runs, compiled from its verified `.wasm`.
#[test]
fn a_planted_artifact_of_another_version_or_a_corrupt_one_is_refused_and_the_signed_version_runs() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let policies = dir.path().join("policies");
    install(&policies, &[V1, V2]);
    let (key, trust) = keypair(dir.path());
    for v in ["1.0.0", "2.0.0"] {
        signing::sign(&manifest::find(&policies, v).unwrap(), &key).unwrap();
    }
    let runtime = Runtime::new(Limits { deadline: Duration::from_millis(100), memory_bytes: 16 << 20 }).unwrap();
    let cache = super::cache::cache_dir(&dir.path().join("state"));
    let p = Preparer {
        dir: policies.clone(),
        runtime: runtime.clone(),
        trust,
        cache: Some(cache.clone()),
        cache_read_only: false,
        minimum_version: None,
    };
    let v1_digest = manifest::find(&policies, "1.0.0").unwrap().manifest.sha256.to_ascii_lowercase();
    let v2_digest = manifest::find(&policies, "2.0.0").unwrap().manifest.sha256.to_ascii_lowercase();
    let v2_code = wasmtime::component::Component::from_file(runtime.engine(), built(V2)).unwrap().serialize().unwrap();
    let expected = sample_decision();
    let runs_v1 = |why: &str| {
        let mut c = p.version("1.0.0", &[]).unwrap_or_else(|e| panic!("{why}: {e}"));
        assert_eq!(c.version, "1.0.0", "{why}");
        assert_ne!(c.origin, Origin::Cached, "{why}: a planted artifact was deserialized");
        assert_eq!(c.policy.decide(&super::checks::fixed_inputs().unwrap()[0].input).unwrap(), expected, "{why}: 1.0.0's rules run");
        c.origin
    };

    // Where an earlier release looked: inside the policy directory. Never read now.
    let old = policies.join(".cache");
    std::fs::create_dir_all(&old).unwrap();
    let old_name = super::cache::artifact_path(&old, &runtime, &v1_digest);
    std::fs::write(&old_name, &v2_code).unwrap();
    assert_eq!(runs_v1("an artifact planted in <dir>/.cache"), Origin::Compiled);
    let artifact = super::cache::artifact_path(&cache, &runtime, &v1_digest);
    assert!(artifact.is_file() && super::cache::record_path(&artifact).is_file(), "the sentinel cached its own compile");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&cache), mode(&artifact)), (0o700, 0o600));
    let own = std::fs::read(&artifact).unwrap();
    let own_record = std::fs::read(super::cache::record_path(&artifact)).unwrap();

    // In the private cache: another version's valid artifact, without a record, with 2.0.0's
    // record, and with a record forged to name 1.0.0 but an artifact that is not the one the
    // sentinel recorded; then the genuine one made writable by others, or owned by another user.
    let refused = |why: &str, expect: &str| {
        let Origin::ArtifactRefused(reason) = runs_v1(why) else { panic!("{why}: not refused") };
        assert!(reason.contains(expect), "{why}: {reason}");
    };
    plant(&artifact, &v2_code);
    refused("2.0.0's artifact under 1.0.0's name, 1.0.0's record", "sha256");
    p.version("2.0.0", &[]).unwrap();
    let v2_artifact = super::cache::artifact_path(&cache, &runtime, &v2_digest);
    plant(&artifact, &std::fs::read(&v2_artifact).unwrap());
    plant(&super::cache::record_path(&artifact), &std::fs::read(super::cache::record_path(&v2_artifact)).unwrap());
    refused("2.0.0's artifact with its own record under 1.0.0's name", "compiled from component");
    let mut corrupt = own.clone();
    let n = corrupt.len() / 2;
    corrupt[n] ^= 0xff;
    plant(&artifact, &corrupt);
    plant(&super::cache::record_path(&artifact), &own_record);
    refused("a corrupted artifact", "sha256");
    std::fs::remove_file(super::cache::record_path(&artifact)).unwrap();
    refused("an artifact without a record", "record");
    plant(&artifact, &own);
    plant(&super::cache::record_path(&artifact), &own_record);
    std::fs::set_permissions(&artifact, std::fs::Permissions::from_mode(0o666)).unwrap();
    refused("a world-writable artifact", "writable");
    if super::private_dir::effective_uid() == 0 {
        plant(&artifact, &own);
        std::os::unix::fs::chown(&artifact, Some(65534), None).unwrap();
        refused("an artifact owned by another user", "owned by uid 65534");
    }
    plant(&artifact, &own);
    plant(&super::cache::record_path(&artifact), &own_record);
    assert_eq!(p.version("1.0.0", &[]).unwrap().origin, Origin::Cached, "the sentinel's own artifact is used");
}

/// A config in `dir` with `[policies]`, SQLite, file channels and the trace `trace.jsonl`.
pub(crate) fn config(dir: &Path, extra: &str) -> Config {
    let text = format!(
        "[policy_limits]\ndeadline = \"100ms\"\n[store]\nkind = \"sqlite\"\npath = \"state/sentinel.db\"\n\
         [metrics]\nkind = \"trace\"\npath = \"trace.jsonl\"\n\
         [publish.cache]\nkind = \"file\"\npath = \"out/cache.json\"\n[publish.parameter]\nkind = \"file\"\npath = \"out/parameter.json\"\n\
         [policies]\ndir = \"policies\"\nallow_unsigned = true\npoll = \"100ms\"\n{extra}"
    );
    Config::parse(&text, &dir.join("sentinel.toml")).unwrap()
}

/// A trace of `cpu` readings, one a minute from `START`; a negative value is a 40% reading
/// with latency for the API `trap`.
pub(crate) fn trace(dir: &Path, cpu: &[f64]) {
    let lines: String = cpu
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let at = crate::instants::format_rfc3339(START + 60 * i as i64);
            let (c, latency) = if *c < 0.0 { (40.0, r#"{"api":"trap","p95_ms":100,"baseline_ms":100}"#) } else { (*c, "") };
            format!(
                "{{\"at\":\"{at}\",\"reading\":{{\"cpu_pct\":{c},\"connections_pct\":30,\"scaling\":false,\"latency\":[{latency}]}}}}\n"
            )
        })
        .collect();
    std::fs::write(dir.join("trace.jsonl"), lines).unwrap();
}

pub(crate) const START: i64 = 1_792_500_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hot_swap_changes_the_version_on_the_next_tick_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let policies = dir.path().join("policies");
    install(&policies, &[V1]);
    trace(dir.path(), &[40.0; 6]);
    let config = config(dir.path(), "");
    let (sentinel, _) = crate::setup::sentinel(&config, START, None).await.unwrap();
    let lifecycle = sentinel.policy.lifecycle().cloned().unwrap();
    let first = sentinel.tick(START).await.unwrap();
    assert_eq!(first.document.policy.version, "1.0.0");
    assert_eq!(lifecycle.sync().await.unwrap(), None, "nothing changed");
    install(&policies, &[V2]);
    let changed = Instant::now();
    assert_eq!(lifecycle.sync().await.unwrap().as_deref(), Some("2.0.0"));
    eprintln!("file change to active (directory look included): {:.2} ms", changed.elapsed().as_secs_f64() * 1e3);
    let second = sentinel.tick(START + 60).await.unwrap();
    assert_eq!(second.document.policy.version, "2.0.0");
    assert_eq!(second.sequence, first.sequence + 1, "no tick missed or run twice");
    drop(sentinel);
    let (restarted, _) = crate::setup::sentinel(&config, START + 120, None).await.unwrap();
    assert_eq!(restarted.policy.lifecycle().unwrap().active_version().0, "2.0.0");
    assert_eq!(PolicyState::load(&dir.path().join("sentinel-state")).unwrap().history, ["1.0.0"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_version_decides_every_tick_unpublished_and_its_divergence_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let policies = dir.path().join("policies");
    install(&policies, &[V1, "capacity-policy-e2e-9.0.0"]);
    trace(dir.path(), &[40.0, 40.0, 99.0, 99.0, 99.0, 99.0]);
    let config = config(dir.path(), "active = \"1.0.0\"\nshadow = \"9.0.0\"\n");
    let (sentinel, _) = crate::setup::sentinel(&config, START, None).await.unwrap();
    for i in 0..6 {
        let r = sentinel.tick(START + 60 * i).await.unwrap();
        assert_eq!(r.document.policy.version, "1.0.0", "the shadow is never published");
    }
    sentinel.policy.lifecycle().unwrap().settle().await;
    assert_eq!(sentinel.telemetry.shadow_decisions.get(), 6);
    let state_dir = dir.path().join("sentinel-state");
    let report = super::shadow::report("9.0.0", &super::shadow::lines(&state_dir, "9.0.0").unwrap());
    assert_eq!(report.ticks, 6);
    assert!(report.divergent_ticks > 0 && sentinel.telemetry.shadow_divergences.get() == report.divergent_ticks as u64);
    assert!(report.by_field.contains_key("state"), "{report:?}");
    assert!(state_dir.join("shadow/9.0.0.memory.json").is_file(), "the shadow keeps its own memory, privately");
    assert!(!policies.join("shadow").exists(), "nothing is written in the policy directory");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_swap_is_faster_with_the_precompiled_cache() {
    let mut measured = Vec::new();
    for use_cache in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let policies = dir.path().join("policies");
        install(&policies, &[V1]);
        trace(dir.path(), &[40.0; 3]);
        let extra = if use_cache { "" } else { "precompiled_cache = false\n" };
        let config = config(dir.path(), extra);
        let (sentinel, _) = crate::setup::sentinel(&config, START, None).await.unwrap();
        for i in 0..3 {
            sentinel.tick(START + 60 * i).await.unwrap();
        }
        let lifecycle = sentinel.policy.lifecycle().cloned().unwrap();
        if use_cache {
            // The artifact as `sentinel policy activate` (or an earlier activation) leaves it.
            let staging = tempfile::tempdir().unwrap();
            install(staging.path(), &[V2]);
            let p = Preparer { dir: policies.clone(), ..lifecycle.preparer.clone() };
            let entry = manifest::read_entry(&staging.path().join(format!("{V2}.manifest.json"))).unwrap();
            assert_eq!(p.entry(&entry, &[]).unwrap().origin, Origin::Compiled);
        }
        install(&policies, &[V2]);
        let changed = Instant::now();
        assert_eq!(lifecycle.sync().await.unwrap().as_deref(), Some("2.0.0"));
        measured.push(changed.elapsed());
    }
    eprintln!(
        "file change to active, without the precompiled cache {:.2} ms, with it {:.2} ms (poll interval not included)",
        measured[0].as_secs_f64() * 1e3,
        measured[1].as_secs_f64() * 1e3
    );
    assert!(measured[1] < measured[0]);
}
