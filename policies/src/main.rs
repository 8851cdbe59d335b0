//! `cargo policies`: builds every version under `policies/` into its own component.
//!
//! For each `policies/<version>/policy.toml` it builds the guest for `wasm32-unknown-unknown`
//! with that file baked in (`CAPACITY_POLICY`), and writes
//! `target/policies/capacity-policy-<version>.wasm` with a manifest beside it. It also builds
//! the admission world once, `capacity-admission-<guest version>.wasm`, and the template component
//! `sentinel policy build` rewrites, `target/policy-template/capacity-policy-template.wasm`
//! (1.0.0's numbers as data). Fixture policies of the
//! tests (`tests/policies/`) go to `target/test-policies/`. The builds run on one worker per
//! core ([`run_jobs`]); a component already built from the same inputs is kept ([`freshness`]).
//! The build fails when a
//! component imports anything: a policy must have no file, network or clock access.

mod component;
mod freshness;
mod manifest;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The template component's file name.
const TEMPLATE_FILE: &str = "capacity-policy-template.wasm";

fn main() -> Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("workspace root")?.to_path_buf();
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let out = target.join("policies");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let versions = policy_files(&root.join("policies"))?;
    if versions.is_empty() {
        bail!("no policies/<version>/policy.toml found under {}", root.display());
    }
    let mut jobs = policy_jobs(&versions, &out, false)?;
    // Fixture policies for the tests (low thresholds, fast timings): never shipped.
    let fixtures = policy_files(&root.join("tests/policies"))?;
    let fixtures_out = target.join("test-policies");
    std::fs::create_dir_all(&fixtures_out).with_context(|| format!("creating {}", fixtures_out.display()))?;
    jobs.extend(policy_jobs(&fixtures, &fixtures_out, true)?);

    // The template `sentinel policy build` rewrites (the binary carries a copy): 1.0.0's numbers
    // as its policy data region. Its own folder and no manifest: it is no version of its own.
    let template_out = target.join("policy-template");
    std::fs::create_dir_all(&template_out).with_context(|| format!("creating {}", template_out.display()))?;
    jobs.push(Job {
        world: "world-policy",
        policy: Some(root.join("policies/1.0.0/policy.toml")),
        features: vec!["policy-data".to_string()],
        dest: template_out.join(TEMPLATE_FILE),
        kind: "policy",
        name: "capacity-policy".into(),
        version: "template".into(),
        thresholds: None,
        manifest: false,
    });
    let version = capacity_guest::VERSION;
    jobs.push(Job {
        world: "world-admission",
        policy: None,
        features: Vec::new(),
        dest: out.join(format!("capacity-admission-{version}.wasm")),
        kind: "admission-only",
        name: "capacity-admission".into(),
        version: version.into(),
        thresholds: None,
        manifest: true,
    });
    let shared = freshness::shared_inputs(&root)?;
    run_jobs(&root, &target, &shared, jobs)
}

/// One component to build: the guest's `world` with `features`, `policy` baked in, installed at
/// `dest` (with a manifest beside it when `manifest`).
struct Job {
    world: &'static str,
    policy: Option<PathBuf>,
    features: Vec<String>,
    dest: PathBuf,
    kind: &'static str,
    name: String,
    version: String,
    thresholds: Option<vocabulary::Thresholds>,
    manifest: bool,
}

/// Builds the jobs on one worker per core (at most four): each LTO build of the guest is one
/// codegen unit on one core, so two workers halve the step on a 2-core machine. Worker 0 builds
/// in `target`, worker N in `target/policy-workers/N` (the guest's few dependencies are built
/// once per worker). The first failure stops the other workers after their current build.
fn run_jobs(root: &Path, target: &Path, shared: &str, jobs: Vec<Job>) -> Result<()> {
    let workers = std::thread::available_parallelism().map_or(1, usize::from).clamp(1, 4).min(jobs.len());
    let queue = std::sync::Mutex::new(jobs.into_iter());
    let failed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                let dir = if worker == 0 { target.to_path_buf() } else { target.join("policy-workers").join(worker.to_string()) };
                let (queue, failed) = (&queue, &failed);
                scope.spawn(move || -> Result<()> {
                    loop {
                        if failed.load(std::sync::atomic::Ordering::Relaxed) {
                            return Ok(());
                        }
                        let Some(job) = queue.lock().unwrap_or_else(|e| e.into_inner()).next() else { return Ok(()) };
                        if let Err(e) = build_job(root, target, &dir, shared, &job) {
                            failed.store(true, std::sync::atomic::Ordering::Relaxed);
                            return Err(e);
                        }
                    }
                })
            })
            .collect();
        // Every worker's error, the first one returned.
        let mut first = Ok(());
        for handle in handles {
            let result = handle.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a build worker panicked")));
            if first.is_ok() {
                first = result;
            }
        }
        first
    })
}

