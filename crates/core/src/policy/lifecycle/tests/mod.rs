//! The lifecycle against real components: the shipped versions from `target/policies/` and
//! the fault fixtures from `target/test-policies/` (both built by `cargo policies`).

use super::activate::{Preparer, Refused};
use super::cache::Origin;
use super::manifest::{self, IntegrityError};
use super::signing::{self, Trust};
use crate::policy::{Limits, Runtime};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) fn built(name: &str) -> PathBuf {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
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

mod follower_cache;
mod untrusted_files;
