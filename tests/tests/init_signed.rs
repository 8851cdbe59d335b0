//! `sentinel init --signed DIR`: one command from the embedded default to a sentinel that
//! publishes to a real Redis, which runs only signed policies; and the refusal that names it.

use capacity_tests::paths::policies_dir;
use capacity_tests::sentinel_bin::{ok, run_in as sentinel_in, text};
use capacity_tests::servers::redis::Redis;
use std::os::unix::fs::PermissionsExt;

#[test]
fn init_writes_keys_signed_policies_and_a_config_that_publishes_to_redis() {
    let redis = Redis::start();
    let work = tempfile::tempdir().unwrap();
    let built = policies_dir();
    let said = ok(sentinel_in(work.path(), &["init", "--signed", "site", "--redis", &redis.url(), "--policies", built.to_str().unwrap()]));
    assert!(said.contains("1.0.0, 1.1.0, 1.2.0, 1.3.0, 2.0.0") && said.contains("sentinel run --config site/sentinel.toml"), "{said}");
    let site = work.path().join("site");
    let mode = |p: &str| std::fs::metadata(site.join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("keys/policy.key"), 0o600, "the signing key is private");
    for version in ["1.0.0", "1.2.0"] {
        assert!(site.join(format!("policies/capacity-policy-{version}.manifest.sig")).is_file(), "{version} is signed");
    }
    assert!(!site.join("policies/capacity-admission-3.2.0.wasm").exists(), "the services' admission component is not a policy");
    // The config passes the rule for servers (signed policies only) and reaches the real Redis.
    let listed = ok(sentinel_in(work.path(), &["policy", "list", "--config", "site/sentinel.toml"]));
    assert_eq!(listed.matches(" valid ").count(), 5, "{listed}");
    ok(sentinel_in(work.path(), &["tick", "--config", "site/sentinel.toml"]));
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_connection().unwrap();
    let stored: String = redis::cmd("GET").arg("capacity:state").query(&mut conn).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!((doc["policy"]["version"].as_str(), doc["sequence"].as_u64()), (Some("1.0.0"), Some(1)), "{doc}");
    // A key the command did not write would not be trusted: the signatures are the new key's.
    let tampered = site.join("policies/capacity-policy-1.2.0.manifest.json");
    let manifest = std::fs::read_to_string(&tampered).unwrap().replace("\"critical\": 85.0", "\"critical\": 99.0");
    std::fs::write(&tampered, manifest).unwrap();
    let refused = sentinel_in(work.path(), &["policy", "verify", "--config", "site/sentinel.toml"]);
    assert_eq!(refused.status.code(), Some(4), "{}", text(&refused.stdout));
}

#[test]
fn init_never_writes_into_a_folder_that_holds_anything() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("site")).unwrap();
    std::fs::write(work.path().join("site/notes.txt"), "mine").unwrap();
    let refused = sentinel_in(work.path(), &["init", "--signed", "site"]);
    assert_eq!(refused.status.code(), Some(2));
    let err = text(&refused.stderr);
    assert!(err.contains("site exists and is not empty") && err.contains("name another folder"), "{err}");
    let left: Vec<_> = std::fs::read_dir(work.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["site"], "no working folder left behind");
    assert_eq!(std::fs::read_dir(work.path().join("site")).unwrap().count(), 1, "nothing written into it");
    // A file, a dangling link and a Redis URL that does not parse are refused before anything is written.
    std::fs::write(work.path().join("a-file"), "x").unwrap();
    std::os::unix::fs::symlink("nowhere", work.path().join("a-link")).unwrap();
    for (args, said) in [
        (vec!["init", "--signed", "a-file"], "a-file is a file or a link, not a folder"),
        (vec!["init", "--signed", "a-link"], "a-link is a file or a link, not a folder"),
        (vec!["init", "--signed", "new", "--redis", "localhost:6379"], "--redis: the URL localhost:6379 does not parse"),
    ] {
        let refused = sentinel_in(work.path(), &args);
        let err = text(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    let mut left: Vec<_> = std::fs::read_dir(work.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    left.sort();
    assert_eq!(left, ["a-file", "a-link", "site"], "nothing written, no working folder left");
    // An empty folder is taken.
    std::fs::create_dir(work.path().join("empty")).unwrap();
    ok(sentinel_in(work.path(), &["init", "--signed", "empty"]));
    assert!(work.path().join("empty/sentinel.toml").is_file());
}

#[test]
fn a_config_that_reaches_redis_without_signed_policies_names_init() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("redis.toml"), "[publish.cache]\nkind = \"redis\"\nurl = \"redis://127.0.0.1:6379/0\"\n").unwrap();
    let refused = sentinel_in(work.path(), &["check", "--config", "redis.toml"]);
    assert_ne!(refused.status.code(), Some(0));
    let err = text(&refused.stderr);
    assert!(err.contains("policies: is required with") && err.contains("`sentinel init --signed DIR`"), "{err}");
}

