//! Hot swap, step by step, on the host's own code paths (`policy::lifecycle`): compiling a
//! verified component, loading its precompiled artifact from the cache instead, making it
//! ready (`instantiate_pre`, the first instance, `describe`), the whole activation from the
//! cache (verify, load, self-checks; no recorded ticks to replay), and the swap itself: the
//! active `Box<dyn Policy>` replaced under the sentinel's one policy lock, which is all a tick
//! can ever wait for.

use capacity_bench::results::Note;
use capacity_tests::paths::policies_dir;
use capacity_tests::runtime;
use criterion::Criterion;
use sentinel_core::policy::active::SharedPolicy;
use sentinel_core::policy::lifecycle::activate::Preparer;
use sentinel_core::policy::lifecycle::cache::{self, Origin};
use sentinel_core::policy::lifecycle::manifest;
use sentinel_core::policy::lifecycle::signing::Trust;
use sentinel_core::policy::{ComponentPolicy, Policy};
use std::time::Duration;

fn swap(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    for version in ["1.0.0", "2.0.0"] {
        for ext in ["wasm", "manifest.json"] {
            let file = format!("capacity-policy-{version}.{ext}");
            std::fs::copy(policies_dir().join(&file), dir.path().join(&file))
                .unwrap_or_else(|e| panic!("{file}: {e} (run `cargo policies` first)"));
        }
    }
    let runtime = runtime();
    let trust = Trust { key: None, allow_unsigned: true };
    let entry = manifest::find(dir.path(), "1.0.0").expect("the copied manifest");
    let verified = manifest::verify(&entry, &trust).expect("the copied component verifies");
    let cache_dir = dir.path().join("state/policy-cache");
    let (component, origin) = cache::load(Some(&cache_dir), &runtime, &verified).expect("compiles and caches");
    assert_eq!(origin, Origin::Compiled);
    let digest = verified.entry.manifest.sha256.clone();
    let preparer = Preparer {
        dir: dir.path().to_path_buf(),
        runtime: runtime.clone(),
        trust,
        cache: Some(cache_dir.clone()),
        cache_read_only: false,
        minimum_version: None,
    };
    let ready = |c| -> Box<dyn Policy> {
        Box::new(ComponentPolicy::from_component(&runtime, &entry.component_path, c, digest.clone(), None).unwrap())
    };
    let shared = SharedPolicy::new(ready(&component));
    let mut spare = preparer.version("2.0.0", &[]).expect("2.0.0 activates").policy;

    let mut group = c.benchmark_group("swap");
    group.warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4)).sample_size(20);
    group.bench_function("compile", |b| b.iter(|| cache::load(None, &runtime, &verified).unwrap()));
    group.bench_function("precompiled-load", |b| {
        b.iter(|| {
            let (component, origin) = cache::load(Some(&cache_dir), &runtime, &verified).unwrap();
            assert_eq!(origin, Origin::Cached);
            component
        })
    });
    group.bench_function("instantiate", |b| b.iter(|| ready(&component)));
    group.bench_function("activate-cached", |b| b.iter(|| preparer.entry(&entry, &[]).unwrap()));
    // What `Lifecycle::swap` does to the active policy: a replace under the policy lock.
    group.bench_function("swap", |b| b.iter(|| std::mem::swap(&mut *shared.lock(), &mut spare)));
    group.finish();
}

fn main() {
    let note = Note::start("swap");
    let mut c = Criterion::default().configure_from_args();
    swap(&mut c);
    c.final_summary();
    note.finish();
}
