//! A follower (`pin`, `check`, `serve`) loads the leader's authenticated precompiled artifact
//! instead of compiling the component again, and never creates, writes or replaces anything in
//! the cache (issue 49: `pin show` against a `policy build` component took 5 s compiling).

use super::{V1, install, plant};
use crate::policy::lifecycle::activate::Preparer;
use crate::policy::lifecycle::cache::{self, Origin};
use crate::policy::lifecycle::signing::Trust;
use crate::policy::{Limits, Runtime};
use std::path::Path;
use std::time::Duration;

fn preparer(dir: &Path, read_only: bool) -> Preparer {
    let runtime = Runtime::new(Limits { deadline: Duration::from_millis(100), memory_bytes: 16 << 20 }).unwrap();
    let cache = Some(cache::cache_dir(&dir.join("private-state")));
    Preparer {
        dir: dir.into(),
        runtime,
        trust: Trust { key: None, allow_unsigned: true },
        cache,
        cache_read_only: read_only,
        minimum_version: None,
    }
}

#[test]
fn a_follower_uses_the_leaders_artifact_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    install(dir.path(), &[V1]);
    let cache_dir = cache::cache_dir(&dir.path().join("private-state"));
    // Before any leader ran: the follower compiles and creates no cache.
    let follower = preparer(dir.path(), true);
    assert_eq!(follower.version("1.0.0", &[]).unwrap().origin, Origin::Compiled);
    assert!(!cache_dir.exists(), "a follower never creates the cache");
    // The leader compiles and records; the follower then loads that artifact.
    let leader = preparer(dir.path(), false);
    let first = leader.version("1.0.0", &[]).unwrap();
    assert_eq!(first.origin, Origin::Compiled);
    let followed = follower.version("1.0.0", &[]).unwrap();
    assert_eq!(followed.origin, Origin::Cached, "the follower loads the leader's artifact");
    // A corrupt artifact: the follower refuses it, compiles, and leaves it for the leader.
    let artifact = cache::artifact_path(&cache_dir, &follower.runtime, &first.digest);
    plant(&artifact, b"not an artifact");
    let refused = follower.version("1.0.0", &[]).unwrap();
    assert!(matches!(refused.origin, Origin::ArtifactRefused(_)), "{:?}", refused.origin);
    assert_eq!(std::fs::read(&artifact).unwrap(), b"not an artifact", "a follower replaces nothing");
    assert_eq!(leader.version("1.0.0", &[]).unwrap().origin, Origin::ArtifactRefused(refused_reason(&refused.origin)));
    assert_eq!(follower.version("1.0.0", &[]).unwrap().origin, Origin::Cached, "the leader's recompile serves the follower again");
}

fn refused_reason(origin: &Origin) -> String {
    match origin {
        Origin::ArtifactRefused(why) => why.clone(),
        other => panic!("{other:?}"),
    }
}
