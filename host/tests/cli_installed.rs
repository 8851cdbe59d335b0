//! An installed `sentinel` runs anywhere: the binary copied away from its build tree, run in
//! an empty folder, ticks on the embedded default (the 1.0.0 component built into it) and
//! says so; it never looks for a policy in the build tree.
//!
//! The binary under test is this package's `sentinel` (built with the test's features), or the
//! one `SENTINEL_UNDER_TEST` names with `SENTINEL_UNDER_TEST_AWS` (1 or 0) saying whether it was
//! built with the `aws` feature: tests/run runs these tests a second time on the release build
//! of the quick install (no `aws`), which it builds anyway, instead of building the host once
//! more without the feature.

use std::path::PathBuf;
use std::process::Command;

/// The binary these tests run, and whether it was built with the AWS adapters.
fn under_test() -> (PathBuf, bool) {
    match std::env::var_os("SENTINEL_UNDER_TEST") {
        Some(path) => {
            let aws = match std::env::var("SENTINEL_UNDER_TEST_AWS").as_deref() {
                Ok("1") => true,
                Ok("0") => false,
                other => panic!("SENTINEL_UNDER_TEST_AWS must be 1 or 0 with SENTINEL_UNDER_TEST, not {other:?}"),
            };
            (PathBuf::from(path), aws)
        }
        None => (PathBuf::from(env!("CARGO_BIN_EXE_sentinel")), cfg!(feature = "aws")),
    }
}

#[test]
fn a_copied_binary_ticks_on_the_embedded_default_in_an_empty_folder() {
    let (sentinel, aws) = under_test();
    let bin = std::fs::read(&sentinel).unwrap();
    let needle = b"../target/policies/capacity-policy-1.0.0.wasm";
    assert!(!bin.windows(needle.len()).any(|w| w == needle), "the binary still names a policy in its build tree");

    let place = tempfile::tempdir().unwrap();
    let installed = place.path().join("bin/sentinel");
    std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
    std::fs::copy(&sentinel, &installed).unwrap();
    let work = place.path().join("empty");
    std::fs::create_dir_all(&work).unwrap();
    let run = |args: &[&str]| Command::new(&installed).args(args).current_dir(&work).env_remove("RUST_LOG").output().unwrap();

    let check = run(&["check"]);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(report["policy"]["source"]["embedded"], "capacity-policy-1.0.0.wasm", "{report}");
    assert_eq!(report["policy"]["version"], "1.0.0");
    assert_eq!(report["build"]["aws_adapters"], aws, "check says what the binary was built with");

    // A simulated run keeps its minutes, which run ahead of the wall clock, in a store of its own.
    let ran = run(&["run", "--ticks", "5", "--speed", "1000"]);
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    let document = |path: &str| -> serde_json::Value { serde_json::from_slice(&std::fs::read(work.join(path)).unwrap()).unwrap() };
    let cache = document("sentinel-state/simulated/cache.json");
    assert_eq!((cache["sequence"].as_u64(), cache["policy"]["version"].as_str()), (Some(5), Some("1.0.0")), "{cache}");
    assert!(String::from_utf8_lossy(&ran.stderr).contains("embedded:capacity-policy-1.0.0.wasm"), "the log names the embedded default");
    assert!(!work.join("sentinel-state/sentinel.db").exists(), "the real-time store is untouched");
    // So a real-time tick afterwards decides its own minute (before the fix: "this minute or a
    // later one was already decided", for a simulated minute up to 80 minutes ahead).
    let tick = run(&["tick"]);
    assert!(tick.status.success(), "{}", String::from_utf8_lossy(&tick.stderr));
    let stderr = String::from_utf8_lossy(&tick.stderr);
    assert!(!stderr.contains("already decided") && !stderr.contains("ahead of the wall clock"), "{stderr}");
    assert_eq!(document("sentinel-state/cache.json")["sequence"].as_u64(), Some(1));

    // A policy file named in a config is still required to exist, and named when it does not.
    std::fs::write(work.join("sentinel.toml"), "policy = \"missing.wasm\"\n").unwrap();
    let missing = run(&["check", "--config", "sentinel.toml"]);
    assert!(!missing.status.success());
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("missing.wasm"), "{stderr}");
}

