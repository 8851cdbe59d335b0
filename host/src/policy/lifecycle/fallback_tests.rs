//! The rollback record of a version that fails during a tick: written off the tick's thread,
//! never over a state file it cannot read.

use super::state::{self, PolicyState};
use super::tests::{START, TRAP, V1, config, install, trace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_never_replaces_an_unreadable_state_file_and_still_takes_effect() {
    let dir = tempfile::tempdir().unwrap();
    let state_dir = dir.path().join("sentinel-state");
    install(&dir.path().join("policies"), &[V1, TRAP]);
    state::update(&state_dir, |s| {
        s.activated("1.0.0");
        s.activated("9.3.0");
    })
    .unwrap();
    trace(dir.path(), &[40.0, -1.0, 40.0]);
    let (sentinel, _) = crate::setup::sentinel(&config(dir.path(), "active = \"9.3.0\"\n"), START, None).await.unwrap();
    assert_eq!(sentinel.tick(START).await.unwrap().document.policy.version, "9.3.0");

    // The state file is damaged while the sentinel runs (a full disk, a bad edit).
    let damaged = b"{\"active\": \"9.3.0\", \"history\": [\"1.0.0\"";
    super::private_dir::write_atomically(&state::path(&state_dir), damaged).unwrap();
    let report = sentinel.tick(START + 60).await.unwrap();
    assert_eq!(report.document.policy.version, "1.0.0", "the rollback takes effect in memory");
    sentinel.policy.lifecycle().unwrap().settle().await;
    assert_eq!(std::fs::read(state::path(&state_dir)).unwrap(), damaged, "the unreadable state is left for the operator");
    assert!(PolicyState::load(&state_dir).is_err());
    assert_eq!(sentinel.tick(START + 120).await.unwrap().document.policy.version, "1.0.0");
}