#[test]
fn under_umask_000_no_other_user_can_write_what_init_wrote() {
    // Another user who can write policy.pub or policies/ chooses what runs (security review, 10).
    let work = tempfile::tempdir().unwrap();
    let sentinel = capacity_tests::sentinel_bin::sentinel();
    let done = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$0\" init --signed site --redis redis://127.0.0.1:6379/0")
        .arg(&sentinel)
        .current_dir(work.path())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    ok(done);
    let mut writable = Vec::new();
    let mut folders = vec![work.path().join("site")];
    while let Some(folder) = folders.pop() {
        for path in std::iter::once(folder.clone()).chain(std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path())) {
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.permissions().mode() & 0o022 != 0 {
                writable.push(format!("{} {:o}", path.display(), meta.permissions().mode() & 0o777));
            }
            if meta.is_dir() && path != folder {
                folders.push(path);
            }
        }
    }
    writable.sort();
    writable.dedup();
    assert!(writable.is_empty(), "written so that others can write them: {writable:?}");
    let key = std::fs::metadata(work.path().join("site/keys/policy.key")).unwrap().permissions().mode() & 0o777;
    assert_eq!(key, 0o600, "the signing key stays private");
}

#[test]
fn policy_list_never_reads_a_component_whose_manifest_is_not_signed() {
    // An unsigned manifest may claim any size: reading its component to check it took 989 MB
    // for a 1 GB sparse file (security review, 4). Listed as refused by its signature, unread.
    let work = tempfile::tempdir().unwrap();
    ok(sentinel_in(work.path(), &["init", "--signed", "site", "--redis", "redis://127.0.0.1:6379/0"]));
    let policies = work.path().join("site/policies");
    let signed = std::fs::read_to_string(policies.join("capacity-policy-1.0.0.manifest.json")).unwrap();
    let mut manifest: serde_json::Value = serde_json::from_str(&signed).unwrap();
    let size: u64 = 256 * 1024 * 1024;
    manifest["version"] = "9.9.9".into();
    manifest["file"] = "capacity-policy-9.9.9.wasm".into();
    manifest["size"] = size.into();
    std::fs::write(policies.join("capacity-policy-9.9.9.manifest.json"), serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    std::fs::File::create(policies.join("capacity-policy-9.9.9.wasm")).unwrap().set_len(size).unwrap();
    let listed = sentinel_in(work.path(), &["policy", "list", "--config", "site/sentinel.toml"]);
    let said = text(&listed.stdout);
    assert!(listed.status.success(), "{said}{}", text(&listed.stderr));
    let row = said.lines().skip_while(|l| !l.starts_with("9.9.9")).take(2).collect::<Vec<_>>().join("\n");
    assert!(row.contains("REFUSED") && row.contains("it is not signed"), "refused for want of a signature: {row}");
    assert!(!row.contains("sha256") && !row.contains("size"), "its component was not read: {row}");
    assert!(said.lines().any(|l| l.starts_with("1.0.0") && l.contains(" ok ")), "the signed version is ok: {said}");
}