/// The quick install (no `aws` feature) refuses a configuration that names the SSM parameter
/// or the API Gateway stage throttles, naming the key and the install command that has them,
/// before anything is created; a build with the feature never refuses them for the adapters.
/// `tests/run` runs it on the release build of the quick install.
#[test]
fn a_sentinel_without_the_aws_feature_refuses_ssm_api_gateway_and_cloudwatch_naming_the_install() {
    let (sentinel, aws) = under_test();
    let work = tempfile::tempdir().unwrap();
    if aws {
        for (file, text) in [
            ("ssm.toml", "[publish.parameter]\nkind = \"ssm\"\nname = \"/capacity/state\"\n"),
            ("stages.toml", "[stages]\ncontroller = { kind = \"api-gateway\" }\n"),
            ("cloudwatch.toml", "[metrics]\nkind = \"cloudwatch\"\ndb_instance = \"orders\"\n"),
        ] {
            std::fs::write(work.path().join(file), text).unwrap();
            // It may still be refused for what a production configuration lacks (signed
            // policies), never for the adapters.
            let out = Command::new(&sentinel).args(["check", "--config", file]).current_dir(work.path()).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("needs the AWS adapters"), "{file}: a build with the AWS adapters refused it for them: {stderr}");
        }
        return;
    }
    std::fs::write(work.path().join("sentinel.toml"), "[publish.parameter]\nkind = \"ssm\"\nname = \"/capacity/state\"\n").unwrap();
    for command in [&["check", "--config", "sentinel.toml"][..], &["run", "--config", "sentinel.toml", "--ticks", "1"]] {
        let out = Command::new(&sentinel).args(command).current_dir(work.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command:?}: {stderr}");
        assert!(stderr.contains("publish.parameter.kind: kind = \"ssm\" needs the AWS adapters"), "{stderr}");
        assert!(stderr.contains("cargo install --locked --path host --features aws --profile production"), "{stderr}");
    }
    assert!(!work.path().join("sentinel-state").exists(), "nothing is created for a refused configuration");
    // The stage throttles on API Gateway likewise (this test replaces a unit test of the config
    // parser, so that the quick install's tests need not build the library's test binary).
    let stages = "[stages]\ncontroller = { kind = \"api-gateway\" }\n";
    std::fs::write(work.path().join("stages.toml"), stages).unwrap();
    let out = Command::new(&sentinel).args(["check", "--config", "stages.toml"]).current_dir(work.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("stages.controller: kind = \"api-gateway\" needs the AWS adapters"), "{stderr}");
    assert!(stderr.contains("cargo install --locked --path host --features aws --profile production"), "{stderr}");
    assert!(!work.path().join("sentinel-state").exists(), "nothing is created for a refused configuration");
    // CloudWatch metrics likewise, for the live sentinel and for `trace fetch`.
    let metrics = "[metrics]\nkind = \"cloudwatch\"\ndb_instance = \"orders\"\n";
    std::fs::write(work.path().join("cloudwatch.toml"), metrics).unwrap();
    for command in [&["check", "--config", "cloudwatch.toml"][..], &["trace", "fetch", "--config", "cloudwatch.toml", "--since", "1h"]] {
        let out = Command::new(&sentinel).args(command).current_dir(work.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command:?}: {stderr}");
        assert!(stderr.contains("metrics.kind: kind = \"cloudwatch\" needs the AWS adapters"), "{command:?}: {stderr}");
    }
    assert!(!work.path().join("sentinel-state").exists(), "nothing is created for a refused configuration");
}