/// Builds one job in the worker's folder `dir`, unless its component is already the one built
/// from the same inputs ([`freshness`]).
fn build_job(root: &Path, target: &Path, dir: &Path, shared: &str, job: &Job) -> Result<()> {
    let inputs = freshness::job_inputs(shared, job.world, &job.features, job.policy.as_deref())?;
    let record = freshness::record_path(target, &job.dest);
    let fresh = freshness::is_fresh(&record, &job.dest, &inputs);
    let wasm = if fresh { job.dest.clone() } else { build_world(root, dir, job.world, job.policy.as_deref(), &job.features)? };
    let manifest = component::install(&wasm, &job.dest, job.kind, &job.name, &job.version, job.thresholds.as_ref())?;
    if job.manifest {
        manifest::write(&job.dest, &manifest)?;
    }
    if fresh {
        println!("up to date {} ({} bytes, sha256 {})", job.dest.display(), manifest.size, manifest.sha256);
    } else {
        freshness::record(&record, &inputs, &manifest.sha256)?;
        println!("built {} ({} bytes, sha256 {})", job.dest.display(), manifest.size, manifest.sha256);
    }
    Ok(())
}

/// One job per policy file, installed into `out`. A fixture folder may hold a `features` file
/// naming test-only `fault-*` guest features to build in; a shipped policy may not.
fn policy_jobs(versions: &[PathBuf], out: &Path, fixtures: bool) -> Result<Vec<Job>> {
    let mut jobs = Vec::new();
    for path in versions {
        let file = policy_files::description::read_version(path)?.description;
        jobs.push(Job {
            world: "world-policy",
            policy: Some(path.clone()),
            features: fault_features(path, fixtures)?,
            dest: out.join(format!("{}-{}.wasm", file.name, file.version)),
            kind: "policy",
            name: file.name.clone(),
            version: file.version.clone(),
            thresholds: Some(file.thresholds),
            manifest: true,
        });
    }
    Ok(jobs)
}

/// Every `<dir>/*/policy.toml`, in version order (none when `dir` does not exist).
fn policy_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    if !dir.is_dir() {
        return Ok(found);
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path().join("policy.toml");
        if path.is_file() {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// The test-only `fault-*` and bench-only `bench-*` features a fixture asks for in `features`
/// beside its policy.toml.
fn fault_features(policy: &Path, fixtures: bool) -> Result<Vec<String>> {
    let file = policy.with_file_name("features");
    if !file.is_file() {
        return Ok(Vec::new());
    }
    if !fixtures {
        bail!("{}: a shipped policy cannot ask for guest features", file.display());
    }
    let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let features: Vec<String> =
        text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()).map(String::from).collect();
    if let Some(bad) = features.iter().find(|f| !(f.starts_with("fault-") || f.starts_with("bench-"))) {
        bail!("{}: only test-only fault-* or bench-only bench-* features may be asked for, not {bad}", file.display());
    }
    Ok(features)
}

/// Builds the guest for one world and returns the built file.
fn build_world(root: &Path, target: &Path, feature: &str, policy: Option<&Path>, extra: &[String]) -> Result<PathBuf> {
    let feature = std::iter::once(feature.to_string()).chain(extra.iter().cloned()).collect::<Vec<_>>().join(",");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    // `cargo rustc --crate-type cdylib,rlib` (the two types the component was always built
    // with, so its bytes stay the same): the guest is an rlib everywhere else (the host and the
    // policies tool link it natively), so its native builds, with their different features,
    // keep apart instead of overwriting one unhashed cdylib and rebuilding each other.
    cmd.current_dir(root).args([
        "rustc",
        "--quiet",
        "--crate-type",
        "cdylib,rlib",
        "-p",
        "capacity-guest",
        "--lib",
        "--target",
        "wasm32-unknown-unknown",
        "--profile",
        "guest",
        "--features",
        &feature,
    ]);
    cmd.env("CARGO_TARGET_DIR", target);
    match policy {
        Some(p) => cmd.env("CAPACITY_POLICY", p),
        None => cmd.env_remove("CAPACITY_POLICY"),
    };
    let status = cmd.status().context("running cargo to build the guest")?;
    if !status.success() {
        bail!("building the guest ({feature}) failed: {status}");
    }
    Ok(target.join("wasm32-unknown-unknown/guest/capacity_guest.wasm"))
}
