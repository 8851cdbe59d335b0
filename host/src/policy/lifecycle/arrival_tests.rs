//! A version copied into the policy directory manifest first: it arrives with its component,
//! and the file still on its way is no refusal.

use super::tests::{START, V1, config, install, trace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_before_its_component_is_no_refusal_and_the_version_arrives_with_the_component() {
    let dir = tempfile::tempdir().unwrap();
    let policies = dir.path().join("policies");
    install(&policies, &[V1]);
    trace(dir.path(), &[40.0; 4]);
    let (sentinel, _) = crate::setup::sentinel(&config(dir.path(), "active = \"latest\"\n"), START, None).await.unwrap();
    let lifecycle = sentinel.policy.lifecycle().cloned().unwrap();
    assert_eq!(sentinel.tick(START).await.unwrap().document.policy.version, "1.0.0");

    let built = super::tests::built("capacity-policy-2.0.0");
    let manifest = vocabulary::PolicyManifest::path_for(&built);
    std::fs::copy(&manifest, policies.join(manifest.file_name().unwrap())).unwrap();
    assert_eq!(lifecycle.sync().await.unwrap(), None, "nothing to activate before its component");
    assert_eq!(sentinel.telemetry.policy_refusals.get(), 0, "a component still on its way is not refused");

    std::fs::copy(&built, policies.join(built.file_name().unwrap())).unwrap();
    assert_eq!(lifecycle.sync().await.unwrap().as_deref(), Some("2.0.0"), "it arrives with its component");
    assert_eq!(sentinel.telemetry.policy_refusals.get(), 0);
    assert_eq!(sentinel.tick(START + 60).await.unwrap().document.policy.version, "2.0.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_without_its_component_at_startup_arrives_with_the_component_later() {
    let dir = tempfile::tempdir().unwrap();
    let policies = dir.path().join("policies");
    install(&policies, &[V1]);
    let built = super::tests::built("capacity-policy-2.0.0");
    let manifest = vocabulary::PolicyManifest::path_for(&built);
    std::fs::copy(&manifest, policies.join(manifest.file_name().unwrap())).unwrap();
    trace(dir.path(), &[40.0; 4]);
    let (sentinel, _) = crate::setup::sentinel(&config(dir.path(), "active = \"latest\"\n"), START, None).await.unwrap();
    let lifecycle = sentinel.policy.lifecycle().cloned().unwrap();
    assert_eq!(sentinel.tick(START).await.unwrap().document.policy.version, "1.0.0");

    std::fs::copy(&built, policies.join(built.file_name().unwrap())).unwrap();
    assert_eq!(lifecycle.sync().await.unwrap().as_deref(), Some("2.0.0"), "it arrives with its component");
    assert_eq!(sentinel.telemetry.policy_refusals.get(), 0);
}
